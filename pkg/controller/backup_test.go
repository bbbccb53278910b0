package controller

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// backupMonocle is Monocle "m" of namespace "ns" with spec.backup on a volume.
func backupMonocle(schedule string) *monoclev1alpha1.Monocle {
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", UID: "uid-m"}}
	m.Spec.Backup = &monoclev1alpha1.BackupSpec{Schedule: schedule}
	return m
}

// fakeElastic starts a testkit.FakeElasticsearch with the Monocle indices of m and returns
// it with a client of m's Elasticsearch.
func fakeElastic(t *testing.T, m *monoclev1alpha1.Monocle) (*testkit.FakeElasticsearch, elastic.Client) {
	t.Helper()
	f := testkit.StartFakeElasticsearch()
	t.Cleanup(f.Close)
	tr := f.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	client, err := elastic.New(elasticHealthURL(m), tr)
	if err != nil {
		t.Fatal(err)
	}
	f.SetIndices(m.Namespace, m.Name, "monocle.config", "monocle.changes.1.demo")
	return f, client
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
		"a new annotation value: its snapshot": {take: manualSnapshotName("1"), m: func() *monoclev1alpha1.Monocle {
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
		"an on-demand request goes first": {take: manualSnapshotName("x"), m: func() *monoclev1alpha1.Monocle {
			m := backupMonocle("0 3 * * *")
			m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "x"}
			m.Status.Backup = &monoclev1alpha1.BackupStatus{Schedule: "0 3 * * *", NextScheduled: &slot}
			return m
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p := planBackup(tt.m(), now)
			if p.take != tt.take {
				t.Errorf("take = %q, want %q", p.take, tt.take)
			}
		})
	}
}

func TestBackupStatusSchedule(t *testing.T) {
	now := time.Date(2026, 11, 25, 3, 0, 30, 0, time.UTC)
	m := backupMonocle("0 3 * * *")
	r := backupStatus(m, nil, now)
	if want := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC); r.status.NextScheduled == nil || !r.status.NextScheduled.Equal(&metav1.Time{Time: want}) {
		t.Errorf("nextScheduled = %v, want %v", r.status.NextScheduled, want)
	}
	if r.condition.Status != metav1.ConditionTrue || r.condition.Reason != reasons.NoBackupYet {
		t.Errorf("condition = %s/%s, want True/%s", r.condition.Status, r.condition.Reason, reasons.NoBackupYet)
	}
	if r.status.Repository != "volume m-backup" {
		t.Errorf("repository = %q", r.status.Repository)
	}

	m.Spec.Backup.Schedule = "every day"
	r = backupStatus(m, nil, now)
	if r.condition.Status != metav1.ConditionFalse || r.condition.Reason != reasons.InvalidSchedule || r.status.NextScheduled != nil {
		t.Errorf("invalid schedule: condition %s/%s, next %v", r.condition.Status, r.condition.Reason, r.status.NextScheduled)
	}

	m.Spec.Backup = nil
	if r := backupStatus(m, nil, now); r.status != nil || r.condition.Reason != reasons.NotBackedUp {
		t.Errorf("no spec.backup: status %v, reason %s", r.status, r.condition.Reason)
	}
}

// TestScheduledSnapshotTakenOnce takes the slot's snapshot, moves nextScheduled on, and
// takes the slot again as an operator that died before its status write would: still one
// snapshot.
func TestScheduledSnapshotTakenOnce(t *testing.T) {
	ctx := context.Background()
	m := backupMonocle("0 3 * * *")
	f, client := fakeElastic(t, m)
	slot := metav1.NewTime(time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC))
	m.Status.Backup = &monoclev1alpha1.BackupStatus{Schedule: "0 3 * * *", NextScheduled: &slot}
	now := slot.Add(10 * time.Second)

	p := planBackup(m, now)
	out := runBackup(ctx, client, p, nil)
	if !out.taken || out.takeErr != "" || out.repoErr != "" {
		t.Fatalf("outcome: taken %v, takeErr %q, repoErr %q", out.taken, out.takeErr, out.repoErr)
	}
	typ, settings, ok := f.Repository("ns", "m", resources.BackupRepositoryName)
	if !ok || typ != "fs" || settings["location"] != resources.BackupMountPath {
		t.Errorf("repository = %v %s %v, want fs at %s", ok, typ, settings, resources.BackupMountPath)
	}
	r := backupStatus(m, &out, now)
	if r.status.NextScheduled == nil || !r.status.NextScheduled.Time.Equal(slot.Add(24*time.Hour)) {
		t.Errorf("nextScheduled = %v, want the next day's slot", r.status.NextScheduled)
	}
	ls := r.status.LastSuccessful
	if ls == nil || ls.Name != "scheduled-20261125-0300" || ls.Size == nil || ls.Size.Value() != 2*testkit.FakeSnapshotBytesPerIndex {
		t.Errorf("lastSuccessful = %+v, want scheduled-20261125-0300 of 2 MiB", ls)
	}
	if r.condition.Status != metav1.ConditionTrue || r.condition.Reason != reasons.BackupSucceeded {
		t.Errorf("condition = %s/%s", r.condition.Status, r.condition.Reason)
	}

	// The status write was lost: the same plan again.
	again := runBackup(ctx, client, p, out.sizes)
	if !again.taken || again.takeErr != "" {
		t.Errorf("second take: taken %v, err %q; want taken (already exists)", again.taken, again.takeErr)
	}
	if n := len(f.Snapshots("ns", "m", resources.BackupRepositoryName)); n != 1 {
		t.Errorf("%d snapshots, want 1", n)
	}
}

