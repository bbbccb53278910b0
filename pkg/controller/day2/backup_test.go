package day2

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// backupMonocle is Monocle "m" of namespace "ns" with spec.backup on a volume.
func backupMonocle(schedule string) *monoclev1alpha1.Monocle {
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", UID: "uid-m"}}
	m.Spec.Backup = &monoclev1alpha1.BackupSpec{Schedule: schedule}
	return m
}

func TestPlanBackup(t *testing.T) {
	now := time.Date(2026, 11, 25, 3, 0, 30, 0, time.UTC)
	slot := metav1.NewTime(time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC))
	later := metav1.NewTime(now.Add(time.Hour))
	tests := map[string]struct {
		m    func() *monoclev1alpha1.Monocle
		take string
	}{
		"no spec.backup: nothing": {m: func() *monoclev1alpha1.Monocle {
			m := backupMonocle("0 3 * * *")
			m.Spec.Backup = nil
			m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "now"}
			return m
		}},
		"a new annotation value: its snapshot": {take: ManualSnapshotName("1"), m: func() *monoclev1alpha1.Monocle {
			m := backupMonocle("")
			m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "1"}
			return m
		}},
		"the value last served: nothing": {m: func() *monoclev1alpha1.Monocle {
			m := backupMonocle("")
			m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "1"}
			m.Status.Backup = &monoclev1alpha1.BackupStatus{LastRequest: "1"}
			return m
		}},
		"the slot has come: its snapshot": {take: "scheduled-20261125-0300", m: func() *monoclev1alpha1.Monocle {
			m := backupMonocle("0 3 * * *")
			m.Status.Backup = &monoclev1alpha1.BackupStatus{Schedule: "0 3 * * *", NextScheduled: &slot}
			return m
		}},
		"the slot is ahead: nothing": {m: func() *monoclev1alpha1.Monocle {
			m := backupMonocle("0 3 * * *")
			m.Status.Backup = &monoclev1alpha1.BackupStatus{Schedule: "0 3 * * *", NextScheduled: &later}
			return m
		}},
		"a slot of another schedule: nothing until recomputed": {m: func() *monoclev1alpha1.Monocle {
			m := backupMonocle("0 4 * * *")
			m.Status.Backup = &monoclev1alpha1.BackupStatus{Schedule: "0 3 * * *", NextScheduled: &slot}
			return m
		}},
		"an on-demand request goes first": {take: ManualSnapshotName("x"), m: func() *monoclev1alpha1.Monocle {
			m := backupMonocle("0 3 * * *")
			m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "x"}
			m.Status.Backup = &monoclev1alpha1.BackupStatus{Schedule: "0 3 * * *", NextScheduled: &slot}
			return m
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p := PlanBackup(tt.m(), now)
			if p.Take != tt.take {
				t.Errorf("take = %q, want %q", p.Take, tt.take)
			}
		})
	}
}

func TestBackupStatusSchedule(t *testing.T) {
	now := time.Date(2026, 11, 25, 3, 0, 30, 0, time.UTC)
	m := backupMonocle("0 3 * * *")
	r := BackupStatus(m, nil, now)
	if want := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC); r.Status.NextScheduled == nil || !r.Status.NextScheduled.Equal(&metav1.Time{Time: want}) {
		t.Errorf("nextScheduled = %v, want %v", r.Status.NextScheduled, want)
	}
	if r.Condition.Status != metav1.ConditionTrue || r.Condition.Reason != reasons.NoBackupYet {
		t.Errorf("condition = %s/%s, want True/%s", r.Condition.Status, r.Condition.Reason, reasons.NoBackupYet)
	}
	if r.Status.Repository != "volume m-backup" {
		t.Errorf("repository = %q", r.Status.Repository)
	}

	m.Spec.Backup.Schedule = "every day"
	r = BackupStatus(m, nil, now)
	if r.Condition.Status != metav1.ConditionFalse || r.Condition.Reason != reasons.InvalidSchedule || r.Status.NextScheduled != nil {
		t.Errorf("invalid schedule: condition %s/%s, next %v", r.Condition.Status, r.Condition.Reason, r.Status.NextScheduled)
	}

	m.Spec.Backup = nil
	if r := BackupStatus(m, nil, now); r.Status != nil || r.Condition.Reason != reasons.NotBackedUp {
		t.Errorf("no spec.backup: status %v, reason %s", r.Status, r.Condition.Reason)
	}
}

