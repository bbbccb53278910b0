package controller

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// referenceGrant is the ReferenceGrant namespace/name of from and to, as the dynamic client
// holds it.
func referenceGrant(namespace, name string, from []gatewayv1beta1.ReferenceGrantFrom, to []gatewayv1beta1.ReferenceGrantTo) *unstructured.Unstructured {
	g := &gatewayv1beta1.ReferenceGrant{
		TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1beta1", Kind: "ReferenceGrant"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       gatewayv1beta1.ReferenceGrantSpec{From: from, To: to},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(g)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// monoclesOf is the `from` entry of the Monocles of namespace.
func monoclesOf(namespace string) gatewayv1beta1.ReferenceGrantFrom {
	return gatewayv1beta1.ReferenceGrantFrom{Group: monoclev1alpha1.GroupName, Kind: "Monocle", Namespace: gatewayv1beta1.Namespace(namespace)}
}

// eckNamed is the `to` entry of the ECK Elasticsearch name ("": every one).
func eckNamed(name string) gatewayv1beta1.ReferenceGrantTo {
	to := gatewayv1beta1.ReferenceGrantTo{Group: "elasticsearch.k8s.elastic.co", Kind: "Elasticsearch"}
	if name != "" {
		to.Name = ptr.To(gatewayv1beta1.ObjectName(name))
	}
	return to
}

// grantOf is a ReferenceGrant of namespace "search" letting the Monocles of fromNamespace use
// the Elasticsearch name ("": every one).
func grantOf(fromNamespace, name string) *unstructured.Unstructured {
	return referenceGrant("search", "monocle", []gatewayv1beta1.ReferenceGrantFrom{monoclesOf(fromNamespace)},
		[]gatewayv1beta1.ReferenceGrantTo{eckNamed(name)})
}

// crossRef is a Monocle "demo" of namespace default using the ECK Elasticsearch search/es,
// with the credentials of its own Secret "monocle-user" when creds.
func crossRef(creds bool) *monoclev1alpha1.Monocle {
	ref := monoclev1alpha1.ElasticsearchReference{Name: "es", Namespace: "search"}
	if creds {
		ref.CredentialsSecretRef = &monoclev1alpha1.SecretReference{Name: "monocle-user"}
	}
	return withRef(ref)
}

var (
	// grantServed are the optional APIs of a cluster with ECK and the ReferenceGrant CRD.
	grantServed = []schema.GroupVersionResource{resources.ECKElasticsearchResource, resources.ReferenceGrantResource}
	// crossSecrets are the Secrets of the ECK Elasticsearch search/es and the Monocle's own
	// credentials.
	crossSecrets = append(eckSecrets("search", "es"),
		secretOf("default", "monocle-user", map[string]string{"username": "monocle", "password": "monocle-password"}))
)

// namespaceReads describes the reads (get, list, watch) of actions in namespace.
func namespaceReads(actions []core.Action, namespace string) []string {
	var out []string
	for _, a := range actions {
		switch a.GetVerb() {
		case "get", "list", "watch":
			if a.GetNamespace() == namespace {
				name := ""
				if g, ok := a.(core.GetAction); ok {
					name = g.GetName()
				}
				out = append(out, a.GetVerb()+" "+a.GetResource().Resource+" "+name)
			}
		}
	}
	return out
}

// TestCrossNamespaceReference: an elasticsearchRef to another namespace resolves only with a
// ReferenceGrant there that names the Monocle's namespace and the Elasticsearch (or every
// one), and with the Monocle's own credentials; refused, it pins a condition saying how to
// fix it, the status shows nothing of the cluster but what the spec says, and nothing of that
// namespace is read, neither the Elasticsearch's status nor a Secret.
func TestCrossNamespaceReference(t *testing.T) {
	eck := eckElasticsearch("search", "es", "Ready", "green", true)
	granted := &resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.search.svc:9200",
		Username: "monocle", Password: "monocle-password", CA: []byte(testCA)}
	refusedStatus := &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.search.svc:9200"}
	grantedStatus := &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.search.svc:9200",
		Phase: "Ready", Health: "green"}
	grantHint := []string{"ReferenceGrant (gateway.networking.k8s.io/v1beta1)", "namespace search",
		"from {group: monocle.monocle.change-metrics.io, kind: Monocle, namespace: default}",
		"to {group: elasticsearch.k8s.elastic.co, kind: Elasticsearch, name: es}"}
	for _, tc := range []struct {
		name   string
		m      *monoclev1alpha1.Monocle
		served []schema.GroupVersionResource
		grants []runtime.Object
		off    bool
		// want is the target (nil: none); reason the ElasticsearchHealthy condition's ("":
		// none); words are in its message.
		want    *resources.ElasticsearchTarget
		reason  string
		words   []string
		cluster *monoclev1alpha1.ElasticsearchClusterStatus
		// reads are the reads the resolve phase makes in namespace search.
		reads []string
	}{{
		name: "no grant", m: crossRef(true), served: grantServed,
		reason: reasons.ReferenceNotGranted, words: append([]string{"no ReferenceGrant there grants Monocles of namespace default"}, grantHint...),
		cluster: refusedStatus,
	}, {
		name: "ReferenceGrant API not served", m: crossRef(true), served: eckServed,
		reason: reasons.ReferenceNotGranted, words: append([]string{"does not serve the ReferenceGrant API"}, grantHint...),
		cluster: refusedStatus,
	}, {
		name: "granted by name", m: crossRef(true), served: grantServed, grants: []runtime.Object{grantOf("default", "es")},
		want: granted, cluster: grantedStatus, reads: []string{"get secrets es-es-http-certs-public"},
	}, {
		name: "granted for every Elasticsearch of the namespace", m: crossRef(true), served: grantServed,
		grants: []runtime.Object{grantOf("default", "")},
		want:   granted, cluster: grantedStatus, reads: []string{"get secrets es-es-http-certs-public"},
	}, {
		name: "granted by one of several entries", m: crossRef(true), served: grantServed,
		grants: []runtime.Object{referenceGrant("search", "several",
			[]gatewayv1beta1.ReferenceGrantFrom{monoclesOf("team-a"), monoclesOf("default")},
			[]gatewayv1beta1.ReferenceGrantTo{eckNamed("other"), eckNamed("es")})},
		want: granted, cluster: grantedStatus, reads: []string{"get secrets es-es-http-certs-public"},
	}, {
		name: "grant from another namespace", m: crossRef(true), served: grantServed, grants: []runtime.Object{grantOf("team-a", "es")},
		reason: reasons.ReferenceNotGranted, words: grantHint, cluster: refusedStatus,
	}, {
		name: "grant to another Elasticsearch", m: crossRef(true), served: grantServed, grants: []runtime.Object{grantOf("default", "other")},
		reason: reasons.ReferenceNotGranted, words: grantHint, cluster: refusedStatus,
	}, {
		name: "grant from another kind", m: crossRef(true), served: grantServed,
		grants: []runtime.Object{referenceGrant("search", "routes",
			[]gatewayv1beta1.ReferenceGrantFrom{{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "default"}},
			[]gatewayv1beta1.ReferenceGrantTo{eckNamed("es")})},
		reason: reasons.ReferenceNotGranted, words: grantHint, cluster: refusedStatus,
	}, {
		name: "grant to Secrets only", m: crossRef(true), served: grantServed,
		grants: []runtime.Object{referenceGrant("search", "secrets", []gatewayv1beta1.ReferenceGrantFrom{monoclesOf("default")},
			[]gatewayv1beta1.ReferenceGrantTo{{Group: "", Kind: "Secret"}})},
		reason: reasons.ReferenceNotGranted, words: grantHint, cluster: refusedStatus,
	}, {
		name: "grant in the Monocle's namespace", m: crossRef(true), served: grantServed,
		grants: []runtime.Object{referenceGrant("default", "monocle", []gatewayv1beta1.ReferenceGrantFrom{monoclesOf("default")},
			[]gatewayv1beta1.ReferenceGrantTo{eckNamed("es")})},
		reason: reasons.ReferenceNotGranted, words: grantHint, cluster: refusedStatus,
	}, {
		name: "granted, without credentialsSecretRef", m: crossRef(false), served: grantServed, grants: []runtime.Object{grantOf("default", "es")},
		reason: reasons.CredentialsRequired, words: []string{"without credentialsSecretRef", "never uses the elastic superuser", "namespace default"},
		cluster: refusedStatus,
	}, {
		name: "turned off by the operator's flag", m: crossRef(true), served: grantServed, grants: []runtime.Object{grantOf("default", "es")},
		off: true, reason: reasons.CrossNamespaceReferencesDisabled, words: []string{"--cross-namespace-references=false", "operator's admin"},
		cluster: refusedStatus,
	}, {
		name: "the Monocle's own namespace, named: no grant needed", served: eckServed,
		m: withRef(monoclev1alpha1.ElasticsearchReference{Name: "es", Namespace: "default"}),
		want: &resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
			Username: "elastic", Password: "eck-password", CA: []byte(testCA)},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
			Phase: "Ready", Health: "green"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.monocles = []*monoclev1alpha1.Monocle{tc.m}
			f.served, f.dynamicObjects, f.crossNamespaceOff = tc.served, tc.grants, tc.off
			f.eckObjects = []*unstructured.Unstructured{eck, eckElasticsearch("default", "es", "Ready", "green", true)}
			f.userSecrets = append(append([]*corev1.Secret(nil), crossSecrets...), eckSecrets("default", "es")...)
			st := f.resolve(f.newController())
			if got := resolvedTarget(st); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("target = %+v, want %+v", got, tc.want)
			}
			if st.cluster.ready != (tc.want != nil) || st.cluster.refused != (tc.reason != "") {
				t.Errorf("targetReady = %v, targetRefused = %v; want %v, %v", st.cluster.ready, st.cluster.refused, tc.want != nil, tc.reason != "")
			}
			c := st.condition(monoclev1alpha1.ConditionElasticsearchHealthy)
			switch {
			case tc.reason == "" && c != nil:
				t.Errorf("ElasticsearchHealthy = %+v, want none", c)
			case tc.reason != "" && (c == nil || c.Status != metav1.ConditionFalse || c.Reason != tc.reason || !st.pinned[c.Type]):
				t.Errorf("ElasticsearchHealthy = %+v, want False %s, pinned", c, tc.reason)
			case c != nil:
				for _, w := range tc.words {
					if !strings.Contains(c.Message, w) {
						t.Errorf("the message does not say %q: %s", w, c.Message)
					}
				}
			}
			if cluster := clusterStatus(st, operand.Result{}); !equality.Semantic.DeepEqual(cluster, tc.cluster) {
				t.Errorf("status.elasticsearchCluster = %+v, want %+v", cluster, tc.cluster)
			}
			if got := namespaceReads(f.kubeclient.Actions(), "search"); !equality.Semantic.DeepEqual(got, tc.reads) {
				t.Errorf("reads in namespace search: %q, want %q", got, tc.reads)
			}
			if got := describe(f.dynamic.Actions()); len(got) > 0 {
				t.Errorf("the dynamic client was asked %q; the ECK Elasticsearch and the grants are read from the informers", got)
			}
		})
	}
}

