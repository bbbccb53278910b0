// Package test checks the Helm chart deploy/helm/monocle-operator with Helm's own code (the
// packages helm lint and helm template run, from helm.sh/helm/v3 on the Go module proxy), in a
// module of its own so the operator's go.mod does not carry Helm's dependencies. Its
// render_test.go also gives e2e the rendered chart (go test -run TestRender -args -render).
package test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart, from this directory.
const chartDir = "../monocle-operator"

// render renders the chart as helm template does, for release "monocle-operator" in namespace
// "monocle-operator" with the given values, and returns the manifests by template name.
func render(t *testing.T, values map[string]any) map[string]string {
	t.Helper()
	return renderRelease(t, "monocle-operator", values)
}

// renderRelease is render for the release named release.
func renderRelease(t *testing.T, release string, values map[string]any) map[string]string {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(c, values, chartutil.ReleaseOptions{Name: release, Namespace: "monocle-operator", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(c, vals)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// objects decodes rendered manifests into objects (map form), skipping empty documents.
func objects(t *testing.T, rendered map[string]string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for name, content := range rendered {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(content, "\n---") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if len(obj) > 0 {
				out = append(out, obj)
			}
		}
	}
	return out
}

// TestLint runs helm lint's rules in strict mode, with the default values and with watched
// namespaces: no finding at all.
func TestLint(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"defaults":   nil,
		"namespaced": {"watchNamespaces": []any{"team-a", "team-b"}, "leaderElection": map[string]any{"enabled": false}},
	} {
		linter := lint.AllWithKubeVersion(chartDir, values, "monocle-operator", nil)
		for _, m := range linter.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("%s: helm lint: %s", name, m)
			}
		}
	}
}

