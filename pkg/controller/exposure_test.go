package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	core "k8s.io/client-go/testing"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

var bothOptionalAPIs = []schema.GroupVersionResource{resources.HTTPRouteResource, resources.RouteResource}

// exposed returns a Monocle "demo" exposed three ways.
func exposed() *monoclev1alpha1.Monocle {
	m := newMonocle("demo")
	m.Spec.Ingress = &monoclev1alpha1.IngressSpec{Host: "monocle.example.com", TLS: &monoclev1alpha1.IngressTLS{}}
	m.Spec.HTTPRoute = &monoclev1alpha1.HTTPRouteSpec{
		ParentRefs: []monoclev1alpha1.ParentReference{{Name: "public", Namespace: "gateways"}},
		Hostnames:  []string{"monocle.gw.example.com"},
	}
	m.Spec.Route = &monoclev1alpha1.RouteSpec{Host: "monocle.apps.example.com", Labels: map[string]string{"shard": "internet"}}
	return m
}

// exposureRun syncs m once with the given optional APIs served and the given objects, and
// returns the fixture, the writes to the Kubernetes and dynamic clients, and the status.
func exposureRun(t *testing.T, m *monoclev1alpha1.Monocle, served []schema.GroupVersionResource, kube []runtime.Object, dynamic ...runtime.Object) (*fixture, []core.Action, []core.Action, *monoclev1alpha1.Monocle) {
	t.Helper()
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = kube
	f.served = served
	f.dynamicObjects = dynamic
	kubeWrites, status := f.runStatus()
	return f, kubeWrites, writes(f.dynamic.Actions()), status
}

// TestExposureCreatesEachKind: a Monocle with an Ingress, an HTTPRoute and a Route on a cluster
// serving both optional APIs gets the three objects as their builders make them, the public URL
// of the first (the Ingress, with TLS), and Exposed True.
func TestExposureCreatesEachKind(t *testing.T) {
	m := exposed()
	_, kubeWrites, dynamicWrites, status := exposureRun(t, m, bothOptionalAPIs, []runtime.Object{readyElastic(m)})

	ingress := written[*networkingv1.Ingress](kubeWrites, "demo-api")
	if ingress == nil {
		t.Fatalf("no Ingress created: %v", describe(kubeWrites))
	}
	checkObject(t, "Ingress", resources.NewAPIIngress(m), ingress)
	if got := ingress.Spec.TLS; len(got) != 1 || got[0].SecretName != "demo-api-tls" || got[0].Hosts[0] != "monocle.example.com" {
		t.Errorf("Ingress TLS = %+v, want the host with Secret demo-api-tls", got)
	}
	checkActions(t, dynamicWrites,
		expectation{verb: "create", resource: "httproutes", namespace: "default", name: "demo-api", object: resources.NewAPIHTTPRoute(m)},
		expectation{verb: "create", resource: "routes", namespace: "default", name: "demo-api-route", object: resources.NewAPIRoute(m)},
	)
	if status.Status.URL != "https://monocle.example.com" {
		t.Errorf("status.url = %q, want https://monocle.example.com", status.Status.URL)
	}
	c := condition(t, status, monoclev1alpha1.ConditionExposed)
	if c.Status != metav1.ConditionTrue || c.Reason != reasons.Exposed ||
		c.Message != "The web UI is exposed at https://monocle.example.com by Ingress demo-api, HTTPRoute demo-api, Route demo-api-route" {
		t.Errorf("Exposed = %+v", c)
	}
	api := written[*appsv1.Deployment](kubeWrites, "demo-api")
	if v := envValue(api.Spec.Template.Spec.Containers[0].Env, "MONOCLE_PUBLIC_URL"); v != "https://monocle.example.com" {
		t.Errorf("MONOCLE_PUBLIC_URL = %q, want the Ingress URL", v)
	}
}

// TestMissingOptionalAPIDoesNotFailTheMonocle: on a cluster without the Gateway API and
// Routes, a Monocle asking for both is neither failed nor degraded: no dynamic write, Exposed
// False naming both APIs, a Warning event, and every other object created.
func TestMissingOptionalAPIDoesNotFailTheMonocle(t *testing.T) {
	m := exposed()
	f, kubeWrites, dynamicWrites, status := exposureRun(t, m, nil, nil)
	expectActions(t, dynamicWrites)
	if written[*networkingv1.Ingress](kubeWrites, "demo-api") == nil {
		t.Errorf("no Ingress created: %v", describe(kubeWrites))
	}
	c := condition(t, status, monoclev1alpha1.ConditionExposed)
	if c.Status != metav1.ConditionFalse || c.Reason != reasons.APINotServed ||
		!strings.Contains(c.Message, "httproutes.gateway.networking.k8s.io/v1, routes.route.openshift.io/v1") {
		t.Errorf("Exposed = %+v, want APINotServed naming both APIs", c)
	}
	if d := condition(t, status, monoclev1alpha1.ConditionDegraded); d.Status != metav1.ConditionFalse {
		t.Errorf("Degraded = %+v, want False", d)
	}
	// The status still shows the URL the spec asks for.
	if status.Status.URL != "https://monocle.example.com" {
		t.Errorf("status.url = %q", status.Status.URL)
	}
	if !hasEvent(f, corev1.EventTypeWarning, reasons.APINotServed) {
		t.Errorf("no %s Warning event among %v", reasons.APINotServed, drain(f))
	}
}