// TestCrossNamespaceReferenceSync: whole syncs of a cross-namespace reference. Without a
// grant nothing is read in the other namespace, nothing is written but the status (no proxy
// Secret, no Deployment), and the Monocle is Degraded with a Warning event; with one, the
// proxy Secret carries the Monocle's own credentials and the other namespace's CA; once the
// grant is gone, the proxy Secret it had is deleted and the status drops what the reads
// found of the cluster.
func TestCrossNamespaceReferenceSync(t *testing.T) {
	m := crossRef(true)
	proxyName := resources.ProxySecretName(m)
	t.Run("no grant", func(t *testing.T) {
		f := newFixture(t)
		f.monocles, f.served, f.userSecrets = []*monoclev1alpha1.Monocle{m}, grantServed, crossSecrets
		f.eckObjects = []*unstructured.Unstructured{eckElasticsearch("search", "es", "Ready", "green", true)}
		kubeWrites, status := f.runStatus()
		for _, a := range kubeWrites {
			if a.GetResource().Resource == "deployments" || actionName(a) == proxyName {
				t.Errorf("wrote %s %s", a.GetVerb(), describe([]core.Action{a}))
			}
		}
		if got := namespaceReads(f.kubeclient.Actions(), "search"); len(got) > 0 {
			t.Errorf("read in namespace search: %q", got)
		}
		if c := condition(t, status, monoclev1alpha1.ConditionElasticsearchHealthy); c.Reason != reasons.ReferenceNotGranted {
			t.Errorf("ElasticsearchHealthy = %+v", c)
		}
		if d := condition(t, status, monoclev1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != reasons.ReferenceNotGranted {
			t.Errorf("Degraded = %+v, want True ReferenceNotGranted", d)
		}
		if !hasEvent(f, corev1.EventTypeWarning, reasons.ReferenceNotGranted) {
			t.Error("no ReferenceNotGranted Warning event")
		}
		if cl := status.Status.ElasticsearchCluster; cl == nil || cl.Phase != "" || cl.Health != "" {
			t.Errorf("status.elasticsearchCluster = %+v, want no phase or health", cl)
		}
	})
	t.Run("granted", func(t *testing.T) {
		f := newFixture(t)
		f.monocles, f.served, f.userSecrets = []*monoclev1alpha1.Monocle{m}, grantServed, crossSecrets
		f.dynamicObjects = []runtime.Object{grantOf("default", "es")}
		f.eckObjects = []*unstructured.Unstructured{eckElasticsearch("search", "es", "Ready", "green", true)}
		kubeWrites, _ := f.runStatus()
		proxy := written[*corev1.Secret](kubeWrites, proxyName)
		if proxy == nil {
			t.Fatalf("no proxy Secret written: %q", describe(kubeWrites))
		}
		conf := string(proxy.Data[resources.ProxyConfigKey])
		if !strings.Contains(conf, "es-es-http.search.svc") || string(proxy.Data[resources.ProxyCAKey]) != testCA {
			t.Errorf("proxy Secret does not reach search/es with its CA: %q", proxy.Data)
		}
		if got := namespaceReads(f.kubeclient.Actions(), "search"); !equality.Semantic.DeepEqual(got, []string{"get secrets es-es-http-certs-public"}) {
			t.Errorf("reads in namespace search: %q, want the CA Secret only", got)
		}
	})
	t.Run("grant revoked", func(t *testing.T) {
		had := m.DeepCopy()
		had.Status.ElasticsearchCluster = &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK,
			URL: "https://es-es-http.search.svc:9200", Phase: "Ready", Health: "green", DataNodes: ptr.To[int32](3)}
		had.Status.ElasticsearchHealth = &monoclev1alpha1.ElasticsearchHealth{Status: "green"}
		proxy, err := resources.NewProxySecret(had, resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchECK,
			URL: "https://es-es-http.search.svc:9200", Username: "monocle", Password: "monocle-password", CA: []byte(testCA)})
		if err != nil {
			t.Fatal(err)
		}
		f := newFixture(t)
		f.monocles, f.served, f.userSecrets = []*monoclev1alpha1.Monocle{had}, grantServed, crossSecrets
		f.kubeobjects = []runtime.Object{proxy}
		f.eckObjects = []*unstructured.Unstructured{eckElasticsearch("search", "es", "Ready", "green", true)}
		kubeWrites, status := f.runStatus()
		deleted := false
		for _, a := range kubeWrites {
			if a.GetVerb() == "delete" && a.GetResource().Resource == "secrets" && actionName(a) == proxyName {
				deleted = true
			}
		}
		if !deleted {
			t.Errorf("the proxy Secret was not deleted: %q", describe(kubeWrites))
		}
		if status.Status.ElasticsearchHealth != nil {
			t.Errorf("status.elasticsearchHealth = %+v, want none", status.Status.ElasticsearchHealth)
		}
		want := &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.search.svc:9200"}
		if !equality.Semantic.DeepEqual(status.Status.ElasticsearchCluster, want) {
			t.Errorf("status.elasticsearchCluster = %+v, want %+v", status.Status.ElasticsearchCluster, want)
		}
	})
}

