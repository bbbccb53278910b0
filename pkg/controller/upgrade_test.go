package controller

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

const (
	oldMonocleImage = "quay.io/change-metrics/monocle:1.11.1"
	newMonocleImage = "quay.io/change-metrics/monocle:1.11.2"
)

// deploymentOf is a Deployment running image with replicas pods, all ready and rolled out.
func deploymentOf(image string, replicas int32) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Generation, d.Status.ObservedGeneration = 2, 2
	d.Spec.Replicas = ptr.To(replicas)
	d.Spec.Template.Spec.Containers = []corev1.Container{{Image: image}}
	d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas = replicas, replicas, replicas
	return d
}

// upgradeMonocle is Monocle "m" asking for image whose status says the API runs running,
// with spec.backup when backup is set and the upgrade status st.
func upgradeMonocle(image, running string, backup bool, st *monoclev1alpha1.UpgradeStatus) *monoclev1alpha1.Monocle {
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}}
	m.Spec.Image = image
	m.Status.API.Image = running
	if backup {
		m.Spec.Backup = &monoclev1alpha1.BackupSpec{}
	}
	m.Status.Upgrade = st
	return m
}

// TestUpgradePhases walks an upgrade from 1.11.1 to 1.11.2 with backups through its phases,
// each from the status the previous one left, and checks what each builds: never the new
// API before the crawler is stopped, never two API versions (Recreate), never the new
// crawler before the new API is ready.
func TestUpgradePhases(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	snap := upgradeSnapshotName(newMonocleImage)
	listed := func(state elastic.SnapshotState) *backupOutcome {
		return &backupOutcome{listed: true, snapshots: []elastic.Snapshot{{Name: snap, State: state, Reason: "disk full"}}}
	}

	// The image changes: the status records the upgrade; nothing moves yet.
	m := upgradeMonocle(newMonocleImage, oldMonocleImage, true, nil)
	step := planUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), nil, false, now)
	if st := step.status; st == nil || st.Phase != monoclev1alpha1.UpgradeBackingUp || st.From != oldMonocleImage || st.To != newMonocleImage || st.Snapshot != snap {
		t.Fatalf("new upgrade: status %+v", step.status)
	}
	if step.apiImage != oldMonocleImage || step.crawlerImage != oldMonocleImage || step.stopCrawler || step.apiRecreate {
		t.Errorf("new upgrade builds %+v, want everything as it runs", step)
	}
	if step.condition.Status != metav1.ConditionFalse || step.condition.Reason != reasons.Upgrading {
		t.Errorf("condition %+v", step.condition)
	}

	// BackingUp: the snapshot is asked for until it succeeds.
	m.Status.Upgrade = step.status
	step = planUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), listed(elastic.SnapshotInProgress), false, now)
	if step.snapshot != snap || step.status.Phase != monoclev1alpha1.UpgradeBackingUp || step.apiImage != oldMonocleImage {
		t.Fatalf("snapshot running: %+v", step)
	}
	step = planUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), listed(elastic.SnapshotSuccess), false, now)
	if step.status.Phase != monoclev1alpha1.UpgradeStoppingCrawler || step.apiImage != oldMonocleImage {
		t.Fatalf("snapshot done: %+v", step)
	}

	// StoppingCrawler: the crawler goes to 0 on its old image; the API stays.
	m.Status.Upgrade = step.status
	step = planUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), nil, false, now)
	if !step.stopCrawler || step.crawlerImage != oldMonocleImage || step.apiImage != oldMonocleImage || step.status.Phase != monoclev1alpha1.UpgradeStoppingCrawler {
		t.Fatalf("crawler still running: %+v", step)
	}
	step = planUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 0), nil, false, now)
	if step.status.Phase != monoclev1alpha1.UpgradeReplacingAPI || step.apiImage != oldMonocleImage {
		t.Fatalf("crawler stopped: %+v", step)
	}

	// ReplacingAPI: the new image with Recreate; the crawler stays stopped.
	m.Status.Upgrade = step.status
	step = planUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 0), nil, false, now)
	if !step.apiRecreate || step.apiImage != "" || !step.stopCrawler || step.crawlerImage != oldMonocleImage {
		t.Fatalf("replacing the API: %+v", step)
	}
	notReady := deploymentOf(newMonocleImage, 1)
	notReady.Status.ReadyReplicas = 0
	if step = planUpgrade(m, notReady, deploymentOf(oldMonocleImage, 0), nil, false, now); step.status.Phase != monoclev1alpha1.UpgradeReplacingAPI {
		t.Fatalf("new API not ready yet: phase %s", step.status.Phase)
	}
	step = planUpgrade(m, deploymentOf(newMonocleImage, 1), deploymentOf(oldMonocleImage, 0), nil, false, now)
	if step.status.Phase != monoclev1alpha1.UpgradeStartingCrawler {
		t.Fatalf("new API ready: phase %s", step.status.Phase)
	}

	// StartingCrawler: everything on the spec's images.
	m.Status.Upgrade = step.status
	step = planUpgrade(m, deploymentOf(newMonocleImage, 1), deploymentOf(oldMonocleImage, 0), nil, false, now)
	if step.apiImage != "" || step.crawlerImage != "" || step.stopCrawler || step.apiRecreate {
		t.Fatalf("starting the crawler: %+v", step)
	}
	step = planUpgrade(m, deploymentOf(newMonocleImage, 1), deploymentOf(newMonocleImage, 1), nil, false, now)
	if step.status.Phase != monoclev1alpha1.UpgradeSucceeded || step.status.CompletionTime == nil ||
		step.condition.Status != metav1.ConditionTrue || step.condition.Reason != reasons.UpgradeSucceeded {
		t.Fatalf("done: %+v %+v", step.status, step.condition)
	}
	m.Status.Upgrade, m.Status.API.Image = step.status, newMonocleImage
	if step = planUpgrade(m, deploymentOf(newMonocleImage, 1), deploymentOf(newMonocleImage, 1), nil, false, now); step.status.Phase != monoclev1alpha1.UpgradeSucceeded || step.apiImage != "" {
		t.Errorf("after success: %+v", step)
	}
}

