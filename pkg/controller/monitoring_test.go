package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestMonitoringPodMonitor: spec.monitoring makes the PodMonitor its builder makes where the
// cluster serves the API, and reports a cluster that does not, without failing the sync; a
// PodMonitor of a Monocle whose spec.monitoring was unset is deleted.
func TestMonitoringPodMonitor(t *testing.T) {
	monitored := newMonocle("demo")
	monitored.Spec.Monitoring = &monoclev1alpha1.MonitoringSpec{Labels: map[string]string{"release": "prom"}}
	served := []schema.GroupVersionResource{resources.PodMonitorResource}

	_, _, dynamicWrites, status := exposureRun(t, monitored, served, nil)
	checkActions(t, dynamicWrites, expectation{verb: "create", resource: "podmonitors", namespace: "default", name: "demo",
		object: resources.NewPodMonitor(monitored)})
	if c := condition(t, status, monoclev1alpha1.ConditionMonitored); c.Status != metav1.ConditionTrue || c.Reason != reasons.Monitored {
		t.Errorf("served: Monitored = %+v", c)
	}

	f, _, dynamicWrites, status := exposureRun(t, monitored, nil, nil)
	if len(dynamicWrites) != 0 {
		t.Errorf("not served: dynamic writes %v", describe(dynamicWrites))
	}
	c := condition(t, status, monoclev1alpha1.ConditionMonitored)
	if c.Status != metav1.ConditionFalse || c.Reason != reasons.APINotServed || !strings.Contains(c.Message, "podmonitors.monitoring.coreos.com/v1") {
		t.Errorf("not served: Monitored = %+v", c)
	}
	if r := condition(t, status, monoclev1alpha1.ConditionReady); r.Reason == reasons.SyncFailed {
		t.Errorf("not served: the sync failed: %+v", r)
	}
	warned := false
	for range len(f.recorder.Events) {
		if e := <-f.recorder.Events; strings.HasPrefix(e, "Warning "+reasons.APINotServed) && strings.Contains(e, "podmonitors") {
			warned = true
		}
	}
	if !warned {
		t.Error("not served: no APINotServed warning names the PodMonitor API")
	}

	// spec.monitoring unset: the Monocle's PodMonitor goes.
	unset := newMonocle("demo")
	owned := resources.NewPodMonitor(monitored)
	owned.SetUID("pm-uid")
	_, _, dynamicWrites, status = exposureRun(t, unset, served, nil, owned)
	checkActions(t, dynamicWrites, expectDelete("podmonitors", "default", "demo"))
	if c := condition(t, status, monoclev1alpha1.ConditionMonitored); c.Status != metav1.ConditionFalse || c.Reason != reasons.NotMonitored {
		t.Errorf("unset: Monitored = %+v", c)
	}
}
