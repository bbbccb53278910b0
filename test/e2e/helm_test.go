package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// renderChart renders deploy/helm/monocle-operator with Helm's own code (the chart's test
// module, deploy/helm/test) for the given values, and returns the file it wrote.
func renderChart(t *testing.T, values string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "rendered.yaml")
	render := exec.Command("go", "test", "-count=1", "-run", "^TestRender$", ".", "-args", "-render="+out, "-values="+values)
	render.Dir = filepath.Join(env.Root, "deploy", "helm", "test")
	if b, err := render.CombinedOutput(); err != nil {
		t.Fatalf("rendering the chart: %v\n%s", err, b)
	}
	return out
}

// TestHelmChart installs what the Helm chart renders (its CRD first, as helm install does),
// runs the operator as the chart's ServiceAccount with the chart's Deployment's arguments,
// converges the sample Monocle, and proves no request was forbidden.
func TestHelmChart(t *testing.T) {
	testkit.NeedCluster(t, env != nil)
	uninstall(t, "-f", "deploy/")
	rendered := renderChart(t, "{watchNamespaces: [e2e-helm]}")
	crds := filepath.Join(env.Root, "deploy", "helm", "monocle-operator", "crds")
	testkit.MustCreateNamespace(t, env.Kube, "e2e-helm")
	env.Kubectl.Must(t, "apply", "-f", "deploy/00-namespace.yaml")
	env.Kubectl.Must(t, "apply", "-f", crds)
	env.Kubectl.MustWaitEstablished(t, crdName)
	if out := env.Kubectl.Must(t, "apply", "-f", rendered); strings.Contains(out, "Warning") {
		t.Errorf("applying the rendered chart warns:\n%s", out)
	}
	t.Cleanup(func() {
		uninstall(t, "-f", rendered)
		uninstall(t, "-f", crds)
		uninstall(t, "-f", "deploy/00-namespace.yaml")
	})
	env.Kubectl.Must(t, "rollout", "status", "-n", operatorNamespace, "deployment/"+operatorName, "--timeout=180s")

	args := deploymentArgs(t)
	if !strings.Contains(strings.Join(args, " "), "--namespaces=e2e-helm") {
		t.Fatalf("the chart's Deployment runs with %v", args)
	}
	since := time.Now()
	r := startReplica(t, "helm", serviceAccountKubeconfig(t), args)
	waitLeader(t, time.Minute, r)
	env.Kubectl.Must(t, "apply", "-n", "e2e-helm", "-f", "deploy/samples/monocle.yaml")
	waitReady(t, "e2e-helm", sample.Name)

	var recent []testkit.AuditEvent
	for _, e := range operatorRequests(t) {
		if e.Received.After(since) {
			recent = append(recent, e)
		}
	}
	n := checkServiceAccountOnly(t, recent)
	if strings.Contains(strings.ToLower(r.Log()), "forbidden") {
		t.Errorf("the operator logged a forbidden error:\n%s", grep(r.Log(), "forbidden"))
	}
	t.Logf("%d operator requests audited, none forbidden", n)
	r.stop()
	if out, err := env.Kubectl.Run(context.Background(), "delete", "monocle", "-n", "e2e-helm", sample.Name, "--wait", "--timeout=60s"); err != nil {
		t.Errorf("deleting the Monocle: %v\n%s", err, out)
	}
}
