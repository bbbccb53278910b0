package resources

import (
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// The optional APIs that expose a Monocle: a cluster may serve them or not, and the operator
// finds out by discovery.
var (
	// HTTPRouteResource is the Gateway API's HTTPRoute, gateway.networking.k8s.io/v1 (Gateway
	// API v1.0 and later; the CRDs of sigs.k8s.io/gateway-api's config/crd/standard).
	HTTPRouteResource = schema.GroupVersionResource{Group: gatewayv1.GroupName, Version: "v1", Resource: "httproutes"}
	// RouteResource is OpenShift's Route, route.openshift.io/v1 (github.com/openshift/api
	// route/v1).
	RouteResource = schema.GroupVersionResource{Group: "route.openshift.io", Version: "v1", Resource: "routes"}
)

// cert-manager's ingress-shim annotations (cert-manager.io/v1, "Securing Ingress Resources"
// in cert-manager's documentation): an Ingress carrying one gets a Certificate for its TLS
// hosts, issued into the TLS Secret.
const (
	certManagerIssuerAnnotation        = "cert-manager.io/issuer"
	certManagerClusterIssuerAnnotation = "cert-manager.io/cluster-issuer"
)

// IngressName is the name of the Ingress and of the HTTPRoute of Monocle m: "<name>-api".
func IngressName(m *monoclev1alpha1.Monocle) string { return APIName(m) }

// HTTPRouteName is the name of the HTTPRoute of Monocle m: "<name>-api".
func HTTPRouteName(m *monoclev1alpha1.Monocle) string { return APIName(m) }

// RouteName is the name of the OpenShift Route of Monocle m, "<name>-api-route": the earlier
// operator's name, so that its Route is adopted rather than duplicated.
func RouteName(m *monoclev1alpha1.Monocle) string { return APIName(m) + "-route" }

// IngressTLSSecretName is the TLS Secret of m's Ingress: ingress.tls.secretName, by default
// "<name>-api-tls"; empty when the Ingress has no TLS.
func IngressTLSSecretName(m *monoclev1alpha1.Monocle) string {
	switch {
	case m.Spec.Ingress == nil || m.Spec.Ingress.TLS == nil:
		return ""
	case m.Spec.Ingress.TLS.SecretName != "":
		return m.Spec.Ingress.TLS.SecretName
	default:
		return APIName(m) + "-tls"
	}
}

// ExposedURL is the URL the first exposure of m makes the web UI reachable at: the Ingress
// host (https:// with TLS, else http://), the HTTPRoute's first hostname without a wildcard
// (https://), the Route host (https://, edge TLS). It is empty when no exposure names a host.
func ExposedURL(m *monoclev1alpha1.Monocle) string {
	if i := m.Spec.Ingress; i != nil && i.Host != "" {
		if i.TLS != nil {
			return "https://" + i.Host
		}
		return "http://" + i.Host
	}
	if r := m.Spec.HTTPRoute; r != nil {
		for _, h := range r.Hostnames {
			if !strings.HasPrefix(h, "*") {
				return "https://" + h
			}
		}
	}
	if r := m.Spec.Route; r != nil && r.Host != "" {
		return "https://" + r.Host
	}
	return ""
}

// NewAPIIngress builds the Ingress "<name>-api" of spec.ingress: host, path prefix "/", to the
// API Service's "http" port; TLS for the host from the TLS Secret; the user's annotations
// plus cert-manager's issuer annotation when tls.issuerRef is set. spec.ingress must be set.
func NewAPIIngress(m *monoclev1alpha1.Monocle) *networkingv1.Ingress {
	spec := m.Spec.Ingress
	ing := &networkingv1.Ingress{
		ObjectMeta: objectMeta(m, IngressName(m), ComponentAPI),
		Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{
				Host: spec.Host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     "/",
						PathType: ptr.To(networkingv1.PathTypePrefix),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: APIName(m),
							Port: networkingv1.ServiceBackendPort{Name: "http"},
						}},
					}},
				}},
			}},
		},
	}
	if spec.ClassName != "" {
		ing.Spec.IngressClassName = ptr.To(spec.ClassName)
	}
	annotations := map[string]string{}
	for k, v := range spec.Annotations {
		annotations[k] = v
	}
	if spec.TLS != nil {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{spec.Host}, SecretName: IngressTLSSecretName(m)}}
		if ref := spec.TLS.IssuerRef; ref != nil {
			key := certManagerClusterIssuerAnnotation
			if ref.Kind == "Issuer" {
				key = certManagerIssuerAnnotation
			}
			annotations[key] = ref.Name
		}
	}
	setSpecHash(&ing.ObjectMeta, ing.Spec)
	for k, v := range annotations {
		ing.Annotations[k] = v
	}
	return ing
}

