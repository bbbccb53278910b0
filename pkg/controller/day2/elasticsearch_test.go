package day2

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestHeapAboveLimitIsRefused: a javaOpts heap above 75% of the memory limit (given, or the
// default 1Gi) is refused with both numbers; 75% and the derived default are accepted.
func TestHeapAboveLimitIsRefused(t *testing.T) {
	limit := func(q string) *corev1.ResourceRequirements {
		return &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}}
	}
	for _, c := range []struct {
		javaOpts  string
		resources *corev1.ResourceRequirements
		refused   string
	}{
		{"-Xms1g -Xmx1g", limit("1Gi"), "heap of 1g (1024 MiB) for a memory limit of 1Gi (1024 MiB)"},
		{"-Xmx900M", nil, "heap of 900M (900 MiB) for a memory limit of 1Gi (1024 MiB)"},
		{"-Xmx512m -Xmx3g", limit("4Gi"), ""},
		{"-Xmx3g -Xmx512m", limit("2Gi"), ""},
		{"-Xmx3g -Xmx4g", limit("4Gi"), "heap of 4g"},
		{"-Xmx768m", nil, ""},
		{"-Xmx769m", nil, "heap of 769m"},
		{"-Xmx99999999999999999999g", limit("64Gi"), "heap of 99999999999999999999g"},
		{"-Xmx9999999999g", limit("64Gi"), "heap of 9999999999g"},
		{"-Xms2g", limit("1Gi"), ""},
		{"", limit("8Gi"), ""},
	} {
		m := newMonocle("demo")
		m.Spec.Elasticsearch.JavaOpts, m.Spec.Elasticsearch.Resources = c.javaOpts, c.resources
		cond := ElasticSpecCondition(m, nil)
		switch {
		case c.refused == "" && cond.Status != metav1.ConditionTrue:
			t.Errorf("%q: refused: %s", c.javaOpts, cond.Message)
		case c.refused != "" && (cond.Reason != reasons.HeapAboveLimit || !strings.Contains(cond.Message, c.refused)):
			t.Errorf("%q: SpecAccepted = %+v, want HeapAboveLimit saying %q", c.javaOpts, cond, c.refused)
		}
	}
}

// replicasMonocle is Monocle "demo" asking for replicas (nil: indexReplicas unset).
func replicasMonocle(replicas *int32) *monoclev1alpha1.Monocle {
	m := newMonocle("demo")
	m.Spec.Elasticsearch.IndexReplicas = replicas
	return m
}

func TestPlanIndexReplicas(t *testing.T) {
	if p := PlanIndexReplicas(replicasMonocle(nil)); p != (contract.ReplicasPlan{}) {
		t.Errorf("unset: %+v, want nothing kept", p)
	}
	if p := PlanIndexReplicas(replicasMonocle(ptr.To[int32](0))); p != (contract.ReplicasPlan{Keep: true, N: 0}) {
		t.Errorf("0: %+v, want 0 kept", p)
	}
	if p := PlanIndexReplicas(replicasMonocle(ptr.To[int32](2))); p != (contract.ReplicasPlan{Keep: true, N: 2}) {
		t.Errorf("2: %+v, want 2 kept", p)
	}
}

// TestReplicasCondition: N replicas are accepted up to the data nodes - 1, the bundled
// Elasticsearch counting one node before any read; refused above, with the numbers.
func TestReplicasCondition(t *testing.T) {
	cluster := func(kind monoclev1alpha1.ElasticsearchClusterKind, nodes *int32) *monoclev1alpha1.ElasticsearchClusterStatus {
		return &monoclev1alpha1.ElasticsearchClusterStatus{Kind: kind, DataNodes: nodes}
	}
	for name, tc := range map[string]struct {
		replicas *int32
		cluster  *monoclev1alpha1.ElasticsearchClusterStatus
		// refused is "" for no refusal, or text its message has.
		refused string
	}{
		"unset":                               {cluster: cluster(monoclev1alpha1.ElasticsearchBundled, ptr.To[int32](1))},
		"unset, on one node too":              {cluster: cluster(monoclev1alpha1.ElasticsearchECK, ptr.To[int32](1))},
		"0 on the bundled node":               {replicas: ptr.To[int32](0), cluster: cluster(monoclev1alpha1.ElasticsearchBundled, ptr.To[int32](1))},
		"1 on the bundled node":               {replicas: ptr.To[int32](1), cluster: cluster(monoclev1alpha1.ElasticsearchBundled, ptr.To[int32](1)), refused: "indexReplicas is 1 but the cluster has 1 data nodes"},
		"1 on the bundled node before a read": {replicas: ptr.To[int32](1), cluster: cluster(monoclev1alpha1.ElasticsearchBundled, nil), refused: "set at most 0"},
		"2 on 3 data nodes":                   {replicas: ptr.To[int32](2), cluster: cluster(monoclev1alpha1.ElasticsearchECK, ptr.To[int32](3))},
		"3 on 3 data nodes": {replicas: ptr.To[int32](3), cluster: cluster(monoclev1alpha1.ElasticsearchExternal, ptr.To[int32](3)),
			refused: "3 replicas need 4 data nodes; set at most 2"},
		"2 before the first read of a cluster by URL": {replicas: ptr.To[int32](2), cluster: cluster(monoclev1alpha1.ElasticsearchExternal, nil)},
		"no cluster status yet":                       {replicas: ptr.To[int32](2)},
	} {
		t.Run(name, func(t *testing.T) {
			cond := ReplicasCondition(replicasMonocle(tc.replicas), tc.cluster)
			switch {
			case tc.refused == "" && cond != nil:
				t.Errorf("refused: %+v", cond)
			case tc.refused == "":
			case cond == nil:
				t.Errorf("accepted, want a refusal saying %q", tc.refused)
			case cond.Type != monoclev1alpha1.ConditionSpecAccepted || cond.Status != "False" || cond.Reason != reasons.IndexReplicasTooHigh ||
				!strings.Contains(cond.Message, tc.refused):
				t.Errorf("condition %+v, want SpecAccepted False IndexReplicasTooHigh saying %q", cond, tc.refused)
			}
		})
	}
}