func TestUpgradeBlockedByAFailedSnapshot(t *testing.T) {
	now := time.Now()
	snap := upgradeSnapshotName(newMonocleImage)
	m := upgradeMonocle(newMonocleImage, oldMonocleImage, true, &monoclev1alpha1.UpgradeStatus{From: oldMonocleImage, To: newMonocleImage,
		Phase: monoclev1alpha1.UpgradeBackingUp, Snapshot: snap})
	failed := &backupOutcome{listed: true, snapshots: []elastic.Snapshot{{Name: snap, State: elastic.SnapshotFailed, Reason: "disk full"}}}
	step := planUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), failed, false, now)
	if step.status.Phase != monoclev1alpha1.UpgradeBlocked || !strings.Contains(step.status.Message, "disk full") ||
		step.condition.Reason != reasons.UpgradeBlocked || step.apiImage != oldMonocleImage || step.crawlerImage != oldMonocleImage {
		t.Fatalf("failed snapshot: %+v %+v", step.status, step.condition)
	}
	m.Status.Upgrade = step.status
	if step := planUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), failed, false, now); step.status.Phase != monoclev1alpha1.UpgradeBlocked {
		t.Errorf("blocked upgrade moved on by itself: %s", step.status.Phase)
	}
	m.Annotations = map[string]string{monoclev1alpha1.UpgradeWithoutBackupAnnotation: "true"}
	if step := planUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), failed, false, now); step.status.Phase != monoclev1alpha1.UpgradeStoppingCrawler {
		t.Errorf("with the annotation: phase %s, want StoppingCrawler", step.status.Phase)
	}
}

