package controller

import (
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// testCA stands for the PEM of a CA: the target carries the bytes, it does not parse them.
const testCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

// eckElasticsearch is an ECK Elasticsearch namespace/name whose status has phase and health;
// tls false sets spec.http.tls.selfSignedCertificate.disabled.
func eckElasticsearch(namespace, name, phase, health string, tls bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "elasticsearch.k8s.elastic.co/v1", "kind": "Elasticsearch",
		"metadata": map[string]any{"namespace": namespace, "name": name},
		"spec":     map[string]any{"version": "7.17.29"},
		"status":   map[string]any{"phase": phase, "health": health},
	}}
	if !tls {
		utilMustSet(u, true, "spec", "http", "tls", "selfSignedCertificate", "disabled")
	}
	return u
}

func utilMustSet(u *unstructured.Unstructured, v any, fields ...string) {
	if err := unstructured.SetNestedField(u.Object, v, fields...); err != nil {
		panic(err)
	}
}

// secretOf is a Secret namespace/name at resourceVersion "1" with data.
func secretOf(namespace, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: "1"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// eckSecrets are the Secrets ECK makes for Elasticsearch namespace/name: the elastic user's
// password and the HTTP layer's public certificate with its CA.
func eckSecrets(namespace, name string) []*corev1.Secret {
	return []*corev1.Secret{
		secretOf(namespace, name+"-es-elastic-user", map[string]string{"elastic": "eck-password"}),
		secretOf(namespace, name+"-es-http-certs-public", map[string]string{"ca.crt": testCA, "tls.crt": "cert"}),
	}
}

// withRef is a Monocle "demo" using the ECK Elasticsearch of ref.
func withRef(ref monoclev1alpha1.ElasticsearchReference) *monoclev1alpha1.Monocle {
	m := newMonocle("demo")
	m.Spec.Elasticsearch.ElasticsearchRef = &ref
	return m
}

// withExternal is a Monocle name using the cluster at url, with the Secrets creds and ca
// ("": none).
func withExternal(name, url, creds, ca string) *monoclev1alpha1.Monocle {
	m := newMonocle(name)
	m.Spec.Elasticsearch.External = &monoclev1alpha1.ExternalElasticsearch{URL: url}
	if creds != "" {
		m.Spec.Elasticsearch.External.CredentialsSecretRef = &monoclev1alpha1.SecretReference{Name: creds}
	}
	if ca != "" {
		m.Spec.Elasticsearch.External.CASecretRef = &monoclev1alpha1.SecretReference{Name: ca}
	}
	return m
}

var eckServed = []schema.GroupVersionResource{resources.ECKElasticsearchResource}

// TestResolveElasticsearch: the target, its readiness and the conditions the resolve phase
// pins, for each kind of cluster and each thing that can be missing.
func TestResolveElasticsearch(t *testing.T) {
	ref := monoclev1alpha1.ElasticsearchReference{Name: "es"}
	otherNS := monoclev1alpha1.ElasticsearchReference{Name: "es", Namespace: "search"}
	withCreds := ref
	withCreds.CredentialsSecretRef = &monoclev1alpha1.SecretReference{Name: "monocle-user"}
	monocleUser := secretOf("default", "monocle-user", map[string]string{"username": "monocle", "password": "monocle-password"})
	noCA := secretOf("default", "es-es-http-certs-public", map[string]string{"tls.crt": "cert"})
	customCert := eckElasticsearch("default", "es", "Ready", "green", false)
	utilMustSet(customCert, "my-cert", "spec", "http", "tls", "certificate", "secretName")
	ecks := func(objs ...*unstructured.Unstructured) []*unstructured.Unstructured { return objs }
	ready := eckElasticsearch("default", "es", "Ready", "green", true)
	eckTarget := &resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
		Username: "elastic", Password: "eck-password", CA: []byte(testCA)}

	for _, tc := range []struct {
		name    string
		m       *monoclev1alpha1.Monocle
		served  []schema.GroupVersionResource
		eck     []*unstructured.Unstructured
		secrets []*corev1.Secret
		// want is the resolved target, without its identity (nil: none); ready whether the
		// workloads may start.
		want  *resources.ElasticsearchTarget
		ready bool
		// conds are the pinned conditions: type → reason, and words of their messages.
		conds map[string]string
		words []string
		// cluster is status.elasticsearchCluster before any read.
		cluster *monoclev1alpha1.ElasticsearchClusterStatus
	}{{
		name: "bundled", m: newMonocle("demo"),
		want: ptr.To(resources.BundledTarget(newMonocle("demo"))), ready: true,
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchBundled, URL: "http://demo-elastic.default.svc:9200",
			Authentication: monoclev1alpha1.ElasticsearchAuthenticationEnabling},
	}, {
		name: "ECK API not served", m: withRef(ref),
		conds:   map[string]string{monoclev1alpha1.ConditionElasticsearchHealthy: reasons.ElasticsearchNotFound},
		words:   []string{"elasticsearches.elasticsearch.k8s.elastic.co", "default/es", "install ECK"},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200"},
	}, {
		name: "ECK Elasticsearch missing", m: withRef(ref), served: eckServed, secrets: eckSecrets("default", "es"),
		eck:     ecks(eckElasticsearch("default", "other", "Ready", "green", true)),
		conds:   map[string]string{monoclev1alpha1.ConditionElasticsearchHealthy: reasons.ElasticsearchNotFound},
		words:   []string{"ECK Elasticsearch default/es", "does not exist"},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200"},
	}, {
		name: "ECK Elasticsearch not Ready", m: withRef(ref), served: eckServed, secrets: eckSecrets("default", "es"),
		eck:   ecks(eckElasticsearch("default", "es", "ApplyingChanges", "yellow", true)),
		want:  eckTarget,
		conds: map[string]string{monoclev1alpha1.ConditionElasticsearchHealthy: reasons.ElasticsearchNotReady},
		words: []string{`phase "ApplyingChanges"`, `health "yellow"`},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
			Phase: "ApplyingChanges", Health: "yellow"},
	}, {
		name: "ECK Ready with TLS: https, the elastic user, the CA", m: withRef(ref), served: eckServed, secrets: eckSecrets("default", "es"),
		eck: ecks(ready), want: eckTarget, ready: true,
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
			Phase: "Ready", Health: "green"},
	}, {
		// Granted or not, which refgrant_test.go tests.
		name: "ECK in another namespace", m: withRef(otherNS), served: eckServed, secrets: eckSecrets("search", "es"),
		eck:     ecks(eckElasticsearch("search", "es", "Ready", "green", true)),
		conds:   map[string]string{monoclev1alpha1.ConditionElasticsearchHealthy: reasons.ReferenceNotGranted},
		words:   []string{"namespace search", "ReferenceGrant"},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.search.svc:9200"},
	}, {
		name: "ECK with TLS disabled: http, no CA read", m: withRef(ref), served: eckServed, secrets: eckSecrets("default", "es")[:1],
		eck: ecks(eckElasticsearch("default", "es", "Ready", "green", false)), ready: true,
		want: &resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchECK, URL: "http://es-es-http.default.svc:9200",
			Username: "elastic", Password: "eck-password"},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "http://es-es-http.default.svc:9200",
			Phase: "Ready", Health: "green"},
	}, {
		name: "ECK with its own certificate: https though the self-signed one is disabled", m: withRef(ref), served: eckServed,
		secrets: eckSecrets("default", "es"), eck: ecks(customCert), want: eckTarget, ready: true,
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
			Phase: "Ready", Health: "green"},
	}, {
		name: "ECK certificate without its CA: the system's roots", m: withRef(ref), served: eckServed,
		secrets: []*corev1.Secret{eckSecrets("default", "es")[0], noCA}, eck: ecks(ready), ready: true,
		want: &resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
			Username: "elastic", Password: "eck-password"},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
			Phase: "Ready", Health: "green"},
	}, {
		name: "ECK with credentialsSecretRef", m: withRef(withCreds), served: eckServed,
		secrets: []*corev1.Secret{eckSecrets("default", "es")[1], monocleUser}, eck: ecks(ready), ready: true,
		want: &resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
			Username: "monocle", Password: "monocle-password", CA: []byte(testCA)},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
			Phase: "Ready", Health: "green"},
	}, {
		name: "ECK elastic user's Secret missing", m: withRef(ref), served: eckServed, secrets: eckSecrets("default", "es")[1:],
		eck:   ecks(ready),
		conds: map[string]string{monoclev1alpha1.ConditionSecretsReady: reasons.SecretNotFound},
		words: []string{"Secret es-es-elastic-user of namespace default", "does not exist"},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
			Phase: "Ready", Health: "green"},
	}, {
		name: "external without credentials", m: withExternal("demo", "http://es.example.com:9200/", "", ""), ready: true,
		want:    &resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchExternal, URL: "http://es.example.com:9200"},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchExternal, URL: "http://es.example.com:9200"},
	}, {
		name: "external with credentials and a CA", m: withExternal("demo", "https://es.example.com", "creds", "ca"),
		secrets: []*corev1.Secret{
			secretOf("default", "creds", map[string]string{"username": "monocle", "password": "pw"}),
			secretOf("default", "ca", map[string]string{"ca.crt": testCA}),
		},
		ready: true,
		want: &resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchExternal, URL: "https://es.example.com",
			Username: "monocle", Password: "pw", CA: []byte(testCA)},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchExternal, URL: "https://es.example.com"},
	}, {
		name: "external credentials without a password, CA Secret without ca.crt", m: withExternal("demo", "https://es.example.com", "creds", "ca"),
		secrets: []*corev1.Secret{
			secretOf("default", "creds", map[string]string{"username": "monocle"}),
			secretOf("default", "ca", map[string]string{"tls.crt": "cert"}),
		},
		conds:   map[string]string{monoclev1alpha1.ConditionSecretsReady: reasons.SecretKeyMissing},
		words:   []string{"Secret creds of namespace default has no key password", "Secret ca of namespace default has no key ca.crt"},
		cluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchExternal, URL: "https://es.example.com"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.monocles = []*monoclev1alpha1.Monocle{tc.m}
			f.served, f.eckObjects, f.userSecrets = tc.served, tc.eck, tc.secrets
			st := f.resolve(f.newController())
			if got := resolvedTarget(st); got != nil && got.Bundled() {
				// The node's users are generated: the operator's and Monocle's, with
				// passwords.
				if got.Username != resources.ElasticOperatorUser || got.Password == "" ||
					got.PodUsername != resources.ElasticMonocleUser || got.PodPassword == "" {
					t.Errorf("bundled target with users %q and %q", got.Username, got.PodUsername)
				}
			} else if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("target = %+v, want %+v", got, tc.want)
			}
			if st.cluster.ready != tc.ready {
				t.Errorf("targetReady = %v, want %v", st.cluster.ready, tc.ready)
			}
			pinned := map[string]string{}
			var messages []string
			for typ, c := range st.conditions {
				pinned[typ] = c.Reason
				messages = append(messages, c.Message)
				if !st.pinned[typ] {
					t.Errorf("condition %s is not pinned", typ)
				}
			}
			if len(pinned) > 0 || len(tc.conds) > 0 {
				if !equality.Semantic.DeepEqual(pinned, tc.conds) {
					t.Errorf("conditions = %v, want %v", pinned, tc.conds)
				}
			}
			for _, w := range tc.words {
				if !strings.Contains(strings.Join(messages, "\n"), w) {
					t.Errorf("no message says %q: %q", w, messages)
				}
			}
			if cluster := clusterStatus(st, operand.Result{}); !equality.Semantic.DeepEqual(cluster, tc.cluster) {
				t.Errorf("status.elasticsearchCluster = %+v, want %+v", cluster, tc.cluster)
			}
		})
	}
}

