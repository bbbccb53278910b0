package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// storedUIDs are the UIDs of what hibernation must keep: the Elasticsearch PVC, the
// Secrets and the ConfigMap, by "kind/name".
func storedUIDs(t *testing.T, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-m-elastic-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out["pvc/"+pvc.Name] = string(pvc.UID)
	for _, name := range []string{"m-api", "m-api-keys", "tokens"} {
		s, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out["secret/"+name] = string(s.UID)
	}
	cm, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "m-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out["configmap/"+cm.Name] = string(cm.UID)
	return out
}

// recordHibernation runs step (a patch of spec.hibernate) with a HibernationRecorder on ns
// until done returns nil, and checks the pods kept the order and the workloads were scaled
// in order want.
func recordHibernation(t *testing.T, ns string, step func(), done func() error, want []string) {
	t.Helper()
	rec, err := testkit.RecordHibernation(context.Background(), env.Kube, ns)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	step()
	testkit.Eventually(t, 250*time.Millisecond, 2*time.Minute, strings.Join(want, ", "), done)
	// The watches may deliver the last change a moment after the status shows it.
	testkit.Eventually(t, 100*time.Millisecond, 10*time.Second, "order "+strings.Join(want, ", "), func() error {
		if got := rec.Order(); !slices.Equal(got, want) {
			return fmt.Errorf("scaled in the order %v", got)
		}
		return nil
	})
	for _, p := range rec.Problems() {
		t.Error(p)
	}
}

// hibernationPhase returns nil once status.hibernation of Monocle ns/m has phase (none when
// phase is "").
func hibernationPhase(t *testing.T, ns string, phase monoclev1alpha1.HibernationPhase) func() error {
	return func() error {
		h := getMonocle(t, ns, "m").Status.Hibernation
		switch {
		case phase == "" && h != nil:
			return fmt.Errorf("status.hibernation %+v", h)
		case phase != "" && (h == nil || h.Phase != phase):
			return fmt.Errorf("status.hibernation %+v, want phase %s", h, phase)
		}
		return nil
	}
}

