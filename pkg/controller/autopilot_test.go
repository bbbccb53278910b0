package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// autoPilotOff is Monocle "demo" with AutoPilotOffAnnotation set to value.
func autoPilotOff(value string) *monoclev1alpha1.Monocle {
	m := newMonocle("demo")
	m.Annotations = map[string]string{monoclev1alpha1.AutoPilotOffAnnotation: value}
	return m
}

// TestAutoPilotMessageInPaused: the Paused condition carries what day2.AutoPilotMessage says
// of the annotation.
func TestAutoPilotMessageInPaused(t *testing.T) {
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{autoPilotOff("upgrade-phases")}
	_, monocleWrites := f.run()
	status := monocleWrites[0].(interface{ GetObject() runtime.Object }).GetObject().(*monoclev1alpha1.Monocle)
	if c := condition(t, status, monoclev1alpha1.ConditionPaused); !strings.HasSuffix(c.Message, "; auto-pilot off: upgrade-phases") {
		t.Errorf("Paused = %+v", c)
	}
}

// TestAutoPilotElasticsearchFirstOff: with elasticsearch-first off, the first sync creates
// the API (the other parts: day2's TestAutoPilotPartsTurnOff, operand's
// TestBlockClearingOff).
func TestAutoPilotElasticsearchFirstOff(t *testing.T) {
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{autoPilotOff("elasticsearch-first")}
	kubeWrites, _ := f.run()
	if written[*appsv1.Deployment](kubeWrites, "demo-api") == nil {
		t.Errorf("elasticsearch-first off: writes %v, want the API created", describe(kubeWrites))
	}
}