func TestUpgradeRefusesDowngrades(t *testing.T) {
	tests := map[string]struct {
		from, to string
		refused  bool
	}{
		"1.11.2 to 1.10.0: config index 7 to 5": {from: newMonocleImage, to: "quay.io/change-metrics/monocle:1.10.0", refused: true},
		"1.10.0 to 1.9.0":                       {from: "quay.io/change-metrics/monocle:1.10.0", to: "quay.io/change-metrics/monocle:1.9.0", refused: true},
		"1.11.2 to 1.11.0: same config index":   {from: newMonocleImage, to: "quay.io/change-metrics/monocle:1.11.0"},
		"1.9.0 to 1.11.2: an upgrade":           {from: "quay.io/change-metrics/monocle:1.9.0", to: newMonocleImage},
		"to latest: cannot tell":                {from: newMonocleImage, to: "quay.io/change-metrics/monocle:latest"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := upgradeMonocle(tc.to, tc.from, false, nil)
			step := planUpgrade(m, deploymentOf(tc.from, 1), deploymentOf(tc.from, 1), nil, false, time.Now())
			refused := step.condition.Reason == reasons.MonocleDowngrade
			if refused != tc.refused {
				t.Fatalf("refused %v, want %v (%+v)", refused, tc.refused, step.condition)
			}
			if refused && (step.apiImage != tc.from || step.crawlerImage != tc.from || step.status != nil) {
				t.Errorf("a refused downgrade builds %q/%q with status %+v; want the running images, no upgrade", step.apiImage, step.crawlerImage, step.status)
			}
			if !refused && (step.status == nil || step.status.Phase != monoclev1alpha1.UpgradeStoppingCrawler) {
				t.Errorf("upgrade without backups: status %+v, want StoppingCrawler", step.status)
			}
		})
	}
}

// TestNoUpgradeWithoutAnImageChange: a new Monocle, a config change (same image), an image
// written into the Deployment by someone else and a restore do not go through the phases.
func TestNoUpgradeWithoutAnImageChange(t *testing.T) {
	m := upgradeMonocle(newMonocleImage, newMonocleImage, true, nil)
	fresh := upgradeMonocle(newMonocleImage, "", true, nil)
	restoring := upgradeMonocle(newMonocleImage, oldMonocleImage, true, nil)
	for name, step := range map[string]upgradeStep{
		"new Monocle": planUpgrade(fresh, nil, nil, nil, false, time.Now()),
		"same image":  planUpgrade(m, deploymentOf(newMonocleImage, 1), deploymentOf(newMonocleImage, 1), nil, false, time.Now()),
		// Someone else wrote another image into the Deployment: drift, repaired at once.
		"drift":           planUpgrade(m, deploymentOf("example.com/other:1.0.0", 1), deploymentOf(newMonocleImage, 1), nil, false, time.Now()),
		"while restoring": planUpgrade(restoring, deploymentOf(oldMonocleImage, 0), deploymentOf(oldMonocleImage, 0), nil, true, time.Now()),
	} {
		if step.status != nil || step.apiImage != "" || step.crawlerImage != "" || step.apiRecreate || step.stopCrawler ||
			step.condition.Status != metav1.ConditionTrue {
			t.Errorf("%s: %+v", name, step)
		}
	}
}

func TestAPIRecreateBuildsRecreate(t *testing.T) {
	m := upgradeMonocle(newMonocleImage, "", false, nil)
	rolling := resources.NewAPIDeployment(m, resources.Inputs{})
	recreate := resources.NewAPIDeployment(m, resources.Inputs{APIRecreate: true, APIImage: oldMonocleImage})
	if rolling.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || recreate.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategies %s and %s", rolling.Spec.Strategy.Type, recreate.Spec.Strategy.Type)
	}
	if img := recreate.Spec.Template.Spec.Containers[0].Image; img != oldMonocleImage {
		t.Errorf("image override: %s", img)
	}
}
