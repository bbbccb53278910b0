package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestMonitoringComponent: deploy/monitoring adds to the install a ServiceMonitor that
// selects the operator's metrics Service and scrapes its port; the API server refuses it
// without the Prometheus operator's CRDs and accepts it, as is, with them (the
// ServiceMonitor CRD of testkit.PrometheusOperatorModule).
func TestMonitoringComponent(t *testing.T) {
	var svc corev1.Service
	var selector map[string]any
	var endpoints []any
	for _, m := range kustomize(t, overlayWith(t, "deploy/monitoring")) {
		switch m.key() {
		case "Service " + operatorNamespace + "/monocle-operator-metrics":
			m.into(t, &svc)
		case "ServiceMonitor " + operatorNamespace + "/" + operatorName:
			spec := m.obj.Object["spec"].(map[string]any)
			selector = spec["selector"].(map[string]any)["matchLabels"].(map[string]any)
			endpoints = spec["endpoints"].([]any)
		}
	}
	if selector == nil || len(endpoints) != 1 || len(svc.Spec.Ports) != 1 {
		t.Fatalf("the monitoring component builds no ServiceMonitor %s/%s with one endpoint beside the metrics Service", operatorNamespace, operatorName)
	}
	for key, v := range selector {
		if svc.Labels[key] != v {
			t.Errorf("the ServiceMonitor selects %s=%v; the metrics Service has %q", key, v, svc.Labels[key])
		}
	}
	if ep := endpoints[0].(map[string]any); ep["port"] != svc.Spec.Ports[0].Name || ep["path"] != "/metrics" {
		t.Errorf("ServiceMonitor endpoint %v does not scrape the metrics Service's port %q at /metrics", ep, svc.Spec.Ports[0].Name)
	}

	testkit.NeedCluster(t, env != nil)
	ctx := context.Background()
	manifest := filepath.Join(repoRoot(t), "deploy", "monitoring", "servicemonitor.yaml")
	if out, err := env.Kubectl.RunStdin(ctx, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+operatorNamespace+"\n", "apply", "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	out, err := env.Kubectl.Run(ctx, "apply", "--dry-run=server", "-f", manifest)
	if err == nil || !strings.Contains(out, "ServiceMonitor") {
		t.Errorf("without the Prometheus operator's CRDs: kubectl apply %v: %s; want the kind refused", err, out)
	}
	crd, err := testkit.MonitoringCRD(ctx, "servicemonitors")
	if err != nil {
		t.Fatal(err)
	}
	env.Kubectl.Must(t, "apply", "--server-side", "-f", crd)
	t.Cleanup(func() { _, _ = env.Kubectl.Run(context.Background(), "delete", "-f", crd) })
	env.Kubectl.Must(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/servicemonitors.monitoring.coreos.com")
	if out := env.Kubectl.Must(t, "apply", "--dry-run=server", "-f", manifest); !strings.Contains(out, "servicemonitor.monitoring.coreos.com/"+operatorName) {
		t.Errorf("with the CRD: kubectl apply says %s", out)
	}
}
