package operand_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// restoreMonocle is Monocle "m" with spec.backup on a volume and spec.restore of snapshot.
func restoreMonocle(snapshot string) *monoclev1alpha1.Monocle {
	m := backupMonocle("")
	m.Spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: snapshot}
	return m
}

// restoreStep runs the step due for m against the fake and returns m with the status the
// sync would write.
func restoreStep(t *testing.T, m *monoclev1alpha1.Monocle, f *testkit.FakeElasticsearch) (*monoclev1alpha1.Monocle, day2.RestoreResult) {
	t.Helper()
	tr := f.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	w := operand.New(context.Background(), operand.Options{Interval: time.Hour, Timeout: 5 * time.Second, Transport: tr}, nil)
	p := operand.Plan{Restore: day2.PlanRestore(m, true, true)}
	client, err := elastic.NewClient(elastic.Config{URL: bundledTarget(m).URL, Username: bundledTarget(m).Username,
		Password: bundledTarget(m).Password, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	out := operand.BackUp(w, m, client, p)
	res := day2.RestoreStatus(m, p.Restore, &out.Restore, time.Now())
	next := m.DeepCopy()
	next.Status.Restore = res.Status
	return next, res
}

func TestRestoreSteps(t *testing.T) {
	m := restoreMonocle("nightly")
	f, _ := fakeElastic(t, m)
	f.SetDocs("ns", "m", "monocle.changes.1.demo", 5)
	f.PutSnapshot("ns", "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: "nightly",
		Indices: []string{"monocle.changes.1.demo", "monocle.config"}, Docs: map[string]int64{"monocle.changes.1.demo": 42}})

	// The first sync records Pending; no step runs before the status holds it.
	res := day2.RestoreStatus(m, operand.RestorePlan{}, nil, time.Now())
	if res.Status.Phase != monoclev1alpha1.RestorePending || res.Condition.Reason != reasons.RestorePending {
		t.Fatalf("first status: %s/%s", res.Status.Phase, res.Condition.Reason)
	}
	if p := day2.PlanRestore(m, true, true); p.Phase != "" {
		t.Fatalf("a step was planned before the status held Pending: %+v", p)
	}
	m.Status.Restore = res.Status
	if p := day2.PlanRestore(m, false, true); p.Phase != "" {
		t.Errorf("a step was planned while the API or the crawler has pods: %+v", p)
	}
	if p := day2.PlanRestore(m, true, false); p.Phase != "" {
		t.Errorf("a step was planned while Elasticsearch is not ready: %+v", p)
	}

	// Pending: the snapshot's open indices are closed.
	m, res = restoreStep(t, m, f)
	if res.Status.Phase != monoclev1alpha1.RestoreRestoring || strings.Join(res.Status.Indices, ",") != "monocle.changes.1.demo,monocle.config" {
		t.Fatalf("after the Pending step: %s %v %q", res.Status.Phase, res.Status.Indices, res.Status.Message)
	}
	for _, ix := range f.Indices("ns", "m") {
		if ix.Open {
			t.Errorf("index %s is open after the Pending step", ix.Name)
		}
	}

	// Restoring, held in Elasticsearch: started once, not done.
	f.HoldRestores("ns", "m", true)
	held, res := restoreStep(t, m, f)
	if res.Status.Phase != monoclev1alpha1.RestoreRestoring || res.Condition.Reason != reasons.Restoring {
		t.Errorf("while Elasticsearch recovers: %s/%s", res.Status.Phase, res.Condition.Reason)
	}
	// The operator died before writing anything: the step runs again.
	_, res = restoreStep(t, held, f)
	if n := f.Restores("ns", "m", resources.BackupRepositoryName, "nightly"); n != 1 {
		t.Errorf("%d restores after a repeated Restoring step, want 1", n)
	}
	f.HoldRestores("ns", "m", false)
	m, res = restoreStep(t, held, f)
	if res.Status.Phase != monoclev1alpha1.RestoreSucceeded || res.Condition.Status != metav1.ConditionTrue {
		t.Fatalf("after the restore: %s %s %q", res.Status.Phase, res.Condition.Status, res.Status.Message)
	}
	if n := f.Restores("ns", "m", resources.BackupRepositoryName, "nightly"); n != 1 {
		t.Errorf("%d restores, want 1", n)
	}
	for _, ix := range f.Indices("ns", "m") {
		if ix.Name == "monocle.changes.1.demo" && (!ix.Open || ix.Docs != 42) {
			t.Errorf("restored index: open %v, %d docs, want open with the snapshot's 42", ix.Open, ix.Docs)
		}
	}
	if day2.RestoreWanted(m) {
		t.Error("a succeeded restore is still wanted")
	}
	if p := day2.PlanRestore(m, true, true); p.Phase != "" {
		t.Errorf("a step was planned after success: %+v", p)
	}
}

func TestRestoreOfMissingSnapshotFails(t *testing.T) {
	m := restoreMonocle("nope")
	f, _ := fakeElastic(t, m)
	m.Status.Restore = day2.RestoreStatus(m, operand.RestorePlan{}, nil, time.Now()).Status
	m, res := restoreStep(t, m, f)
	if res.Status.Phase != monoclev1alpha1.RestoreFailed || res.Condition.Reason != reasons.RestoreFailed || !strings.Contains(res.Status.Message, "nope") {
		t.Fatalf("missing snapshot: %s/%s %q", res.Status.Phase, res.Condition.Reason, res.Status.Message)
	}
	if !day2.RestoreWanted(m) {
		t.Error("a failed restore no longer holds the API and the crawler")
	}
	for _, ix := range f.Indices("ns", "m") {
		if !ix.Open {
			t.Errorf("index %s was closed for a snapshot that does not exist", ix.Name)
		}
	}
	// Another snapshot name starts over.
	m.Spec.Restore.Snapshot = "other"
	if res := day2.RestoreStatus(m, operand.RestorePlan{}, nil, time.Now()); res.Status.Phase != monoclev1alpha1.RestorePending {
		t.Errorf("a new snapshot name: phase %s, want Pending", res.Status.Phase)
	}
}

func TestRestoreFromAnotherRepository(t *testing.T) {
	m := restoreMonocle("theirs")
	m.Spec.Backup = nil
	m.Spec.Restore.Repository = &monoclev1alpha1.BackupRepository{Volume: &monoclev1alpha1.BackupVolume{ClaimName: "old-backup"}}
	f, _ := fakeElastic(t, m)
	f.PutSnapshot("ns", "m", resources.RestoreSourceRepositoryName, testkit.FakeSnapshot{Name: "theirs", Indices: []string{"monocle.config"}})
	m.Status.Restore = day2.RestoreStatus(m, operand.RestorePlan{}, nil, time.Now()).Status
	m, _ = restoreStep(t, m, f)
	m, res := restoreStep(t, m, f)
	if res.Status.Phase != monoclev1alpha1.RestoreSucceeded {
		t.Fatalf("phase %s %q", res.Status.Phase, res.Status.Message)
	}
	typ, settings, ok := f.Repository("ns", "m", resources.RestoreSourceRepositoryName)
	if !ok || typ != "fs" || settings["readonly"] != "true" || settings["location"] != resources.RestoreSourceMountPath {
		t.Errorf("restore-source = %v %s %v, want a read-only fs repository at %s", ok, typ, settings, resources.RestoreSourceMountPath)
	}
	if n := f.Restores("ns", "m", resources.RestoreSourceRepositoryName, "theirs"); n != 1 {
		t.Errorf("%d restores, want 1", n)
	}
}

// dsIndex is a backing index of the data stream ilm-history-5, which Elasticsearch 7.17
// creates by itself in every cluster: a hidden index, open, that a snapshot of another
// cluster holds too.
const dsIndex = ".ds-ilm-history-5-2021.12.16-000001"

// TestRestoreOfMonocleIndicesOnly restores a snapshot that also holds a hidden index open in
// this cluster, and a Monocle index that is hidden here: only the Monocle indices are
// restored, the hidden one closed first, and the restore succeeds once they are open again.
func TestRestoreOfMonocleIndicesOnly(t *testing.T) {
	m := restoreMonocle("theirs")
	f, _ := fakeElastic(t, m)
	f.SetHidden("ns", "m", dsIndex)
	f.SetHidden("ns", "m", "monocle.config")
	f.PutSnapshot("ns", "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: "theirs",
		Indices: []string{dsIndex, "monocle.changes.1.demo", "monocle.config"}, Docs: map[string]int64{"monocle.changes.1.demo": 7}})
	m.Status.Restore = day2.RestoreStatus(m, operand.RestorePlan{}, nil, time.Now()).Status

	m, res := restoreStep(t, m, f)
	if res.Status.Phase != monoclev1alpha1.RestoreRestoring || strings.Join(res.Status.Indices, ",") != "monocle.changes.1.demo,monocle.config" {
		t.Errorf("after the Pending step: %s %v %q; want Restoring the two Monocle indices", res.Status.Phase, res.Status.Indices, res.Status.Message)
	}
	for _, ix := range f.Indices("ns", "m") {
		if ix.Open != (ix.Name == dsIndex) {
			t.Errorf("after the Pending step, %s (hidden %v) open = %v; want only %s open", ix.Name, ix.Hidden, ix.Open, dsIndex)
		}
	}
	m, res = restoreStep(t, m, f)
	if res.Status.Phase != monoclev1alpha1.RestoreSucceeded {
		t.Fatalf("after the Restoring step: %s %q", res.Status.Phase, res.Status.Message)
	}
	if n := f.Restores("ns", "m", resources.BackupRepositoryName, "theirs"); n != 1 {
		t.Errorf("%d restores accepted, want 1", n)
	}
	for _, ix := range f.Indices("ns", "m") {
		if !ix.Open || (ix.Name == "monocle.changes.1.demo" && ix.Docs != 7) {
			t.Errorf("after the restore, %s: open %v with %d docs; want open, the workspace with the snapshot's 7", ix.Name, ix.Open, ix.Docs)
		}
	}
	if day2.RestoreWanted(m) {
		t.Error("a succeeded restore is still wanted")
	}
}

