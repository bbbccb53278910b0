package day2

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
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
	listed := func(state elastic.SnapshotState) *contract.BackupOutcome {
		return &contract.BackupOutcome{Listed: true, Snapshots: []elastic.Snapshot{{Name: snap, State: state, Reason: "disk full"}}}
	}

	// The image changes: the status records the upgrade; nothing moves yet.
	m := upgradeMonocle(newMonocleImage, oldMonocleImage, true, nil)
	step := PlanUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), nil, false, now)
	if st := step.Status; st == nil || st.Phase != monoclev1alpha1.UpgradeBackingUp || st.From != oldMonocleImage || st.To != newMonocleImage || st.Snapshot != snap {
		t.Fatalf("new upgrade: status %+v", step.Status)
	}
	if step.APIImage != oldMonocleImage || step.CrawlerImage != oldMonocleImage || step.StopCrawler || step.APIRecreate {
		t.Errorf("new upgrade builds %+v, want everything as it runs", step)
	}
	if step.Condition.Status != metav1.ConditionFalse || step.Condition.Reason != reasons.Upgrading {
		t.Errorf("condition %+v", step.Condition)
	}

	// BackingUp: the snapshot is asked for until it succeeds.
	m.Status.Upgrade = step.Status
	step = PlanUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), listed(elastic.SnapshotInProgress), false, now)
	if step.Snapshot != snap || step.Status.Phase != monoclev1alpha1.UpgradeBackingUp || step.APIImage != oldMonocleImage {
		t.Fatalf("snapshot running: %+v", step)
	}
	step = PlanUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), listed(elastic.SnapshotSuccess), false, now)
	if step.Status.Phase != monoclev1alpha1.UpgradeStoppingCrawler || step.APIImage != oldMonocleImage {
		t.Fatalf("snapshot done: %+v", step)
	}

	// StoppingCrawler: the crawler goes to 0 on its old image; the API stays.
	m.Status.Upgrade = step.Status
	step = PlanUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), nil, false, now)
	if !step.StopCrawler || step.CrawlerImage != oldMonocleImage || step.APIImage != oldMonocleImage || step.Status.Phase != monoclev1alpha1.UpgradeStoppingCrawler {
		t.Fatalf("crawler still running: %+v", step)
	}
	step = PlanUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 0), nil, false, now)
	if step.Status.Phase != monoclev1alpha1.UpgradeReplacingAPI || step.APIImage != oldMonocleImage {
		t.Fatalf("crawler stopped: %+v", step)
	}

	// ReplacingAPI: the new image with Recreate; the crawler stays stopped.
	m.Status.Upgrade = step.Status
	step = PlanUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 0), nil, false, now)
	if !step.APIRecreate || step.APIImage != "" || !step.StopCrawler || step.CrawlerImage != oldMonocleImage {
		t.Fatalf("replacing the API: %+v", step)
	}
	notReady := deploymentOf(newMonocleImage, 1)
	notReady.Status.ReadyReplicas = 0
	if step = PlanUpgrade(m, notReady, deploymentOf(oldMonocleImage, 0), nil, false, now); step.Status.Phase != monoclev1alpha1.UpgradeReplacingAPI {
		t.Fatalf("new API not ready yet: phase %s", step.Status.Phase)
	}
	step = PlanUpgrade(m, deploymentOf(newMonocleImage, 1), deploymentOf(oldMonocleImage, 0), nil, false, now)
	if step.Status.Phase != monoclev1alpha1.UpgradeStartingCrawler {
		t.Fatalf("new API ready: phase %s", step.Status.Phase)
	}

	// StartingCrawler: everything on the spec's images.
	m.Status.Upgrade = step.Status
	step = PlanUpgrade(m, deploymentOf(newMonocleImage, 1), deploymentOf(oldMonocleImage, 0), nil, false, now)
	if step.APIImage != "" || step.CrawlerImage != "" || step.StopCrawler || step.APIRecreate {
		t.Fatalf("starting the crawler: %+v", step)
	}
	step = PlanUpgrade(m, deploymentOf(newMonocleImage, 1), deploymentOf(newMonocleImage, 1), nil, false, now)
	if step.Status.Phase != monoclev1alpha1.UpgradeSucceeded || step.Status.CompletionTime == nil ||
		step.Condition.Status != metav1.ConditionTrue || step.Condition.Reason != reasons.UpgradeSucceeded {
		t.Fatalf("done: %+v %+v", step.Status, step.Condition)
	}
	m.Status.Upgrade, m.Status.API.Image = step.Status, newMonocleImage
	if step = PlanUpgrade(m, deploymentOf(newMonocleImage, 1), deploymentOf(newMonocleImage, 1), nil, false, now); step.Status.Phase != monoclev1alpha1.UpgradeSucceeded || step.APIImage != "" {
		t.Errorf("after success: %+v", step)
	}
}

