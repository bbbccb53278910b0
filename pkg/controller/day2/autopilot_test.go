package day2

import (
	"testing"
	"time"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// autoPilotOffMonocle is m with AutoPilotOffAnnotation set to value.
func autoPilotOffMonocle(m *monoclev1alpha1.Monocle, value string) *monoclev1alpha1.Monocle {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[monoclev1alpha1.AutoPilotOffAnnotation] = value
	return m
}

func TestAutoPilotMessage(t *testing.T) {
	for value, want := range map[string]string{
		"":                                  "",
		" upgrade-phases , block-clearing,": "; auto-pilot off: upgrade-phases, block-clearing",
		"api-restart,everything": "; auto-pilot off: api-restart; monocle.change-metrics.io/auto-pilot-off names no part everything " +
			"(ignored; the parts are upgrade-phases, block-clearing, api-restart, elasticsearch-first)",
	} {
		if got := AutoPilotMessage(autoPilotOffMonocle(newMonocle("m"), value)); got != want {
			t.Errorf("%q: message %q, want %q", value, got, want)
		}
	}
	// The Paused condition carries it: see the controller's TestAutoPilotMessageInPaused.
}

// TestAutoPilotPartsTurnOff: each part the annotation names is off (elasticsearch-first:
// see the controller's TestAutoPilotElasticsearchFirstOff; block-clearing: operand's
// TestBlockClearingOff).
func TestAutoPilotPartsTurnOff(t *testing.T) {
	now := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)

	// upgrade-phases: an image change is no upgrade; the spec's images roll at once.
	m := autoPilotOffMonocle(upgradeMonocle(newMonocleImage, oldMonocleImage, true, nil), "upgrade-phases")
	step := PlanUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), nil, false, now)
	if step.Status != nil || step.APIImage != "" || step.CrawlerImage != "" || step.APIRecreate || step.StopCrawler {
		t.Errorf("upgrade-phases off: step %+v, want none", step)
	}

	// api-restart: the block gone and the API not ready restart nothing.
	m = autoPilotOffMonocle(newMonocle("demo"), "api-restart")
	m.Status.ElasticsearchHealth = &monoclev1alpha1.ElasticsearchHealth{ReadOnlyIndices: []string{"monocle.changes.1.demo"}}
	if r := PlanAPIRestart(m, diskRead(now, 80), resources.NewAPIDeployment(m, resources.Inputs{}), now); r != nil {
		t.Errorf("api-restart off: restart %+v", r)
	}
}