// TestTargetSecretsAreReadOncePerVersion: the data of a Secret the target reads is asked of
// the API server once per resourceVersion; a converged Monocle's syncs make no request.
func TestTargetSecretsAreReadOncePerVersion(t *testing.T) {
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{withRef(monoclev1alpha1.ElasticsearchReference{Name: "es"})}
	f.served, f.eckObjects = eckServed, []*unstructured.Unstructured{eckElasticsearch("default", "es", "Ready", "green", true)}
	f.userSecrets = eckSecrets("default", "es")
	c := f.newController()
	gets := func() []string {
		var out []string
		for _, a := range f.kubeclient.Actions() {
			if a.GetVerb() == "get" && a.GetResource().Resource == "secrets" {
				out = append(out, a.(interface{ GetName() string }).GetName())
			}
		}
		f.kubeclient.ClearActions()
		return out
	}
	f.resolve(c)
	if got := gets(); !equality.Semantic.DeepEqual(sortedCopy(got), []string{"es-es-elastic-user", "es-es-http-certs-public"}) {
		t.Errorf("first resolve read %q, want each Secret once", got)
	}
	st := f.resolve(c)
	if got := gets(); len(got) != 0 {
		t.Errorf("second resolve read %q again", got)
	}
	if !st.cluster.resolved || st.cluster.target.Password != "eck-password" {
		t.Errorf("cached target = %+v", st.cluster.target)
	}
}