// TestRestoringStepOfAnOlderList runs a Restoring step whose index list, written before
// restores were limited to Monocle's indices, holds a hidden index open in this cluster: the
// step restores the Monocle indices only.
func TestRestoringStepOfAnOlderList(t *testing.T) {
	m := restoreMonocle("theirs")
	f, _ := fakeElastic(t, m)
	f.PutSnapshot("ns", "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: "theirs",
		Indices: []string{dsIndex, "monocle.changes.1.demo", "monocle.config"}})
	m.Status.Restore = day2.RestoreStatus(m, operand.RestorePlan{}, nil, time.Now()).Status
	m.Status.Restore.Phase = monoclev1alpha1.RestoreRestoring
	m.Status.Restore.Indices = []string{dsIndex, "monocle.changes.1.demo", "monocle.config"}
	// The Pending step found the Monocle indices missing.
	f.SetIndices("ns", "m")
	f.SetHidden("ns", "m", dsIndex)
	_, res := restoreStep(t, m, f)
	if res.Status.Phase != monoclev1alpha1.RestoreSucceeded || f.Restores("ns", "m", resources.BackupRepositoryName, "theirs") != 1 {
		t.Errorf("phase %s %q after %d restores; want Succeeded after 1", res.Status.Phase, res.Status.Message,
			f.Restores("ns", "m", resources.BackupRepositoryName, "theirs"))
	}
}

func TestRestoreOfSnapshotWithoutMonocleIndexFails(t *testing.T) {
	m := restoreMonocle("kibana")
	f, _ := fakeElastic(t, m)
	f.PutSnapshot("ns", "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: "kibana",
		Indices: []string{".kibana_1", dsIndex}})
	m.Status.Restore = day2.RestoreStatus(m, operand.RestorePlan{}, nil, time.Now()).Status
	_, res := restoreStep(t, m, f)
	if res.Status.Phase != monoclev1alpha1.RestoreFailed || !strings.Contains(res.Status.Message, "holds no Monocle index") ||
		!strings.Contains(res.Status.Message, ".kibana_1") {
		t.Fatalf("phase %s %q, want Failed saying the snapshot holds no Monocle index and what it holds", res.Status.Phase, res.Status.Message)
	}
	for _, ix := range f.Indices("ns", "m") {
		if !ix.Open {
			t.Errorf("index %s was closed for a snapshot without Monocle index", ix.Name)
		}
	}
}
