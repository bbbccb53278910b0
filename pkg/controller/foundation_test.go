package controller

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestElasticsearchVersionRefusals: an Elasticsearch image of another major version is never
// deployed, and one older than the running image does not replace it; both are reported in
// SpecAccepted and Degraded. An upgrade, and a tag without a version, go ahead.
func TestElasticsearchVersionRefusals(t *testing.T) {
	const es = "docker.elastic.co/elasticsearch/elasticsearch:"
	m := newMonocle("demo")
	m.Spec.Elasticsearch.Image = es + "8.11.0"
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	kubeWrites, monocleWrites := f.run()
	if written[*appsv1.StatefulSet](kubeWrites, "demo-elastic") != nil {
		t.Errorf("an Elasticsearch 8 StatefulSet was created: %v", describe(kubeWrites))
	}
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	expectRefused(t, status, reasons.ElasticsearchVersionUnsupported, "Elasticsearch 8")

	converged7, objects := converged(t, newMonocle("demo"))
	for image, refused := range map[string]string{
		es + "7.10.2":  reasons.ElasticsearchDowngrade,
		es + "7.17.27": "",
		es + "latest":  "",
	} {
		m := converged7.DeepCopy()
		m.Spec.Elasticsearch.Image = image
		m.Generation++
		_, writes, status := resync(t, m, objects)
		updated := written[*appsv1.StatefulSet](writes, "demo-elastic") != nil
		if refused != "" {
			if updated {
				t.Errorf("%s: the StatefulSet was updated", image)
			}
			expectRefused(t, status, refused, "older than the running")
			continue
		}
		if !updated {
			t.Errorf("%s: the StatefulSet was not updated: %v", image, describe(writes))
		}
		if c := condition(t, status, monoclev1alpha1.ConditionSpecAccepted); c.Status != metav1.ConditionTrue {
			t.Errorf("%s: SpecAccepted = %+v", image, c)
		}
	}
}

