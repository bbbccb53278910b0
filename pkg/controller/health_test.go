package controller

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

// Answers of Elasticsearch 7.17 (Cluster health API; cat allocation API, format=json, bytes=b):
// a volume of 10 GiB, 80% full, whose indices take 50 MiB.
const (
	greenHealth  = `{"cluster_name":"docker-cluster","status":"green","timed_out":false,"number_of_nodes":1,"number_of_data_nodes":1,"active_primary_shards":2,"active_shards":2,"relocating_shards":0,"initializing_shards":0,"unassigned_shards":0}`
	yellowHealth = `{"cluster_name":"docker-cluster","status":"yellow","timed_out":false,"number_of_nodes":1,"number_of_data_nodes":1,"active_primary_shards":2,"active_shards":2,"relocating_shards":0,"initializing_shards":0,"unassigned_shards":2}`
	redHealth    = `{"cluster_name":"docker-cluster","status":"red","timed_out":false,"number_of_nodes":1,"number_of_data_nodes":1,"active_primary_shards":1,"active_shards":1,"relocating_shards":0,"initializing_shards":0,"unassigned_shards":1}`
	allocation80 = `[{"shards":"2","disk.indices":"52428800","disk.used":"8589934592","disk.avail":"2147483648","disk.total":"10737418240","disk.percent":"80","host":"10.244.0.12","ip":"10.244.0.12","node":"m-elastic-0"}]`
	allocation90 = `[{"shards":"2","disk.indices":"52428800","disk.used":"9663676416","disk.avail":"1073741824","disk.total":"10737418240","disk.percent":"90","host":"10.244.0.12","ip":"10.244.0.12","node":"m-elastic-0"}]`
)

// enqueued records the keys a healthReads enqueues, with their delays.
type enqueued struct {
	key   cache.ObjectName
	after time.Duration
}

// testHealthReads returns a healthReads whose every read goes to srv, and the channel its
// enqueues arrive on.
func testHealthReads(t *testing.T, srv *elastictest.Server, timeout time.Duration) (*healthReads, chan enqueued) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	// Each read lists the workspace indices too (indices.go): none here.
	srv.Reply("GET", "/_cat/indices/monocle.changes.1.*", 200, `[]`)
	out := make(chan enqueued, 16)
	h := newHealthReads(ctx, OperandOptions{Interval: time.Hour, Timeout: timeout, DialAddress: hostOf(t, srv)},
		func(key cache.ObjectName, after time.Duration) { out <- enqueued{key, after} })
	return h, out
}

