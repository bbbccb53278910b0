package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// ensureJobs is the phase of the maintenance Jobs: update-idents after a config change, and
// the janitor runs spec.maintenance and the automatic requests ask for. No Job runs while a
// restore is under way. It sets IdentsUpdated and Paused, and status.updateIdents,
// status.maintenance and status.crawlers.
func (c *Controller) ensureJobs(ctx context.Context, st *syncState, f foundation, w workloads) {
	m := st.m
	if f.config.valid && f.configReady() && !w.restoring {
		idents, err := c.ensureUpdateIdents(ctx, m, f.configHash(), st.api)
		st.fail(err)
		st.status.UpdateIdents = idents
	}
	identsRunning := st.status.UpdateIdents != nil && st.status.UpdateIdents.Phase == monoclev1alpha1.JobRunning
	if !w.restoring {
		maintenance, err := c.ensureMaintenance(ctx, m, w.maintenance, f.configHash(), st.crawler, identsRunning)
		st.fail(err)
		st.status.Maintenance = nil
		for _, s := range maintenance {
			st.status.Maintenance = append(st.status.Maintenance, *s.DeepCopy())
		}
	}
	st.status.Crawlers = append([]monoclev1alpha1.CrawlerStatus(nil), w.maintenance.crawlers...)
	st.setCondition(identsCondition(st.status.UpdateIdents))
	st.setCondition(metav1.Condition{
		Type: monoclev1alpha1.ConditionPaused, Status: metav1.ConditionFalse, Reason: reasons.NotPaused,
		Message: "The operator reconciles this Monocle" + day2.AutoPilotMessage(m),
	})
}
