package operand_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

func TestReplicasFit(t *testing.T) {
	for _, tc := range []struct {
		replicas  int32
		dataNodes int
		fit       bool
	}{
		{0, 1, true}, {1, 1, false}, {1, 2, true}, {2, 2, false}, {2, 3, true}, {0, 0, false}, {-1, 3, false},
	} {
		if got := operand.ReplicasFit(tc.replicas, tc.dataNodes); got != tc.fit {
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
	client, err := elastic.New(srv.URL, nil)
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
	w.Observe(ctx, m, operand.Inputs{ElasticReady: true, Plan: operand.Plan{Replicas: operand.ReplicasPlan{Keep: true, N: 2}}})
	waitRead(t, got)
	last := operand.Last(w, m)
	if last.DataNodes != 3 || !maps.Equal(last.Replicas, map[string]int{"monocle.config": 2}) || last.ReplicasErr != "" {
		t.Errorf("result: %d data nodes, replicas %v %q; want 3 and 2", last.DataNodes, last.Replicas, last.ReplicasErr)
	}
}

// threeNodes is GET _cluster/health of a green cluster of three data nodes.
const threeNodes = `{"cluster_name":"es","status":"green","timed_out":false,"number_of_nodes":3,"number_of_data_nodes":3,"active_primary_shards":2,"active_shards":2,"relocating_shards":0,"initializing_shards":0,"unassigned_shards":0,"delayed_unassigned_shards":0,"number_of_pending_tasks":0,"number_of_in_flight_fetch":0,"task_max_waiting_in_queue_millis":0,"active_shards_percent_as_number":100.0}`
