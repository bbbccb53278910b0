package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// waitEvent waits until namespace ns has an event of reason whose message contains text.
func waitEvent(t *testing.T, ns, reason, text string) {
	t.Helper()
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "a "+reason+" event", func() error {
		events := env.Kubectl.Must(t, "get", "events", "-n", ns, "--field-selector", "reason="+reason, "-o", "custom-columns=MSG:.message")
		if !strings.Contains(events, text) {
			return fmt.Errorf("no %s event with %q:\n%s", reason, text, events)
		}
		return nil
	})
}

// waitBackup waits until status.backup passes check.
func waitBackup(t *testing.T, ns, what string, timeout time.Duration, check func(*monoclev1alpha1.BackupStatus) error) *monoclev1alpha1.BackupStatus {
	t.Helper()
	var st *monoclev1alpha1.BackupStatus
	testkit.Eventually(t, 250*time.Millisecond, timeout, what, func() error {
		st = getMonocle(t, ns, "m").Status.Backup
		if st == nil {
			return fmt.Errorf("no status.backup")
		}
		return check(st)
	})
	return st
}

// TestBackups: spec.backup on a running Monocle mounts a backup volume of its own in the
// Elasticsearch pod without replacing the data PVC, and the operator registers it, takes the
// on-demand snapshot the annotation asks for and the scheduled ones, reports them (status,
// BackupReady, events), and reports a failed snapshot without touching the Monocle.
func TestBackups(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "backups"
	startDay2(t, ns)
	ctx := context.Background()
	env.Elastic.SetIndices(ns, "m", "monocle.config", "monocle.changes.1.demo")
	before := takeSnapshot(t, ns)
	if before.pvcUID == "" {
		t.Fatal("the data PVC data-m-elastic-0 does not exist")
	}
	waitCondition(t, ns, "m", "BackupReady", metav1.ConditionFalse, "NotBackedUp")

	patchMonocle(t, ns, `{"spec":{"backup":{"schedule":"* * * * *","keep":1}}}`)
	testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "the backup PVC mounted in a rolled-out StatefulSet", func() error {
		pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "m-backup", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(pvc.OwnerReferences) != 0 {
			return fmt.Errorf("m-backup has owners %v: deleting the Monocle would delete the snapshots", pvc.OwnerReferences)
		}
		sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, "m-elastic", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !mountsClaim(sts, "m-backup") {
			return fmt.Errorf("the StatefulSet does not mount m-backup")
		}
		if sts.Status.ObservedGeneration < sts.Generation || sts.Status.ReadyReplicas != 1 || sts.Status.UpdateRevision != sts.Status.CurrentRevision {
			return fmt.Errorf("StatefulSet not rolled out: %+v", sts.Status)
		}
		return nil
	})
	// The StatefulSet was updated in place: same object, same data PVC.
	now := takeSnapshot(t, ns)
	if now.pvcUID != before.pvcUID {
		t.Errorf("the data PVC was replaced (%s → %s)", before.pvcUID, now.pvcUID)
	}
	waitCondition(t, ns, "m", "BackupReady", metav1.ConditionTrue, "NoBackupYet")
	if typ, settings, ok := env.Elastic.Repository(ns, "m", resources.BackupRepositoryName); !ok || typ != "fs" || settings["location"] != resources.BackupMountPath {
		t.Errorf("repository %q = %v %s %v", resources.BackupRepositoryName, ok, typ, settings)
	}

	// On demand.
	env.Kubectl.Must(t, "annotate", "-n", ns, "monocle/m", monoclev1alpha1.BackupAnnotation+"=first", "--overwrite")
	st := waitBackup(t, ns, "the on-demand snapshot", 30*time.Second, func(st *monoclev1alpha1.BackupStatus) error {
		if st.LastRequest != "first" || st.LastSuccessful == nil || !strings.HasPrefix(st.LastSuccessful.Name, "manual-") {
			return fmt.Errorf("status.backup = %+v", st)
		}
		return nil
	})
	if st.LastSuccessful.Size == nil || st.LastSuccessful.Size.Value() != 2*testkit.FakeSnapshotBytesPerIndex {
		t.Errorf("lastSuccessful.size = %v, want the 2 MiB Elasticsearch reports", st.LastSuccessful.Size)
	}
	waitCondition(t, ns, "m", "BackupReady", metav1.ConditionTrue, "BackupSucceeded")
	waitEvent(t, ns, "BackupSucceeded", st.LastSuccessful.Name)

	// Scheduled, every minute, keep 1: at least one scheduled snapshot, and never two.
	st = waitBackup(t, ns, "a scheduled snapshot", 90*time.Second, func(st *monoclev1alpha1.BackupStatus) error {
		if st.LastSuccessful == nil || !strings.HasPrefix(st.LastSuccessful.Name, "scheduled-") || st.NextScheduled == nil {
			return fmt.Errorf("status.backup = %+v", st)
		}
		return nil
	})
	if !st.NextScheduled.After(time.Now().Add(-5 * time.Second)) {
		t.Errorf("nextScheduled %s did not move past the slot taken", st.NextScheduled)
	}
	var scheduled, manual int
	for _, s := range env.Elastic.Snapshots(ns, "m", resources.BackupRepositoryName) {
		switch {
		case strings.HasPrefix(s.Name, "scheduled-"):
			scheduled++
		case strings.HasPrefix(s.Name, "manual-"):
			manual++
		}
	}
	if scheduled < 1 || scheduled > 2 || manual != 1 {
		// keep 1 may briefly hold 2 scheduled ones: the newest, and one taken since.
		t.Errorf("%d scheduled and %d manual snapshots, want 1 (at most 2) and 1", scheduled, manual)
	}

	// A failed snapshot: reported, and the Monocle stays Ready. The schedule goes first, so
	// that no scheduled snapshot succeeds meanwhile.
	patchMonocle(t, ns, `{"spec":{"backup":{"schedule":null}}}`)
	testkit.Eventually(t, 250*time.Millisecond, 30*time.Second, "the schedule gone from the status", func() error {
		if st := getMonocle(t, ns, "m").Status.Backup; st == nil || st.NextScheduled != nil {
			return fmt.Errorf("status.backup = %+v", st)
		}
		return nil
	})
	env.Elastic.SnapshotOutcome(ns, "m", testkit.SnapshotFailed, "disk full")
	env.Kubectl.Must(t, "annotate", "-n", ns, "monocle/m", monoclev1alpha1.BackupAnnotation+"=second", "--overwrite")
	failed := waitCondition(t, ns, "m", "BackupReady", metav1.ConditionFalse, "BackupFailed")
	if !strings.Contains(failed.Message, "disk full") {
		t.Errorf("BackupReady message %q does not give Elasticsearch's reason", failed.Message)
	}
	waitEvent(t, ns, "BackupFailed", "disk full")
	waitCondition(t, ns, "m", "Ready", metav1.ConditionTrue, "AllComponentsReady")
	env.Elastic.SnapshotOutcome(ns, "m", "", "")
}