// hostOf is the host:port of srv.
func hostOf(t *testing.T, srv *elastictest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// waitRead waits for the enqueue that ends a read whose result changed (delay 0), then for
// the one of the next read (after the interval).
func waitRead(t *testing.T, got chan enqueued) {
	t.Helper()
	for _, want := range []time.Duration{0, time.Hour} {
		select {
		case e := <-got:
			if e.after != want || (e.key.Name != "m" && !strings.HasPrefix(e.key.Name, "m-")) {
				t.Fatalf("enqueued %+v, want m or m-<n> after %s", e, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the read never ended")
		}
	}
}

// withConditions is a Monocle whose status has conds, for condition.
func withConditions(conds []metav1.Condition) *monoclev1alpha1.Monocle {
	return &monoclev1alpha1.Monocle{Status: monoclev1alpha1.MonocleStatus{Conditions: conds}}
}

// TestElasticsearchHealthIsReadInTheBackground: what Elasticsearch answers, and how it fails,
// becomes the ElasticsearchHealthy and DiskPressure conditions and the health in the status.
func TestElasticsearchHealthIsReadInTheBackground(t *testing.T) {
	RegisterMetrics()
	type want struct {
		healthy, healthyReason, disk, diskReason string
		message                                  string
		health                                   *monoclev1alpha1.ElasticsearchHealth
	}
	tenGiB, fiftyMiB := mebibytes(10<<30), mebibytes(50<<20)
	cases := 0
	for name, tc := range map[string]struct {
		health, allocation http.Handler
		want               want
	}{
		"green": {health: elastictest.JSON(200, greenHealth), allocation: elastictest.JSON(200, allocation80),
			want: want{healthy: "True", healthyReason: reasons.Green, disk: "False", diskReason: reasons.VolumeHasRoom, message: "80% full",
				health: &monoclev1alpha1.ElasticsearchHealth{Status: "green", DiskUsedPercent: ptr.To[int32](80), DiskSize: tenGiB, IndicesSize: fiftyMiB}}},
		"yellow": {health: elastictest.JSON(200, yellowHealth), allocation: elastictest.JSON(200, allocation80),
			want: want{healthy: "True", healthyReason: reasons.Yellow, disk: "False", diskReason: reasons.VolumeHasRoom, message: "single node",
				health: &monoclev1alpha1.ElasticsearchHealth{Status: "yellow", DiskUsedPercent: ptr.To[int32](80), DiskSize: tenGiB, IndicesSize: fiftyMiB}}},
		"red, and a volume almost full": {health: elastictest.JSON(200, redHealth), allocation: elastictest.JSON(200, allocation90),
			want: want{healthy: "False", healthyReason: reasons.Red, disk: "True", diskReason: reasons.VolumeAlmostFull, message: "90% full (over 85%)",
				health: &monoclev1alpha1.ElasticsearchHealth{Status: "red", DiskUsedPercent: ptr.To[int32](90), DiskSize: tenGiB, IndicesSize: fiftyMiB}}},
		"slow": {health: elastictest.Slow(time.Minute, elastictest.JSON(200, greenHealth)), allocation: elastictest.JSON(200, allocation80),
			want: want{healthy: "Unknown", healthyReason: reasons.ElasticsearchUnreachable, disk: "Unknown", diskReason: reasons.ElasticsearchUnreachable,
				message: "context deadline exceeded"}},
		"garbage": {health: elastictest.Raw(200, "text/html", "<html>proxy</html>"), allocation: elastictest.JSON(200, allocation80),
			want: want{healthy: "Unknown", healthyReason: reasons.ElasticsearchUnreachable, disk: "Unknown", diskReason: reasons.ElasticsearchUnreachable,
				message: "decoding _cluster/health"}},
		"500": {health: elastictest.Error(500, "exception", "boom"), allocation: elastictest.JSON(200, allocation80),
			want: want{healthy: "Unknown", healthyReason: reasons.ElasticsearchUnreachable, disk: "Unknown", diskReason: reasons.ElasticsearchUnreachable,
				message: "status 500 exception: boom"}},
		"disk unreadable": {health: elastictest.JSON(200, greenHealth), allocation: elastictest.Error(500, "exception", "no disk"),
			want: want{healthy: "Unknown", healthyReason: reasons.ElasticsearchUnreachable, disk: "Unknown", diskReason: reasons.ElasticsearchUnreachable,
				message: "no disk"}},
	} {
		// Each case has a Monocle of its own: the metrics are global, and a read a case
		// leaves running could write its result over the next case's.
		cases++
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			srv.Handle("GET", "/_cluster/health", tc.health)
			srv.Handle("GET", "/_cat/allocation", tc.allocation)
			// Past 85%, the read asks which indices are read-only: none here.
			srv.Reply("GET", "/_all/_settings/index.blocks.read_only_allow_delete", 200, `{}`)
			h, got := testHealthReads(t, srv, 500*time.Millisecond)
			m := newMonocle(fmt.Sprintf("m-%d", cases))
			_, ctx := ktesting.NewTestContext(t)

			last, pending := h.observe(ctx, m, readInputs{})
			if pending || len(srv.Requests()) != 0 {
				t.Fatalf("Elasticsearch without a ready pod: pending %v, %d requests; want no read", pending, len(srv.Requests()))
			}
			conds := healthConditions(m, last, false)
			if c := condition(t, withConditions(conds), monoclev1alpha1.ConditionElasticsearchHealthy); c.Reason != reasons.ElasticsearchNotReady {
				t.Errorf("before a ready pod: %+v", c)
			}

			if _, pending := h.observe(ctx, m, readInputs{elasticReady: true}); !pending {
				t.Error("the first read is not pending")
			}
			waitRead(t, got)
			last, pending = h.observe(ctx, m, readInputs{elasticReady: true})
			if pending {
				t.Error("a read that ended is still pending")
			}
			conds = healthConditions(m, last, true)
			healthy := condition(t, withConditions(conds), monoclev1alpha1.ConditionElasticsearchHealthy)
			disk := condition(t, withConditions(conds), monoclev1alpha1.ConditionDiskPressure)
			if string(healthy.Status) != tc.want.healthy || healthy.Reason != tc.want.healthyReason ||
				string(disk.Status) != tc.want.disk || disk.Reason != tc.want.diskReason {
				t.Errorf("ElasticsearchHealthy %s/%s, DiskPressure %s/%s; want %s/%s, %s/%s", healthy.Status, healthy.Reason, disk.Status, disk.Reason,
					tc.want.healthy, tc.want.healthyReason, tc.want.disk, tc.want.diskReason)
			}
			if !strings.Contains(healthy.Message+" "+disk.Message, tc.want.message) {
				t.Errorf("messages %q, %q do not say %q", healthy.Message, disk.Message, tc.want.message)
			}
			if (last.health == nil) != (tc.want.health == nil) || (last.health != nil && !equalHealth(*last.health, *tc.want.health)) {
				t.Errorf("health %+v, want %+v", last.health, tc.want.health)
			}
			// The same in /metrics.
			monocle := map[string]string{"monocle_namespace": "default", "monocle": m.Name}
			up := gaugeValue(t, "monocle_operator_elasticsearch_up", monocle)
			if want := tc.want.health != nil; (up == 1) != want {
				t.Errorf("monocle_operator_elasticsearch_up = %v, want read: %v", up, want)
			}
			if h := tc.want.health; h != nil {
				if v := gaugeValue(t, "monocle_operator_elasticsearch_status", map[string]string{"monocle_namespace": "default", "monocle": m.Name, "status": h.Status}); v != 1 {
					t.Errorf("monocle_operator_elasticsearch_status{status=%q} = %v, want 1", h.Status, v)
				}
				if v := gaugeValue(t, "monocle_operator_elasticsearch_disk_used_ratio", monocle); v != float64(*h.DiskUsedPercent)/100 {
					t.Errorf("monocle_operator_elasticsearch_disk_used_ratio = %v, want %v", v, float64(*h.DiskUsedPercent)/100)
				}
			}
			h.forget(cache.MetaObjectToName(m))
			// Within the interval, no new read.
			before := len(srv.Requests())
			h.observe(ctx, m, readInputs{elasticReady: true})
			if after := len(srv.Requests()); after != before {
				t.Errorf("a sync within the interval read again: %d requests, then %d", before, after)
			}
		})
	}
}

// gaugeValue is the value of the gauge series name{labels} in the registry /metrics serves,
// -1 when there is no such series.
func gaugeValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if maps.Equal(got, labels) {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

func equalHealth(a, b monoclev1alpha1.ElasticsearchHealth) bool {
	return a.Status == b.Status && ptr.Deref(a.DiskUsedPercent, -1) == ptr.Deref(b.DiskUsedPercent, -1) &&
		a.DiskSize.Cmp(*b.DiskSize) == 0 && a.IndicesSize.Cmp(*b.IndicesSize) == 0
}

// TestSlowElasticsearchNeverHoldsASync: observe returns while a read hangs, and the next
// read starts only after the interval.
func TestSlowElasticsearchNeverHoldsASync(t *testing.T) {
	srv := elastictest.NewServer(t)
	release := make(chan struct{})
	srv.Handle("GET", "/_cluster/health", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		elastictest.JSON(200, greenHealth).ServeHTTP(w, r)
	}))
	srv.Reply("GET", "/_cat/allocation", 200, allocation80)
	h, got := testHealthReads(t, srv, time.Minute)
	_, ctx := ktesting.NewTestContext(t)
	m := newMonocle("m")
	for range 3 {
		if _, pending := h.observe(ctx, m, readInputs{elasticReady: true}); !pending {
			t.Fatal("the first read is not pending while Elasticsearch has not answered")
		}
	}
	close(release)
	waitRead(t, got)
	if n := len(srv.RequestsTo("GET", "/_cluster/health")); n != 1 {
		t.Errorf("%d health requests, want 1: syncs during a read started others", n)
	}
	// A Monocle deleted and created again under the same name reads afresh.
	m.UID = "another"
	if _, pending := h.observe(ctx, m, readInputs{elasticReady: true}); !pending {
		t.Error("a new Monocle of the same name reuses the old one's read")
	}
	waitRead(t, got)
}

