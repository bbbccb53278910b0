package operand_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
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
		w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true})
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
	w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true, Plan: operand.Plan{KeepBlocks: day2.AutoPilotIsOff(m, monoclev1alpha1.AutoPilotBlockClearing)}})
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

// TestBlocksReadPastAnyWatermark: the read looks for read-only indices (hidden ones
// included, expand_wildcards=all) whenever the disk is past any watermark in force, such as
// a flood stage in bytes of free space on a volume 80% used, and only then; without the
// watermarks, more than 85% used stands for them.
func TestBlocksReadPastAnyWatermark(t *testing.T) {
	bytes := `{"persistent":{"cluster.routing.allocation.disk.watermark.low":"7gb","cluster.routing.allocation.disk.watermark.high":"6gb",` +
		`"cluster.routing.allocation.disk.watermark.flood_stage":"5gb"},"transient":{},"defaults":{"cluster.routing.allocation.disk.watermark.low":"85%",` +
		`"cluster.routing.allocation.disk.watermark.high":"90%","cluster.routing.allocation.disk.watermark.flood_stage":"95%"}}`
	lowAt75 := strings.Replace(clusterSettings96, `"transient":{}`, `"transient":{"cluster.routing.allocation.disk.watermark.low":"75%"}`, 1)
	blocked := `{".ds-ilm-history-5-2026.11.01-000001":{"settings":{"index.blocks.read_only_allow_delete":"true"}},` +
		`"monocle.config":{"settings":{"index.blocks.read_only_allow_delete":"true"}}}`
	for name, tc := range map[string]struct {
		settings   http.Handler
		allocation string
		want       []string
	}{
		// 2 GiB free of 10 GiB (80% used) under a flood stage of 5 GiB free.
		"byte flood stage, 80% used": {settings: elastictest.JSON(200, bytes), allocation: elastictest.Allocation80,
			want: []string{".ds-ilm-history-5-2026.11.01-000001", "monocle.config"}},
		"low watermark at 75%, 80% used": {settings: elastictest.JSON(200, lowAt75), allocation: elastictest.Allocation80,
			want: []string{".ds-ilm-history-5-2026.11.01-000001", "monocle.config"}},
		"default watermarks, 80% used":    {settings: elastictest.JSON(200, clusterSettings96), allocation: elastictest.Allocation80},
		"watermarks unreadable, 80% used": {settings: elastictest.Error(500, "exception", "boom"), allocation: elastictest.Allocation80},
		"watermarks unreadable, 90% used": {settings: elastictest.Error(500, "exception", "boom"), allocation: elastictest.Allocation90,
			want: []string{".ds-ilm-history-5-2026.11.01-000001", "monocle.config"}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			srv.Reply("GET", "/_cluster/health", 200, elastictest.GreenHealth)
			srv.Reply("GET", "/_cat/allocation", 200, tc.allocation)
			srv.Handle("GET", "/_cluster/settings", tc.settings)
			srv.Reply("GET", "/_all/_settings/index.blocks.read_only_allow_delete", 200, blocked)
			client, err := elastic.New(srv.URL, srv.Transport())
			if err != nil {
				t.Fatal(err)
			}
			health, _, _, _, err := operand.ReadHealth(context.Background(), klog.Background(), client, false)
			if err != nil || !reflect.DeepEqual(health.ReadOnlyIndices, tc.want) {
				t.Fatalf("read-only indices %v, err %v; want %v", health.ReadOnlyIndices, err, tc.want)
			}
			reqs := srv.RequestsTo("GET", "/_all/_settings/index.blocks.read_only_allow_delete")
			if (len(reqs) == 1) != (tc.want != nil) || len(reqs) > 1 {
				t.Fatalf("%d reads of the blocks, want them read: %v", len(reqs), tc.want != nil)
			}
			if len(reqs) == 1 && reqs[0].Query.Get("expand_wildcards") != "all" {
				t.Errorf("blocks read with query %v, want expand_wildcards=all (hidden indices)", reqs[0].Query)
			}
		})
	}
}
