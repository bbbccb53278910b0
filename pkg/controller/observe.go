package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// observed is what a sync reads of a Monocle's workloads, once, before its phases: from the
// informers' caches, as the previous syncs left them. The phases decide from it, and the
// objects they write replace it in syncState (elastic, api, crawler). What the Elasticsearch
// cluster needs read (an ECK Elasticsearch, the Secrets of its credentials and CA) is read by
// the resolve phase, as the spec names it and once a grant allows it (target.go, refgrant.go).
type observed struct {
	// elastic is the StatefulSet "<name>-elastic" and api and crawler the Deployments
	// "<name>-api" and "<name>-crawler", each when the Monocle controls it (nil: none).
	elastic      *appsv1.StatefulSet
	api, crawler *appsv1.Deployment
	// jobsRunning is set while a Job of the Monocle (update-idents, maintenance) has not
	// finished.
	jobsRunning bool
}

// observe reads what the phases of a sync of m decide from (observed).
func (c *Controller) observe(m *monoclev1alpha1.Monocle) observed {
	var o observed
	if s, err := c.statefulSets.Get(m.Namespace, resources.ElasticName(m)); err == nil && owned.IsControlledBy(s, m) {
		o.elastic = s
	}
	deployment := func(name string) *appsv1.Deployment {
		d, err := c.deployments.Get(m.Namespace, name)
		if err != nil || !owned.IsControlledBy(d, m) {
			return nil
		}
		return d
	}
	o.api, o.crawler = deployment(resources.APIName(m)), deployment(resources.CrawlerName(m))
	o.jobsRunning = c.jobsRunning(m)
	return o
}

// jobsRunning reports whether a Job of m (update-idents, maintenance) has not finished, in
// the cache.
func (c *Controller) jobsRunning(m *monoclev1alpha1.Monocle) bool {
	jobs, err := c.jobs.List(m.Namespace, labels.SelectorFromSet(labels.Set{resources.NameLabel: "monocle", resources.InstanceLabel: m.Name}))
	if err != nil {
		// The cache lists from memory; an error is a bad selector, which this is not.
		return true
	}
	for _, j := range jobs {
		if owned.IsControlledBy(j, m) && finished(j) == "" {
			return true
		}
	}
	return false
}
