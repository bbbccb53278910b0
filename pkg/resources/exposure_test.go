package resources

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// TestPublicURLDefaults: spec.publicURL wins, then the exposures in the order ingress,
// httpRoute, route, then the in-cluster URL.
func TestPublicURLDefaults(t *testing.T) {
	ingress := &monoclev1alpha1.IngressSpec{Host: "i.example.com"}
	tlsIngress := &monoclev1alpha1.IngressSpec{Host: "i.example.com", TLS: &monoclev1alpha1.IngressTLS{}}
	httpRoute := &monoclev1alpha1.HTTPRouteSpec{ParentRefs: []monoclev1alpha1.ParentReference{{Name: "gw"}},
		Hostnames: []string{"*.wild.example.com", "h.example.com"}}
	route := &monoclev1alpha1.RouteSpec{Host: "r.example.com"}
	for _, c := range []struct {
		name string
		spec monoclev1alpha1.MonocleSpec
		want string
	}{
		{"nothing", monoclev1alpha1.MonocleSpec{}, "http://localhost:8090"},
		{"publicURL wins", monoclev1alpha1.MonocleSpec{PublicURL: "https://p.example.com", Ingress: tlsIngress}, "https://p.example.com"},
		{"ingress without TLS", monoclev1alpha1.MonocleSpec{Ingress: ingress, Route: route}, "http://i.example.com"},
		{"ingress with TLS", monoclev1alpha1.MonocleSpec{Ingress: tlsIngress}, "https://i.example.com"},
		{"httpRoute skips wildcards", monoclev1alpha1.MonocleSpec{HTTPRoute: httpRoute, Route: route}, "https://h.example.com"},
		{"httpRoute without hostname", monoclev1alpha1.MonocleSpec{HTTPRoute: &monoclev1alpha1.HTTPRouteSpec{}, Route: route}, "https://r.example.com"},
		{"route", monoclev1alpha1.MonocleSpec{Route: route}, "https://r.example.com"},
		{"route without host", monoclev1alpha1.MonocleSpec{Route: &monoclev1alpha1.RouteSpec{}}, "http://localhost:8090"},
	} {
		m := &monoclev1alpha1.Monocle{Spec: c.spec}
		m.Name, m.Namespace = "demo", "ns"
		if got := PublicURL(m); got != c.want {
			t.Errorf("%s: PublicURL = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestIngressTLSAndIssuer: TLS defaults its Secret to "<name>-api-tls"; an issuerRef becomes
// cert-manager's annotation of its kind, next to the user's annotations.
func TestIngressTLSAndIssuer(t *testing.T) {
	m := &monoclev1alpha1.Monocle{Spec: monoclev1alpha1.MonocleSpec{Ingress: &monoclev1alpha1.IngressSpec{
		Host: "m.example.com", ClassName: "nginx",
		TLS:         &monoclev1alpha1.IngressTLS{IssuerRef: &monoclev1alpha1.IssuerReference{Name: "le", Kind: "Issuer"}},
		Annotations: map[string]string{"a": "b"},
	}}}
	m.Name, m.Namespace = "demo", "ns"
	ing := NewAPIIngress(m)
	if got := ing.Spec.TLS[0].SecretName; got != "demo-api-tls" {
		t.Errorf("TLS Secret = %q", got)
	}
	if ing.Annotations["cert-manager.io/issuer"] != "le" || ing.Annotations["a"] != "b" || ing.Annotations[SpecHashAnnotation] == "" {
		t.Errorf("annotations = %v", ing.Annotations)
	}
	if *ing.Spec.IngressClassName != "nginx" || ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name != "demo-api" {
		t.Errorf("spec = %+v", ing.Spec)
	}
	m.Spec.Ingress.TLS.IssuerRef.Kind = ""
	m.Spec.Ingress.TLS.SecretName = "mine"
	ing = NewAPIIngress(m)
	if ing.Annotations["cert-manager.io/cluster-issuer"] != "le" || ing.Spec.TLS[0].SecretName != "mine" {
		t.Errorf("ClusterIssuer default: annotations %v, TLS %+v", ing.Annotations, ing.Spec.TLS)
	}
}

// TestHTTPRouteIsAGatewayAPIObject: the unstructured HTTPRoute converts back into Gateway
// API's own type with the parents, hostnames and backend asked for.
func TestHTTPRouteIsAGatewayAPIObject(t *testing.T) {
	m := &monoclev1alpha1.Monocle{Spec: monoclev1alpha1.MonocleSpec{HTTPRoute: &monoclev1alpha1.HTTPRouteSpec{
		ParentRefs: []monoclev1alpha1.ParentReference{{Name: "gw", Namespace: "infra", SectionName: "https"}},
		Hostnames:  []string{"m.example.com"},
	}}}
	m.Name, m.Namespace = "demo", "ns"
	u := NewAPIHTTPRoute(m)
	var route gatewayv1.HTTPRoute
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &route); err != nil {
		t.Fatal(err)
	}
	p := route.Spec.ParentRefs[0]
	if u.GetKind() != "HTTPRoute" || u.GetAPIVersion() != "gateway.networking.k8s.io/v1" || p.Name != "gw" || *p.Namespace != "infra" || *p.SectionName != "https" ||
		route.Spec.Hostnames[0] != "m.example.com" || route.Spec.Rules[0].BackendRefs[0].Name != "demo-api" || *route.Spec.Rules[0].BackendRefs[0].Port != APIPort {
		t.Errorf("HTTPRoute = %+v", route)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "creationTimestamp"); found {
		t.Error("the built HTTPRoute sets metadata.creationTimestamp")
	}
	if len(u.GetOwnerReferences()) != 1 || u.GetLabels()[ManagedByLabel] != ManagedByValue {
		t.Errorf("metadata = %+v", u.Object["metadata"])
	}
}

// TestRouteAsTheEarlierOperatorMadeIt: the Route keeps the earlier operator's name and shape,
// with the user's labels under the operator's own.
func TestRouteAsTheEarlierOperatorMadeIt(t *testing.T) {
	m := &monoclev1alpha1.Monocle{Spec: monoclev1alpha1.MonocleSpec{Route: &monoclev1alpha1.RouteSpec{
		Host: "m.apps.example.com", Labels: map[string]string{"shard": "internet", ManagedByLabel: "someone"}}}}
	m.Name, m.Namespace = "demo", "ns"
	u := NewAPIRoute(m)
	for path, want := range map[string]any{
		"spec.host": "m.apps.example.com", "spec.path": "/", "spec.to.kind": "Service", "spec.to.name": "demo-api",
		"spec.to.weight": int64(100), "spec.port.targetPort": int64(8080), "spec.tls.termination": "edge",
		"spec.tls.insecureEdgeTerminationPolicy": "Redirect", "spec.wildcardPolicy": "None",
	} {
		got, _, _ := unstructured.NestedFieldNoCopy(u.Object, strings.Split(path, ".")...)
		if got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if u.GetName() != "demo-api-route" || u.GetLabels()["shard"] != "internet" || u.GetLabels()[ManagedByLabel] != ManagedByValue {
		t.Errorf("metadata: name %s labels %v", u.GetName(), u.GetLabels())
	}
	m.Spec.Route.Host = ""
	if _, found, _ := unstructured.NestedFieldNoCopy(NewAPIRoute(m).Object, "spec", "host"); found {
		t.Error("a Route without route.host sets spec.host")
	}
}
