package controller

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// readOperand is the phase of the operands, Elasticsearch and the Monocle API. It hands the
// work due to the operand worker (package operand): the backup plan, a pre-upgrade snapshot,
// an index deletion, a restore step, and whether read-only blocks may be cleared; and it
// makes the status of what the last read found: Elasticsearch's health, backups, unused
// indices, crawler progress, storage growth and the restarts of a stuck crawler or a blocked
// API, status.crawlers (the crawlers of the config in force, day2.PlanMaintenance, with their
// progress) and status.elasticsearchCluster (the target, with an ECK Elasticsearch's phase
// and health as the resolve phase read them). It sets ElasticsearchHealthy, DiskPressure,
// APIHealthy, CrawlersHealthy, CrawlersProgressing and BackupReady, and SpecAccepted False
// when indexReplicas asks for more replicas than the data nodes hold. While hibernation
// stops the Monocle (workloads.holds.Hibernating) it hands nothing to the worker and sets only the
// health conditions, but for the snapshots the hibernation waits for
// (st.hibernation.AwaitedSnapshots): the worker then lists the backup repository, taking no
// snapshot, until status.backup.running says they ended. status.crawlers is then kept as it
// is: a crawler's update_since moved earlier meanwhile is found, and its request made, once
// the Monocle wakes.
func (c *Controller) readOperand(ctx context.Context, st *syncState, f foundation, w workloads) {
	m, now := st.m, st.now
	lastBackup := w.lastBackup
	// The bundled Elasticsearch is read once its StatefulSet serves and its users are known;
	// a cluster of one's own once the resolve phase found it ready (target.go), with its
	// credentials and CA.
	elasticReady, target := elasticServing(st.elastic) && st.cluster.resolved, st.cluster.target
	if !target.Bundled() {
		elasticReady = st.cluster.ready
	}
	apiReady := st.api != nil && st.api.Status.ReadyReplicas > 0
	if st.cluster.refused {
		// The Monocle may not use its cluster (a cross-namespace reference without its
		// grant): what the worker read of it while it could is dropped, and the status
		// shows none of it.
		c.operand.Forget(cache.MetaObjectToName(m))
		st.status.ElasticsearchHealth = nil
	}
	if w.holds.Hibernating {
		// Hibernation reads nothing and does nothing in the operands: the health an earlier
		// read found stands while a pod is there to have it, and turns Unknown once none is.
		for _, cond := range day2.HealthConditions(m, operand.Result{}, elasticReady) {
			st.setCondition(cond)
		}
		st.setCondition(day2.APICondition(m, operand.Result{}, apiReady))
		st.status.ElasticsearchCluster = clusterStatus(st, operand.Result{})
		if st.hibernation.AwaitedSnapshots != "" {
			c.followSnapshots(ctx, st, elasticReady, target)
		}
		return
	}
	plan := day2.PlanBackup(m, now)
	if w.upgrade.Snapshot != "" && plan.BackupRepository() != "" {
		plan.Take = w.upgrade.Snapshot
	}
	deletion := day2.PlanIndexDeletion(m, f.config.parsed)
	plan.DeleteIndex = deletion.Index
	plan.KeepBlocks = day2.AutoPilotIsOff(m, monoclev1alpha1.AutoPilotBlockClearing)
	plan.Restore = day2.PlanRestore(m, day2.WorkloadsStopped(st.api, st.crawler), elasticReady)
	plan.Replicas = day2.PlanIndexReplicas(m)
	crawlers := slices.Clone(w.maintenance.Crawlers)
	last, reading := c.operand.Observe(ctx, m, operand.Inputs{ElasticReady: elasticReady, APIReady: apiReady, Plan: plan,
		Workspaces: day2.CrawlerWorkspaces(crawlers), Target: target})
	st.status.ElasticsearchCluster = clusterStatus(st, last)
	if refused := day2.ReplicasCondition(m, st.status.ElasticsearchCluster); refused != nil {
		// A refusal of the foundation's (the StatefulSet's) comes first.
		if accepted := st.condition(monoclev1alpha1.ConditionSpecAccepted); accepted == nil || accepted.Status == metav1.ConditionTrue {
			st.setCondition(*refused)
		}
	}
	// A worker that does not read (operand.Off) leaves all this as the status has it.
	if reading {
		// Only a Monocle whose health no read has reported yet waits for the first read, and
		// one whose API's health none has, for the first that asks the API: a new Monocle's
		// status then goes to Ready in one write that carries both.
		st.holdStatus = (last.Pending && day2.EarlierHealth(m) == nil) || (last.APIPending && !day2.APIHealthRead(m))
		if last.Health != nil {
			st.status.ElasticsearchHealth = last.Health.DeepCopy()
		}
		var pvc *corev1.PersistentVolumeClaim
		if target.Bundled() {
			// Only the bundled Elasticsearch's volume grows.
			pvc = c.elasticPVC(m, st.adoption.volume)
		}
		growth, growthEvent := day2.PlanStorageGrowth(m, pvc, last, func() (bool, error) {
			return c.storageClassExpands(ctx, pvc)
		}, now)
		st.status.StorageGrowth = growth
		if e := growthEvent; e != nil {
			typ := corev1.EventTypeNormal
			if e.Warning {
				typ = corev1.EventTypeWarning
			}
			st.event(typ, e.Reason, e.Message)
		}
		st.status.APIRestart = day2.PlanAPIRestart(m, last, st.api, now)
		if r := st.status.APIRestart; r != nil && (m.Status.APIRestart == nil || !r.Time.Equal(&m.Status.APIRestart.Time)) {
			st.event(corev1.EventTypeWarning, reasons.APIRestarted, "Restarting the API pods: "+r.Reason)
		}
		for _, cond := range day2.WithGrowth(day2.HealthConditions(m, last, elasticReady), growth) {
			st.setCondition(cond)
		}
		st.setCondition(day2.APICondition(m, last, apiReady))
		lastBackup = last.Backup
		st.status.UnusedIndices = day2.UnusedIndices(m, f.config.parsed, last.Indices)
		st.status.IndexDeletion = day2.DeletionStatus(m, deletion, last.Deleted, now)
		crawlers = day2.WithProgress(m, crawlers, last.Crawlers, last.CrawlerErrors,
			day2.CrawlerConfig(st.crawler, f.config.parsed, f.configHash))
		if last.Crawlers != nil {
			st.setCondition(day2.CrawlersHealthyCondition(crawlers))
		}
		stall := day2.CheckCrawlers(m, crawlers, st.crawler, last.Crawlers != nil || m.Status.CrawlerRestarts != nil, now)
		crawlers, st.status.CrawlerRestarts = stall.Crawlers, stall.Restarts
		if stall.Restarted {
			st.event(corev1.EventTypeWarning, reasons.CrawlerRestarted, "Restarting the crawler pod: "+stall.Restarts.Reason)
		}
		if stall.Condition != nil {
			st.setCondition(*stall.Condition)
		}
	}
	st.status.Crawlers = crawlers
	backup := day2.BackupStatus(m, lastBackup, now)
	st.status.Backup = backup.Status
	if backup.Condition.Type != "" {
		st.setCondition(backup.Condition)
	}
}

