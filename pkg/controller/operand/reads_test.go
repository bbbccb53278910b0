package operand_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

// TestElasticsearchHealthIsReadInTheBackground: what Elasticsearch answers, and how it fails,
// becomes the ElasticsearchHealthy and DiskPressure conditions and the health in the status.
func TestElasticsearchHealthIsReadInTheBackground(t *testing.T) {
	registerMetrics()
	type want struct {
		healthy, healthyReason, disk, diskReason string
		message                                  string
		health                                   *monoclev1alpha1.ElasticsearchHealth
	}
	tenGiB, fiftyMiB := contract.Mebibytes(10<<30), contract.Mebibytes(50<<20)
	cases := 0
	for name, tc := range map[string]struct {
		health, allocation http.Handler
		want               want
	}{
		"green": {health: elastictest.JSON(200, elastictest.GreenHealth), allocation: elastictest.JSON(200, elastictest.Allocation80),
			want: want{healthy: "True", healthyReason: reasons.Green, disk: "False", diskReason: reasons.VolumeHasRoom, message: "80% full",
				health: &monoclev1alpha1.ElasticsearchHealth{Status: "green", DiskUsedPercent: ptr.To[int32](80), DiskSize: tenGiB, IndicesSize: fiftyMiB}}},
		"yellow": {health: elastictest.JSON(200, elastictest.YellowHealth), allocation: elastictest.JSON(200, elastictest.Allocation80),
			want: want{healthy: "True", healthyReason: reasons.Yellow, disk: "False", diskReason: reasons.VolumeHasRoom, message: "single node",
				health: &monoclev1alpha1.ElasticsearchHealth{Status: "yellow", DiskUsedPercent: ptr.To[int32](80), DiskSize: tenGiB, IndicesSize: fiftyMiB}}},
		"red, and a volume almost full": {health: elastictest.JSON(200, elastictest.RedHealth), allocation: elastictest.JSON(200, elastictest.Allocation90),
			want: want{healthy: "False", healthyReason: reasons.Red, disk: "True", diskReason: reasons.VolumeAlmostFull, message: "90% full (over 85%)",
				health: &monoclev1alpha1.ElasticsearchHealth{Status: "red", DiskUsedPercent: ptr.To[int32](90), DiskSize: tenGiB, IndicesSize: fiftyMiB}}},
		"slow": {health: elastictest.Slow(time.Minute, elastictest.JSON(200, elastictest.GreenHealth)), allocation: elastictest.JSON(200, elastictest.Allocation80),
			want: want{healthy: "Unknown", healthyReason: reasons.ElasticsearchUnreachable, disk: "Unknown", diskReason: reasons.ElasticsearchUnreachable,
				message: "context deadline exceeded"}},
		"garbage": {health: elastictest.Raw(200, "text/html", "<html>proxy</html>"), allocation: elastictest.JSON(200, elastictest.Allocation80),
			want: want{healthy: "Unknown", healthyReason: reasons.ElasticsearchUnreachable, disk: "Unknown", diskReason: reasons.ElasticsearchUnreachable,
				message: "decoding _cluster/health"}},
		"500": {health: elastictest.Error(500, "exception", "boom"), allocation: elastictest.JSON(200, elastictest.Allocation80),
			want: want{healthy: "Unknown", healthyReason: reasons.ElasticsearchUnreachable, disk: "Unknown", diskReason: reasons.ElasticsearchUnreachable,
				message: "status 500 exception: boom"}},
		"disk unreadable": {health: elastictest.JSON(200, elastictest.GreenHealth), allocation: elastictest.Error(500, "exception", "no disk"),
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
			w, got := testWorker(t, srv, 500*time.Millisecond)
			m := newMonocle(fmt.Sprintf("m-%d", cases))
			_, ctx := ktesting.NewTestContext(t)

			last, _ := w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m)})
			if last.Pending || len(srv.Requests()) != 0 {
				t.Fatalf("Elasticsearch without a ready pod: pending %v, %d requests; want no read", last.Pending, len(srv.Requests()))
			}
			conds := day2.HealthConditions(m, last, false)
			if c := condition(t, conds, monoclev1alpha1.ConditionElasticsearchHealthy); c.Reason != reasons.ElasticsearchNotReady {
				t.Errorf("before a ready pod: %+v", c)
			}

			if first, _ := w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true}); !first.Pending {
				t.Error("the first read is not pending")
			}
			waitRead(t, got)
			last, _ = w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true})
			if last.Pending {
				t.Error("a read that ended is still pending")
			}
			conds = day2.HealthConditions(m, last, true)
			healthy := condition(t, conds, monoclev1alpha1.ConditionElasticsearchHealthy)
			disk := condition(t, conds, monoclev1alpha1.ConditionDiskPressure)
			if string(healthy.Status) != tc.want.healthy || healthy.Reason != tc.want.healthyReason ||
				string(disk.Status) != tc.want.disk || disk.Reason != tc.want.diskReason {
				t.Errorf("ElasticsearchHealthy %s/%s, DiskPressure %s/%s; want %s/%s, %s/%s", healthy.Status, healthy.Reason, disk.Status, disk.Reason,
					tc.want.healthy, tc.want.healthyReason, tc.want.disk, tc.want.diskReason)
			}
			if !strings.Contains(healthy.Message+" "+disk.Message, tc.want.message) {
				t.Errorf("messages %q, %q do not say %q", healthy.Message, disk.Message, tc.want.message)
			}
			if (last.Health == nil) != (tc.want.health == nil) || (last.Health != nil && !equalHealth(*last.Health, *tc.want.health)) {
				t.Errorf("health %+v, want %+v", last.Health, tc.want.health)
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
			w.Forget(cache.MetaObjectToName(m))
			// Within the interval, no new read.
			before := len(srv.Requests())
			w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true})
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