// TestTemplate renders the chart and checks what it makes against deploy/: the operator's
// ClusterRole has deploy/02-rbac.yaml's rules, the Deployment runs the appVersion image with
// the flags the values set (the rollout's among them), and watched namespaces get RoleBindings
// instead of a ClusterRoleBinding.
func TestTemplate(t *testing.T) {
	kinds := func(objs []map[string]any) map[string]int {
		out := map[string]int{}
		for _, o := range objs {
			out[o["kind"].(string)]++
		}
		return out
	}
	all := objects(t, render(t, nil))
	want := map[string]int{"ServiceAccount": 1, "ClusterRole": 3, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1,
		"Deployment": 1, "PodDisruptionBudget": 1, "Service": 1}
	for k, n := range want {
		if got := kinds(all)[k]; got != n {
			t.Errorf("default values: %d %s, want %d", got, k, n)
		}
	}
	deployment := find(t, all, "Deployment")
	container := deployment["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	chartYAML, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	appVersion := regexp.MustCompile(`(?m)^appVersion: (\S+)$`).FindSubmatch(chartYAML)
	if appVersion == nil || container["image"] != "quay.io/change-metrics/monocle-operator:"+string(appVersion[1]) {
		t.Errorf("image %v, want the appVersion %s", container["image"], appVersion)
	}
	makefile, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if v := regexp.MustCompile(`(?m)^VERSION \?= (\S+)$`).FindSubmatch(makefile); v == nil || string(v[1]) != string(appVersion[1]) {
		t.Errorf("Chart.yaml's appVersion %s is not the Makefile's VERSION %s", appVersion[1], v)
	}
	args := strings.Join(toStrings(container["args"].([]any)), " ")
	for _, a := range []string{"--http-address=:8080", "--workers=4", "--leader-elect=true", "--leader-election-id=monocle-operator",
		"--cross-namespace-references=true", "--rollout-strategy=waves", "--rollout-max-wave=16", "--rollout-soak=2m",
		"--rollout-deadline=15m"} {
		if !strings.Contains(args, a) {
			t.Errorf("args %s lack %s", args, a)
		}
	}
	if strings.Contains(args, "--namespaces") {
		t.Errorf("default args watch namespaces: %s", args)
	}

	// The operator's rules are deploy/02-rbac.yaml's.
	rbac, err := os.ReadFile("../../02-rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var deployRules any
	for _, doc := range strings.Split(string(rbac), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err == nil && o["kind"] == "ClusterRole" && o["metadata"].(map[string]any)["name"] == "monocle-operator" {
			deployRules = o["rules"]
		}
	}
	var chartRules any
	for _, o := range all {
		if o["kind"] == "ClusterRole" && o["metadata"].(map[string]any)["name"] == "monocle-operator" {
			chartRules = o["rules"]
		}
	}
	a, _ := yaml.Marshal(deployRules)
	b, _ := yaml.Marshal(chartRules)
	if deployRules == nil || string(a) != string(b) {
		t.Errorf("the chart's ClusterRole rules differ from deploy/02-rbac.yaml's:\n%s\nvs\n%s", b, a)
	}

	if kinds(all)["ServiceMonitor"] != 0 {
		t.Error("default values render a ServiceMonitor, which a cluster without the Prometheus operator refuses")
	}
	// The ServiceMonitor selects the metrics Service and scrapes its port.
	monitored := objects(t, render(t, map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{
		"enabled": true, "labels": map[string]any{"release": "prom"}}}}))
	sm, svc := find(t, monitored, "ServiceMonitor"), find(t, monitored, "Service")
	selector := sm["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
	svcLabels := svc["metadata"].(map[string]any)["labels"].(map[string]any)
	for k, v := range selector {
		if svcLabels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v; the metrics Service has %v", k, v, svcLabels[k])
		}
	}
	endpoint := sm["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
	port := svc["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)
	if endpoint["port"] != port["name"] || endpoint["path"] != "/metrics" || endpoint["interval"] != "30s" {
		t.Errorf("ServiceMonitor endpoint %v, metrics Service port %v", endpoint, port)
	}
	if sm["metadata"].(map[string]any)["labels"].(map[string]any)["release"] != "prom" {
		t.Errorf("ServiceMonitor labels %v lack metrics.serviceMonitor.labels", sm["metadata"].(map[string]any)["labels"])
	}

	// The PrometheusRule is deploy/monitoring's, watching the Lease this release's operator
	// leads (--leader-election-id).
	if kinds(all)["PrometheusRule"] != 0 {
		t.Error("default values render a PrometheusRule")
	}
	alerting := objects(t, renderRelease(t, "team", map[string]any{"metrics": map[string]any{"prometheusRule": map[string]any{
		"enabled": true, "labels": map[string]any{"release": "prom"}}}}))
	var leaseID string
	for _, a := range find(t, alerting, "Deployment")["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["args"].([]any) {
		if id, ok := strings.CutPrefix(a.(string), "--leader-election-id="); ok {
			leaseID = id
		}
	}
	raw, err := os.ReadFile("../../monitoring/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var deployRule map[string]any
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(string(raw), `name="monocle-operator"`, `name="`+leaseID+`"`)), &deployRule); err != nil {
		t.Fatal(err)
	}
	rule := find(t, alerting, "PrometheusRule")
	if leaseID == "" || leaseID == "monocle-operator" || !reflect.DeepEqual(rule["spec"], deployRule["spec"]) {
		t.Errorf("release team (Lease %q): the chart's PrometheusRule spec differs from deploy/monitoring's with that Lease name:\n%v\nwant\n%v", leaseID, rule["spec"], deployRule["spec"])
	}
	if rule["metadata"].(map[string]any)["labels"].(map[string]any)["release"] != "prom" {
		t.Errorf("PrometheusRule labels %v lack metrics.prometheusRule.labels", rule["metadata"].(map[string]any)["labels"])
	}

	namespaced := objects(t, render(t, map[string]any{"watchNamespaces": []any{"team-a", "team-b"}}))
	if k := kinds(namespaced); k["ClusterRoleBinding"] != 1 || k["RoleBinding"] != 3 {
		t.Errorf("watched namespaces: %v, want a RoleBinding per namespace (2), the leader election's, and only the StorageClass ClusterRoleBinding", k)
	}
	c := find(t, namespaced, "Deployment")["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if !strings.Contains(strings.Join(toStrings(c["args"].([]any)), " "), "--namespaces=team-a,team-b") {
		t.Errorf("watched namespaces: args %v", c["args"])
	}

	// The rollout values reach the flags.
	allAtOnce := objects(t, render(t, map[string]any{"rollout": map[string]any{"strategy": "all-at-once", "maxWave": 4, "soak": "0s", "deadline": "30m"}}))
	c = find(t, allAtOnce, "Deployment")["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	for _, a := range []string{"--rollout-strategy=all-at-once", "--rollout-max-wave=4", "--rollout-soak=0s", "--rollout-deadline=30m"} {
		if !strings.Contains(strings.Join(toStrings(c["args"].([]any)), " "), a) {
			t.Errorf("rollout values: args %v lack %s", c["args"], a)
		}
	}

	// The CRD is deploy's.
	crd, err := os.ReadFile(filepath.Join(chartDir, "crds", "monocles.monocle.monocle.change-metrics.io.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	deployCRD, err := os.ReadFile("../../01-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(crd), string(deployCRD)) {
		t.Error("the chart's CRD is not deploy/01-crd.yaml: run make generate")
	}
}

func find(t *testing.T, objs []map[string]any, kind string) map[string]any {
	t.Helper()
	for _, o := range objs {
		if o["kind"] == kind {
			return o
		}
	}
	t.Fatalf("no %s rendered", kind)
	return nil
}

func toStrings(v []any) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = s.(string)
	}
	return out
}
