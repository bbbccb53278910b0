package operand_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

// TestReadOnlyBlockCleared: past the flood stage the read reports the indices Elasticsearch
// made read-only (DiskPressure IndicesReadOnly); once the disk is under the high watermark
// and the block stayed, the read clears it, and the next one finds none.
func TestReadOnlyBlockCleared(t *testing.T) {
	srv := elastictest.NewServer(t)
	full := strings.NewReplacer(`"disk.used":"8589934592"`, `"disk.used":"10307921510"`, `"disk.percent":"80"`, `"disk.percent":"96"`).Replace(elastictest.Allocation80)
	srv.Reply("GET", "/_cluster/health", 200, elastictest.GreenHealth)
	srv.Reply("GET", "/_cat/allocation", 200, full)
	srv.Reply("GET", "/_all/_settings/index.blocks.read_only_allow_delete", 200,
		`{"monocle.changes.1.demo":{"settings":{"index.blocks.read_only_allow_delete":"true"}},"monocle.config":{"settings":{}}}`)
	srv.Reply("GET", "/_cluster/settings", 200, clusterSettings96)
	srv.Reply("PUT", "/monocle.changes.1.demo/_settings", 200, `{"acknowledged":true}`)
	w, got := testWorker(t, srv, time.Hour)
	m := newMonocle("m")
	_, ctx := ktesting.NewTestContext(t)
	// read runs one read starting from the earlier health was, and returns its result.
	read := func(was *monoclev1alpha1.ElasticsearchHealth) operand.Result {
		t.Helper()
		operand.SetLast(w, m, operand.Result{Health: was})
		w.Observe(ctx, m, operand.Inputs{ElasticReady: true})
		waitRead(t, got)
		return operand.Last(w, m)
	}

	last := read(nil)
	disk := condition(t, day2.HealthConditions(m, last, true), monoclev1alpha1.ConditionDiskPressure)
	if disk.Reason != reasons.IndicesReadOnly || !strings.Contains(disk.Message, "monocle.changes.1.demo") {
		t.Fatalf("past the flood stage: DiskPressure %+v", disk)
	}
	if n := len(srv.RequestsTo("PUT", "/monocle.changes.1.demo/_settings")); n != 0 {
		t.Fatalf("the block was cleared %d times above the high watermark", n)
	}

	// The disk is back under the high watermark, the block stayed: cleared.
	srv.Reply("GET", "/_cat/allocation", 200, elastictest.Allocation80)
	last = read(last.Health)
	if n := len(srv.RequestsTo("PUT", "/monocle.changes.1.demo/_settings")); n != 1 {
		t.Fatalf("%d block clearings under the high watermark, want 1", n)
	}
	if disk := condition(t, day2.HealthConditions(m, last, true), monoclev1alpha1.ConditionDiskPressure); disk.Reason != reasons.VolumeHasRoom {
		t.Errorf("after the clearing: DiskPressure %+v", disk)
	}
}

// TestBlockClearingOff: with block-clearing off, a block that stays under the high watermark
// is reported and left alone.
func TestBlockClearingOff(t *testing.T) {
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, elastictest.GreenHealth)
	srv.Reply("GET", "/_cat/allocation", 200, elastictest.Allocation80)
	srv.Reply("GET", "/_all/_settings/index.blocks.read_only_allow_delete", 200,
		`{"monocle.changes.1.demo":{"settings":{"index.blocks.read_only_allow_delete":"true"}}}`)
	srv.Reply("GET", "/_cluster/settings", 200, clusterSettings96)
	srv.Reply("PUT", "/monocle.changes.1.demo/_settings", 200, `{"acknowledged":true}`)
	w, got := testWorker(t, srv, time.Hour)
	m := newMonocle("m")
	m.Annotations = map[string]string{monoclev1alpha1.AutoPilotOffAnnotation: "block-clearing"}
	_, ctx := ktesting.NewTestContext(t)
	operand.SetLast(w, m, operand.Result{Health: &monoclev1alpha1.ElasticsearchHealth{ReadOnlyIndices: []string{"monocle.changes.1.demo"}}})
	w.Observe(ctx, m, operand.Inputs{ElasticReady: true, Plan: operand.Plan{KeepBlocks: day2.AutoPilotIsOff(m, monoclev1alpha1.AutoPilotBlockClearing)}})
	waitRead(t, got)
	last := operand.Last(w, m)
	if n := len(srv.RequestsTo("PUT", "/monocle.changes.1.demo/_settings")); n != 0 {
		t.Errorf("the block was cleared %d times with block-clearing off", n)
	}
	if last.Health == nil || len(last.Health.ReadOnlyIndices) != 1 {
		t.Errorf("health %+v, want the block reported", last.Health)
	}
	if disk := condition(t, day2.HealthConditions(m, last, true), monoclev1alpha1.ConditionDiskPressure); disk.Status != metav1.ConditionTrue {
		t.Errorf("DiskPressure %+v, want True while the block stays", disk)
	}
}
