package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestMonitoringComponent: deploy/monitoring adds to the install a ServiceMonitor that
// selects the operator's metrics Service and scrapes its port; the API server refuses it
// without the Prometheus operator's CRDs and accepts it, as is, with them, and the
// PrometheusRule too (the CRDs of testkit.PrometheusOperatorModule).
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
	rules := filepath.Join(repoRoot(t), "deploy", "monitoring", "prometheusrule.yaml")
	for resource, file := range map[string]string{"servicemonitors": manifest, "prometheusrules": rules} {
		crd, err := testkit.MonitoringCRD(ctx, resource)
		if err != nil {
			t.Fatal(err)
		}
		env.Kubectl.Must(t, "apply", "--server-side", "-f", crd)
		t.Cleanup(func() { _, _ = env.Kubectl.Run(context.Background(), "delete", "-f", crd) })
		env.Kubectl.Must(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+resource+".monitoring.coreos.com")
		kind := strings.TrimSuffix(resource, "s")
		if out := env.Kubectl.Must(t, "apply", "--dry-run=server", "-f", file); !strings.Contains(out, kind+".monitoring.coreos.com/"+operatorName) {
			t.Errorf("with the %s CRD: kubectl apply says %s", resource, out)
		}
	}
}

// TestAlertRules runs Prometheus's own rule checks on the alerts of deploy/monitoring: promtool
// check rules on the PrometheusRule's spec.groups, and promtool test rules on
// deploy/monitoring/prometheusrule_test.yaml, where every alert must have a case that fires
// it. promtool is the one make test-integration builds from the Go module proxy (PROMTOOL);
// without it the test is skipped.
func TestAlertRules(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "deploy", "monitoring")
	raw, err := os.ReadFile(filepath.Join(dir, "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Spec struct {
			Groups []struct {
				Name  string           `json:"name"`
				Rules []map[string]any `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &rule); err != nil {
		t.Fatal(err)
	}
	testRaw, err := os.ReadFile(filepath.Join(dir, "prometheusrule_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(testRaw, &tests); err != nil {
		t.Fatal(err)
	}
	fired := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			fired[a.Alertname] = fired[a.Alertname] || len(a.ExpAlerts) > 0
		}
	}
	alerts := 0
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if name, ok := r["alert"].(string); ok {
				alerts++
				if !fired[name] {
					t.Errorf("alert %s has no test case that fires it", name)
				}
			}
		}
	}
	if alerts == 0 {
		t.Fatal("no alert in the PrometheusRule")
	}

	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		t.Skip("PROMTOOL is not set: make test-integration builds promtool and sets it")
	}
	work := t.TempDir()
	groups, err := yaml.Marshal(map[string]any{"groups": rule.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "rules.yaml"), groups, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "prometheusrule_test.yaml"), testRaw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "prometheusrule_test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
			continue
		}
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}
}