// TestOneMonoclePerCluster: of the Monocles of one namespace with one cluster identity, the
// one created later gets ElasticsearchInUse naming the other and does not start; ties go by
// name. Across namespaces creation time decides nothing (the cluster's owner record does:
// ownership_test.go).
func TestOneMonoclePerCluster(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	at := func(m *monoclev1alpha1.Monocle, ts metav1.Time, ns string) *monoclev1alpha1.Monocle {
		m.CreationTimestamp, m.Namespace = ts, ns
		return m
	}
	// The same cluster, spelled two ways (resources.Identity).
	first := at(withExternal("first", "http://ES.example.com:9200", "", ""), t0, "default")
	later := at(withExternal("later", "http://es.example.com:9200/", "", ""), metav1.NewTime(t0.Add(time.Hour)), "default")
	tieA := at(withExternal("a", "http://es.example.com:9200", "", ""), t0, "default")
	tieB := at(withExternal("b", "http://es.example.com:9200", "", ""), t0, "default")
	elsewhere := at(withExternal("elsewhere", "http://es.example.com:9200", "", ""), metav1.NewTime(t0.Add(-time.Hour)), "alpha")
	other := at(withExternal("other", "http://other.example.com:9200", "", ""), metav1.NewTime(t0.Add(time.Hour)), "default")
	for _, tc := range []struct {
		name     string
		monocles []*monoclev1alpha1.Monocle
		holder   string
	}{
		{"the later one waits", []*monoclev1alpha1.Monocle{later, first}, "first"},
		{"the first one runs", []*monoclev1alpha1.Monocle{first, later}, ""},
		{"a tie goes to the first name", []*monoclev1alpha1.Monocle{tieB, tieA}, "a"},
		{"one created earlier in another namespace holds nothing", []*monoclev1alpha1.Monocle{later, elsewhere}, ""},
		{"another cluster runs", []*monoclev1alpha1.Monocle{other, first, later}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.monocles = tc.monocles
			st := f.resolve(f.newController())
			c := st.condition(monoclev1alpha1.ConditionElasticsearchHealthy)
			if tc.holder == "" {
				if c != nil || !st.cluster.ready {
					t.Errorf("ElasticsearchHealthy = %+v, targetReady = %v; want no condition, ready", c, st.cluster.ready)
				}
				return
			}
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reasons.ElasticsearchInUse ||
				!strings.Contains(c.Message, "Monocle "+tc.holder+" of this namespace,") || !strings.Contains(c.Message, "http://es.example.com:9200") {
				t.Errorf("ElasticsearchHealthy = %+v, want False ElasticsearchInUse naming %s and the cluster", c, tc.holder)
			}
			if st.cluster.ready {
				t.Error("the later Monocle's target is ready")
			}
		})
	}
}