// TestFailureInTheSecondOfASuccess: the newest of a success and a failure that end in the
// same second is told by their milliseconds (the status keeps seconds).
func TestFailureInTheSecondOfASuccess(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	snap := func(name string, state elastic.SnapshotState, ms int) elastic.Snapshot {
		end := at.Add(time.Duration(ms) * time.Millisecond)
		return elastic.Snapshot{Name: name, State: state, Start: end, End: end, Reason: "boom"}
	}
	for name, tc := range map[string]struct {
		snaps  []elastic.Snapshot
		reason string
	}{
		"failure after the success": {snaps: []elastic.Snapshot{snap("scheduled-a", elastic.SnapshotSuccess, 100), snap("manual-b", elastic.SnapshotFailed, 600)}, reason: reasons.BackupFailed},
		"success after the failure": {snaps: []elastic.Snapshot{snap("manual-b", elastic.SnapshotFailed, 100), snap("scheduled-a", elastic.SnapshotSuccess, 600)}, reason: reasons.BackupSucceeded},
	} {
		t.Run(name, func(t *testing.T) {
			m := backupMonocle("")
			out := &contract.BackupOutcome{Listed: true, Snapshots: tc.snaps, Sizes: map[string]int64{}}
			r := BackupStatus(m, out, at.Add(time.Second))
			if r.Condition.Reason != tc.reason {
				t.Errorf("condition %s (%s), want %s", r.Condition.Reason, r.Condition.Message, tc.reason)
			}
			if (tc.reason == reasons.BackupSucceeded) != (r.Status.LastFailure == nil) {
				t.Errorf("lastFailure %+v", r.Status.LastFailure)
			}
			// Read back without a read (an operator restart): the same answer.
			m.Status.Backup = r.Status
			if again := BackupStatus(m, nil, at.Add(2*time.Second)); again.Condition.Reason != tc.reason {
				t.Errorf("from the status alone: %s, want %s", again.Condition.Reason, tc.reason)
			}
		})
	}
}

// TestBackupStatusNamesUnreadableSnapshots: the snapshots Elasticsearch cannot read count in
// status.backup.snapshots and are named in BackupReady's message, whatever its reason, from
// the read that found them; without a read the message does not guess.
func TestBackupStatusNamesUnreadableSnapshots(t *testing.T) {
	now := time.Date(2026, 11, 25, 3, 30, 0, 0, time.UTC)
	end := now.Add(-30 * time.Minute)
	ok := elastic.Snapshot{Name: "scheduled-20261125-0300", State: elastic.SnapshotSuccess, Start: end.Add(-time.Minute), End: end}
	failed := elastic.Snapshot{Name: "manual-0000beef", State: elastic.SnapshotFailed, Reason: "disk full", Start: end, End: end.Add(time.Second)}
	for name, tc := range map[string]struct {
		snaps  []elastic.Snapshot
		reason string
	}{
		"after a success": {snaps: []elastic.Snapshot{ok}, reason: reasons.BackupSucceeded},
		"after a failure": {snaps: []elastic.Snapshot{ok, failed}, reason: reasons.BackupFailed},
		"nothing else":    {reason: reasons.NoBackupYet},
	} {
		t.Run(name, func(t *testing.T) {
			m := backupMonocle("")
			out := &contract.BackupOutcome{Listed: true, Snapshots: tc.snaps, Unreadable: []string{"scheduled-20261101-0300", "scheduled-20261102-0300"}}
			r := BackupStatus(m, out, now)
			if r.Condition.Reason != tc.reason || !strings.Contains(r.Condition.Message,
				"Elasticsearch cannot read 2 snapshots of the repository (scheduled-20261101-0300, scheduled-20261102-0300)") {
				t.Errorf("condition %s %q, want %s naming both unreadable snapshots", r.Condition.Reason, r.Condition.Message, tc.reason)
			}
			if want := int32(len(tc.snaps) + 2); r.Status.Snapshots != want {
				t.Errorf("status.backup.snapshots = %d, want %d", r.Status.Snapshots, want)
			}
			m.Status.Backup = r.Status
			if again := BackupStatus(m, nil, now); strings.Contains(again.Condition.Message, "cannot read") {
				t.Errorf("without a read: %q", again.Condition.Message)
			}
		})
	}
}