func expectRefused(t *testing.T, status *monoclev1alpha1.Monocle, reason, text string) {
	t.Helper()
	c := condition(t, status, monoclev1alpha1.ConditionSpecAccepted)
	if c.Status != metav1.ConditionFalse || c.Reason != reason || !strings.Contains(c.Message, text) {
		t.Errorf("SpecAccepted = %+v, want False/%s saying %q", c, reason, text)
	}
	if d := condition(t, status, monoclev1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != reason {
		t.Errorf("Degraded = %+v, want True/%s", d, reason)
	}
}

// TestOperatorAdmittedWhileReading: a Monocle's NetworkPolicy admits the operator's pods of
// Options.OperatorNamespace to Elasticsearch while the controller reads the operands, and
// no pod of the operator's when it does not.
func TestOperatorAdmittedWhileReading(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	for _, reading := range []bool{true, false} {
		m := newMonocle("demo")
		f := newFixture(t)
		f.monocles, f.operatorNamespace = []*monoclev1alpha1.Monocle{m}, "monocle-operator"
		admitted := ""
		if reading {
			f.operands, admitted = operand.Options{Interval: time.Hour, Timeout: time.Second}, f.operatorNamespace
		}
		if err := f.newController().syncHandler(ctx, cache.MetaObjectToName(m)); err != nil {
			t.Fatal(err)
		}
		got, want := written[*networkingv1.NetworkPolicy](f.kubeclient.Actions(), "demo"), resources.NewNetworkPolicy(m, admitted)
		if got == nil || !equality.Semantic.DeepEqual(got.Spec, want.Spec) {
			t.Errorf("reading %v: NetworkPolicy %+v, want the spec %+v", reading, got, want.Spec)
		}
	}
}

// TestExternalElasticsearchGetsTheProxyAndNoBundledObjects: a new Monocle on an https
// cluster with credentials, as the phase resolving the target leaves syncState.target, gets
// the proxy Secret and an API with the proxy sidecar, and nothing of the bundled
// Elasticsearch: no StatefulSet, volume or Service, no rule of port 9200, no StorageReady, and
// its Ready does not wait for an Elasticsearch workload.
func TestExternalElasticsearchGetsTheProxyAndNoBundledObjects(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.Elasticsearch.External = &monoclev1alpha1.ExternalElasticsearch{
		URL: "https://es.example.com:9243", CredentialsSecretRef: &monoclev1alpha1.SecretReference{Name: "es-credentials"},
	}
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	c := f.newController()
	_, ctx := ktesting.NewTestContext(t)
	ctx, st := newSyncState(ctx, m.DeepCopy(), time.Now())
	// The resolve phase (target.go) would find this cluster resolved and ready.
	resolveAs(st, "monocle", "s3cret-Pa55", []byte("-----BEGIN CERTIFICATE-----\n"))
	target := st.cluster.target
	found := c.ensureFoundation(ctx, st)
	c.ensureWorkloads(ctx, st, found)
	if len(st.errs) > 0 {
		t.Fatalf("sync errors: %v", st.errs)
	}

	actions := writes(f.kubeclient.Actions())
	for _, a := range actions {
		r := a.GetResource().Resource
		name := ""
		if o, ok := writtenObject(a).(interface{ GetName() string }); ok {
			name = o.GetName()
		}
		if r == "statefulsets" || r == "persistentvolumeclaims" || name == resources.ElasticName(m) {
			t.Errorf("%s %s %s: an object of the bundled Elasticsearch", a.GetVerb(), r, name)
		}
	}
	proxy := written[*corev1.Secret](actions, "demo-elastic-proxy")
	want, err := resources.NewProxySecret(m, target)
	if err != nil {
		t.Fatal(err)
	}
	if proxy == nil {
		t.Fatalf("no proxy Secret among %v", describe(actions))
	}
	checkObject(t, "proxy Secret", want, proxy)

	api := written[*appsv1.Deployment](actions, "demo-api")
	if api == nil {
		t.Fatalf("no API Deployment among %v", describe(actions))
	}
	tpl := api.Spec.Template
	if len(tpl.Spec.InitContainers) != 1 || tpl.Spec.InitContainers[0].Name != resources.ComponentProxy {
		t.Errorf("API init containers %v, want the proxy", tpl.Spec.InitContainers)
	}
	apiSecret := written[*corev1.Secret](actions, "demo-api")
	if got, want := tpl.Annotations[resources.ProxyHashAnnotation], resources.ProxyHash(want.Data, apiSecret.Data); got != want {
		t.Errorf("proxy hash %q, want %q", got, want)
	}
	for _, e := range tpl.Spec.Containers[0].Env {
		if e.Name == "MONOCLE_ELASTIC_URL" && e.Value != "http://127.0.0.1:9200" {
			t.Errorf("MONOCLE_ELASTIC_URL = %s, want the proxy's", e.Value)
		}
	}
	if crawler := written[*appsv1.Deployment](actions, "demo-crawler"); crawler == nil || len(crawler.Spec.Template.Spec.InitContainers) != 0 {
		t.Errorf("crawler %v: want one without the proxy", crawler)
	}
	if p := written[*networkingv1.NetworkPolicy](actions, "demo"); p == nil || len(p.Spec.Ingress) != 1 {
		t.Errorf("NetworkPolicy %v: want the API's rule alone", p)
	}
	if st.condition(monoclev1alpha1.ConditionStorageReady) != nil {
		t.Error("StorageReady is set without a volume")
	}
	if spec := st.condition(monoclev1alpha1.ConditionSpecAccepted); spec == nil || spec.Status != "True" {
		t.Errorf("SpecAccepted %v", spec)
	}
	status := computeStatus(st, classify(nil))
	for _, cond := range status.Conditions {
		if cond.Type == monoclev1alpha1.ConditionProgressing && strings.Contains(cond.Message, "elasticsearch") {
			t.Errorf("Progressing waits for an Elasticsearch workload: %s", cond.Message)
		}
	}
}

// TestProxySecretGoesWithTheProxy: a target that needs no proxy gets no Secret, and one the
// Monocle had is deleted; the API then runs without the sidecar, with the cluster's URL.
func TestProxySecretGoesWithTheProxy(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.Elasticsearch.External = &monoclev1alpha1.ExternalElasticsearch{URL: "http://es.example.com:9200"}
	old, err := resources.NewProxySecret(m, resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchExternal,
		URL: "http://es.example.com:9200", Username: "monocle", Password: "old"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = append(f.kubeobjects, old)
	c := f.newController()
	_, ctx := ktesting.NewTestContext(t)
	ctx, st := newSyncState(ctx, m.DeepCopy(), time.Now())
	resolveAs(st, "", "", nil)
	c.ensureWorkloads(ctx, st, c.ensureFoundation(ctx, st))
	actions := writes(f.kubeclient.Actions())
	deleted := false
	for _, a := range actions {
		deleted = deleted || (a.GetVerb() == "delete" && a.GetResource().Resource == "secrets")
	}
	if !deleted {
		t.Errorf("the proxy Secret is kept: %v", describe(actions))
	}
	api := written[*appsv1.Deployment](actions, "demo-api")
	if api == nil || len(api.Spec.Template.Spec.InitContainers) != 0 {
		t.Fatalf("API %v: want one without the proxy", api)
	}
	if env := api.Spec.Template.Spec.Containers[0].Env[1]; env.Name != "MONOCLE_ELASTIC_URL" || env.Value != "http://es.example.com:9200" {
		t.Errorf("%s = %s, want the cluster's URL", env.Name, env.Value)
	}
}