// readingFixture is a fixture of a converged Monocle, its Elasticsearch ready, whose controller
// reads Elasticsearch every interval from a fake that answers yellow and 80% full.
func readingFixture(ctx context.Context, t *testing.T, interval time.Duration) (*fixture, *monoclev1alpha1.Monocle, *elastictest.Server) {
	t.Helper()
	m, objects := converged(t, newMonocle("demo"))
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, yellowHealth)
	srv.Reply("GET", "/_cat/allocation", 200, allocation80)
	// The API's health, asked through its Service, reaches the same fake (DialAddress).
	srv.Reply("GET", "/health", 200, `"ok"`)
	srv.Reply("GET", "/_cat/indices/monocle.changes.1.*", 200, `[]`)
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	f.newController().ReadOperands(ctx, OperandOptions{Interval: interval, Timeout: 10 * time.Second, DialAddress: hostOf(t, srv)})
	return f, m, srv
}

// syncThroughFirstRead syncs the Monocle key of a readingFixture twice: the first sync starts
// the first read of Elasticsearch and writes nothing, the read's end adds the key to the
// queue at once, and the second sync writes the status alone, which it returns.
func syncThroughFirstRead(ctx context.Context, t *testing.T, f *fixture, key cache.ObjectName) *monoclev1alpha1.Monocle {
	t.Helper()
	c := f.controller
	if err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if w := writes(f.client.Actions()); len(w) != 0 {
		t.Fatalf("the sync that started the first read wrote %v", describe(w))
	}
	item, shutdown := c.queue.Get()
	if shutdown || item != key {
		t.Fatalf("queue gave %v (shutdown %v), want %v", item, shutdown, key)
	}
	c.queue.Done(item)
	if err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	w := writes(f.client.Actions())
	if len(w) != 1 {
		t.Fatalf("writes after the read: %v, want one status update", describe(w))
	}
	return w[0].(interface{ GetObject() runtime.Object }).GetObject().(*monoclev1alpha1.Monocle)
}

