package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// exposedMonocle asks for the three exposures: an Ingress without TLS, an HTTPRoute and a
// Route with its host.
const exposedMonocle = `apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata:
  name: m
spec:
  ingress:
    host: monocle.example.com
    className: nginx
    annotations:
      nginx.ingress.kubernetes.io/proxy-body-size: 8m
  httpRoute:
    parentRefs:
    - name: public
      namespace: gateways
    hostnames: [monocle.gw.example.com]
  route:
    host: monocle.apps.example.com
    labels:
      shard: internet
`

// TestExposure follows the exposure of a Monocle on the real control plane: first without the
// Gateway API and Route CRDs (the Ingress is made, the rest runs, Exposed says what is
// missing), then with them installed while the operator runs (discovery picks them up: the
// HTTPRoute and Route are made and pass the CRDs' own validation), drift of both repaired,
// unset exposures deleted, and the CRDs removed again (Exposed says so, the Monocle stays
// Ready).
func TestExposure(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns := "exposure"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	crds, err := testkit.FindOptionalCRDs(ctx, env.Root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Kubectl.RunStdin(ctx, exposedMonocle, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatal(err)
	}

	cond := waitCondition(t, ns, "m", monoclev1alpha1.ConditionExposed, metav1.ConditionFalse, reasons.APINotServed)
	if !strings.Contains(cond.Message, "httproutes.gateway.networking.k8s.io/v1, routes.route.openshift.io/v1") {
		t.Errorf("Exposed message does not name both APIs: %s", cond.Message)
	}
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionReady, metav1.ConditionTrue, reasons.AllComponentsReady)
	ing, err := env.Kube.NetworkingV1().Ingresses(ns).Get(ctx, "m-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *ing.Spec.IngressClassName != "nginx" || ing.Spec.Rules[0].Host != "monocle.example.com" ||
		ing.Annotations["nginx.ingress.kubernetes.io/proxy-body-size"] != "8m" {
		t.Errorf("Ingress = %+v %v", ing.Spec, ing.Annotations)
	}
	if u := getMonocle(t, ns, "m").Status.URL; u != "http://monocle.example.com" {
		t.Errorf("status.url = %q, want http://monocle.example.com", u)
	}

	t.Run("APIs installed later are used", func(t *testing.T) {
		for _, f := range []string{crds.HTTPRoute, crds.Route} {
			env.Kubectl.Must(t, "apply", "--server-side", "-f", f)
		}
		env.Kubectl.MustWaitEstablished(t, "httproutes.gateway.networking.k8s.io")
		env.Kubectl.MustWaitEstablished(t, "routes.route.openshift.io")
		waitCondition(t, ns, "m", monoclev1alpha1.ConditionExposed, metav1.ConditionTrue, reasons.Exposed)
		route := jsonpath(t, ns, "routes.route.openshift.io/m-api-route",
			"{.spec.host} {.spec.to.name} {.spec.tls.termination} {.metadata.labels.shard}")
		if route != "monocle.apps.example.com m-api edge internet" {
			t.Errorf("Route = %q", route)
		}
		httpRoute := jsonpath(t, ns, "httproutes.gateway.networking.k8s.io/m-api",
			"{.spec.parentRefs[0].name} {.spec.hostnames[0]} {.spec.rules[0].backendRefs[0].name} {.spec.rules[0].backendRefs[0].port}")
		if httpRoute != "public monocle.gw.example.com m-api 8080" {
			t.Errorf("HTTPRoute = %q", httpRoute)
		}
	})

	t.Run("drift is repaired", func(t *testing.T) {
		env.Kubectl.Must(t, "patch", "-n", ns, "routes.route.openshift.io/m-api-route", "--type=merge",
			"-p", `{"spec":{"host":"evil.example.com"}}`)
		env.Kubectl.Must(t, "delete", "-n", ns, "httproutes.gateway.networking.k8s.io/m-api")
		testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "Route host restored and HTTPRoute recreated", func() error {
			host, err := env.Kubectl.Run(ctx, "get", "-n", ns, "routes.route.openshift.io/m-api-route", "-o", "jsonpath={.spec.host}")
			if err != nil || host != "monocle.apps.example.com" {
				return fmt.Errorf("route host %q (%v)", host, err)
			}
			if _, err := env.Kubectl.Run(ctx, "get", "-n", ns, "httproutes.gateway.networking.k8s.io/m-api"); err != nil {
				return err
			}
			return nil
		})
	})

	t.Run("unset exposures are deleted", func(t *testing.T) {
		env.Kubectl.Must(t, "patch", "-n", ns, "monocle/m", "--type=json",
			"-p", `[{"op":"remove","path":"/spec/ingress"},{"op":"remove","path":"/spec/httpRoute"}]`)
		testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "Ingress and HTTPRoute deleted", func() error {
			out, err := env.Kubectl.Run(ctx, "get", "-n", ns, "ingresses,httproutes.gateway.networking.k8s.io", "-o", "name")
			if err != nil || out != "" {
				return fmt.Errorf("still there: %q (%v)", out, err)
			}
			return nil
		})
		waitCondition(t, ns, "m", monoclev1alpha1.ConditionExposed, metav1.ConditionTrue, reasons.Exposed)
		if u := getMonocle(t, ns, "m").Status.URL; u != "https://monocle.apps.example.com" {
			t.Errorf("status.url = %q, want the Route's", u)
		}
	})

	t.Run("APIs removed", func(t *testing.T) {
		env.Kubectl.Must(t, "delete", "-f", crds.HTTPRoute, "-f", crds.Route)
		waitCondition(t, ns, "m", monoclev1alpha1.ConditionExposed, metav1.ConditionFalse, reasons.APINotServed)
		waitCondition(t, ns, "m", monoclev1alpha1.ConditionReady, metav1.ConditionTrue, reasons.AllComponentsReady)
	})
}

// jsonpath returns kubectl's jsonpath output for one object of namespace ns.
func jsonpath(t *testing.T, ns, object, path string) string {
	t.Helper()
	return env.Kubectl.Must(t, "get", "-n", ns, object, "-o", "jsonpath="+path)
}