// TestUnsetExposureIsDeleted: removing spec.ingress, spec.httpRoute and spec.route deletes the
// objects the Monocle controls, with preconditions, and leaves a foreign Route alone.
func TestUnsetExposureIsDeleted(t *testing.T) {
	m := exposed()
	ingress := resources.NewAPIIngress(m)
	ingress.UID, ingress.ResourceVersion = "u1", "7"
	httpRoute := resources.NewAPIHTTPRoute(m)
	httpRoute.SetUID("u2")
	httpRoute.SetResourceVersion("8")
	foreign := resources.NewAPIRoute(m)
	foreign.SetOwnerReferences(nil)
	bare := newMonocle("demo")
	_, kubeWrites, dynamicWrites, status := exposureRun(t, bare, bothOptionalAPIs, []runtime.Object{ingress}, httpRoute, foreign)
	var deletes []core.Action
	for _, a := range kubeWrites {
		if a.GetVerb() == "delete" {
			deletes = append(deletes, a)
		}
	}
	checkActions(t, deletes, expectDelete("ingresses", "default", "demo-api"))
	checkActions(t, dynamicWrites, expectDelete("httproutes", "default", "demo-api"))
	if p := deletes[0].(core.DeleteActionImpl).DeleteOptions.Preconditions; p == nil || *p.UID != "u1" || *p.ResourceVersion != "7" {
		t.Errorf("Ingress delete preconditions = %+v, want UID u1 and resourceVersion 7", p)
	}
	if c := condition(t, status, monoclev1alpha1.ConditionExposed); c.Reason != reasons.NotExposed {
		t.Errorf("Exposed = %+v, want NotExposed", c)
	}
}

// TestRouteDriftIsRepaired: a Route whose host someone changed gets its host back, with the
// fields the router and others set (status, spec.subdomain) kept; a Route that differs only
// in what the API server and router add is left alone.
func TestRouteDriftIsRepaired(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.Route = &monoclev1alpha1.RouteSpec{Host: "monocle.apps.example.com"}
	live := resources.NewAPIRoute(m)
	mustSet(t, live, "other.example.com", "spec", "host")
	mustSet(t, live, "x", "spec", "subdomain")
	mustSet(t, live, []any{map[string]any{"host": "other.example.com"}}, "status", "ingress")
	_, _, dynamicWrites, _ := exposureRun(t, m, bothOptionalAPIs, nil, live)

	want := live.DeepCopy()
	mustSet(t, want, "monocle.apps.example.com", "spec", "host")
	checkActions(t, dynamicWrites, expectation{verb: "update", resource: "routes", namespace: "default", name: "demo-api-route", object: want})

	defaulted := resources.NewAPIRoute(m)
	mustSet(t, defaulted, "x", "spec", "subdomain")
	mustSet(t, defaulted, []any{map[string]any{"host": "monocle.apps.example.com"}}, "status", "ingress")
	_, _, dynamicWrites, _ = exposureRun(t, m, bothOptionalAPIs, nil, defaulted)
	expectActions(t, dynamicWrites)
}

// TestRouteAssignedHostIsTheURL: with route.host empty, the host the OpenShift router
// assigned is status.url.
func TestRouteAssignedHostIsTheURL(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.Route = &monoclev1alpha1.RouteSpec{}
	live := resources.NewAPIRoute(m)
	mustSet(t, live, "demo-api-route-default.apps.example.com", "spec", "host")
	_, _, dynamicWrites, status := exposureRun(t, m, bothOptionalAPIs, nil, live)
	expectActions(t, dynamicWrites)
	if status.Status.URL != "https://demo-api-route-default.apps.example.com" {
		t.Errorf("status.url = %q, want the assigned host", status.Status.URL)
	}
}

// TestEarlierOperatorRouteIsAdopted: the Route the earlier operator made ("<name>-api-route",
// controlled by the Monocle, without our labels) is updated in place, not duplicated.
func TestEarlierOperatorRouteIsAdopted(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.Route = &monoclev1alpha1.RouteSpec{Host: "monocle.apps.example.com"}
	earlier := resources.NewAPIRoute(m)
	earlier.SetLabels(nil)
	earlier.SetAnnotations(nil)
	mustSet(t, earlier, int64(8080), "spec", "port", "targetPort")
	_, _, dynamicWrites, _ := exposureRun(t, m, bothOptionalAPIs, nil, earlier)
	if got := describe(dynamicWrites); len(got) != 1 || got[0] != "update routes demo-api-route" {
		t.Fatalf("writes = %v, want one update of the Route", got)
	}
	updated := writtenObject(dynamicWrites[0]).(*unstructured.Unstructured)
	if updated.GetLabels()[resources.ManagedByLabel] != resources.ManagedByValue {
		t.Errorf("the adopted Route lacks the managed-by label: %v", updated.GetLabels())
	}
}

func mustSet(t *testing.T, u *unstructured.Unstructured, value any, fields ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(u.Object, value, fields...); err != nil {
		t.Fatal(err)
	}
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// drain returns the events the fixture's recorder holds.
func drain(f *fixture) []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// hasEvent reports whether the recorder holds an event of type and reason (and drains it).
func hasEvent(f *fixture, typ, reason string) bool {
	for _, e := range drain(f) {
		if strings.HasPrefix(e, typ+" "+reason+" ") {
			return true
		}
	}
	return false
}