// TestClusterStatus: kind and URL come from the target, phase and health from the ECK
// Elasticsearch's read, the data nodes and the replicas come from the last read that found them, and
// the replicas only while indexReplicas is set and the indices agree.
func TestClusterStatus(t *testing.T) {
	bundled := resources.BundledTarget(newMonocle("demo"))
	was := &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://old:9200", Phase: "Ready",
		Health: "green", DataNodes: ptr.To[int32](3), IndexReplicas: ptr.To[int32](1)}
	for name, tc := range map[string]struct {
		replicas *int32
		eck      resources.ECKElasticsearch
		was      *monoclev1alpha1.ElasticsearchClusterStatus
		last     contract.Result
		want     monoclev1alpha1.ElasticsearchClusterStatus
	}{
		"a new bundled Monocle": {
			want: monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchBundled, URL: "http://demo-elastic.default.svc:9200"},
		},
		"the first read": {
			replicas: ptr.To[int32](0),
			last:     contract.Result{DataNodes: 1, Replicas: map[string]int{"monocle.config": 0, "monocle.changes.1.demo": 0}},
			want: monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchBundled, URL: "http://demo-elastic.default.svc:9200",
				DataNodes: ptr.To[int32](1), IndexReplicas: ptr.To[int32](0)},
		},
		"no read yet: what the status had, with the target's kind and URL": {
			replicas: ptr.To[int32](1), was: was, eck: resources.ECKElasticsearch{Phase: "Ready", Health: "green"},
			want: monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchBundled, URL: "http://demo-elastic.default.svc:9200",
				Phase: "Ready", Health: "green", DataNodes: ptr.To[int32](3), IndexReplicas: ptr.To[int32](1)},
		},
		"indices that differ, such as a new workspace's": {
			replicas: ptr.To[int32](1), was: was, eck: resources.ECKElasticsearch{Phase: "Ready", Health: "green"},
			last: contract.Result{DataNodes: 2, Replicas: map[string]int{"monocle.config": 1, "monocle.changes.1.new": 0}},
			want: monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchBundled, URL: "http://demo-elastic.default.svc:9200",
				Phase: "Ready", Health: "green", DataNodes: ptr.To[int32](2)},
		},
		"replicas unreadable: the status keeps them": {
			replicas: ptr.To[int32](1), was: was, eck: resources.ECKElasticsearch{Phase: "Ready", Health: "green"},
			last: contract.Result{DataNodes: 3, ReplicasErr: "boom"},
			want: monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchBundled, URL: "http://demo-elastic.default.svc:9200",
				Phase: "Ready", Health: "green", DataNodes: ptr.To[int32](3), IndexReplicas: ptr.To[int32](1)},
		},
		"indexReplicas unset: none reported": {
			was: was, eck: resources.ECKElasticsearch{Phase: "Ready", Health: "green"},
			last: contract.Result{DataNodes: 3},
			want: monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchBundled, URL: "http://demo-elastic.default.svc:9200",
				Phase: "Ready", Health: "green", DataNodes: ptr.To[int32](3)},
		},
		"no Monocle index yet": {
			replicas: ptr.To[int32](1),
			last:     contract.Result{DataNodes: 2, Replicas: map[string]int{}},
			want: monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchBundled, URL: "http://demo-elastic.default.svc:9200",
				DataNodes: ptr.To[int32](2)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := ClusterStatus(replicasMonocle(tc.replicas), bundled, tc.eck, nil, tc.was, tc.last)
			if got.Authentication != monoclev1alpha1.ElasticsearchAuthenticationEnabling {
				t.Errorf("authentication %q without a StatefulSet, want Enabling", got.Authentication)
			}
			if got.Kind != tc.want.Kind || got.URL != tc.want.URL || got.Phase != tc.want.Phase || got.Health != tc.want.Health ||
				!ptr.Equal(got.DataNodes, tc.want.DataNodes) || !ptr.Equal(got.IndexReplicas, tc.want.IndexReplicas) {
				t.Errorf("status %s, want %s", describeCluster(got), describeCluster(&tc.want))
			}
		})
	}
}

