package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

func TestInvalidConfigKeepsTheLastValidOne(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	bad := m.DeepCopy()
	bad.Spec.Config = "workspaces: [ {name: demo, crawlers: []}, {name: demo, crawlers: []} ]"
	_, writes, status := resync(t, bad, objects)
	expectActions(t, writes)
	c := condition(t, status, monoclev1alpha1.ConditionConfigValid)
	if c.Status != metav1.ConditionFalse || c.Reason != reasons.InvalidConfig || !strings.Contains(c.Message, "demo") {
		t.Errorf("ConfigValid = %+v", c)
	}
	if status.Status.ConfigHash != m.Status.ConfigHash {
		t.Errorf("config hash moved to an invalid config")
	}
	if r := condition(t, status, monoclev1alpha1.ConditionReady); r.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v: the last valid config still serves", r)
	}
}

func TestConfigChangeDoesNotRestartReloadingImages(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.Image = "quay.io/change-metrics/monocle:1.12.0"
	m, objects := converged(t, m)
	changed := m.DeepCopy()
	changed.Spec.Config = "workspaces:\n  - name: other\n    crawlers: []\n"
	_, writes, _ := resync(t, changed, objects)
	for _, d := range describe(writes) {
		if strings.Contains(d, "deployments") {
			t.Errorf("restarted a Monocle that reloads its config: %s", d)
		}
	}
}