// TestSlowElasticsearchNeverHoldsASync: Observe returns while a read hangs, and the next
// read starts only after the interval.
func TestSlowElasticsearchNeverHoldsASync(t *testing.T) {
	srv := elastictest.NewServer(t)
	release := make(chan struct{})
	srv.Handle("GET", "/_cluster/health", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		elastictest.JSON(200, elastictest.GreenHealth).ServeHTTP(w, r)
	}))
	srv.Reply("GET", "/_cat/allocation", 200, elastictest.Allocation80)
	op, got := testWorker(t, srv, time.Minute)
	_, ctx := ktesting.NewTestContext(t)
	m := newMonocle("m")
	for range 3 {
		if last, _ := op.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true}); !last.Pending {
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
	if last, _ := op.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true}); !last.Pending {
		t.Error("a new Monocle of the same name reuses the old one's read")
	}
	waitRead(t, got)
}

// TestReadOnlyReadFailuresAreNotFatal: past the watermarks, an Elasticsearch whose index
// settings cannot be read (500, garbage, slow) still has its health and disk use read.
func TestReadOnlyReadFailuresAreNotFatal(t *testing.T) {
	full := strings.NewReplacer(`"disk.used":"8589934592"`, `"disk.used":"10307921510"`, `"disk.percent":"80"`, `"disk.percent":"96"`).Replace(elastictest.Allocation80)
	for name, settings := range map[string]http.Handler{
		"500":     elastictest.Error(500, "exception", "boom"),
		"garbage": elastictest.Raw(200, "text/html", "<html>"),
		"slow":    elastictest.Slow(time.Minute, elastictest.JSON(200, `{}`)),
	} {
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			srv.Reply("GET", "/_cluster/health", 200, elastictest.GreenHealth)
			srv.Reply("GET", "/_cat/allocation", 200, full)
			srv.Handle("GET", "/_all/_settings/index.blocks.read_only_allow_delete", settings)
			srv.Reply("GET", "/_cluster/settings", 200, clusterSettings96)
			client, err := elastic.New(srv.URL, srv.Transport())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			health, _, _, _, err := operand.ReadHealth(ctx, klog.Background(), client, false)
			if err != nil || health == nil || health.Status != "green" || ptr.Deref(health.DiskUsedPercent, 0) < 95 || health.ReadOnlyIndices != nil {
				t.Errorf("health %+v, err %v; want green, 95%% or more, no read-only indices", health, err)
			}
		})
	}
}