// TestAuthentication: the bundled node's authentication is Enabled only once its StatefulSet
// runs security on and every pod runs that template; a referenced cluster reports none.
func TestAuthentication(t *testing.T) {
	m := newMonocle("demo")
	rolled := func(s *appsv1.StatefulSet, replicas int32) *appsv1.StatefulSet {
		s = s.DeepCopy()
		s.Spec.Replicas = ptr.To(replicas)
		s.Generation = 2
		s.Status = appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas,
			CurrentRevision: "r2", UpdateRevision: "r2"}
		return s
	}
	secured := resources.NewElasticStatefulSet(m, resources.ElasticDataVolume, false, "hash")
	unsecured := secured.DeepCopy()
	for i, e := range unsecured.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "xpack.security.enabled" {
			unsecured.Spec.Template.Spec.Containers[0].Env = slices.Delete(unsecured.Spec.Template.Spec.Containers[0].Env, i, i+1)
		}
	}
	rolling := rolled(secured, 1)
	rolling.Status.UpdatedReplicas, rolling.Status.CurrentRevision = 0, "r1"
	for name, tc := range map[string]struct {
		node *appsv1.StatefulSet
		want monoclev1alpha1.ElasticsearchAuthentication
	}{
		"no StatefulSet yet":                         {nil, monoclev1alpha1.ElasticsearchAuthenticationEnabling},
		"a node of a release without security":       {rolled(unsecured, 1), monoclev1alpha1.ElasticsearchAuthenticationEnabling},
		"security on, the pod not yet restarted":     {rolling, monoclev1alpha1.ElasticsearchAuthenticationEnabling},
		"security on, the pod restarted":             {rolled(secured, 1), monoclev1alpha1.ElasticsearchAuthenticationEnabled},
		"security on, the node stopped (no pod)":     {rolled(secured, 0), monoclev1alpha1.ElasticsearchAuthenticationEnabled},
		"security on, a new generation not observed": {func() *appsv1.StatefulSet { s := rolled(secured, 1); s.Generation = 3; return s }(), monoclev1alpha1.ElasticsearchAuthenticationEnabling},
	} {
		if got := Authentication(tc.node); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
	if !resources.ElasticSecured(&secured.Spec.Template.Spec) || resources.ElasticSecured(&unsecured.Spec.Template.Spec) {
		t.Error("ElasticSecured does not tell the two templates apart")
	}
	external := m.DeepCopy()
	external.Spec.Elasticsearch.External = &monoclev1alpha1.ExternalElasticsearch{URL: "https://es.example.com:9200"}
	if got := ClusterStatus(external, resources.NewTarget(external, false), resources.ECKElasticsearch{}, rolled(secured, 1), nil, contract.Result{}); got.Authentication != "" {
		t.Errorf("an external cluster's authentication %q, want none", got.Authentication)
	}
}

// describeCluster prints s with its pointers' values.
func describeCluster(s *monoclev1alpha1.ElasticsearchClusterStatus) string {
	n := func(p *int32) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%s %s %s/%s nodes %s replicas %s", s.Kind, s.URL, s.Phase, s.Health, n(s.DataNodes), n(s.IndexReplicas))
}