// TestProxySecretWaitsForAReadyTarget: the proxy Secret, which holds the cluster's
// credentials, is written only for a target the Monocle may use now: not while its ECK
// Elasticsearch is not Ready, nor while another Monocle uses the cluster.
func TestProxySecretWaitsForAReadyTarget(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	first := withExternal("first", "https://es.example.com", "creds", "")
	first.CreationTimestamp = t0
	second := withExternal("second", "https://es.example.com", "creds", "")
	second.CreationTimestamp = metav1.NewTime(t0.Add(time.Minute))
	creds := secretOf("default", "creds", map[string]string{"username": "monocle", "password": "pw"})
	for _, tc := range []struct {
		name     string
		monocles []*monoclev1alpha1.Monocle
		eck      []*unstructured.Unstructured
		proxy    string
	}{
		{name: "ECK Elasticsearch not Ready", monocles: []*monoclev1alpha1.Monocle{withRef(monoclev1alpha1.ElasticsearchReference{Name: "es"})},
			eck: []*unstructured.Unstructured{eckElasticsearch("default", "es", "ApplyingChanges", "yellow", true)}},
		{name: "cluster used by another Monocle", monocles: []*monoclev1alpha1.Monocle{second, first}},
		{name: "ready", monocles: []*monoclev1alpha1.Monocle{first}, proxy: "first-elastic-proxy"},
		{name: "ECK Elasticsearch Ready", monocles: []*monoclev1alpha1.Monocle{withRef(monoclev1alpha1.ElasticsearchReference{Name: "es"})},
			eck: []*unstructured.Unstructured{eckElasticsearch("default", "es", "Ready", "green", true)}, proxy: "demo-elastic-proxy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.monocles, f.served, f.eckObjects = tc.monocles, eckServed, tc.eck
			f.userSecrets = append(eckSecrets("default", "es"), creds)
			kubeWrites, _ := f.runStatus()
			var proxies []string
			for _, a := range kubeWrites {
				if s, ok := writtenObject(a).(*corev1.Secret); ok && strings.HasSuffix(s.Name, "-elastic-proxy") {
					proxies = append(proxies, s.Name)
				}
			}
			want := []string{}
			if tc.proxy != "" {
				want = []string{tc.proxy}
			}
			if !equality.Semantic.DeepEqual(append([]string{}, proxies...), want) {
				t.Errorf("proxy Secrets written: %q, want %q", proxies, want)
			}
		})
	}
}