func TestOnDemandSnapshot(t *testing.T) {
	ctx := context.Background()
	m := backupMonocle("")
	m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "2026-11-25"}
	f, client := fakeElastic(t, m)
	now := time.Now()
	out := runBackup(ctx, client, planBackup(m, now), nil)
	r := backupStatus(m, &out, now)
	if r.status.LastRequest != "2026-11-25" {
		t.Errorf("lastRequest = %q", r.status.LastRequest)
	}
	snaps := f.Snapshots("ns", "m", resources.BackupRepositoryName)
	if len(snaps) != 1 || snaps[0].Name != manualSnapshotName("2026-11-25") || strings.Join(snaps[0].Indices, ",") != "monocle.changes.1.demo,monocle.config" {
		t.Errorf("snapshots = %+v", snaps)
	}
	m.Status.Backup = r.status
	if p := planBackup(m, now); p.take != "" {
		t.Errorf("after the status write, take = %q, want none", p.take)
	}
}

func TestRetentionKeepsNewestScheduled(t *testing.T) {
	ctx := context.Background()
	m := backupMonocle("@daily")
	m.Spec.Backup.Keep = ptr.To[int32](2)
	f, client := fakeElastic(t, m)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	put := func(name, state string, day int) {
		at := base.Add(time.Duration(day) * 24 * time.Hour)
		f.PutSnapshot("ns", "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: name, State: state,
			Indices: []string{"monocle.config"}, Start: at, End: at.Add(time.Minute)})
	}
	put("scheduled-20261101-0000", testkit.SnapshotSuccess, 0)
	put("manual-00000001", testkit.SnapshotSuccess, 1)
	put("scheduled-20261103-0000", testkit.SnapshotFailed, 2)
	put("scheduled-20261104-0000", testkit.SnapshotSuccess, 3)
	put("scheduled-20261105-0000", testkit.SnapshotFailed, 4)
	put("scheduled-20261106-0000", testkit.SnapshotSuccess, 5)
	put("scheduled-20261107-0000", testkit.SnapshotSuccess, 6)

	out := runBackup(ctx, client, planBackup(m, base), nil)
	var names []string
	for _, s := range f.Snapshots("ns", "m", resources.BackupRepositoryName) {
		names = append(names, s.Name)
	}
	want := "manual-00000001,scheduled-20261106-0000,scheduled-20261107-0000"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("kept %s, want %s", got, want)
	}
	r := backupStatus(m, &out, base)
	if r.status.Snapshots != 3 || r.status.LastSuccessful.Name != "scheduled-20261107-0000" || r.status.LastFailure != nil {
		t.Errorf("status = %d snapshots, last %s, failure %+v", r.status.Snapshots, r.status.LastSuccessful.Name, r.status.LastFailure)
	}
}

