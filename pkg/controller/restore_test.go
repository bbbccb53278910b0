package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
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
func restoreStep(t *testing.T, m *monoclev1alpha1.Monocle, f *testkit.FakeElasticsearch) (*monoclev1alpha1.Monocle, restoreResult) {
	t.Helper()
	tr := f.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	r := newHealthReads(context.Background(), OperandOptions{Interval: time.Hour, Timeout: 5 * time.Second, Transport: tr}, nil)
	p := backupPlan{restore: planRestore(m, true, true)}
	client, err := elastic.New(elasticHealthURL(m), tr)
	if err != nil {
		t.Fatal(err)
	}
	out := r.runBackup(klog.Background(), cache.MetaObjectToName(m), client, p)
	res := restoreStatus(m, p.restore, &out.restore, time.Now())
	next := m.DeepCopy()
	next.Status.Restore = res.status
	return next, res
}

func TestRestoreSteps(t *testing.T) {
	m := restoreMonocle("nightly")
	f, _ := fakeElastic(t, m)
	f.SetDocs("ns", "m", "monocle.changes.1.demo", 5)
	f.PutSnapshot("ns", "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: "nightly",
		Indices: []string{"monocle.changes.1.demo", "monocle.config"}, Docs: map[string]int64{"monocle.changes.1.demo": 42}})

	// The first sync records Pending; no step runs before the status holds it.
	res := restoreStatus(m, restorePlan{}, nil, time.Now())
	if res.status.Phase != monoclev1alpha1.RestorePending || res.condition.Reason != reasons.RestorePending {
		t.Fatalf("first status: %s/%s", res.status.Phase, res.condition.Reason)
	}
	if p := planRestore(m, true, true); p.phase != "" {
		t.Fatalf("a step was planned before the status held Pending: %+v", p)
	}
	m.Status.Restore = res.status
	if p := planRestore(m, false, true); p.phase != "" {
		t.Errorf("a step was planned while the API or the crawler has pods: %+v", p)
	}
	if p := planRestore(m, true, false); p.phase != "" {
		t.Errorf("a step was planned while Elasticsearch is not ready: %+v", p)
	}

	// Pending: the snapshot's open indices are closed.
	m, res = restoreStep(t, m, f)
	if res.status.Phase != monoclev1alpha1.RestoreRestoring || strings.Join(res.status.Indices, ",") != "monocle.changes.1.demo,monocle.config" {
		t.Fatalf("after the Pending step: %s %v %q", res.status.Phase, res.status.Indices, res.status.Message)
	}
	for _, ix := range f.Indices("ns", "m") {
		if ix.Open {
			t.Errorf("index %s is open after the Pending step", ix.Name)
		}
	}

	// Restoring, held in Elasticsearch: started once, not done.
	f.HoldRestores("ns", "m", true)
	held, res := restoreStep(t, m, f)
	if res.status.Phase != monoclev1alpha1.RestoreRestoring || res.condition.Reason != reasons.Restoring {
		t.Errorf("while Elasticsearch recovers: %s/%s", res.status.Phase, res.condition.Reason)
	}
	// The operator died before writing anything: the step runs again.
	_, res = restoreStep(t, held, f)
	if n := f.Restores("ns", "m", resources.BackupRepositoryName, "nightly"); n != 1 {
		t.Errorf("%d restores after a repeated Restoring step, want 1", n)
	}
	f.HoldRestores("ns", "m", false)
	m, res = restoreStep(t, held, f)
	if res.status.Phase != monoclev1alpha1.RestoreSucceeded || res.condition.Status != metav1.ConditionTrue {
		t.Fatalf("after the restore: %s %s %q", res.status.Phase, res.condition.Status, res.status.Message)
	}
	if n := f.Restores("ns", "m", resources.BackupRepositoryName, "nightly"); n != 1 {
		t.Errorf("%d restores, want 1", n)
	}
	for _, ix := range f.Indices("ns", "m") {
		if ix.Name == "monocle.changes.1.demo" && (!ix.Open || ix.Docs != 42) {
			t.Errorf("restored index: open %v, %d docs, want open with the snapshot's 42", ix.Open, ix.Docs)
		}
	}
	if restoreWanted(m) {
		t.Error("a succeeded restore is still wanted")
	}
	if p := planRestore(m, true, true); p.phase != "" {
		t.Errorf("a step was planned after success: %+v", p)
	}
}

