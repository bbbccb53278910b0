package kubectlmonocle

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

func TestFormatStatus(t *testing.T) {
	ago := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: testNow.Add(-d)} }
	full := monocle(func(m *monoclev1alpha1.Monocle) {
		m.Spec.Backup = &monoclev1alpha1.BackupSpec{Schedule: "@daily"}
		m.Spec.Hibernate = true
		m.Status = monoclev1alpha1.MonocleStatus{
			Version: "1.11.2", URL: "http://localhost:8090",
			API:           monoclev1alpha1.ComponentStatus{Image: "quay.io/change-metrics/monocle:1.11.2", Replicas: 2, ReadyReplicas: 1},
			Crawler:       monoclev1alpha1.ComponentStatus{Image: "quay.io/change-metrics/monocle:1.11.2"},
			Elasticsearch: monoclev1alpha1.ComponentStatus{Image: "docker.elastic.co/elasticsearch/elasticsearch:7.17.26", Replicas: 1, ReadyReplicas: 1},
			Conditions: []metav1.Condition{
				{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Hibernating", Message: "Stopping the API:\nthe crawler is stopped", LastTransitionTime: *ago(3 * time.Minute)},
				{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: *ago(49 * time.Hour)},
			},
			Hibernation: &monoclev1alpha1.HibernationStatus{Phase: monoclev1alpha1.HibernationHibernating, Stopped: []string{"crawler"}, Since: ago(3 * time.Minute), Message: "waiting for the API pods to go"},
			ElasticsearchCluster: &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchBundled,
				URL: "http://demo-elastic.ns.svc:9200", Authentication: monoclev1alpha1.ElasticsearchAuthenticationEnabled},
			ElasticsearchHealth: &monoclev1alpha1.ElasticsearchHealth{Status: "yellow", DiskUsedPercent: ptr.To[int32](87),
				DiskSize: ptr.To(resource.MustParse("10Gi")), IndicesSize: ptr.To(resource.MustParse("8Gi")), ReadOnlyIndices: []string{"monocle.changes.1.demo"}},
			Crawlers: []monoclev1alpha1.CrawlerStatus{
				{Workspace: "demo", Name: "gh", CrawledUntil: &metav1.Time{Time: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)}, LastProgressTime: ago(time.Hour),
					Errors: &monoclev1alpha1.CrawlerErrorsStatus{LastDay: 2, Total: 5, LastTime: ago(10 * time.Minute), LastEntity: "org/repo", LastMessage: "rate limited"}},
				{Workspace: "demo", Name: "gl"},
			},
			Backup: &monoclev1alpha1.BackupStatus{Repository: "volume demo-backup", Snapshots: 3,
				LastSuccessful: &monoclev1alpha1.SnapshotStatus{Name: "scheduled-20261126-0000", Time: ago(10 * time.Hour), Size: ptr.To(resource.MustParse("120Mi"))},
				LastFailure:    &monoclev1alpha1.SnapshotStatus{Name: "manual-0a1b2c3d", Time: ago(30 * time.Hour), Reason: "PARTIAL"},
				NextScheduled:  &metav1.Time{Time: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)}},
			Upgrade:       &monoclev1alpha1.UpgradeStatus{From: "1.10.0", To: "1.11.2", Phase: monoclev1alpha1.UpgradeSucceeded, StartTime: ago(72 * time.Hour)},
			Restore:       &monoclev1alpha1.RestoreStatus{Snapshot: "scheduled-20261120-0000", Phase: monoclev1alpha1.RestoreSucceeded, StartTime: ago(100 * time.Hour)},
			Maintenance:   []monoclev1alpha1.MaintenanceJobStatus{{Request: "recrawl-0a1b2c3d", Phase: monoclev1alpha1.JobSucceeded, StartTime: ago(5 * time.Hour)}},
			UnusedIndices: []monoclev1alpha1.UnusedIndex{{Workspace: "old", Index: "monocle.changes.1.old", Docs: 1200, Size: ptr.To(resource.MustParse("3Mi"))}},
		}
	})
	tests := map[string]*monoclev1alpha1.Monocle{
		"status-full.txt":  full,
		"status-empty.txt": monocle(nil),
	}
	for golden, m := range tests {
		t.Run(golden, func(t *testing.T) {
			f, err := run(t, []runtime.Object{m}, "status", "demo")
			if err != nil {
				t.Fatal(err)
			}
			if len(f.writes()) != 0 {
				t.Errorf("status wrote %v", f.writes())
			}
			expectGolden(t, golden, f.out.Bytes())
		})
	}
}

// expectGolden compares got with testdata/<name>, which -update rewrites.
func expectGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("status differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}