// TestAPIReadyStartsARead: a read starts as soon as the API has a ready pod that no read has
// asked, before the interval, and APIPending says so until it ends; once a read has asked
// the API, the interval holds again.
func TestAPIReadyStartsARead(t *testing.T) {
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, elastictest.GreenHealth)
	srv.Reply("GET", "/_cat/allocation", 200, elastictest.Allocation80)
	srv.Reply("GET", "/health", 200, `"ok"`)
	w, got := testWorker(t, srv, 5*time.Second)
	m := newMonocle("m")
	ctx := context.Background()

	if _, reading := w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true}); !reading {
		t.Fatal("the worker does not read")
	}
	waitRead(t, got)
	if n := len(srv.RequestsTo("GET", "/_cluster/health")); n != 1 {
		t.Fatalf("%d reads of Elasticsearch, want 1", n)
	}
	if last, _ := w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true}); last.APIPending || last.APIRead {
		t.Errorf("API not ready: APIPending %v, APIRead %v, want neither", last.APIPending, last.APIRead)
	}
	<-got // the enqueue of the next read, after the interval

	last, _ := w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true, APIReady: true})
	if !last.APIPending {
		t.Errorf("the API just became ready: APIPending false, want a read under way that asks it")
	}
	waitRead(t, got)
	if n := len(srv.RequestsTo("GET", "/health")); n != 1 {
		t.Errorf("%d reads of the API's /health, want 1", n)
	}
	last, _ = w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true, APIReady: true})
	if last.APIPending || !last.APIRead {
		t.Errorf("after the read: APIPending %v, APIRead %v, want false, true", last.APIPending, last.APIRead)
	}
	if n := len(srv.RequestsTo("GET", "/_cluster/health")); n != 2 {
		t.Errorf("%d reads of Elasticsearch, want 2: no read before the interval once the API was asked", n)
	}
}

func TestReplicasFit(t *testing.T) {
	for _, tc := range []struct {
		replicas  int32
		dataNodes int
		fit       bool
	}{
		{0, 1, true}, {1, 1, false}, {1, 2, true}, {2, 2, false}, {2, 3, true}, {0, 0, false}, {-1, 3, false},
	} {
		if got := contract.ReplicasFit(tc.replicas, tc.dataNodes); got != tc.fit {
			t.Errorf("ReplicasFit(%d, %d) = %v, want %v", tc.replicas, tc.dataNodes, got, tc.fit)
		}
	}
}

// TestKeepReplicas: against the fake Elasticsearch, replicas that differ are set on every
// Monocle index, closed and hidden ones included, only when the data nodes hold them; an
// index that appears later, a new workspace's, is caught by the next read.
func TestKeepReplicas(t *testing.T) {
	ctx := context.Background()
	m := backupMonocle("")
	f, client := fakeElastic(t, m)
	if err := client.CloseIndices(ctx, "monocle.changes.1.demo"); err != nil {
		t.Fatal(err)
	}
	f.SetHidden("ns", "m", "monocle.changes.1.hidden")
	keep := operand.ReplicasPlan{Keep: true, N: 1}
	all := func(n int, indices ...string) map[string]int {
		out := map[string]int{}
		for _, ix := range indices {
			out[ix] = n
		}
		return out
	}
	three := []string{"monocle.config", "monocle.changes.1.demo", "monocle.changes.1.hidden"}

	// One data node cannot hold a replica: read, left as they are.
	got, why := operand.KeepReplicas(ctx, klog.Background(), client, keep, 1)
	if why != "" || !maps.Equal(got, all(0, three...)) {
		t.Errorf("on one node: %v %q, want 0 everywhere, unchanged", got, why)
	}
	// Two can.
	got, why = operand.KeepReplicas(ctx, klog.Background(), client, keep, 2)
	if why != "" || !maps.Equal(got, all(1, three...)) {
		t.Errorf("on two nodes: %v %q, want 1 everywhere", got, why)
	}
	for _, ix := range f.Indices("ns", "m") {
		if ix.Replicas != 1 {
			t.Errorf("the fake's %s has %d replicas, want 1", ix.Name, ix.Replicas)
		}
	}
	// A new workspace's index, created by Monocle with 0.
	f.SetDocs("ns", "m", "monocle.changes.1.new", 3)
	got, _ = operand.KeepReplicas(ctx, klog.Background(), client, keep, 2)
	if want := all(1, append(three, "monocle.changes.1.new")...); !maps.Equal(got, want) {
		t.Errorf("after a new workspace: %v, want %v", got, want)
	}
	// Not kept: not even read.
	if got, why := operand.KeepReplicas(ctx, klog.Background(), client, operand.ReplicasPlan{}, 2); got != nil || why != "" {
		t.Errorf("without Keep: %v %q, want nothing", got, why)
	}
}