// TestHibernation: spec.hibernate stops the crawler, then the API, then Elasticsearch, each
// once the one before has no pod (watched), keeps the PVC, Secrets and ConfigMap, and reports
// Hibernated (Ready False, not Degraded); removing it starts Elasticsearch, then the API,
// then the crawler, each once the one before has a ready pod. While a restore runs, the
// switch waits (HibernationDeferred) and is acted on once the restore ends. A snapshot
// running once the API has no pod keeps Elasticsearch up until it ends.
func TestHibernation(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "hibernation"
	ctx := context.Background()
	testkit.MustCreateNamespace(t, env.Kube, ns)
	env.Kubectl.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	manifest := strings.Replace(day2Monocle, "spec:\n", "spec:\n  backup: {}\n", 1)
	if out, err := env.Kubectl.RunStdin(ctx, manifest, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	kept := storedUIDs(t, ns)

	recordHibernation(t, ns, func() { patchMonocle(t, ns, `{"spec":{"hibernate":true}}`) },
		hibernationPhase(t, ns, monoclev1alpha1.HibernationHibernated), []string{"stop crawler", "stop api", "stop elastic"})
	m := getMonocle(t, ns, "m")
	if got := m.Status.Hibernation.Stopped; !slices.Equal(got, []string{"crawler", "api", "elastic"}) {
		t.Errorf("status.hibernation.stopped = %v", got)
	}
	waitCondition(t, ns, "m", "Hibernated", metav1.ConditionTrue, "Hibernated")
	ready := waitCondition(t, ns, "m", "Ready", metav1.ConditionFalse, "Hibernated")
	// Deployments count their terminating pods from Kubernetes 1.35; before, the message says
	// the order may not wait for them.
	counted := version.MustParseGeneric(localcluster.RunningVersion()).AtLeast(version.MajorMinor(1, 35))
	if noted := strings.Contains(ready.Message, day2.UncountedTerminatingNote); noted == counted {
		t.Errorf("on Kubernetes %s, Ready's message %q: the note on uncounted terminating pods is there: %t", localcluster.RunningVersion(), ready.Message, noted)
	}
	waitCondition(t, ns, "m", "Degraded", metav1.ConditionFalse, "AsExpected")
	if pods := env.Kubectl.Must(t, "get", "pods", "-n", ns, "-o", "name"); strings.TrimSpace(pods) != "" {
		t.Errorf("pods left while hibernated: %s", pods)
	}
	if got := storedUIDs(t, ns); fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Errorf("hibernation replaced stored objects: %v, was %v", got, kept)
	}
	waitEvent(t, ns, "Hibernated", "No pod of the Monocle runs")

	recordHibernation(t, ns, func() { patchMonocle(t, ns, `{"spec":{"hibernate":false}}`) },
		hibernationPhase(t, ns, ""), []string{"start elastic", "start api", "start crawler"})
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	if got := storedUIDs(t, ns); fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Errorf("waking replaced stored objects: %v, was %v", got, kept)
	}
	if c := getMonocle(t, ns, "m").Status.Conditions; slices.ContainsFunc(c, func(c metav1.Condition) bool { return c.Type == "Hibernated" }) {
		t.Errorf("the Hibernated condition stays on an awake Monocle: %+v", c)
	}

	// A restore in progress defers the switch: Elasticsearch keeps running until it ends.
	env.Elastic.PutSnapshot(ns, "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: "nightly",
		Indices: []string{"monocle.changes.1.demo"}, Docs: map[string]int64{"monocle.changes.1.demo": 42}})
	env.Elastic.HoldRestores(ns, "m", true)
	patchMonocle(t, ns, `{"spec":{"restore":{"snapshot":"nightly"}}}`)
	waitCondition(t, ns, "m", "Restored", metav1.ConditionFalse, "Restoring")
	patchMonocle(t, ns, `{"spec":{"hibernate":true}}`)
	deferred := waitCondition(t, ns, "m", "Hibernated", metav1.ConditionFalse, "HibernationDeferred")
	if !strings.Contains(deferred.Message, "nightly") {
		t.Errorf("HibernationDeferred message %q does not name the restore", deferred.Message)
	}
	waitEvent(t, ns, "HibernationDeferred", "nightly")
	sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, "m-elastic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := getMonocle(t, ns, "m").Status.Hibernation; h != nil || *sts.Spec.Replicas != 1 {
		t.Errorf("during the restore: status.hibernation %+v, Elasticsearch at %d replicas; want the switch deferred", h, *sts.Spec.Replicas)
	}
	env.Elastic.HoldRestores(ns, "m", false)
	waitCondition(t, ns, "m", "Restored", metav1.ConditionTrue, "Restored")
	testkit.Eventually(t, 250*time.Millisecond, 2*time.Minute, "hibernated after the restore", hibernationPhase(t, ns, monoclev1alpha1.HibernationHibernated))
	if n := env.Elastic.Restores(ns, "m", resources.BackupRepositoryName, "nightly"); n != 1 {
		t.Errorf("%d restores of nightly, want 1", n)
	}
	patchMonocle(t, ns, `{"spec":{"hibernate":false}}`)
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")

	// A snapshot under way once the API has no pod: Elasticsearch runs on until it ends.
	env.Elastic.SnapshotOutcome(ns, "m", testkit.SnapshotInProgress, "")
	env.Kubectl.Must(t, "annotate", "-n", ns, "monocle/m", monoclev1alpha1.BackupAnnotation+"=before-hibernating", "--overwrite")
	running := waitBackup(t, ns, "the on-demand snapshot running", time.Minute, func(st *monoclev1alpha1.BackupStatus) error {
		if st.Running == "" {
			return fmt.Errorf("status.backup = %+v, want a snapshot running", st)
		}
		return nil
	}).Running
	patchMonocle(t, ns, `{"spec":{"hibernate":true}}`)
	testkit.Eventually(t, 250*time.Millisecond, 2*time.Minute, "Elasticsearch waiting for the snapshot", func() error {
		h := getMonocle(t, ns, "m").Status.Hibernation
		if h == nil || !strings.Contains(h.Message, "Waiting for snapshot "+running) {
			return fmt.Errorf("status.hibernation %+v, want it waiting for snapshot %s", h, running)
		}
		return nil
	})
	// Two reads later, it still waits.
	time.Sleep(5 * time.Second)
	sts, err = env.Kube.AppsV1().StatefulSets(ns).Get(ctx, "m-elastic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := getMonocle(t, ns, "m").Status.Hibernation; *sts.Spec.Replicas != 1 || h.Phase != monoclev1alpha1.HibernationHibernating {
		t.Errorf("with snapshot %s running: Elasticsearch at %d replicas, status.hibernation %+v", running, *sts.Spec.Replicas, h)
	}
	env.Elastic.FinishSnapshots(ns, "m")
	env.Elastic.SnapshotOutcome(ns, "m", "", "")
	testkit.Eventually(t, 250*time.Millisecond, 2*time.Minute, "hibernated after the snapshot", hibernationPhase(t, ns, monoclev1alpha1.HibernationHibernated))
	if b := getMonocle(t, ns, "m").Status.Backup; b.Running != "" || b.LastSuccessful == nil || b.LastSuccessful.Name != running {
		t.Errorf("status.backup %+v, want %s successful and nothing running", b, running)
	}
	patchMonocle(t, ns, `{"spec":{"hibernate":false}}`)
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
}