func TestBackupFailures(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	tests := map[string]struct {
		set        func(f *testkit.FakeElasticsearch)
		reason     string
		failureHas string
	}{
		"snapshot FAILED": {
			set:        func(f *testkit.FakeElasticsearch) { f.SnapshotOutcome("ns", "m", testkit.SnapshotFailed, "disk full") },
			reason:     reasons.BackupFailed,
			failureHas: "disk full",
		},
		"repository verification fails": {
			set: func(f *testkit.FakeElasticsearch) {
				f.FailRepositoryVerification("ns", "m", "[monocle] path is not accessible")
			},
			reason:     reasons.RepositoryFailed,
			failureHas: "not accessible",
		},
		"no Monocle index yet": {
			set:        func(f *testkit.FakeElasticsearch) { f.SetIndices("ns", "m") },
			reason:     reasons.BackupFailed,
			failureHas: "no Monocle index yet",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			m := backupMonocle("")
			m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "1"}
			f, client := fakeElastic(t, m)
			tt.set(f)
			out := runBackup(ctx, client, planBackup(m, now), nil)
			r := backupStatus(m, &out, now)
			if r.condition.Status != metav1.ConditionFalse || r.condition.Reason != tt.reason {
				t.Errorf("condition = %s/%s %q, want False/%s", r.condition.Status, r.condition.Reason, r.condition.Message, tt.reason)
			}
			if r.status.LastFailure == nil || !strings.Contains(r.status.LastFailure.Reason, tt.failureHas) {
				t.Errorf("lastFailure = %+v, want a reason with %q", r.status.LastFailure, tt.failureHas)
			}
		})
	}
}

// TestBackupUnreachable: a slow Elasticsearch costs the read its timeout and fails the
// backup with the reason, never more.
func TestBackupUnreachable(t *testing.T) {
	m := backupMonocle("")
	m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "1"}
	client, err := elastic.New("http://127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	out := runBackup(ctx, client, planBackup(m, start), nil)
	if time.Since(start) > 3*time.Second || out.repoErr == "" || out.taken {
		t.Errorf("unreachable: %s, repoErr %q, taken %v", time.Since(start), out.repoErr, out.taken)
	}
	if r := backupStatus(m, &out, start); r.condition.Reason != reasons.RepositoryFailed || r.status.LastRequest != "" {
		t.Errorf("condition %s, lastRequest %q: the request must stay pending", r.condition.Reason, r.status.LastRequest)
	}
}

// TestBackupStatusIsStableReadBack: the status computed from a read, written and read back
// (JSON, as the API server keeps it), computes the same again: a status that differs from
// its own copy is written at every sync.
func TestBackupStatusIsStableReadBack(t *testing.T) {
	m := restoreMonocle("nightly")
	m.Spec.Backup.Schedule = "@hourly"
	f, client := fakeElastic(t, m)
	f.PutSnapshot("ns", "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: "nightly", Indices: []string{"monocle.config"},
		Start: time.Date(2026, 11, 25, 3, 0, 0, 123456789, time.UTC), End: time.Date(2026, 11, 25, 3, 0, 1, 987654321, time.UTC)})
	f.SnapshotOutcome("ns", "m", testkit.SnapshotFailed, "disk full")
	m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "x"}
	now := time.Date(2026, 11, 25, 3, 30, 0, 555555555, time.UTC)
	out := runBackup(context.Background(), client, planBackup(m, now), nil)
	m.Status.Backup = backupStatus(m, &out, now).status
	m.Status.Restore = restoreStatus(m, restorePlan{}, nil, now).status

	raw, err := json.Marshal(m.Status)
	if err != nil {
		t.Fatal(err)
	}
	var back monoclev1alpha1.MonocleStatus
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	m.Status = back
	later := now.Add(300 * time.Millisecond)
	again := backupStatus(m, &out, later).status
	if !equality.Semantic.DeepEqual(again, back.Backup) {
		t.Errorf("status.backup computed again differs from its copy read back:\n%+v\n%+v", again, back.Backup)
	}
	if r := restoreStatus(m, restorePlan{}, nil, later).status; !equality.Semantic.DeepEqual(r, back.Restore) {
		t.Errorf("status.restore computed again differs from its copy read back:\n%+v\n%+v", r, back.Restore)
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
			out := &backupOutcome{listed: true, snapshots: tc.snaps, sizes: map[string]int64{}}
			r := backupStatus(m, out, at.Add(time.Second))
			if r.condition.Reason != tc.reason {
				t.Errorf("condition %s (%s), want %s", r.condition.Reason, r.condition.Message, tc.reason)
			}
			if (tc.reason == reasons.BackupSucceeded) != (r.status.LastFailure == nil) {
				t.Errorf("lastFailure %+v", r.status.LastFailure)
			}
			// Read back without a read (an operator restart): the same answer.
			m.Status.Backup = r.status
			if again := backupStatus(m, nil, at.Add(2*time.Second)); again.condition.Reason != tc.reason {
				t.Errorf("from the status alone: %s, want %s", again.condition.Reason, tc.reason)
			}
		})
	}
}
