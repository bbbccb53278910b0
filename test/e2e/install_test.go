package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// seriesLabel finds the label names of a series as /metrics writes it, name{label="value",...}.
var seriesLabel = regexp.MustCompile(`[{,]([a-zA-Z_][a-zA-Z0-9_]*)="`)

// sample is the Monocle of deploy/samples/monocle.yaml.
var sample = &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: "monocle"}}

// TestClusterWideInstall installs deploy/ on an empty cluster, runs two replicas as the
// operator's ServiceAccount, and follows a Monocle through leader changes (SIGTERM, SIGKILL,
// a leader paused past its lease), then uninstalls with `kubectl delete -f deploy/`.
func TestClusterWideInstall(t *testing.T) {
	testkit.NeedCluster(t, env != nil)
	ctx := context.Background()
	uninstall(t, "-f", "deploy/")
	// The audit checks below look at this test's requests only: other tests run operators
	// with the same ServiceAccount and Lease.
	since := time.Now()

	out := env.Kubectl.Must(t, "apply", "-f", "deploy/")
	if strings.Contains(out, "Warning") {
		t.Errorf("kubectl apply -f deploy/ warns:\n%s", out)
	}
	env.Kubectl.MustWaitEstablished(t, crdName)
	env.Kubectl.Must(t, "rollout", "status", "-n", operatorNamespace, "deployment/"+operatorName, "--timeout=180s")
	d, err := env.Kube.AppsV1().Deployments(operatorNamespace).Get(ctx, operatorName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ReadyReplicas != 2 {
		t.Errorf("the operator Deployment has %d ready replicas, want 2", d.Status.ReadyReplicas)
	}
	// The pods passed Pod Security "restricted" admission, or the ReplicaSet could not have
	// created them.
	if out, err := env.Kubectl.Run(context.Background(), "diff", "-k", "."); err != nil {
		t.Errorf("kubectl diff -k . finds the root kustomization different from deploy/ (%v):\n%s", err, out)
	}

	kubeconfig := serviceAccountKubeconfig(t)
	args := deploymentArgs(t)
	a := startReplica(t, "a", kubeconfig, args)
	b := startReplica(t, "b", kubeconfig, args, "--logging-format=json")
	leader := waitLeader(t, time.Minute, a, b)
	standby := a
	if leader == a {
		standby = b
	}
	t.Logf("replica %s leads", leader.Name)
	for _, r := range []*replica{a, b} {
		for _, path := range []string{"/healthz", "/readyz"} {
			testkit.Eventually(t, 250*time.Millisecond, time.Minute, "replica "+r.Name+" "+path, func() error {
				code, body, err := r.Get(ctx, path)
				if err != nil || code != http.StatusOK {
					return fmt.Errorf("%d %s %v", code, body, err)
				}
				return nil
			})
		}
	}

	ns := "e2e-cluster"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	env.Kubectl.Must(t, "apply", "-n", ns, "-f", "deploy/samples/monocle.yaml")
	waitReady(t, ns, sample.Name)
	// A Service with the name the Monocle "taken" needs, not controlled by it: a failure.
	taken := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: "taken"}}
	env.Kubectl.Must(t, "create", "service", "clusterip", "-n", ns, resources.APIName(taken), "--tcp=8080:8080")
	if _, err := env.Kubectl.RunStdin(context.Background(), strings.Replace(monocleYAML(t), "  name: monocle\n", "  name: "+taken.Name+"\n", 1), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatal(err)
	}

	t.Run("kubectl shows columns and events", func(t *testing.T) {
		out := env.Kubectl.Must(t, "get", "monocles", "-n", ns)
		header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
		for _, column := range []string{"NAME", "READY", "VERSION", "URL", "AGE"} {
			if !slices.Contains(header, column) {
				t.Errorf("kubectl get monocles lacks the column %s: %v", column, header)
			}
		}
		if !strings.Contains(out, "True") || !strings.Contains(out, "1.11.2") {
			t.Errorf("kubectl get monocles does not show readiness and version:\n%s", out)
		}
		describe := env.Kubectl.Must(t, "describe", "monocle", "-n", ns, sample.Name)
		if !strings.Contains(describe, "Events:") || !strings.Contains(describe, reasons.Created) {
			t.Errorf("kubectl describe monocle shows no Created event:\n%s", describe)
		}
		// One event lists what the first sync created; becoming Ready the first time records
		// none (one Event per sync, not one per object).
		for _, kind := range []string{"Secret", "ConfigMap", "Service", "StatefulSet", "Deployment", "NetworkPolicy"} {
			expectEvent(t, ns, sample.Name, corev1.EventTypeNormal, reasons.Created, kind+" ")
		}
		expectEvent(t, ns, taken.Name, corev1.EventTypeWarning, reasons.NameConflict, "Service "+resources.APIName(taken))
	})

	t.Run("metrics", func(t *testing.T) {
		m := leader.metrics(t)
		for _, c := range []struct {
			family string
			labels []string
		}{
			{"workqueue_adds_total", []string{`name="monocle"`}},
			{"workqueue_work_duration_seconds_count", []string{`name="monocle"`}},
			{"rest_client_requests_total", []string{`code="201"`}},
			{"rest_client_request_duration_seconds_count", nil},
			{"monocle_operator_syncs_total", []string{`result="success"`}},
			{"monocle_operator_syncs_total", []string{`result="error"`}}, // the name conflict
			{"monocle_operator_sync_duration_seconds_count", nil},
			{"monocle_operator_monocle_ready", []string{`monocle_namespace="` + ns + `"`, `monocle="monocle"`}},
			{"leader_election_master_status", []string{`name="monocle-operator"`}},
		} {
			if sum, n := m.Family(c.family, c.labels...); n == 0 || sum <= 0 {
				t.Errorf("the leader's /metrics has %s%v = %v over %d series, want > 0", c.family, c.labels, sum, n)
			}
		}
		if _, n := m.Family("workqueue_depth", `name="monocle"`); n == 0 {
			t.Error("the leader's /metrics has no workqueue_depth")
		}
		// The dashboard of deploy/monitoring reads series the leader serves.
		for _, name := range dashboardOperatorSeries(t) {
			if _, n := m.Family(name); n == 0 {
				t.Errorf("the Grafana dashboard reads %s, which the leader's /metrics does not have", name)
			}
		}
		// A ServiceMonitor scraping this /metrics would rename no label (exported_*).
		for series := range m {
			for _, l := range seriesLabel.FindAllStringSubmatch(series, -1) {
				if slices.Contains(controller.TargetLabels, l[1]) {
					t.Errorf("the leader's /metrics series %s has the label %s, which a ServiceMonitor's target label would rename", series, l[1])
				}
			}
		}
		if sum, n := m.Family("monocle_operator_monocle_ready", `monocle="taken"`); n != 1 || sum != 0 {
			t.Errorf("monocle_operator_monocle_ready for the Monocle that is not ready: %v over %d series, want 0", sum, n)
		}
		s := standby.metrics(t)
		if sum, n := s.Family("leader_election_master_status", `name="monocle-operator"`); n != 1 || sum != 0 {
			t.Errorf("the standby's leader_election_master_status is %v over %d series, want 0", sum, n)
		}
		if sum, _ := s.Family("monocle_operator_syncs_total"); sum != 0 {
			t.Errorf("the standby synced %v times", sum)
		}
	})

	t.Run("JSON logs", func(t *testing.T) {
		lines := strings.Split(strings.TrimSpace(b.Log()), "\n")
		for _, line := range lines {
			var entry map[string]any
			if err := json.Unmarshal([]byte(line), &entry); err != nil || entry["msg"] == nil {
				t.Fatalf("replica b (--logging-format=json) logged a line that is not a JSON entry: %q", line)
			}
		}
		if !strings.HasPrefix(a.Log(), "I") {
			t.Errorf("replica a (text) does not log klog's text format: %.200q", a.Log())
		}
	})

	// A rolling update: the leader gets SIGTERM, stops its workers, releases the lease and
	// exits 0; the standby takes over without waiting for the lease to expire.
	stopped := time.Now()
	leader.signal(t, syscall.SIGTERM)
	if code := leader.waitExit(t, 30*time.Second); code != 0 {
		t.Errorf("the leader exited with %d after SIGTERM, want 0:\n%s", code, testkit.Tail(leader.Log(), 20))
	}
	if holder, err := testkit.LeaseHolder(ctx, env.Kube, operatorNamespace, operatorName); err != nil || (holder != "" && holder != standby.identity) {
		t.Errorf("after the leader's SIGTERM the Lease is held by %q (%v): not released", holder, err)
	}
	waitLeader(t, 30*time.Second, standby)
	t.Logf("SIGTERM: replica %s leads %s after the leader was stopped", standby.Name, time.Since(stopped).Round(10*time.Millisecond))
	// The Monocle keeps converging: two API replicas get a PodDisruptionBudget.
	scaleAPI(t, ns, 2)
	testkit.Eventually(t, 250*time.Millisecond, 2*time.Minute, "PodDisruptionBudget "+resources.APIName(sample), func() error {
		_, err := env.Kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, resources.APIName(sample), metav1.GetOptions{})
		return err
	})
	waitReady(t, ns, sample.Name)
	c := startReplica(t, "c", kubeconfig, args)

	// The leader dies: the standby takes over once the lease has expired.
	leader, standby = standby, c
	stopped = time.Now()
	leader.signal(t, syscall.SIGKILL)
	leader.waitExit(t, 30*time.Second)
	waitLeader(t, leaseDuration+time.Minute, standby)
	t.Logf("SIGKILL: replica %s leads %s after the leader was killed (lease duration %s)", standby.Name, time.Since(stopped).Round(10*time.Millisecond), leaseDuration)
	scaleAPI(t, ns, 1)
	testkit.Eventually(t, 250*time.Millisecond, 2*time.Minute, "PodDisruptionBudget deleted", func() error {
		_, err := env.Kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, resources.APIName(sample), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	waitReady(t, ns, sample.Name)
	expectEvent(t, ns, sample.Name, corev1.EventTypeNormal, reasons.Updated, "Updated Deployment "+resources.APIName(sample))
	expectEvent(t, ns, sample.Name, corev1.EventTypeNormal, reasons.Deleted, "PodDisruptionBudget "+resources.APIName(sample))

	// A leader paused past its lease (a frozen VM, SIGSTOP) resumes with work queued: the
	// drift repaired meanwhile by the new leader, and the Monocle "taken", retried with
	// backoff. It must not write, and must exit.
	d2 := startReplica(t, "d", kubeconfig, args)
	leader, standby = standby, d2
	leader.signal(t, syscall.SIGSTOP)
	waitLeader(t, leaseDuration+time.Minute, standby)
	env.Kubectl.Must(t, "scale", "-n", ns, "deployment/"+resources.CrawlerName(sample), "--replicas=0")
	testkit.Eventually(t, 250*time.Millisecond, 2*time.Minute, "the crawler Deployment repaired by the new leader", func() error {
		crawler, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, resources.CrawlerName(sample), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ptr.Deref(crawler.Spec.Replicas, 0) != 1 {
			return fmt.Errorf("replicas %d", ptr.Deref(crawler.Spec.Replicas, 0))
		}
		return nil
	})
	leader.signal(t, syscall.SIGCONT)
	if code := leader.waitExit(t, renewDeadline+time.Minute); code == 0 {
		t.Errorf("the paused leader exited with 0 after losing its lease, want an error")
	}
	if !strings.Contains(leader.Log(), "leader election lost") {
		t.Errorf("the paused leader did not log that it lost the election:\n%s", testkit.Tail(leader.Log(), 20))
	}
	t.Logf("the paused leader refused %d writes after it resumed", strings.Count(leader.Log(), "does not hold the leader election lease"))
	waitReady(t, ns, sample.Name)

	t.Run("one writer at a time, all as the ServiceAccount, nothing forbidden", func(t *testing.T) {
		var requests []testkit.AuditEvent
		for _, e := range operatorRequests(t) {
			if e.Received.After(since) {
				requests = append(requests, e)
			}
		}
		n := checkServiceAccountOnly(t, requests)
		leaders := checkSingleWriter(t, requests)
		var want []string
		for _, r := range []*replica{a, b, c, d2} {
			if slices.Contains(leaders, r.identity) {
				want = append(want, r.Name)
			}
		}
		if len(leaders) != 4 {
			t.Errorf("the Lease went to %d leaders (%v), want 4 (first leader, after SIGTERM, after SIGKILL, after the pause)", len(leaders), leaders)
		}
		t.Logf("%d operator requests audited; leaders in turn: %v", n, want)
		for _, r := range []*replica{a, b, c, d2} {
			if strings.Contains(strings.ToLower(r.Log()), "forbidden") {
				t.Errorf("replica %s logged a forbidden error:\n%s", r.Name, grep(r.Log(), "forbidden"))
			}
		}
	})

	t.Run("users' roles", func(t *testing.T) {
		env.Kubectl.Must(t, "create", "rolebinding", "viewer", "-n", ns, "--clusterrole=view", "--user=viewer")
		env.Kubectl.Must(t, "create", "rolebinding", "editor", "-n", ns, "--clusterrole=edit", "--user=editor")
		env.Kubectl.Must(t, "create", "rolebinding", "admin", "-n", ns, "--clusterrole=admin", "--user=admin-user")
		for _, c := range []struct {
			user, verb, resource string
			allowed              bool
		}{
			{"viewer", "list", "monocles", true},
			{"viewer", "get", "monocles/status", true},
			{"viewer", "create", "monocles", false},
			{"editor", "create", "monocles", true},
			{"editor", "delete", "monocles", true},
			{"editor", "update", "monocles/status", false},
			{"admin-user", "patch", "monocles", true},
			{"nobody", "list", "monocles", false},
		} {
			resource, sub, _ := strings.Cut(c.resource, "/")
			check := []string{c.verb, resource, "-n", ns}
			if sub != "" {
				check = append(check, "--subresource="+sub)
			}
			// The aggregation controller fills "view", "edit" and "admin" in asynchronously.
			testkit.Eventually(t, 250*time.Millisecond, time.Minute, fmt.Sprintf("%s can-i %s %s = %v", c.user, c.verb, c.resource, c.allowed), func() error {
				if got := canI(t, c.user, check...); (got == "yes") != c.allowed {
					return fmt.Errorf("kubectl auth can-i says %q", got)
				}
				return nil
			})
		}
	})

	t.Logf("resident memory of the leader with two Monocles: %d KiB", standby.rssKiB())
	for _, r := range []*replica{a, b, c, d2} {
		r.stop()
	}

	t.Run("kubectl delete -f deploy/ keeps the Monocles' data", func(t *testing.T) {
		pvc := resources.ElasticPVCName(sample, resources.ElasticDataVolume)
		if _, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{}); err != nil {
			t.Fatalf("before uninstalling: %v", err)
		}
		uninstall(t, "-f", "deploy/")
		for _, check := range [][]string{
			{"get", "namespace", operatorNamespace},
			{"get", "crd", crdName},
			{"get", "clusterrole", operatorName},
			{"get", "clusterrolebinding", operatorName},
			{"get", "clusterrole", "monocle-view"},
		} {
			if out, err := env.Kubectl.Run(context.Background(), check...); err == nil || !strings.Contains(out, "NotFound") {
				t.Errorf("kubectl %s after uninstalling: %v %s", strings.Join(check, " "), err, out)
			}
		}
		// Deleting the CRD deletes the Monocles; the garbage collector then deletes what they
		// own, and the Elasticsearch volume, which they do not own, stays.
		testkit.Eventually(t, 250*time.Millisecond, 2*time.Minute, "StatefulSet garbage-collected", func() error {
			_, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, resources.ElasticName(sample), metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
		claim, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{})
		if err != nil || claim.DeletionTimestamp != nil || claim.Status.Phase != corev1.ClaimBound {
			t.Errorf("the Elasticsearch volume after uninstalling: %v (%v)", err, claim.Status.Phase)
		}
		if _, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, "monocle-tokens", metav1.GetOptions{}); err != nil {
			t.Errorf("the user's Secret after uninstalling: %v", err)
		}
	})
}