// TestFirstReadHoldsTheStatusWrite: the sync that starts the first read of a ready
// Elasticsearch writes no status; the read's end enqueues the Monocle, whose next sync writes
// the status with the health in it.
func TestFirstReadHoldsTheStatusWrite(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, m, _ := readingFixture(ctx, t, time.Hour)
	status := syncThroughFirstRead(ctx, t, f, cache.MetaObjectToName(m)).Status
	if status.ElasticsearchHealth == nil || status.ElasticsearchHealth.Status != "yellow" {
		t.Errorf("status.elasticsearchHealth = %+v, want yellow", status.ElasticsearchHealth)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionElasticsearchHealthy); c.Status != metav1.ConditionTrue || c.Reason != reasons.Yellow {
		t.Errorf("ElasticsearchHealthy = %+v", c)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v", c)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionAPIHealthy); c.Status != metav1.ConditionTrue || c.Reason != reasons.APIAnswers {
		t.Errorf("APIHealthy = %+v", c)
	}
}

// TestAPIHealthReported: an API that answers its health check through the Service with an
// error status is reported in APIHealthy, with the status, and the Monocle stays Ready.
func TestAPIHealthReported(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, m, srv := readingFixture(ctx, t, time.Hour)
	srv.Reply("GET", "/health", 503, `"starting"`)
	status := syncThroughFirstRead(ctx, t, f, cache.MetaObjectToName(m)).Status
	if got := srv.RequestsTo("GET", "/health"); len(got) != 1 {
		t.Fatalf("%d health requests to the API, want 1", len(got))
	}
	api := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionAPIHealthy)
	if api.Status != metav1.ConditionFalse || api.Reason != reasons.APIUnreachable || !strings.Contains(api.Message, "503") || !strings.Contains(api.Message, "demo-api") {
		t.Errorf("APIHealthy = %+v", api)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v", c)
	}
}

