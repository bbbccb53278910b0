package operand_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// theirs is the repository the cluster's administrators registered, as the fake keeps it.
var theirs = elastic.Repository{Type: elastic.RepositoryS3, Bucket: "cluster-backups", BasePath: "es"}

// existingMonocle is Monocle "m" backing up into the existing repository "cluster-backups",
// keeping one scheduled snapshot.
func existingMonocle() *monoclev1alpha1.Monocle {
	m := backupMonocle("")
	m.Spec.Backup.Repository.Existing = "cluster-backups"
	m.Spec.Backup.Keep = ptr.To[int32](1)
	return m
}

// TestSnapshotsIntoAnExistingRepository: snapshots are taken, listed and expired in the
// repository someone else registered, which is never registered again nor changed, and no
// repository of the operator's is registered.
func TestSnapshotsIntoAnExistingRepository(t *testing.T) {
	ctx := context.Background()
	m := existingMonocle()
	f, client := fakeElastic(t, m)
	if err := client.EnsureRepository(ctx, "cluster-backups", theirs); err != nil {
		t.Fatal(err)
	}
	_, before, _ := f.Repository("ns", "m", "cluster-backups")
	// Someone else's snapshot, and an older scheduled one of this Monocle's.
	f.PutSnapshot("ns", "m", "cluster-backups", testkit.FakeSnapshot{Name: "nightly-other", Start: time.Now().Add(-48 * time.Hour)})
	f.PutSnapshot("ns", "m", "cluster-backups", testkit.FakeSnapshot{Name: "scheduled-20261101-0300", Start: time.Now().Add(-24 * time.Hour)})

	p := day2.PlanBackup(m, time.Now())
	p.Take = "scheduled-20261125-0300"
	out := operand.RunSnapshots(ctx, client, p, nil)
	if !out.Taken || out.TakeErr != "" || out.RepoErr != "" || out.RepoMissing {
		t.Fatalf("outcome: taken %v, takeErr %q, repoErr %q, missing %v", out.Taken, out.TakeErr, out.RepoErr, out.RepoMissing)
	}
	var names []string
	for _, s := range f.Snapshots("ns", "m", "cluster-backups") {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "nightly-other,scheduled-20261125-0300" {
		t.Errorf("snapshots of cluster-backups: %v, want someone else's and the new one (keep 1 expired the older)", names)
	}
	if typ, after, _ := f.Repository("ns", "m", "cluster-backups"); typ != "s3" || !equality.Semantic.DeepEqual(after, before) {
		t.Errorf("cluster-backups became %s %v, was s3 %v", typ, after, before)
	}
	if _, _, ok := f.Repository("ns", "m", resources.BackupRepositoryName); ok {
		t.Errorf("the operator registered its own repository %s", resources.BackupRepositoryName)
	}
	if r := day2.BackupStatus(m, &out, time.Now()); r.Condition.Reason != reasons.BackupSucceeded || r.Status.Repository != "existing cluster-backups" {
		t.Errorf("BackupReady %s, repository %q", r.Condition.Reason, r.Status.Repository)
	}
}

// TestMissingExistingRepository: a repository nobody registered is reported missing; nothing
// is registered, taken or listed.
func TestMissingExistingRepository(t *testing.T) {
	ctx := context.Background()
	m := existingMonocle()
	f, client := fakeElastic(t, m)
	p := day2.PlanBackup(m, time.Now())
	p.Take = "manual-00000001"
	out := operand.RunSnapshots(ctx, client, p, nil)
	if !out.RepoMissing || !strings.Contains(out.RepoErr, "repository_missing_exception") || out.Taken || out.Listed {
		t.Fatalf("outcome %+v, want the repository missing and nothing done", out)
	}
	if _, _, ok := f.Repository("ns", "m", "cluster-backups"); ok {
		t.Error("the operator registered the existing repository")
	}
	if r := day2.BackupStatus(m, &out, time.Now()); r.Condition.Reason != reasons.BackupRepositoryMissing {
		t.Errorf("BackupReady %s %q, want %s", r.Condition.Reason, r.Condition.Message, reasons.BackupRepositoryMissing)
	}
}

// TestRestoreFromAnExistingRepository: spec.restore without a repository restores from the
// existing one, checked, never registered; while it is missing, the step is tried again
// rather than failed.
func TestRestoreFromAnExistingRepository(t *testing.T) {
	m := existingMonocle()
	m.Spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: "nightly"}
	m.Status.Restore = &monoclev1alpha1.RestoreStatus{Snapshot: "nightly", Phase: monoclev1alpha1.RestorePending}
	f, client := fakeElastic(t, m)
	f.PutSnapshot("ns", "m", "cluster-backups", testkit.FakeSnapshot{Name: "nightly", Indices: []string{"monocle.changes.1.demo", "monocle.config"}})

	next, res := restoreStep(t, m, f)
	if res.Status.Phase != monoclev1alpha1.RestorePending || !strings.Contains(res.Status.Message, "checking the repository cluster-backups") {
		t.Fatalf("without the repository: %s %q, want Pending, tried again", res.Status.Phase, res.Status.Message)
	}
	if err := client.EnsureRepository(context.Background(), "cluster-backups", theirs); err != nil {
		t.Fatal(err)
	}
	next, res = restoreStep(t, next, f)
	if res.Status.Phase != monoclev1alpha1.RestoreRestoring {
		t.Fatalf("Pending step: %s %q", res.Status.Phase, res.Status.Message)
	}
	if _, res = restoreStep(t, next, f); res.Status.Phase != monoclev1alpha1.RestoreSucceeded {
		t.Fatalf("Restoring step: %s %q", res.Status.Phase, res.Status.Message)
	}
	if n := f.Restores("ns", "m", "cluster-backups", "nightly"); n != 1 {
		t.Errorf("%d restores from cluster-backups, want 1", n)
	}
	if _, _, ok := f.Repository("ns", "m", resources.RestoreSourceRepositoryName); ok {
		t.Error("a restore-source repository was registered")
	}
}