// TestNamespacedInstall installs deploy/ through the deploy/namespaced component and runs the
// operator with the Deployment's --namespaces under that RBAC: a Monocle in the watched
// namespace converges, one elsewhere is left alone, and nothing is forbidden.
func TestNamespacedInstall(t *testing.T) {
	testkit.NeedCluster(t, env != nil)
	ctx := context.Background()
	uninstall(t, "-f", "deploy/")
	testkit.MustCreateNamespace(t, env.Kube, namespacedWatch)
	elsewhere := "e2e-elsewhere"
	testkit.MustCreateNamespace(t, env.Kube, elsewhere)

	overlay := namespacedOverlay(t)
	out := env.Kubectl.Must(t, "apply", "-k", overlay)
	if strings.Contains(out, "Warning") {
		t.Errorf("kubectl apply -k warns:\n%s", out)
	}
	t.Cleanup(func() { uninstall(t, "-k", overlay) })
	env.Kubectl.MustWaitEstablished(t, crdName)
	env.Kubectl.Must(t, "rollout", "status", "-n", operatorNamespace, "deployment/"+operatorName, "--timeout=180s")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "secrets", "-n", namespacedWatch}, "yes"},
		{[]string{"list", "secrets", "-n", elsewhere}, "no"},
		{[]string{"list", "secrets", "--all-namespaces"}, "no"},
		{[]string{"list", "monocles", "--all-namespaces"}, "no"},
		{[]string{"get", "storageclasses"}, "yes"},
		{[]string{"update", "leases/" + operatorName, "-n", operatorNamespace}, "yes"},
		{[]string{"update", "leases/" + operatorName, "-n", namespacedWatch}, "no"},
	} {
		if got := canI(t, serviceAccount, c.args...); got != c.want {
			t.Errorf("the ServiceAccount can-i %v: %q, want %q", c.args, got, c.want)
		}
	}

	args := deploymentArgs(t)
	if !slices.Contains(args, "--namespaces="+namespacedWatch) {
		t.Fatalf("the namespaced Deployment runs with %v", args)
	}
	since := time.Now()
	r := startReplica(t, "namespaced", serviceAccountKubeconfig(t), args)
	waitLeader(t, time.Minute, r)
	for _, ns := range []string{namespacedWatch, elsewhere} {
		env.Kubectl.Must(t, "apply", "-n", ns, "-f", "deploy/samples/monocle.yaml")
	}
	waitReady(t, namespacedWatch, sample.Name)
	m, err := env.Monocles.MonocleV1alpha1().Monocles(elsewhere).Get(ctx, sample.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Status.Conditions) > 0 {
		t.Errorf("the operator wrote the status of a Monocle outside --namespaces: %+v", m.Status)
	}

	requests := operatorRequests(t)
	var recent []testkit.AuditEvent
	for _, e := range requests {
		if e.Received.After(since) {
			recent = append(recent, e)
			if e.ObjectRef.Namespace == elsewhere {
				t.Errorf("request outside the watched namespace: %s", e.StringAt(e.Received))
			}
		}
	}
	n := checkServiceAccountOnly(t, recent)
	checkSingleWriter(t, recent)
	if strings.Contains(strings.ToLower(r.Log()), "forbidden") {
		t.Errorf("the operator logged a forbidden error:\n%s", grep(r.Log(), "forbidden"))
	}
	t.Logf("%d operator requests audited", n)
	r.stop()
}

