package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
)

// Elasticsearch first. Monocle's API sets up each workspace's index before it listens, and
// exits when Elasticsearch does not answer: the index creation is retried 7 times with an
// exponential back-off from 0.5 s, about a minute in all (Monocle 1.11.2,
// src/Monocle/Backend/Index.hs createIndex; src/Monocle/Main.hs run' dies on the error). The
// pod then crash-loops with a growing back-off, even once Elasticsearch is up. So a new API
// pod only starts while Elasticsearch has a ready pod: the API Deployment is neither created
// nor rolled before that. A change that starts no API pod (scaling to zero, as a restore
// does) goes through at once, and a running API keeps running what it runs.

// elasticServing reports whether the Elasticsearch StatefulSet has a ready pod.
func elasticServing(elastic *appsv1.StatefulSet) bool {
	return elastic != nil && elastic.Status.ReadyReplicas > 0
}

// apiWaitsForElasticsearch reports whether the API Deployment desired is to be left as live
// has it (live nil: not created) because it would start a pod while Elasticsearch has no
// ready one: desired runs pods, and live is missing or has another pod template by the drift
// rule (owned/drift.go).
func apiWaitsForElasticsearch(elastic *appsv1.StatefulSet, live, desired *appsv1.Deployment) bool {
	if elasticServing(elastic) || ptr.Deref(desired.Spec.Replicas, 1) == 0 {
		return false
	}
	if live == nil {
		return true
	}
	return owned.FieldsDiffer(&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: desired.Spec.Template}}, live)
}

// apiWaits reports whether the sync leaves the API Deployment desired as it is, by
// apiWaitsForElasticsearch, live being the API Deployment m controls (nil: none). A name
// another owner holds in the cache does not wait: Ensure then reports the conflict, and
// neither does anything when AutoPilotOffAnnotation turns this part off.
func (c *Controller) apiWaits(m *monoclev1alpha1.Monocle, elastic *appsv1.StatefulSet, live, desired *appsv1.Deployment) bool {
	if day2.AutoPilotIsOff(m, monoclev1alpha1.AutoPilotElasticsearchFirst) {
		return false
	}
	if live == nil {
		if taken, err := c.deployments.Get(m.Namespace, desired.Name); err == nil && !owned.IsControlledBy(taken, m) {
			return false
		}
	}
	return apiWaitsForElasticsearch(elastic, live, desired)
}
