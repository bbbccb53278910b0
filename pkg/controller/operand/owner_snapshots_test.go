package operand_test

import (
	"context"
	"strings"
	"testing"
	"time"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestSnapshotLeavesTheOwnerRecordOut: a snapshot of a cluster with an owner record holds
// Monocle's indices only.
func TestSnapshotLeavesTheOwnerRecordOut(t *testing.T) {
	m := backupMonocle("")
	m.Annotations = map[string]string{monoclev1alpha1.BackupAnnotation: "2026-11-25"}
	f, client := fakeElastic(t, m)
	f.Cluster(m.Name+"-elastic."+m.Namespace+".svc").SetMeta(elastic.OwnerIndex, map[string]string{"uid": string(m.UID), "namespace": "ns", "name": "m"})
	operand.RunSnapshots(context.Background(), client, day2.PlanBackup(m, time.Now()), nil)
	snaps := f.Snapshots("ns", "m", resources.BackupRepositoryName)
	if len(snaps) != 1 || strings.Join(snaps[0].Indices, ",") != "monocle.changes.1.demo,monocle.config" {
		t.Errorf("snapshots = %+v, want one of the two Monocle indices", snaps)
	}
}

// TestRestoreLeavesTheOwnerRecordAlone: a snapshot that holds another cluster's owner record
// (taken by hand, or by an operator that did not leave it out) restores Monocle's indices
// only: this cluster's record stays as it was, open.
func TestRestoreLeavesTheOwnerRecordAlone(t *testing.T) {
	m := restoreMonocle("theirs")
	f, _ := fakeElastic(t, m)
	cluster := f.Cluster(m.Name + "-elastic." + m.Namespace + ".svc")
	mine := map[string]string{"uid": string(m.UID), "namespace": "ns", "name": "m"}
	cluster.SetMeta(elastic.OwnerIndex, mine)
	f.PutSnapshot("ns", "m", resources.BackupRepositoryName, testkit.FakeSnapshot{Name: "theirs",
		Indices: []string{elastic.OwnerIndex, "monocle.changes.1.demo", "monocle.config"}})
	m.Status.Restore = day2.RestoreStatus(m, operand.RestorePlan{}, nil, time.Now()).Status
	m, res := restoreStep(t, m, f)
	if strings.Join(res.Status.Indices, ",") != "monocle.changes.1.demo,monocle.config" {
		t.Errorf("after the Pending step: indices %v, want the two Monocle indices", res.Status.Indices)
	}
	_, res = restoreStep(t, m, f)
	if res.Status.Phase != monoclev1alpha1.RestoreSucceeded {
		t.Fatalf("after the Restoring step: %s %q", res.Status.Phase, res.Status.Message)
	}
	for _, ix := range f.Indices("ns", "m") {
		if ix.Name == elastic.OwnerIndex && !ix.Open {
			t.Error("the owner record was closed")
		}
	}
	if meta, ok := cluster.Meta(elastic.OwnerIndex); !ok || meta["uid"] != string(m.UID) {
		t.Errorf("the owner record is %v (exists %v), want this Monocle's", meta, ok)
	}
}
