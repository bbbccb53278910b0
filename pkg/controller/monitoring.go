package controller

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// ensureMonitoring keeps the PodMonitor spec.monitoring asks for, and deletes it once
// spec.monitoring is unset, and returns the Monitored condition. The PodMonitor API is
// optional: a cluster that does not serve it never fails the sync (the condition says so, and
// discovery syncs the Monocle again when it appears, see owned/optional.go).
func (c *Controller) ensureMonitoring(ctx context.Context, m *monoclev1alpha1.Monocle) (metav1.Condition, error) {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionMonitored, Status: metav1.ConditionFalse}
	k, served := c.optional.Kind(resources.PodMonitorResource)
	name := resources.PodMonitorName(m)
	r := resources.PodMonitorResource
	switch {
	case m.Spec.Monitoring == nil:
		cond.Reason, cond.Message = reasons.NotMonitored, "spec.monitoring is unset: no PodMonitor scrapes the API's and the crawler's /metrics"
		if served {
			return cond, k.Delete(ctx, c.recorder, m, name, "spec.monitoring is unset")
		}
		return cond, nil
	case !served:
		cond.Reason = reasons.APINotServed
		cond.Message = fmt.Sprintf("The cluster does not serve %s.%s/%s (the Prometheus operator's CRDs): no PodMonitor; the Monocle runs without it, and the operator notices when the API appears",
			r.Resource, r.Group, r.Version)
		return cond, nil
	}
	if _, err := k.Ensure(ctx, c.recorder, m, resources.NewPodMonitor(m)); err != nil {
		cond.Reason, cond.Message = reasons.MonitoringFailed, day2.Truncate(err.Error())
		return cond, err
	}
	cond.Status, cond.Reason = metav1.ConditionTrue, reasons.Monitored
	cond.Message = fmt.Sprintf("PodMonitor %s scrapes the /metrics of the API (port http) and of the crawler (port monitoring)", name)
	return cond, nil
}
