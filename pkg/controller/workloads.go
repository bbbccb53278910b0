package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// workloads is what the workloads phase hands to the later ones.
type workloads struct {
	// maintenance is what spec.maintenance and the automatic requests ask of this sync.
	maintenance day2.MaintenancePlan
	// upgrade is what the upgrade of the API's image asks of this sync.
	upgrade day2.UpgradeStep
	// lastBackup is what the last read of Elasticsearch did of the backup work (nil: none).
	lastBackup *operand.BackupOutcome
	// holds is what the sync stops and why (day2.PlanHolds): the API and crawler Deployments
	// are built from it, and the Jobs and operand phases read it. The foundation phase, which
	// comes before, builds the bundled Elasticsearch from hibernation.Stopped.Elastic:
	// hibernation alone stops it, and holds.Stopped.Elastic is that same value.
	holds day2.Holds
}

// ensureWorkloads is the phase of the API and crawler Deployments. They need the generated
// keys, a config, the variables each reads from the Secrets and, for an Elasticsearch that
// needs it, the proxy Secret: until they are there, a
// component is neither created nor rolled and keeps running what it runs. A restore keeps
// them at zero replicas until it has succeeded (day2.RestoreStatus): the sync that records
// its success starts them. An image change of the API is an upgrade, in phases
// (day2.PlanUpgrade). Hibernation stops them in its order, and a restore or an upgrade asked
// for meanwhile waits until the Monocle is awake (day2.HoldRestore, day2.HoldUpgrade). Once
// the restore, the upgrade and the maintenance are planned, it decides what the sync stops
// and why (workloads.holds, day2.PlanHolds), which the Deployments are built from. It sets Restored
// and Upgraded, and status.restore and status.upgrade.
func (c *Controller) ensureWorkloads(ctx context.Context, st *syncState, f foundation) workloads {
	m := st.m
	st.api, st.crawler = st.observed.api, st.observed.crawler
	w := workloads{maintenance: day2.PlanMaintenance(m, f.config.parsed, c.jobFinished(m))}
	w.lastBackup = c.operand.LastBackup(m)
	restore := day2.RestoreStatusAfter(m, w.lastBackup, st.now)
	if st.hibernation.Active() {
		restore = day2.HoldRestore(m, restore)
	}
	st.status.Restore = restore.Status
	if restore.Condition != nil {
		st.setCondition(*restore.Condition)
	}
	w.upgrade = day2.PlanUpgrade(m, st.api, st.crawler, w.lastBackup, restore.UnderWay(), st.now)
	if st.hibernation.Active() {
		w.upgrade = day2.HoldUpgrade(m, w.upgrade)
	}
	st.status.Upgrade = w.upgrade.Status
	st.setCondition(w.upgrade.Condition)
	w.holds = day2.PlanHolds(st.hibernation, restore, w.upgrade, w.maintenance.StopCrawler)
	if f.apiSecret == nil || !f.configReady() || !f.proxyReady(st) {
		st.rollout.unknown("Deployment " + resources.APIName(m))
		st.rollout.unknown("Deployment " + resources.CrawlerName(m))
		return w
	}
	in := resources.Inputs{ConfigHash: f.configHash, SecretHash: resources.SecretHash(f.apiSecret.Data, f.secrets.hash),
		Stopped:  w.holds.Stopped,
		APIImage: w.upgrade.APIImage, CrawlerImage: w.upgrade.CrawlerImage, APIRecreate: w.upgrade.APIRecreate,
		CrawlerRestartedAt: day2.CrawlerRestartedAt(m), APIRestartedAt: day2.APIRestartedAt(m), TrustedCAHash: f.secrets.caHash}
	in.Elastic = st.elasticAccess(f.proxyData(), f.apiSecret.Data)
	st.run(ctx,
		func(ctx context.Context) (func(*syncState), []error) {
			if !f.secrets.api {
				st.rollout.unknown("Deployment " + resources.APIName(m))
				return nil, nil
			}
			desired := resources.NewAPIDeployment(m, in)
			if st.rollout.holdsDeployment(st.api, desired) {
				return nil, nil
			}
			if c.apiWaits(st, desired) {
				return func(st *syncState) { st.apiWaits = true }, nil
			}
			api, err := c.deployments.Ensure(ctx, c.recorder, m, desired)
			return func(st *syncState) { st.api = api }, []error{err}
		},
		func(ctx context.Context) (func(*syncState), []error) {
			if !f.secrets.crawler {
				st.rollout.unknown("Deployment " + resources.CrawlerName(m))
				return nil, nil
			}
			desired := resources.NewCrawlerDeployment(m, in)
			if st.rollout.holdsDeployment(st.crawler, desired) {
				return nil, nil
			}
			if !st.cluster.target.Bundled() && waitsForElasticsearch(st.cluster.ready, st.crawler, desired) {
				// The crawler writes through the API, which waits; it must not crawl for a
				// cluster another Monocle uses either.
				return nil, nil
			}
			crawler, err := c.deployments.Ensure(ctx, c.recorder, m, desired)
			return func(st *syncState) { st.crawler = crawler }, []error{err}
		},
	)
	return w
}