// deploymentsWritten names the Deployments among writes.
func deploymentsWritten(f *fixture) []string {
	var out []string
	for _, a := range writes(f.kubeclient.Actions()) {
		if d, ok := writtenObject(a).(*appsv1.Deployment); ok {
			out = append(out, d.Name)
		}
	}
	return sortedCopy(out)
}

// TestUnusableTargetHoldsTheWorkloads: a whole sync of a Monocle whose cluster is missing,
// not Ready or used by another Monocle creates neither the API nor the crawler, pins its
// condition over the later phases' and, when the user must act, is Degraded with a Warning
// event; a ready external cluster gets both at once, the API not waiting for a StatefulSet.
func TestUnusableTargetHoldsTheWorkloads(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	first := withExternal("first", "http://es.example.com:9200", "", "")
	first.CreationTimestamp = t0
	second := withExternal("second", "http://es.example.com:9200", "", "")
	second.CreationTimestamp = metav1.NewTime(t0.Add(time.Minute))
	for _, tc := range []struct {
		name        string
		monocles    []*monoclev1alpha1.Monocle
		eck         []*unstructured.Unstructured
		secrets     []*corev1.Secret
		deployments []string
		// reason of ElasticsearchHealthy, or of SecretsReady with secrets; degraded whether
		// Degraded takes it.
		reason   string
		degraded bool
	}{
		{name: "ECK Elasticsearch missing", monocles: []*monoclev1alpha1.Monocle{withRef(monoclev1alpha1.ElasticsearchReference{Name: "es"})},
			reason: reasons.ElasticsearchNotFound, degraded: true},
		{name: "ECK Elasticsearch not Ready", monocles: []*monoclev1alpha1.Monocle{withRef(monoclev1alpha1.ElasticsearchReference{Name: "es"})},
			eck: []*unstructured.Unstructured{eckElasticsearch("default", "es", "MigratingData", "red", false)}, reason: reasons.ElasticsearchNotReady},
		{name: "ECK elastic user's Secret missing", monocles: []*monoclev1alpha1.Monocle{withRef(monoclev1alpha1.ElasticsearchReference{Name: "es"})},
			eck:     []*unstructured.Unstructured{eckElasticsearch("default", "es", "Ready", "green", true)},
			secrets: eckSecrets("default", "es")[1:], reason: reasons.SecretNotFound, degraded: true},
		{name: "cluster in use", monocles: []*monoclev1alpha1.Monocle{second, first}, reason: reasons.ElasticsearchInUse, degraded: true},
		{name: "ready external cluster", monocles: []*monoclev1alpha1.Monocle{first}, deployments: []string{"first-api", "first-crawler"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.monocles, f.served, f.eckObjects = tc.monocles, eckServed, tc.eck
			f.userSecrets = eckSecrets("default", "es")
			typ := monoclev1alpha1.ConditionElasticsearchHealthy
			if tc.secrets != nil {
				f.userSecrets, typ = tc.secrets, monoclev1alpha1.ConditionSecretsReady
			}
			_, status := f.runStatus()
			if got := deploymentsWritten(f); !equality.Semantic.DeepEqual(got, sortedCopy(tc.deployments)) {
				t.Errorf("Deployments written: %q, want %q", got, tc.deployments)
			}
			if tc.reason == "" {
				return
			}
			if c := condition(t, status, typ); c.Reason != tc.reason {
				t.Errorf("%s = %+v, want %s", typ, c, tc.reason)
			}
			d := condition(t, status, monoclev1alpha1.ConditionDegraded)
			if tc.degraded != (d.Status == metav1.ConditionTrue && d.Reason == tc.reason) {
				t.Errorf("Degraded = %+v, want it to take %s: %v", d, tc.reason, tc.degraded)
			}
			if tc.degraded && !hasEvent(f, corev1.EventTypeWarning, tc.reason) {
				t.Errorf("no %s Warning event", tc.reason)
			}
		})
	}
}

