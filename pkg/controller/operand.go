package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// readOperand is the phase of the operands, Elasticsearch and the Monocle API. It hands the
// work due to the background reads (health.go): the backup plan, a pre-upgrade snapshot, an
// index deletion, a restore step, and whether read-only blocks may be cleared; and it makes
// the status of what the last read found: Elasticsearch's health, backups, unused indices,
// crawler progress, storage growth and the restarts of a stuck crawler or a blocked API. It
// sets ElasticsearchHealthy, DiskPressure, APIHealthy, CrawlersHealthy, CrawlersProgressing
// and BackupReady.
func (c *Controller) readOperand(ctx context.Context, st *syncState, f foundation, w workloads) {
	m, now := st.m, st.now
	lastBackup := w.lastBackup
	if c.health != nil {
		elasticReady := elasticServing(st.elastic)
		plan := planBackup(m, now)
		if w.upgrade.snapshot != "" && plan.repo.Type != "" {
			plan.take = w.upgrade.snapshot
		}
		deletion := planIndexDeletion(m, f.config.parsed)
		plan.deleteIndex = deletion.index
		plan.keepBlocks = autoPilotIsOff(m, monoclev1alpha1.AutoPilotBlockClearing)
		plan.restore = planRestore(m, workloadsStopped(st.api, st.crawler), elasticReady)
		apiReady := st.api != nil && st.api.Status.ReadyReplicas > 0
		last, pending := c.health.observe(ctx, m, readInputs{elasticReady: elasticReady, apiReady: apiReady, plan: plan,
			workspaces: crawlerWorkspaces(st.status.Crawlers)})
		// Only a Monocle whose health no read has reported yet waits for the first.
		st.holdStatus = pending && earlierHealth(m) == nil
		if last.health != nil {
			st.status.ElasticsearchHealth = last.health.DeepCopy()
		}
		pvc := c.elasticPVC(m, st.volume)
		growth, growthEvent := planStorageGrowth(m, pvc, last, func() (bool, error) {
			return c.storageClassExpands(ctx, pvc)
		}, now)
		st.status.StorageGrowth = growth
		if e := growthEvent; e != nil {
			typ := corev1.EventTypeNormal
			if e.warning {
				typ = corev1.EventTypeWarning
			}
			st.event(typ, e.reason, e.message)
		}
		st.status.APIRestart = planAPIRestart(m, last, st.api, now)
		if r := st.status.APIRestart; r != nil && (m.Status.APIRestart == nil || !r.Time.Equal(&m.Status.APIRestart.Time)) {
			st.event(corev1.EventTypeWarning, reasons.APIRestarted, "Restarting the API pods: "+r.Reason)
		}
		for _, cond := range withGrowth(healthConditions(m, last, elasticReady), growth) {
			st.setCondition(cond)
		}
		st.setCondition(apiCondition(m, last, apiReady))
		lastBackup = last.backup
		st.status.UnusedIndices = unusedIndices(m, f.config.parsed, last.indices)
		st.status.IndexDeletion = deletionStatus(m, deletion, last.deleted, now)
		crawlers := withProgress(m, st.status.Crawlers, last.crawlers, last.crawlerErrors)
		if last.crawlers != nil {
			st.setCondition(crawlersHealthyCondition(crawlers))
		}
		stall := checkCrawlers(m, crawlers, st.crawler, last.crawlers != nil || m.Status.CrawlerRestarts != nil, now)
		st.status.Crawlers, st.status.CrawlerRestarts = stall.crawlers, stall.restarts
		if stall.restarted {
			st.event(corev1.EventTypeWarning, reasons.CrawlerRestarted, "Restarting the crawler pod: "+stall.restarts.Reason)
		}
		if stall.condition != nil {
			st.setCondition(*stall.condition)
		}
	}
	backup := backupStatus(m, lastBackup, now)
	st.status.Backup = backup.status
	if backup.condition.Type != "" {
		st.setCondition(backup.condition)
	}
}
