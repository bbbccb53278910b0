package controller

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// TestIndexReplicasRefusedOnTheBundledNode: the bundled Elasticsearch is one data node, so
// indexReplicas 1 is refused (SpecAccepted, Degraded) before any read, while the rest is made
// as usual; 0 is accepted. The status names the bundled cluster.
func TestIndexReplicasRefusedOnTheBundledNode(t *testing.T) {
	for replicas, refused := range map[int32]bool{0: false, 1: true} {
		m := newMonocle("demo")
		m.Spec.Elasticsearch.IndexReplicas = ptr.To(replicas)
		f := newFixture(t)
		f.monocles = []*monoclev1alpha1.Monocle{m}
		kubeWrites, status := f.runStatus()
		if written[*appsv1.StatefulSet](kubeWrites, "demo-elastic") == nil {
			t.Errorf("%d: no StatefulSet: %v", replicas, describe(kubeWrites))
		}
		if refused {
			expectRefused(t, status, reasons.IndexReplicasTooHigh, "indexReplicas is 1 but the cluster has 1 data nodes")
		} else if c := condition(t, status, monoclev1alpha1.ConditionSpecAccepted); c.Status != metav1.ConditionTrue {
			t.Errorf("%d: SpecAccepted = %+v", replicas, c)
		}
		if c := status.Status.ElasticsearchCluster; c == nil || c.Kind != monoclev1alpha1.ElasticsearchBundled || c.URL != "http://demo-elastic:9200" {
			t.Errorf("%d: status.elasticsearchCluster = %+v, want Bundled at http://demo-elastic:9200", replicas, c)
		}
	}
}

// TestIndexReplicasKept: the read finds an index of Monocle's with another number of
// replicas than indexReplicas, sets it on all of them, and the status reports the cluster's
// data nodes and the replicas.
func TestIndexReplicasKept(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, m, srv := readingFixture(t, time.Hour)
	m.Spec.Elasticsearch.IndexReplicas = ptr.To[int32](0)
	srv.Reply("GET", "/monocle*/_settings/index.number_of_replicas", 200,
		`{"monocle.config":{"settings":{"index.number_of_replicas":"1"}},"monocle.changes.1.demo":{"settings":{"index.number_of_replicas":"0"}}}`)
	srv.Reply("PUT", "/monocle*/_settings", 200, `{"acknowledged":true}`)
	status := syncThroughFirstRead(ctx, t, f, cache.MetaObjectToName(m)).Status
	puts := srv.RequestsTo("PUT", "/monocle*/_settings")
	if len(puts) != 1 || string(puts[0].Body) != `{"index":{"number_of_replicas":0}}` || puts[0].Query.Get("expand_wildcards") != "all" {
		t.Fatalf("PUT requests %+v, want one setting 0 on every Monocle index", puts)
	}
	c := status.ElasticsearchCluster
	if c == nil || !ptr.Equal(c.DataNodes, ptr.To[int32](1)) || !ptr.Equal(c.IndexReplicas, ptr.To[int32](0)) {
		t.Errorf("status.elasticsearchCluster = %+v, want 1 data node and 0 replicas", c)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionSpecAccepted); c.Status != metav1.ConditionTrue {
		t.Errorf("SpecAccepted = %+v", c)
	}
}

// TestExistingRepositoryHasNoBackupClaim: a repository registered by someone else needs no
// volume: the sync creates no backup claim, where a volume repository gets one.
func TestExistingRepositoryHasNoBackupClaim(t *testing.T) {
	for existing, wantClaim := range map[string]bool{"": true, "cluster-backups": false} {
		m := newMonocle("demo")
		m.Spec.Backup = &monoclev1alpha1.BackupSpec{Repository: monoclev1alpha1.BackupRepository{Existing: existing}}
		f := newFixture(t)
		f.monocles = []*monoclev1alpha1.Monocle{m}
		kubeWrites, _ := f.run()
		if got := slices.Contains(describe(kubeWrites), "create persistentvolumeclaims demo-backup"); got != wantClaim {
			t.Errorf("existing %q: backup claim created %v, want %v: %v", existing, got, wantClaim, describe(kubeWrites))
		}
	}
}

// TestIndexReplicasOnAClusterByURL: on a cluster of one's own, the data nodes an earlier read
// found (status.elasticsearchCluster) decide: 3 replicas on 3 data nodes are refused, on 4
// accepted, and nothing is refused before a read found them.
func TestIndexReplicasOnAClusterByURL(t *testing.T) {
	for name, tc := range map[string]struct {
		nodes   *int32
		refused bool
	}{
		"3 data nodes": {nodes: ptr.To[int32](3), refused: true},
		"4 data nodes": {nodes: ptr.To[int32](4)},
		"not read yet": {},
	} {
		t.Run(name, func(t *testing.T) {
			m := withExternal("demo", "http://es.example.com:9200", "", "")
			m.Spec.Elasticsearch.IndexReplicas = ptr.To[int32](3)
			m.Status.ElasticsearchCluster = &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchExternal,
				URL: "http://es.example.com:9200", DataNodes: tc.nodes}
			f := newFixture(t)
			f.monocles = []*monoclev1alpha1.Monocle{m}
			_, status := f.runStatus()
			if tc.refused {
				expectRefused(t, status, reasons.IndexReplicasTooHigh, "indexReplicas is 3 but the cluster has 3 data nodes")
			} else if c := condition(t, status, monoclev1alpha1.ConditionSpecAccepted); c.Status != metav1.ConditionTrue {
				t.Errorf("SpecAccepted = %+v", c)
			}
			if c := status.Status.ElasticsearchCluster; c == nil || c.Kind != monoclev1alpha1.ElasticsearchExternal || !ptr.Equal(c.DataNodes, tc.nodes) {
				t.Errorf("status.elasticsearchCluster = %+v, want External with the data nodes kept", c)
			}
		})
	}
}
