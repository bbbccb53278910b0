package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// exposure is what ensureExposure made of a Monocle's spec.ingress, spec.httpRoute and
// spec.route.
type exposure struct {
	// condition is the Exposed condition.
	condition metav1.Condition
	// assignedURL is https://<host> of a Route whose host the OpenShift router assigned
	// (spec.route.host empty); empty otherwise.
	assignedURL string
}

// optionalExposure is an exposure through a kind of an optional API.
type optionalExposure struct {
	resource schema.GroupVersionResource
	name     string
	wanted   bool
	build    func(*monoclev1alpha1.Monocle) *unstructured.Unstructured
}

// ensureExposure keeps the objects that expose the web UI as the spec asks: each one asked
// for is ensured, each one no longer asked for deleted. An optional API the cluster does not
// serve (Gateway API, OpenShift Routes) never fails the sync: the Exposed condition names it
// and the rest of the Monocle runs; discovery (owned/optional.go) syncs the Monocle again
// when the API appears. The errors are those of the writes, nil ones included.
func (c *Controller) ensureExposure(ctx context.Context, m *monoclev1alpha1.Monocle) (exposure, []error) {
	var errs []error
	var made, missing []string
	var out exposure
	if m.Spec.Ingress != nil {
		_, err := c.ingresses.Ensure(ctx, c.recorder, m, resources.NewAPIIngress(m))
		errs = append(errs, err)
		made = append(made, "Ingress "+resources.IngressName(m))
	} else {
		errs = append(errs, c.ingresses.Delete(ctx, c.recorder, m, resources.IngressName(m), "spec.ingress is unset"))
	}
	for _, e := range []optionalExposure{
		{resources.HTTPRouteResource, resources.HTTPRouteName(m), m.Spec.HTTPRoute != nil, resources.NewAPIHTTPRoute},
		{resources.RouteResource, resources.RouteName(m), m.Spec.Route != nil, resources.NewAPIRoute},
	} {
		k, served := c.optional.Kind(e.resource)
		switch {
		case e.wanted && served:
			live, err := k.Ensure(ctx, c.recorder, m, e.build(m))
			errs = append(errs, err)
			made = append(made, k.Name()+" "+e.name)
			if e.resource == resources.RouteResource && live != nil && m.Spec.Route.Host == "" {
				if host, _, _ := unstructured.NestedString(live.Object, "spec", "host"); host != "" {
					out.assignedURL = "https://" + host
				}
			}
		case e.wanted:
			missing = append(missing, e.resource.Resource+"."+e.resource.Group+"/"+e.resource.Version)
		case served:
			errs = append(errs, k.Delete(ctx, c.recorder, m, e.name, "spec."+specField(e.resource)+" is unset"))
		}
	}
	out.condition = exposedCondition(m, made, missing, errors.Join(errs...), out.assignedURL)
	return out, errs
}

// specField names the spec field of an optional exposure's resource.
func specField(r schema.GroupVersionResource) string {
	if r == resources.RouteResource {
		return "route"
	}
	return "httpRoute"
}

// exposedCondition builds the Exposed condition.
func exposedCondition(m *monoclev1alpha1.Monocle, made, missing []string, err error, assignedURL string) metav1.Condition {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionExposed, ObservedGeneration: m.Generation}
	url := statusURL(m, assignedURL)
	switch {
	case len(missing) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.APINotServed
		cond.Message = fmt.Sprintf("The cluster does not serve %s: install the API (its CRDs) or use another exposure; the Monocle runs without it, and the operator notices when it appears",
			strings.Join(missing, ", "))
	case err != nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.ExposureFailed
		cond.Message = day2.Truncate(err.Error())
	case len(made) == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.NotExposed
		cond.Message = fmt.Sprintf("No ingress, httpRoute or route is set: run %s and open %s",
			resources.PortForwardCommand(m), url)
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, reasons.Exposed
		cond.Message = fmt.Sprintf("The web UI is exposed at %s by %s", url, strings.Join(made, ", "))
	}
	return cond
}

// statusURL is the URL status.url shows: the public URL given to the API, or the URL of a
// Route whose host the router assigned when nothing else names one.
func statusURL(m *monoclev1alpha1.Monocle, assignedURL string) string {
	if assignedURL != "" && resources.ExposedURL(m) == "" && m.Spec.PublicURL == "" {
		return assignedURL
	}
	return resources.PublicURL(m)
}