// TestElasticsearchClusterStatusKeepsTheWorkersFields: the status takes kind, url, phase and
// health from what the resolve phase found, and keeps dataNodes and indexReplicas as the
// worker's reads set them until a read finds them.
func TestElasticsearchClusterStatusKeepsTheWorkersFields(t *testing.T) {
	m := withRef(monoclev1alpha1.ElasticsearchReference{Name: "es"})
	m.Spec.Elasticsearch.IndexReplicas = ptr.To[int32](1)
	m.Status.ElasticsearchCluster = &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK,
		URL: "http://stale", Phase: "Ready", Health: "green", DataNodes: ptr.To[int32](3), IndexReplicas: ptr.To[int32](1)}
	f := newFixture(t)
	f.monocles, f.served = []*monoclev1alpha1.Monocle{m}, eckServed
	f.eckObjects = []*unstructured.Unstructured{eckElasticsearch("default", "es", "ApplyingChanges", "yellow", true)}
	f.userSecrets = eckSecrets("default", "es")
	st := f.resolve(f.newController())
	want := &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.default.svc:9200",
		Phase: "ApplyingChanges", Health: "yellow", DataNodes: ptr.To[int32](3), IndexReplicas: ptr.To[int32](1)}
	if got := clusterStatus(st, operand.Result{}); !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("status.elasticsearchCluster = %+v, want %+v", got, want)
	}
}

