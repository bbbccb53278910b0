package controller

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
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
		if got := autoPilotMessage(autoPilotOffMonocle(newMonocle("m"), value)); got != want {
			t.Errorf("%q: message %q, want %q", value, got, want)
		}
	}
	// The Paused condition carries it.
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{autoPilotOffMonocle(newMonocle("demo"), "upgrade-phases")}
	_, monocleWrites := f.run()
	status := monocleWrites[0].(interface{ GetObject() runtime.Object }).GetObject().(*monoclev1alpha1.Monocle)
	if c := condition(t, status, monoclev1alpha1.ConditionPaused); !strings.HasSuffix(c.Message, "; auto-pilot off: upgrade-phases") {
		t.Errorf("Paused = %+v", c)
	}
}

// TestAutoPilotPartsTurnOff: each part the annotation names is off.
func TestAutoPilotPartsTurnOff(t *testing.T) {
	now := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)

	// upgrade-phases: an image change is no upgrade; the spec's images roll at once.
	m := autoPilotOffMonocle(upgradeMonocle(newMonocleImage, oldMonocleImage, true, nil), "upgrade-phases")
	step := planUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), nil, false, now)
	if step.status != nil || step.apiImage != "" || step.crawlerImage != "" || step.apiRecreate || step.stopCrawler {
		t.Errorf("upgrade-phases off: step %+v, want none", step)
	}

	// api-restart: the block gone and the API not ready restart nothing.
	m = autoPilotOffMonocle(newMonocle("demo"), "api-restart")
	m.Status.ElasticsearchHealth = &monoclev1alpha1.ElasticsearchHealth{ReadOnlyIndices: []string{"monocle.changes.1.demo"}}
	if r := planAPIRestart(m, diskRead(now, 80), resources.NewAPIDeployment(m, resources.Inputs{}), now); r != nil {
		t.Errorf("api-restart off: restart %+v", r)
	}

	// elasticsearch-first: the first sync creates the API.
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{autoPilotOffMonocle(newMonocle("demo"), "elasticsearch-first")}
	kubeWrites, _ := f.run()
	if written[*appsv1.Deployment](kubeWrites, "demo-api") == nil {
		t.Errorf("elasticsearch-first off: writes %v, want the API created", describe(kubeWrites))
	}
}

// TestBlockClearingOff: with block-clearing off, a block that stays under the high watermark
// is reported and left alone.
func TestBlockClearingOff(t *testing.T) {
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, greenHealth)
	srv.Reply("GET", "/_cat/allocation", 200, allocation80)
	srv.Reply("GET", "/_all/_settings/index.blocks.read_only_allow_delete", 200,
		`{"monocle.changes.1.demo":{"settings":{"index.blocks.read_only_allow_delete":"true"}}}`)
	srv.Reply("GET", "/_cluster/settings", 200, clusterSettings96)
	srv.Reply("PUT", "/monocle.changes.1.demo/_settings", 200, `{"acknowledged":true}`)
	h, got := testHealthReads(t, srv, time.Hour)
	m := autoPilotOffMonocle(newMonocle("m"), "block-clearing")
	_, ctx := ktesting.NewTestContext(t)
	key := cache.MetaObjectToName(m)
	h.last[key] = &healthRead{uid: m.UID, health: &monoclev1alpha1.ElasticsearchHealth{ReadOnlyIndices: []string{"monocle.changes.1.demo"}}}
	h.observe(ctx, m, readInputs{elasticReady: true, plan: backupPlan{keepBlocks: true}})
	waitRead(t, got)
	h.mu.Lock()
	last := *h.last[key]
	h.mu.Unlock()
	if n := len(srv.RequestsTo("PUT", "/monocle.changes.1.demo/_settings")); n != 0 {
		t.Errorf("the block was cleared %d times with block-clearing off", n)
	}
	if last.health == nil || len(last.health.ReadOnlyIndices) != 1 {
		t.Errorf("health %+v, want the block reported", last.health)
	}
	if disk := condition(t, withConditions(healthConditions(m, last, true)), monoclev1alpha1.ConditionDiskPressure); disk.Status != metav1.ConditionTrue {
		t.Errorf("DiskPressure %+v, want True while the block stays", disk)
	}
}