// TestReferenceGrantEventsEnqueueTheirMonocles: a ReferenceGrant's creation, change or
// deletion enqueues the Monocles that reference an Elasticsearch of its namespace from
// another, and no other; a resync without a change enqueues nothing.
func TestReferenceGrantEventsEnqueueTheirMonocles(t *testing.T) {
	cross := crossRef(true)
	cross.Name = "cross"
	same := withRef(monoclev1alpha1.ElasticsearchReference{Name: "es", Namespace: "default"})
	same.Name = "same"
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{cross, same, newMonocle("bundled")}
	c := f.newController()
	queued := func() []string { return drainQueue(c) }
	grant := grantOf("default", "es")
	grant.SetResourceVersion("1")
	changedGrant := grant.DeepCopy()
	changedGrant.SetResourceVersion("2")
	for _, tc := range []struct {
		name  string
		event func()
		want  []string
	}{
		{"created", func() { c.handleReferenceGrant(grant) }, []string{"default/cross"}},
		{"changed", func() { c.handleReferenceGrantUpdate(grant, changedGrant) }, []string{"default/cross"}},
		{"resynced", func() { c.handleReferenceGrantUpdate(grant, grant) }, nil},
		{"deleted", func() { c.handleReferenceGrant(grant) }, []string{"default/cross"}},
		{"in another namespace", func() {
			c.handleReferenceGrant(referenceGrant("default", "g", []gatewayv1beta1.ReferenceGrantFrom{monoclesOf("search")},
				[]gatewayv1beta1.ReferenceGrantTo{eckNamed("")}))
		}, nil},
	} {
		tc.event()
		if got := queued(); !equality.Semantic.DeepEqual(got, sortedCopy(tc.want)) {
			t.Errorf("%s: queued %q, want %q", tc.name, got, tc.want)
		}
	}
}