// TestTargetEventsEnqueueTheirMonocles: an event of an ECK Elasticsearch enqueues the
// Monocles that reference it (from any namespace), one of a Secret the target reads those
// that read it, and a Monocle's deletion the others of its cluster.
func TestTargetEventsEnqueueTheirMonocles(t *testing.T) {
	eck := withRef(monoclev1alpha1.ElasticsearchReference{Name: "es", Namespace: "search"})
	eck.Name = "eck"
	ext := withExternal("ext", "https://es.example.com", "creds", "")
	sameCluster := withExternal("ext2", "https://es.example.com:443", "", "")
	bundled := newMonocle("bundled")
	same := withRef(monoclev1alpha1.ElasticsearchReference{Name: "es"})
	same.Name = "same"
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{eck, ext, sameCluster, bundled, same}
	c := f.newController()
	queued := func() []string { return drainQueue(c) }
	for _, tc := range []struct {
		name  string
		event func()
		want  []string
	}{
		{"ECK Elasticsearch added", func() { c.enqueueIdentity(eckElasticsearch("search", "es", "Ready", "green", true)) }, []string{"default/eck"}},
		{"ECK Elasticsearch of another namespace", func() { c.enqueueIdentity(eckElasticsearch("default", "es", "Ready", "green", true)) }, []string{"default/same"}},
		{"ECK Elasticsearch resynced", func() {
			es := eckElasticsearch("search", "es", "Ready", "green", true)
			c.handleElasticsearchUpdate(es, es)
		}, nil},
		{"ECK elastic user's Secret, never read across namespaces", func() {
			c.handleSecretMetadata(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "search", Name: "es-es-elastic-user"}})
		}, nil},
		{"ECK elastic user's Secret in the Monocle's namespace", func() {
			c.handleSecretMetadata(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "es-es-elastic-user"}})
		}, []string{"default/same"}},
		{"ECK CA Secret", func() {
			c.handleSecretMetadata(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "search", Name: "es-es-http-certs-public"}})
		}, []string{"default/eck"}},
		{"credentials Secret", func() {
			c.handleSecretMetadata(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "creds"}})
		}, []string{"default/ext"}},
		{"Monocle deleted", func() { c.handleMonocleDelete(cache.DeletedFinalStateUnknown{Key: "default/ext", Obj: ext}) },
			[]string{"default/ext", "default/ext2"}},
		{"bundled Monocle deleted", func() { c.handleMonocleDelete(bundled) }, []string{"default/bundled"}},
	} {
		tc.event()
		if got := queued(); !equality.Semantic.DeepEqual(got, sortedCopy(tc.want)) {
			t.Errorf("%s: queued %q, want %q", tc.name, got, tc.want)
		}
	}
}

// drainQueue takes every key off c's queue and returns them, sorted.
func drainQueue(c *Controller) []string {
	var out []string
	for c.queue.Len() > 0 {
		key, _ := c.queue.Get()
		out = append(out, key.String())
		c.queue.Done(key)
		c.queue.Forget(key)
	}
	return sortedCopy(out)
}
