package operand_test

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
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

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

	p := day2.PlanBackup(m, now)
	out := operand.RunSnapshots(ctx, client, p, nil)
	if !out.Taken || out.TakeErr != "" || out.RepoErr != "" {
		t.Fatalf("outcome: taken %v, takeErr %q, repoErr %q", out.Taken, out.TakeErr, out.RepoErr)
	}
	typ, settings, ok := f.Repository("ns", "m", resources.BackupRepositoryName)
	if !ok || typ != "fs" || settings["location"] != resources.BackupMountPath {
		t.Errorf("repository = %v %s %v, want fs at %s", ok, typ, settings, resources.BackupMountPath)
	}
	r := day2.BackupStatus(m, &out, now)
	if r.Status.NextScheduled == nil || !r.Status.NextScheduled.Time.Equal(slot.Add(24*time.Hour)) {
		t.Errorf("nextScheduled = %v, want the next day's slot", r.Status.NextScheduled)
	}
	ls := r.Status.LastSuccessful
	if ls == nil || ls.Name != "scheduled-20261125-0300" || ls.Size == nil || ls.Size.Value() != 2*testkit.FakeSnapshotBytesPerIndex {
		t.Errorf("lastSuccessful = %+v, want scheduled-20261125-0300 of 2 MiB", ls)
	}
	if r.Condition.Status != metav1.ConditionTrue || r.Condition.Reason != reasons.BackupSucceeded {
		t.Errorf("condition = %s/%s", r.Condition.Status, r.Condition.Reason)
	}

	// The status write was lost: the same plan again.
	again := operand.RunSnapshots(ctx, client, p, out.Sizes)
	if !again.Taken || again.TakeErr != "" {
		t.Errorf("second take: taken %v, err %q; want taken (already exists)", again.Taken, again.TakeErr)
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
	out := operand.RunSnapshots(ctx, client, day2.PlanBackup(m, now), nil)
	r := day2.BackupStatus(m, &out, now)
	if r.Status.LastRequest != "2026-11-25" {
		t.Errorf("lastRequest = %q", r.Status.LastRequest)
	}
	snaps := f.Snapshots("ns", "m", resources.BackupRepositoryName)
	if len(snaps) != 1 || snaps[0].Name != day2.ManualSnapshotName("2026-11-25") || strings.Join(snaps[0].Indices, ",") != "monocle.changes.1.demo,monocle.config" {
		t.Errorf("snapshots = %+v", snaps)
	}
	m.Status.Backup = r.Status
	if p := day2.PlanBackup(m, now); p.Take != "" {
		t.Errorf("after the status write, take = %q, want none", p.Take)
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

	out := operand.RunSnapshots(ctx, client, day2.PlanBackup(m, base), nil)
	var names []string
	for _, s := range f.Snapshots("ns", "m", resources.BackupRepositoryName) {
		names = append(names, s.Name)
	}
	want := "manual-00000001,scheduled-20261106-0000,scheduled-20261107-0000"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("kept %s, want %s", got, want)
	}
	r := day2.BackupStatus(m, &out, base)
	if r.Status.Snapshots != 3 || r.Status.LastSuccessful.Name != "scheduled-20261107-0000" || r.Status.LastFailure != nil {
		t.Errorf("status = %d snapshots, last %s, failure %+v", r.Status.Snapshots, r.Status.LastSuccessful.Name, r.Status.LastFailure)
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
			out := operand.RunSnapshots(ctx, client, day2.PlanBackup(m, now), nil)
			r := day2.BackupStatus(m, &out, now)
			if r.Condition.Status != metav1.ConditionFalse || r.Condition.Reason != tt.reason {
				t.Errorf("condition = %s/%s %q, want False/%s", r.Condition.Status, r.Condition.Reason, r.Condition.Message, tt.reason)
			}
			if r.Status.LastFailure == nil || !strings.Contains(r.Status.LastFailure.Reason, tt.failureHas) {
				t.Errorf("lastFailure = %+v, want a reason with %q", r.Status.LastFailure, tt.failureHas)
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
	out := operand.RunSnapshots(ctx, client, day2.PlanBackup(m, start), nil)
	if time.Since(start) > 3*time.Second || out.RepoErr == "" || out.Taken {
		t.Errorf("unreachable: %s, repoErr %q, taken %v", time.Since(start), out.RepoErr, out.Taken)
	}
	if r := day2.BackupStatus(m, &out, start); r.Condition.Reason != reasons.RepositoryFailed || r.Status.LastRequest != "" {
		t.Errorf("condition %s, lastRequest %q: the request must stay pending", r.Condition.Reason, r.Status.LastRequest)
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
	out := operand.RunSnapshots(context.Background(), client, day2.PlanBackup(m, now), nil)
	m.Status.Backup = day2.BackupStatus(m, &out, now).Status
	m.Status.Restore = day2.RestoreStatus(m, operand.RestorePlan{}, nil, now).Status

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
	again := day2.BackupStatus(m, &out, later).Status
	if !equality.Semantic.DeepEqual(again, back.Backup) {
		t.Errorf("status.backup computed again differs from its copy read back:\n%+v\n%+v", again, back.Backup)
	}
	if r := day2.RestoreStatus(m, operand.RestorePlan{}, nil, later).Status; !equality.Semantic.DeepEqual(r, back.Restore) {
		t.Errorf("status.restore computed again differs from its copy read back:\n%+v\n%+v", r, back.Restore)
	}
}

// TestSnapshotStillRunningCountsAsTaken: asking again for a snapshot that Elasticsearch is
// still taking (an operator that died after it accepted the snapshot, restarted within the
// snapshot's run) meets 400 "is already in-progress": the snapshot is this Monocle's own,
// taken, and no failure reaches the status.
func TestSnapshotStillRunningCountsAsTaken(t *testing.T) {
	const name = "scheduled-20261125-0300"
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_snapshot/monocle", 200, `{"monocle":{"type":"fs","settings":{"location":"`+resources.BackupMountPath+`"}}}`)
	srv.Reply("GET", "/_cat/indices/monocle*", 200, `[{"health":"yellow","status":"open","index":"monocle.config","uuid":"u","pri":"1","rep":"1",`+
		`"docs.count":"1","docs.deleted":"0","store.size":"5120","pri.store.size":"5120"}]`)
	// SnapshotsService.ensureSnapshotNameNotRunning (Elasticsearch 7.17), as
	// InvalidSnapshotNameException renders it.
	srv.Reply("PUT", "/_snapshot/monocle/"+name, 400, `{"error":{"root_cause":[{"type":"invalid_snapshot_name_exception",`+
		`"reason":"[monocle:`+name+`] Invalid snapshot name [`+name+`], snapshot with the same name is already in-progress"}],`+
		`"type":"invalid_snapshot_name_exception","reason":"[monocle:`+name+`] Invalid snapshot name [`+name+`], snapshot with the same name is already in-progress"},"status":400}`)
	srv.Reply("GET", "/_snapshot/monocle/_all", 200, `{"snapshots":[{"snapshot":"`+name+`","uuid":"kV3sWq4bQk2m1nJ7rT9yXw","repository":"monocle",`+
		`"indices":["monocle.config"],"data_streams":[],"include_global_state":false,"state":"IN_PROGRESS","start_time":"2026-11-25T03:00:00.250Z",`+
		`"start_time_in_millis":1795575600250,"end_time":"1970-01-01T00:00:00.000Z","end_time_in_millis":0,"duration_in_millis":0,"failures":[],`+
		`"shards":{"total":0,"failed":0,"successful":0},"feature_states":[]}],"total":1,"remaining":0}`)
	client, err := elastic.New(srv.URL, srv.Transport())
	if err != nil {
		t.Fatal(err)
	}
	m := backupMonocle("0 3 * * *")
	slot := metav1.NewTime(time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC))
	m.Status.Backup = &monoclev1alpha1.BackupStatus{Schedule: "0 3 * * *", NextScheduled: &slot}
	now := slot.Add(time.Minute)
	p := day2.PlanBackup(m, now)
	if p.Take != name {
		t.Fatalf("take %q, want %s", p.Take, name)
	}
	out := operand.RunSnapshots(context.Background(), client, p, nil)
	if !out.Taken || out.TakeErr != "" {
		t.Fatalf("taken %v, takeErr %q; want taken", out.Taken, out.TakeErr)
	}
	r := day2.BackupStatus(m, &out, now)
	if r.Status.LastFailure != nil || r.Status.Running != name || r.Condition.Reason == reasons.BackupFailed {
		t.Errorf("status %+v, condition %s: want %s running and no failure", r.Status, r.Condition.Reason, name)
	}
	if r.Status.NextScheduled == nil || !r.Status.NextScheduled.Time.Equal(slot.Add(24*time.Hour)) {
		t.Errorf("nextScheduled = %v, want the next day's slot", r.Status.NextScheduled)
	}
}

// TestUnreadableSnapshotsLeftAlone: a scheduled snapshot whose metadata Elasticsearch cannot
// read neither stops the listing nor is deleted or counted by retention; the BackupReady
// message names it and status.backup.snapshots counts it.
func TestUnreadableSnapshotsLeftAlone(t *testing.T) {
	for _, unreadable := range []string{testkit.SnapshotCorrupt, testkit.SnapshotBlobMissing} {
		t.Run(unreadable, func(t *testing.T) {
			m := backupMonocle("@daily")
			m.Spec.Backup.Keep = ptr.To[int32](1)
			f, client := fakeElastic(t, m)
			base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			put := func(name string, day int, unreadable string) {
				at := base.Add(time.Duration(day) * 24 * time.Hour)
				f.PutSnapshot("ns", "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: name,
					Indices: []string{"monocle.config"}, Start: at, End: at.Add(time.Minute), Unreadable: unreadable})
			}
			put("scheduled-20261101-0000", 0, "")
			put("scheduled-20261102-0000", 1, unreadable)
			put("scheduled-20261103-0000", 2, "")
			put("scheduled-20261104-0000", 3, unreadable)

			out := operand.RunSnapshots(context.Background(), client, day2.PlanBackup(m, base), nil)
			if !out.Listed || out.TakeErr != "" || strings.Join(out.Unreadable, ",") != "scheduled-20261102-0000,scheduled-20261104-0000" {
				t.Fatalf("listed %v, takeErr %q, unreadable %v", out.Listed, out.TakeErr, out.Unreadable)
			}
			var names []string
			for _, s := range f.Snapshots("ns", "m", resources.BackupRepositoryName) {
				names = append(names, s.Name)
			}
			// keep 1: the newest readable success stays, the older readable one goes; the
			// unreadable ones, even the newest, neither go nor count.
			if got, want := strings.Join(names, ","), "scheduled-20261102-0000,scheduled-20261103-0000,scheduled-20261104-0000"; got != want {
				t.Errorf("kept %s, want %s", got, want)
			}
			r := day2.BackupStatus(m, &out, base)
			if r.Status.Snapshots != 3 || r.Status.LastSuccessful == nil || r.Status.LastSuccessful.Name != "scheduled-20261103-0000" {
				t.Errorf("status %d snapshots, last %+v; want 3, scheduled-20261103-0000", r.Status.Snapshots, r.Status.LastSuccessful)
			}
			if r.Condition.Reason != reasons.BackupSucceeded || !strings.Contains(r.Condition.Message, "cannot read 2 snapshots") ||
				!strings.Contains(r.Condition.Message, "scheduled-20261102-0000, scheduled-20261104-0000") {
				t.Errorf("condition %s %q, want BackupSucceeded naming the unreadable snapshots", r.Condition.Reason, r.Condition.Message)
			}
		})
	}
}

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