// TestExistingRepository: with backup.repository.existing the plan names that repository and
// registers none, restores without restore.repository read from it, the status describes
// it, and BackupReady tells a missing repository from one that cannot be checked.
func TestExistingRepository(t *testing.T) {
	now := time.Date(2026, 11, 25, 3, 30, 0, 0, time.UTC)
	m := backupMonocle("")
	m.Spec.Backup.Repository.Existing = "cluster-backups"
	m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "1"}
	p := PlanBackup(m, now)
	if p.Existing != "cluster-backups" || p.Repo != (elastic.Repository{}) || p.BackupRepository() != "cluster-backups" || p.Take != ManualSnapshotName("1") {
		t.Errorf("plan %+v, want the existing repository, none to register, and the snapshot asked for", p)
	}
	m.Spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: "nightly"}
	if name, repo := restoreSourceOf(m); name != "cluster-backups" || repo != (elastic.Repository{}) {
		t.Errorf("restore source %s %+v, want cluster-backups, not registered", name, repo)
	}
	// restore.repository still names another repository, registered read-only.
	m.Spec.Restore.Repository = &monoclev1alpha1.BackupRepository{S3: &monoclev1alpha1.S3Repository{Bucket: "old"}}
	if name, repo := restoreSourceOf(m); name != "restore-source" || repo.Type != elastic.RepositoryS3 || !repo.ReadOnly {
		t.Errorf("restore source %s %+v, want restore-source, s3 read-only", name, repo)
	}

	for name, tc := range map[string]struct {
		out     contract.BackupOutcome
		reason  string
		message string
	}{
		"missing": {out: contract.BackupOutcome{Plan: p, RepoMissing: true, RepoErr: "status 404 repository_missing_exception: [cluster-backups] missing"},
			reason: reasons.BackupRepositoryMissing, message: "cluster-backups of backup.repository.existing is not registered in the cluster"},
		"unreadable": {out: contract.BackupOutcome{Plan: p, RepoErr: "status 403 security_exception: no monitor privilege"},
			reason: reasons.RepositoryFailed, message: "Cannot check the snapshot repository (existing cluster-backups): status 403"},
		"its unreadable snapshots": {out: contract.BackupOutcome{Plan: p, Listed: true, Unreadable: []string{"scheduled-20261101-0300"}},
			reason: reasons.NoBackupYet, message: "GET _snapshot/cluster-backups/<name>"},
	} {
		t.Run(name, func(t *testing.T) {
			r := BackupStatus(m, &tc.out, now)
			if r.Condition.Reason != tc.reason || !strings.Contains(r.Condition.Message, tc.message) {
				t.Errorf("condition %s %q, want %s saying %q", r.Condition.Reason, r.Condition.Message, tc.reason, tc.message)
			}
			if r.Status.Repository != "existing cluster-backups" {
				t.Errorf("status.backup.repository = %q", r.Status.Repository)
			}
		})
	}
}
