package operand_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
)

// TestRemovedWorkspaceIndices: the index of a workspace the config no longer has is listed,
// deleted once when the annotation names it, and a workspace the config has is refused.
func TestRemovedWorkspaceIndices(t *testing.T) {
	m := backupMonocle("")
	f, client := fakeElastic(t, m)
	f.SetIndices("ns", "m", "monocle.config", "monocle.changes.1.demo", "monocle.changes.1.old")
	f.SetDocs("ns", "m", "monocle.changes.1.old", 12)
	cfg, err := monocleconfig.Parse("workspaces:\n  - name: demo\n    crawlers: []\n")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()

	read, deleted := operand.DeleteThenList(ctx, klog.Background(), client, "")
	unused := day2.UnusedIndices(m, cfg, read)
	if deleted != "" || len(unused) != 1 || unused[0].Workspace != "old" || unused[0].Index != "monocle.changes.1.old" || unused[0].Docs != 12 {
		t.Fatalf("unused %+v, deleted %q", unused, deleted)
	}
	if d := day2.PlanIndexDeletion(m, cfg); d.Request != "" {
		t.Fatalf("a deletion without the annotation: %+v", d)
	}

	// A workspace the config has: refused, nothing deleted.
	m.Annotations = map[string]string{monoclev1alpha1.DeleteIndexAnnotation: "demo"}
	d := day2.PlanIndexDeletion(m, cfg)
	if d.Index != "" || !strings.Contains(d.Refused, "in config.yaml") {
		t.Fatalf("deleting demo: %+v", d)
	}
	m.Status.IndexDeletion = day2.DeletionStatus(m, d, "", now)
	if m.Status.IndexDeletion == nil || m.Status.IndexDeletion.Refused == "" {
		t.Fatalf("status %+v", m.Status.IndexDeletion)
	}
	if d := day2.PlanIndexDeletion(m, cfg); d.Request != "" {
		t.Errorf("a refused request is asked again: %+v", d)
	}
	for _, bad := range []string{"../monocle.config", "*"} {
		m.Annotations[monoclev1alpha1.DeleteIndexAnnotation] = bad
		if d := day2.PlanIndexDeletion(m, cfg); d.Index != "" {
			t.Errorf("%q would delete %s", bad, d.Index)
		}
	}

	// The removed workspace: deleted once.
	m.Annotations[monoclev1alpha1.DeleteIndexAnnotation] = "old"
	d = day2.PlanIndexDeletion(m, cfg)
	if d.Index != "monocle.changes.1.old" {
		t.Fatalf("deleting old: %+v", d)
	}
	read, deleted = operand.DeleteThenList(ctx, klog.Background(), client, d.Index)
	m.Status.IndexDeletion = day2.DeletionStatus(m, d, deleted, now)
	if deleted != d.Index || len(day2.UnusedIndices(m, cfg, read)) != 0 || m.Status.IndexDeletion.Index != d.Index {
		t.Fatalf("after the deletion: deleted %q, unused %+v, status %+v", deleted, day2.UnusedIndices(m, cfg, read), m.Status.IndexDeletion)
	}
	for _, ix := range f.Indices("ns", "m") {
		if ix.Name == "monocle.changes.1.old" {
			t.Error("the index is still there")
		}
	}
	if d := day2.PlanIndexDeletion(m, cfg); d.Request != "" {
		t.Errorf("a served request is asked again: %+v", d)
	}
	// Not read, or no config: the status stays.
	m.Status.UnusedIndices = unused
	if got := day2.UnusedIndices(m, nil, read); len(got) != 1 {
		t.Errorf("without a parsed config: %+v", got)
	}
}