// TestElasticsearchIsReadEveryInterval: each read brings the Monocle back after the interval,
// whose sync reads again; a change of Elasticsearch's answer reaches the status.
func TestElasticsearchIsReadEveryInterval(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f, m, srv := readingFixture(ctx, t, 300*time.Millisecond)
	c := f.controller
	go func() {
		for c.processNextWorkItem(ctx) {
		}
	}()
	defer c.queue.ShutDown()
	key := cache.ObjectName{Namespace: m.Namespace, Name: m.Name}
	c.queue.Add(key)
	testkitEventually(t, func() bool { return len(srv.RequestsTo("GET", "/_cluster/health")) >= 1 })
	// A shorter delay for the same key (the resync after a status change) replaces the one
	// the read asked for in the queue; reads go on all the same.
	c.queue.AddAfter(key, 10*time.Millisecond)
	testkitEventually(t, func() bool { return len(srv.RequestsTo("GET", "/_cluster/health")) >= 3 })
	srv.Reply("GET", "/_cluster/health", 200, redHealth)
	testkitEventually(t, func() bool {
		for _, a := range writes(f.client.Actions()) {
			s := a.(interface{ GetObject() runtime.Object }).GetObject().(*monoclev1alpha1.Monocle).Status
			if s.ElasticsearchHealth != nil && s.ElasticsearchHealth.Status == "red" {
				return true
			}
		}
		return false
	})
}

// testkitEventually polls cond every 10 ms for up to 30 s.
func testkitEventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("not true after 30 s")
}

// TestRestartKeepsEarlierHealth: an operator that has not read a Monocle's Elasticsearch yet
// (it just started, and every read slot is taken) keeps the health an earlier read left in
// the status, and writes nothing: "not read yet" is no news. Before, every Monocle's status
// flapped to ElasticsearchUnreachable and back at each start (seen as failed status writes
// in the fault suite's API server outage).
func TestRestartKeepsEarlierHealth(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, m, _ := readingFixture(ctx, t, time.Hour)
	key := cache.MetaObjectToName(m)
	read := syncThroughFirstRead(ctx, t, f, key)

	// A new operator process: the Monocle as the first one left it, no read yet, and no slot.
	g := newFixture(t)
	g.monocles = []*monoclev1alpha1.Monocle{read}
	g.kubeobjects = f.kubeobjects
	restarted := g.newController()
	restarted.ReadOperands(ctx, OperandOptions{Interval: time.Hour, Timeout: time.Second, MaxReads: 1, DialAddress: "127.0.0.1:1"})
	restarted.health.slots <- struct{}{}
	if err := restarted.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if w := writes(g.client.Actions()); len(w) != 0 {
		status := w[0].(interface{ GetObject() runtime.Object }).GetObject().(*monoclev1alpha1.Monocle).Status
		t.Errorf("a restarted operator wrote the status before reading Elasticsearch: ElasticsearchHealthy %+v",
			condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionElasticsearchHealthy))
	}
}

// clusterSettings96 is GET _cluster/settings?include_defaults&flat_settings of Elasticsearch
// 7.17 with the default disk watermarks (85%, 90%, 95%).
const clusterSettings96 = `{"persistent":{},"transient":{},"defaults":{"cluster.routing.allocation.disk.watermark.low":"85%",` +
	`"cluster.routing.allocation.disk.watermark.high":"90%","cluster.routing.allocation.disk.watermark.flood_stage":"95%"}}`