// NewAPIHTTPRoute builds the HTTPRoute "<name>-api" of spec.httpRoute, as an unstructured
// gateway.networking.k8s.io/v1 object (the operator reads it through the dynamic client): the
// parent Gateways, the hostnames, one rule to the API Service's port 8080 (the API's default
// match is path prefix "/"). spec.httpRoute must be set.
func NewAPIHTTPRoute(m *monoclev1alpha1.Monocle) *unstructured.Unstructured {
	spec := m.Spec.HTTPRoute
	route := &gatewayv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: HTTPRouteResource.GroupVersion().String(), Kind: "HTTPRoute"},
		ObjectMeta: objectMeta(m, HTTPRouteName(m), ComponentAPI),
		Spec: gatewayv1.HTTPRouteSpec{
			Rules: []gatewayv1.HTTPRouteRule{{
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{
						Name: gatewayv1.ObjectName(APIName(m)),
						Port: ptr.To(gatewayv1.PortNumber(APIPort)),
					},
				}}},
			}},
		},
	}
	for _, p := range spec.ParentRefs {
		ref := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(p.Name)}
		if p.Namespace != "" {
			ref.Namespace = ptr.To(gatewayv1.Namespace(p.Namespace))
		}
		if p.SectionName != "" {
			ref.SectionName = ptr.To(gatewayv1.SectionName(p.SectionName))
		}
		route.Spec.ParentRefs = append(route.Spec.ParentRefs, ref)
	}
	for _, h := range spec.Hostnames {
		route.Spec.Hostnames = append(route.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	setSpecHash(&route.ObjectMeta, route.Spec)
	return toUnstructured(route)
}

// NewAPIRoute builds the OpenShift Route "<name>-api-route" of spec.route, as an unstructured
// route.openshift.io/v1 object, as the earlier operator (v0.0.2, controllers/
// monocle_controller.go mkHTTPSRoute) made it: to the API Service (weight 100), target port
// 8080, path "/", edge TLS with HTTP redirected to HTTPS, no wildcard; the host when set, and
// spec.route.labels next to the operator's own labels. spec.route must be set.
func NewAPIRoute(m *monoclev1alpha1.Monocle) *unstructured.Unstructured {
	spec := map[string]any{
		"path":           "/",
		"to":             map[string]any{"kind": "Service", "name": APIName(m), "weight": int64(100)},
		"port":           map[string]any{"targetPort": int64(APIPort)},
		"tls":            map[string]any{"termination": "edge", "insecureEdgeTerminationPolicy": "Redirect"},
		"wildcardPolicy": "None",
	}
	if m.Spec.Route.Host != "" {
		spec["host"] = m.Spec.Route.Host
	}
	meta := objectMeta(m, RouteName(m), ComponentAPI)
	return unstructuredObject(RouteResource, "Route", withUserLabels(meta, m.Spec.Route.Labels), spec)
}

// withUserLabels returns meta with labels the user asked for added to the operator's, which
// win where both name a key.
func withUserLabels(meta metav1.ObjectMeta, user map[string]string) metav1.ObjectMeta {
	labels := map[string]string{}
	for k, v := range user {
		labels[k] = v
	}
	for k, v := range meta.Labels {
		labels[k] = v
	}
	meta.Labels = labels
	return meta
}

// unstructuredObject is an object of an optional API the builders make without its Go types:
// kind of resource, with meta and spec, and the spec hash.
func unstructuredObject(resource schema.GroupVersionResource, kind string, meta metav1.ObjectMeta, spec map[string]any) *unstructured.Unstructured {
	setSpecHash(&meta, spec)
	u := toUnstructured(&metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: resource.GroupVersion().String(), Kind: kind},
		ObjectMeta: meta,
	})
	u.Object["spec"] = spec
	return u
}

// toUnstructured converts a typed object the builders made; it panics only on a type the
// converter cannot handle, which for API types cannot happen.
func toUnstructured(obj runtime.Object) *unstructured.Unstructured {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		panic(fmt.Sprintf("resources: converting %T: %v", obj, err))
	}
	u := &unstructured.Unstructured{Object: content}
	// The converter writes a zero creationTimestamp as null: not a field the operator sets.
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u
}