func mountsClaim(sts *appsv1.StatefulSet, claim string) bool {
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}

// deploymentReplicas returns the replicas of Deployment name, -1 when it does not exist.
func deploymentReplicas(t *testing.T, ns, name string) int32 {
	t.Helper()
	d, err := env.Kube.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return -1
	}
	return ptr.Deref(d.Spec.Replicas, 1)
}

// TestRestore: a new Monocle created with spec.restore creates its API and crawler at zero
// replicas and runs no Job until Elasticsearch has restored the snapshot, once; then they
// start. A new snapshot name on the running Monocle stops them, restores over the closed
// indices and starts them again.
func TestRestore(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "restore"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	ctx := context.Background()
	env.Elastic.PutSnapshot(ns, "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: "nightly",
		Indices: []string{"monocle.changes.1.demo", "monocle.config"}, Docs: map[string]int64{"monocle.changes.1.demo": 42}})
	env.Elastic.HoldRestores(ns, "m", true)
	env.Kubectl.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	manifest := strings.Replace(day2Monocle, "spec:\n", "spec:\n  backup: {}\n  restore: {snapshot: nightly}\n", 1)
	if out, err := env.Kubectl.RunStdin(ctx, manifest, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}

	restoring := waitCondition(t, ns, "m", "Restored", metav1.ConditionFalse, "Restoring")
	if !strings.Contains(restoring.Message, "nightly") {
		t.Errorf("Restored message %q does not name the snapshot", restoring.Message)
	}
	waitCondition(t, ns, "m", "Ready", metav1.ConditionFalse, "Restoring")
	for _, d := range []string{"m-api", "m-crawler"} {
		if n := deploymentReplicas(t, ns, d); n != 0 {
			t.Errorf("%s has %d replicas while restoring, want 0", d, n)
		}
	}
	if jobs := env.Kubectl.Must(t, "get", "jobs", "-n", ns, "-o", "name"); strings.TrimSpace(jobs) != "" {
		t.Errorf("Jobs ran before the restore ended: %s", jobs)
	}
	env.Elastic.HoldRestores(ns, "m", false)
	waitCondition(t, ns, "m", "Restored", metav1.ConditionTrue, "Restored")
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	if n := env.Elastic.Restores(ns, "m", resources.BackupRepositoryName, "nightly"); n != 1 {
		t.Errorf("%d restores of nightly, want 1", n)
	}
	for _, d := range []string{"m-api", "m-crawler"} {
		if n := deploymentReplicas(t, ns, d); n != 1 {
			t.Errorf("%s has %d replicas after the restore, want 1", d, n)
		}
	}
	waitEvent(t, ns, "Restored", "nightly")

	// Into the running Monocle: the API and the crawler stop, the indices are closed, the
	// snapshot restored over them, and they start again.
	env.Elastic.PutSnapshot(ns, "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: "weekly",
		Indices: []string{"monocle.changes.1.demo"}, Docs: map[string]int64{"monocle.changes.1.demo": 7}})
	patchMonocle(t, ns, `{"spec":{"restore":{"snapshot":"weekly"}}}`)
	testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "weekly restored", func() error {
		if st := getMonocle(t, ns, "m").Status.Restore; st == nil || st.Snapshot != "weekly" || st.Phase != monoclev1alpha1.RestoreSucceeded {
			return fmt.Errorf("status.restore = %+v", st)
		}
		return nil
	})
	waitCondition(t, ns, "m", "Restored", metav1.ConditionTrue, "Restored")
	if n := env.Elastic.Restores(ns, "m", resources.BackupRepositoryName, "weekly"); n != 1 {
		t.Errorf("%d restores of weekly, want 1", n)
	}
	for _, ix := range env.Elastic.Indices(ns, "m") {
		if ix.Name == "monocle.changes.1.demo" && (!ix.Open || ix.Docs != 7) {
			t.Errorf("%s: open %v, %d docs; want the weekly snapshot's 7, open", ix.Name, ix.Open, ix.Docs)
		}
	}
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	waitEvent(t, ns, "RestorePending", "weekly")
}