// TestReadOnlyBlockCleared: past the flood stage the read reports the indices Elasticsearch
// made read-only (DiskPressure IndicesReadOnly); once the disk is under the high watermark
// and the block stayed, the read clears it, and the next one finds none.
func TestReadOnlyBlockCleared(t *testing.T) {
	srv := elastictest.NewServer(t)
	full := strings.NewReplacer(`"disk.used":"8589934592"`, `"disk.used":"10307921510"`, `"disk.percent":"80"`, `"disk.percent":"96"`).Replace(allocation80)
	srv.Reply("GET", "/_cluster/health", 200, greenHealth)
	srv.Reply("GET", "/_cat/allocation", 200, full)
	srv.Reply("GET", "/_all/_settings/index.blocks.read_only_allow_delete", 200,
		`{"monocle.changes.1.demo":{"settings":{"index.blocks.read_only_allow_delete":"true"}},"monocle.config":{"settings":{}}}`)
	srv.Reply("GET", "/_cluster/settings", 200, clusterSettings96)
	srv.Reply("PUT", "/monocle.changes.1.demo/_settings", 200, `{"acknowledged":true}`)
	h, got := testHealthReads(t, srv, time.Hour)
	m := newMonocle("m")
	_, ctx := ktesting.NewTestContext(t)
	key := cache.MetaObjectToName(m)
	// read runs one read starting from the earlier health was, and returns its result.
	read := func(was *monoclev1alpha1.ElasticsearchHealth) healthRead {
		t.Helper()
		h.mu.Lock()
		h.last[key] = &healthRead{uid: m.UID, health: was}
		h.mu.Unlock()
		h.observe(ctx, m, readInputs{elasticReady: true})
		waitRead(t, got)
		h.mu.Lock()
		defer h.mu.Unlock()
		return *h.last[key]
	}

	last := read(nil)
	disk := condition(t, withConditions(healthConditions(m, last, true)), monoclev1alpha1.ConditionDiskPressure)
	if disk.Reason != reasons.IndicesReadOnly || !strings.Contains(disk.Message, "monocle.changes.1.demo") {
		t.Fatalf("past the flood stage: DiskPressure %+v", disk)
	}
	if n := len(srv.RequestsTo("PUT", "/monocle.changes.1.demo/_settings")); n != 0 {
		t.Fatalf("the block was cleared %d times above the high watermark", n)
	}

	// The disk is back under the high watermark, the block stayed: cleared.
	srv.Reply("GET", "/_cat/allocation", 200, allocation80)
	last = read(last.health)
	if n := len(srv.RequestsTo("PUT", "/monocle.changes.1.demo/_settings")); n != 1 {
		t.Fatalf("%d block clearings under the high watermark, want 1", n)
	}
	if disk := condition(t, withConditions(healthConditions(m, last, true)), monoclev1alpha1.ConditionDiskPressure); disk.Reason != reasons.VolumeHasRoom {
		t.Errorf("after the clearing: DiskPressure %+v", disk)
	}
}

// TestReadOnlyReadFailuresAreNotFatal: past 85% full, an Elasticsearch whose settings cannot
// be read (500, garbage, slow) still has its health and disk use read.
func TestReadOnlyReadFailuresAreNotFatal(t *testing.T) {
	full := strings.NewReplacer(`"disk.used":"8589934592"`, `"disk.used":"10307921510"`, `"disk.percent":"80"`, `"disk.percent":"96"`).Replace(allocation80)
	for name, settings := range map[string]http.Handler{
		"500":     elastictest.Error(500, "exception", "boom"),
		"garbage": elastictest.Raw(200, "text/html", "<html>"),
		"slow":    elastictest.Slow(time.Minute, elastictest.JSON(200, `{}`)),
	} {
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			srv.Reply("GET", "/_cluster/health", 200, greenHealth)
			srv.Reply("GET", "/_cat/allocation", 200, full)
			srv.Handle("GET", "/_all/_settings/index.blocks.read_only_allow_delete", settings)
			client, err := elastic.New(srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			health, err := readElastic(ctx, klog.Background(), client, false, true)
			if err != nil || health == nil || health.Status != "green" || ptr.Deref(health.DiskUsedPercent, 0) < 95 || health.ReadOnlyIndices != nil {
				t.Errorf("health %+v, err %v; want green, 95%% or more, no read-only indices", health, err)
			}
		})
	}
}