// TestKeepReplicasSendsNothingNeedless: replicas as wanted are not set again (the fake fails
// the test on a PUT it has no route for); a failed read or set is reported.
func TestKeepReplicasSendsNothingNeedless(t *testing.T) {
	ctx := context.Background()
	srv := elastictest.NewServer(t)
	client, err := elastic.New(srv.URL, srv.Transport())
	if err != nil {
		t.Fatal(err)
	}
	const path = "/monocle*/_settings/index.number_of_replicas"
	srv.Reply("GET", path, 200, `{"monocle.config":{"settings":{"index.number_of_replicas":"2"}}}`)
	if got, why := operand.KeepReplicas(ctx, klog.Background(), client, operand.ReplicasPlan{Keep: true, N: 2}, 3); why != "" || got["monocle.config"] != 2 {
		t.Errorf("as wanted: %v %q", got, why)
	}
	srv.Reply("PUT", "/monocle*/_settings", 429, `{"error":{"type":"cluster_block_exception","reason":"blocked"},"status":429}`)
	if got, why := operand.KeepReplicas(ctx, klog.Background(), client, operand.ReplicasPlan{Keep: true, N: 1}, 3); got["monocle.config"] != 2 ||
		why == "" {
		t.Errorf("a refused set: %v %q, want the replicas as read and the error", got, why)
	}
	srv.ReplyError("GET", path, 500, "exception", "boom")
	if got, why := operand.KeepReplicas(ctx, klog.Background(), client, operand.ReplicasPlan{Keep: true, N: 1}, 3); got != nil || why == "" {
		t.Errorf("a failed read: %v %q, want nothing and the error", got, why)
	}
}

// TestReadKeepsReplicas: a read with indexReplicas in its plan reports the data nodes of the
// health and the replicas after setting them.
func TestReadKeepsReplicas(t *testing.T) {
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, threeNodes)
	srv.Reply("GET", "/_cat/allocation", 200, elastictest.Allocation80)
	srv.Reply("GET", "/monocle*/_settings/index.number_of_replicas", 200, `{"monocle.config":{"settings":{"index.number_of_replicas":"0"}}}`)
	srv.Reply("PUT", "/monocle*/_settings", 200, `{"acknowledged":true}`)
	w, got := testWorker(t, srv, 5*time.Second)
	m := newMonocle("m")
	_, ctx := ktesting.NewTestContext(t)
	w.Observe(ctx, m, operand.Inputs{Target: bundledTarget(m), ElasticReady: true, Plan: operand.Plan{Replicas: operand.ReplicasPlan{Keep: true, N: 2}}})
	waitRead(t, got)
	last := operand.Last(w, m)
	if last.DataNodes != 3 || !maps.Equal(last.Replicas, map[string]int{"monocle.config": 2}) || last.ReplicasErr != "" {
		t.Errorf("result: %d data nodes, replicas %v %q; want 3 and 2", last.DataNodes, last.Replicas, last.ReplicasErr)
	}
}

// threeNodes is GET _cluster/health of a green cluster of three data nodes.
const threeNodes = `{"cluster_name":"es","status":"green","timed_out":false,"number_of_nodes":3,"number_of_data_nodes":3,"active_primary_shards":2,"active_shards":2,"relocating_shards":0,"initializing_shards":0,"unassigned_shards":0,"delayed_unassigned_shards":0,"number_of_pending_tasks":0,"number_of_in_flight_fetch":0,"task_max_waiting_in_queue_millis":0,"active_shards_percent_as_number":100.0}`