// ensureAPIDisruptionBudget keeps a PodDisruptionBudget for the API while it has more than
// one replica, and deletes it otherwise (a budget over one pod would block node drains).
func (c *Controller) ensureAPIDisruptionBudget(ctx context.Context, m *monoclev1alpha1.Monocle) error {
	if resources.NeedsAPIDisruptionBudget(m) {
		_, err := c.pdbs.Ensure(ctx, c.recorder, m, resources.NewAPIPodDisruptionBudget(m))
		return err
	}
	return c.pdbs.Delete(ctx, c.recorder, m, resources.APIName(m), "the API runs one replica")
}

// Elasticsearch first. Monocle's API sets up each workspace's index before it listens, and
// exits when Elasticsearch does not answer: the index creation is retried 7 times with an
// exponential back-off from 0.5 s, about a minute in all (Monocle 1.11.2,
// src/Monocle/Backend/Index.hs createIndex; src/Monocle/Main.hs run' dies on the error). The
// pod then crash-loops with a growing back-off, even once Elasticsearch is up. So a new API
// pod only starts while Elasticsearch has a ready pod: the API Deployment is neither created
// nor rolled before that. A change that starts no API pod (scaling to zero, as a restore
// does) goes through at once, and a running API keeps running what it runs.
//
// With a cluster of elasticsearchRef or external, the API and the crawler both wait, by the
// same rule, until the resolve phase finds that cluster ready (st.cluster.ready, target.go):
// an ECK Elasticsearch in phase Ready, the Secrets of its credentials and CA there, and no
// other Monocle using it. AutoPilotElasticsearchFirst does not turn that off: pods started
// then would write into another Monocle's indices or crash-loop on a missing password.

// elasticServing reports whether the Elasticsearch StatefulSet has a ready pod.
func elasticServing(elastic *appsv1.StatefulSet) bool {
	return elastic != nil && elastic.Status.ReadyReplicas > 0
}

// apiWaitsForElasticsearch reports whether the API Deployment desired is to be left as live
// has it (live nil: not created) because it would start a pod while Elasticsearch has no
// ready one: desired runs pods, and live is missing or has another pod template by the drift
// rule (owned/drift.go).
func apiWaitsForElasticsearch(elastic *appsv1.StatefulSet, live, desired *appsv1.Deployment) bool {
	return waitsForElasticsearch(elasticServing(elastic), live, desired)
}

// waitsForElasticsearch reports whether the Deployment desired is to be left as live has it
// (live nil: not created) because it would start a pod while Elasticsearch does not serve
// (serving false): desired runs pods, and live is missing or has another pod template.
func waitsForElasticsearch(serving bool, live, desired *appsv1.Deployment) bool {
	if serving || ptr.Deref(desired.Spec.Replicas, 1) == 0 {
		return false
	}
	if live == nil {
		return true
	}
	return owned.FieldsDiffer(&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: desired.Spec.Template}}, live, podMetadata)
}

// apiWaits reports whether the sync leaves the API Deployment desired as it is, by
// apiWaitsForElasticsearch on st.elastic, or by waitsForElasticsearch on st.cluster.ready for a
// cluster of elasticsearchRef or external; live is the API Deployment m controls (st.api,
// nil: none). A name another owner holds in the cache does not wait: Ensure then reports the
// conflict. With the bundled cluster, nothing waits either when AutoPilotOffAnnotation turns
// this part off.
func (c *Controller) apiWaits(st *syncState, desired *appsv1.Deployment) bool {
	m, live := st.m, st.api
	if live == nil {
		if taken, err := c.deployments.Get(m.Namespace, desired.Name); err == nil && !owned.IsControlledBy(taken, m) {
			return false
		}
	}
	if !st.cluster.target.Bundled() {
		return waitsForElasticsearch(st.cluster.ready, live, desired)
	}
	if day2.AutoPilotIsOff(m, monoclev1alpha1.AutoPilotElasticsearchFirst) {
		return false
	}
	return apiWaitsForElasticsearch(st.elastic, live, desired)
}