// TestUnreachableNamesTheClusterRead: a failed read of the bundled node names its Service and
// the NetworkPolicy; one of a cluster the operator does not run names that cluster, not the
// bundled Service nor the NetworkPolicy, which play no part there.
func TestUnreachableNamesTheClusterRead(t *testing.T) {
	last := contract.Result{Err: "GET _cluster/health: status 401 security_exception"}
	bundled := newMonocle("m")
	eck := newMonocle("m")
	eck.Spec.Elasticsearch.ElasticsearchRef = &monoclev1alpha1.ElasticsearchReference{Name: "es", Namespace: "search"}
	external := newMonocle("m")
	external.Spec.Elasticsearch.External = &monoclev1alpha1.ExternalElasticsearch{URL: "https://search.example.com"}
	for _, c := range []struct {
		m         *monoclev1alpha1.Monocle
		want, not string
	}{
		{bundled, "at http://m-elastic." + bundled.Namespace + ".svc:9200 (the NetworkPolicy m must admit", ""},
		{eck, "Elasticsearch of spec.elasticsearch (eck/search/es): GET _cluster/health: status 401", "NetworkPolicy"},
		{external, "Elasticsearch of spec.elasticsearch (https://search.example.com:443): GET", "m-elastic"},
	} {
		var healthy *metav1.Condition
		for _, cond := range HealthConditions(c.m, last, true) {
			if cond.Type == monoclev1alpha1.ConditionElasticsearchHealthy {
				healthy = &cond
			}
		}
		switch {
		case healthy == nil || healthy.Reason != reasons.ElasticsearchUnreachable:
			t.Errorf("%s: ElasticsearchHealthy %+v, want ElasticsearchUnreachable", c.want, healthy)
		case !strings.Contains(healthy.Message, c.want) || (c.not != "" && strings.Contains(healthy.Message, c.not)):
			t.Errorf("ElasticsearchHealthy message %q, want one with %q and without %q", healthy.Message, c.want, c.not)
		}
	}
}

// TestAdviceFitsTheCluster: a red cluster and a full disk send the user to the bundled
// node's logs and spec.storageSize, and to the cluster's own health and data nodes for a
// cluster the operator does not run.
func TestAdviceFitsTheCluster(t *testing.T) {
	full := int32(97)
	red := contract.Result{Health: &monoclev1alpha1.ElasticsearchHealth{Status: "red", DiskUsedPercent: &full,
		ReadOnlyIndices: []string{"monocle.config"}}}
	bundled := newMonocle("m")
	external := newMonocle("m")
	external.Spec.Elasticsearch.External = &monoclev1alpha1.ExternalElasticsearch{URL: "https://search.example.com"}
	for _, c := range []struct {
		m                   *monoclev1alpha1.Monocle
		want, wantDisk, not string
	}{
		{bundled, "kubectl logs m-elastic-0", "raise spec.storageSize", "data nodes"},
		{external, "the cluster's own health", "the cluster's data nodes", "storageSize"},
	} {
		for _, cond := range HealthConditions(c.m, red, true) {
			want := c.want
			if cond.Type == monoclev1alpha1.ConditionDiskPressure {
				want = c.wantDisk
			}
			if !strings.Contains(cond.Message, want) || strings.Contains(cond.Message, c.not) || strings.Contains(cond.Message, "kubectl logs") != (c.m == bundled && cond.Type == monoclev1alpha1.ConditionElasticsearchHealthy) {
				t.Errorf("%s of %s: %q, want %q and not %q", cond.Type, resources.Identity(c.m), cond.Message, want, c.not)
			}
		}
	}
}

// TestRefusedAddressCondition: a read refused for its address makes ElasticsearchHealthy
// False ElasticsearchAddressRefused, naming the cluster and the read's error, for a bundled
// node as for a cluster of one's own, and DiskPressure Unknown.
func TestRefusedAddressCondition(t *testing.T) {
	const why = "GET _cluster/health: dial tcp 127.0.0.1:9200: address 127.0.0.1 is loopback: the operator does not connect to loopback, link-local or unspecified addresses"
	last := contract.Result{Done: time.Now(), Err: why, AddressRefused: true}
	bundled := newMonocle("m")
	external := newMonocle("m")
	external.Spec.Elasticsearch.External = &monoclev1alpha1.ExternalElasticsearch{URL: "http://db.example.com:9200"}
	for _, c := range []struct {
		m    *monoclev1alpha1.Monocle
		want string
	}{
		{bundled, "Elasticsearch at http://m-elastic." + bundled.Namespace + ".svc:9200: " + why},
		{external, "Elasticsearch of spec.elasticsearch (http://db.example.com:9200): " + why},
	} {
		conds := HealthConditions(c.m, last, true)
		for _, cond := range conds {
			switch cond.Type {
			case monoclev1alpha1.ConditionElasticsearchHealthy:
				if cond.Status != metav1.ConditionFalse || cond.Reason != reasons.ElasticsearchAddressRefused || !strings.Contains(cond.Message, c.want) {
					t.Errorf("ElasticsearchHealthy = %+v, want False %s with %q", cond, reasons.ElasticsearchAddressRefused, c.want)
				}
			case monoclev1alpha1.ConditionDiskPressure:
				if cond.Status != metav1.ConditionUnknown {
					t.Errorf("DiskPressure = %+v, want Unknown", cond)
				}
			}
		}
		if len(conds) != 2 {
			t.Errorf("conditions %+v, want ElasticsearchHealthy and DiskPressure", conds)
		}
	}
}
