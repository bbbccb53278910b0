package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
		env.Kubectl.MustWaitEstablished(t, resource+".monitoring.coreos.com")
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

// grafanaDashboard is deploy/monitoring/grafana-dashboard.json, as far as the tests read it.
type grafanaDashboard struct {
	UID    string `json:"uid"`
	Panels []struct {
		ID         int    `json:"id"`
		Title      string `json:"title"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T) grafanaDashboard {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "monitoring", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash grafanaDashboard
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	return dash
}

// dashboardOperatorSeries are the names of the operator's series (its own and client-go's it
// serves) the dashboard's queries read; TestClusterWideInstall finds each in a leader's
// /metrics.
func dashboardOperatorSeries(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range readDashboard(t).Panels {
		for _, q := range p.Targets {
			for _, name := range operatorSeries.FindAllString(q.Expr, -1) {
				if !slices.Contains(out, name) {
					out = append(out, name)
				}
			}
		}
	}
	return out
}

// operatorSeries finds the names of the operator's series in a PromQL query.
var operatorSeries = regexp.MustCompile(`\b(monocle_operator|workqueue|leader_election)_[a-z_]+`)

// TestGrafanaDashboard checks deploy/monitoring/grafana-dashboard.json: panel ids are unique,
// every panel reads the dashboard's Prometheus data source, and every query is PromQL
// Prometheus accepts (promtool check rules on the queries made recording rules). That the
// operator serves the series the queries name is checked on a real scrape, in
// TestClusterWideInstall.
func TestGrafanaDashboard(t *testing.T) {
	dash := readDashboard(t)
	ids := map[int]bool{}
	var rules []map[string]any
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: data source %q, %d queries", p.Title, p.Datasource.UID, len(p.Targets))
		}
		for i, q := range p.Targets {
			rules = append(rules, map[string]any{"record": fmt.Sprintf("dashboard:panel_%d_%d", p.ID, i), "expr": q.Expr})
		}
	}
	if dash.UID == "" || len(rules) == 0 || len(dashboardOperatorSeries(t)) == 0 {
		t.Fatalf("dashboard uid %q, %d queries, operator series %v", dash.UID, len(rules), dashboardOperatorSeries(t))
	}
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		t.Skip("PROMTOOL is not set: make test-integration builds promtool and sets it")
	}
	file := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s", err, out)
	}
}