func TestUpgradeBlockedByAFailedSnapshot(t *testing.T) {
	now := time.Now()
	snap := upgradeSnapshotName(newMonocleImage)
	m := upgradeMonocle(newMonocleImage, oldMonocleImage, true, &monoclev1alpha1.UpgradeStatus{From: oldMonocleImage, To: newMonocleImage,
		Phase: monoclev1alpha1.UpgradeBackingUp, Snapshot: snap})
	failed := &contract.BackupOutcome{Listed: true, Snapshots: []elastic.Snapshot{{Name: snap, State: elastic.SnapshotFailed, Reason: "disk full"}}}
	step := PlanUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), failed, false, now)
	if step.Status.Phase != monoclev1alpha1.UpgradeBlocked || !strings.Contains(step.Status.Message, "disk full") ||
		step.Condition.Reason != reasons.UpgradeBlocked || step.APIImage != oldMonocleImage || step.CrawlerImage != oldMonocleImage {
		t.Fatalf("failed snapshot: %+v %+v", step.Status, step.Condition)
	}
	m.Status.Upgrade = step.Status
	if step := PlanUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), failed, false, now); step.Status.Phase != monoclev1alpha1.UpgradeBlocked {
		t.Errorf("blocked upgrade moved on by itself: %s", step.Status.Phase)
	}
	m.Annotations = map[string]string{monoclev1alpha1.UpgradeWithoutBackupAnnotation: "true"}
	if step := PlanUpgrade(m, deploymentOf(oldMonocleImage, 1), deploymentOf(oldMonocleImage, 1), failed, false, now); step.Status.Phase != monoclev1alpha1.UpgradeStoppingCrawler {
		t.Errorf("with the annotation: phase %s, want StoppingCrawler", step.Status.Phase)
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
			step := PlanUpgrade(m, deploymentOf(tc.from, 1), deploymentOf(tc.from, 1), nil, false, time.Now())
			refused := step.Condition.Reason == reasons.MonocleDowngrade
			if refused != tc.refused {
				t.Fatalf("refused %v, want %v (%+v)", refused, tc.refused, step.Condition)
			}
			if refused && (step.APIImage != tc.from || step.CrawlerImage != tc.from || step.Status != nil) {
				t.Errorf("a refused downgrade builds %q/%q with status %+v; want the running images, no upgrade", step.APIImage, step.CrawlerImage, step.Status)
			}
			if !refused && (step.Status == nil || step.Status.Phase != monoclev1alpha1.UpgradeStoppingCrawler) {
				t.Errorf("upgrade without backups: status %+v, want StoppingCrawler", step.Status)
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
	for name, step := range map[string]UpgradeStep{
		"new Monocle": PlanUpgrade(fresh, nil, nil, nil, false, time.Now()),
		"same image":  PlanUpgrade(m, deploymentOf(newMonocleImage, 1), deploymentOf(newMonocleImage, 1), nil, false, time.Now()),
		// Someone else wrote another image into the Deployment: drift, repaired at once.
		"drift":           PlanUpgrade(m, deploymentOf("example.com/other:1.0.0", 1), deploymentOf(newMonocleImage, 1), nil, false, time.Now()),
		"while restoring": PlanUpgrade(restoring, deploymentOf(oldMonocleImage, 0), deploymentOf(oldMonocleImage, 0), nil, true, time.Now()),
	} {
		if step.Status != nil || step.APIImage != "" || step.CrawlerImage != "" || step.APIRecreate || step.StopCrawler ||
			step.Condition.Status != metav1.ConditionTrue {
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