// clusterStatus is status.elasticsearchCluster of st given the last read (day2.ClusterStatus):
// what the status had of the cluster is dropped when the Monocle may not use it.
func clusterStatus(st *syncState, last operand.Result) *monoclev1alpha1.ElasticsearchClusterStatus {
	was := st.m.Status.ElasticsearchCluster
	if st.cluster.refused {
		was = nil
	}
	return day2.ClusterStatus(st.m, st.cluster.target, st.cluster.eck, st.elastic, was, last)
}

// followSnapshots hands the worker a plan that lists st's backup repository (and expires
// its old scheduled snapshots, as every listing does) but takes no snapshot and does no
// other work, and sets status.backup and BackupReady from what the last read found: the
// hibernation stops Elasticsearch once status.backup.running is empty.
func (c *Controller) followSnapshots(ctx context.Context, st *syncState, elasticReady bool, target resources.ElasticsearchTarget) {
	m := st.m
	plan := day2.PlanBackup(m, st.now)
	plan.Take, plan.KeepBlocks = "", true
	last, reading := c.operand.Observe(ctx, m, operand.Inputs{ElasticReady: elasticReady, Plan: plan, Target: target})
	if !reading {
		return
	}
	backup := day2.BackupStatus(m, last.Backup, st.now)
	st.status.Backup = backup.Status
	if backup.Condition.Type != "" {
		st.setCondition(backup.Condition)
	}
}