func TestRestoreOfMissingSnapshotFails(t *testing.T) {
	m := restoreMonocle("nope")
	f, _ := fakeElastic(t, m)
	m.Status.Restore = restoreStatus(m, restorePlan{}, nil, time.Now()).status
	m, res := restoreStep(t, m, f)
	if res.status.Phase != monoclev1alpha1.RestoreFailed || res.condition.Reason != reasons.RestoreFailed || !strings.Contains(res.status.Message, "nope") {
		t.Fatalf("missing snapshot: %s/%s %q", res.status.Phase, res.condition.Reason, res.status.Message)
	}
	if !restoreWanted(m) {
		t.Error("a failed restore no longer holds the API and the crawler")
	}
	for _, ix := range f.Indices("ns", "m") {
		if !ix.Open {
			t.Errorf("index %s was closed for a snapshot that does not exist", ix.Name)
		}
	}
	// Another snapshot name starts over.
	m.Spec.Restore.Snapshot = "other"
	if res := restoreStatus(m, restorePlan{}, nil, time.Now()); res.status.Phase != monoclev1alpha1.RestorePending {
		t.Errorf("a new snapshot name: phase %s, want Pending", res.status.Phase)
	}
}

func TestRestoreFromAnotherRepository(t *testing.T) {
	m := restoreMonocle("theirs")
	m.Spec.Backup = nil
	m.Spec.Restore.Repository = &monoclev1alpha1.BackupRepository{Volume: &monoclev1alpha1.BackupVolume{ClaimName: "old-backup"}}
	f, _ := fakeElastic(t, m)
	f.PutSnapshot("ns", "m", resources.RestoreSourceRepositoryName, testkit.FakeSnapshot{Name: "theirs", Indices: []string{"monocle.config"}})
	m.Status.Restore = restoreStatus(m, restorePlan{}, nil, time.Now()).status
	m, _ = restoreStep(t, m, f)
	m, res := restoreStep(t, m, f)
	if res.status.Phase != monoclev1alpha1.RestoreSucceeded {
		t.Fatalf("phase %s %q", res.status.Phase, res.status.Message)
	}
	typ, settings, ok := f.Repository("ns", "m", resources.RestoreSourceRepositoryName)
	if !ok || typ != "fs" || settings["readonly"] != "true" || settings["location"] != resources.RestoreSourceMountPath {
		t.Errorf("restore-source = %v %s %v, want a read-only fs repository at %s", ok, typ, settings, resources.RestoreSourceMountPath)
	}
	if n := f.Restores("ns", "m", resources.RestoreSourceRepositoryName, "theirs"); n != 1 {
		t.Errorf("%d restores, want 1", n)
	}
}

func TestWorkloadsStopped(t *testing.T) {
	d := func(replicas int32, generation, observed int64) *appsv1.Deployment {
		x := &appsv1.Deployment{}
		x.Generation, x.Status.ObservedGeneration, x.Status.Replicas = generation, observed, replicas
		return x
	}
	if !workloadsStopped(nil, d(0, 2, 2)) {
		t.Error("no Deployment and one without pods: not stopped")
	}
	if workloadsStopped(d(1, 2, 2)) {
		t.Error("a Deployment with a pod counts as stopped")
	}
	if workloadsStopped(d(0, 3, 2)) {
		t.Error("a Deployment whose scale-down is not observed yet counts as stopped")
	}
	created := d(0, 1, 0)
	created.Spec.Replicas = func(v int32) *int32 { return &v }(0)
	if !workloadsStopped(created) {
		t.Error("a Deployment created with zero replicas, not observed yet, does not count as stopped")
	}
	scaledDown := d(0, 2, 1)
	scaledDown.Spec.Replicas = created.Spec.Replicas
	if workloadsStopped(scaledDown) {
		t.Error("a Deployment scaled down to zero, not observed yet, counts as stopped")
	}
}