// uninstall deletes what `kubectl apply <how> <what>` installed and waits until it is gone;
// nothing installed is fine.
func uninstall(t *testing.T, how, what string) {
	t.Helper()
	if out, err := env.Kubectl.Run(context.Background(), "delete", how, what, "--ignore-not-found", "--wait", "--timeout=180s"); err != nil {
		t.Fatalf("kubectl delete %s %s: %v\n%s", how, what, err, out)
	}
}

// canI runs `kubectl auth can-i args` as user and returns its answer ("yes" or "no").
func canI(t *testing.T, user string, args ...string) string {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"auth", "can-i", "--as=" + user}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	answer := strings.TrimSpace(stdout.String())
	if answer != "yes" && answer != "no" {
		t.Fatalf("kubectl auth can-i %v: %v %s %s", args, err, answer, stderr.String())
	}
	return answer
}

// waitReady waits until the Monocle is Ready.
func waitReady(t *testing.T, ns, name string) {
	t.Helper()
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=180s", "monocle/"+name)
}

// scaleAPI sets spec.api.replicas.
func scaleAPI(t *testing.T, ns string, replicas int) {
	t.Helper()
	env.Kubectl.Must(t, "patch", "-n", ns, "monocle/"+sample.Name, "--type=merge", fmt.Sprintf(`-p={"spec":{"api":{"replicas":%d}}}`, replicas))
}

// expectEvent waits until the Monocle has an event of this type and reason whose message
// contains message.
func expectEvent(t *testing.T, ns, monocle, eventType, reason, message string) {
	t.Helper()
	testkit.Eventually(t, 250*time.Millisecond, time.Minute, fmt.Sprintf("%s event %s %q on Monocle %s", eventType, reason, message, monocle), func() error {
		events, err := env.Kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Monocle,involvedObject.name=" + monocle,
		})
		if err != nil {
			return err
		}
		var seen []string
		for _, e := range events.Items {
			if e.Type == eventType && e.Reason == reason && strings.Contains(e.Message, message) {
				if e.Source.Component != controller.ControllerName {
					return fmt.Errorf("the event comes from %q", e.Source.Component)
				}
				return nil
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return fmt.Errorf("events: %v", seen)
	})
}

// monocleYAML returns the Monocle document of deploy/samples/monocle.yaml.
func monocleYAML(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.Root, "deploy", "samples", "monocle.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		if strings.Contains(doc, "kind: Monocle\n") {
			return doc
		}
	}
	t.Fatal("no Monocle in deploy/samples/monocle.yaml")
	return ""
}

func grep(s, word string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(strings.ToLower(line), word) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
