package controller

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/pkg/version"
)

// upgradedFleetMember is a converged Monocle as the release before this one left it: its
// status.rollout records that release, and its API Deployment runs that release's pod
// template (one environment variable more), which this release would change.
func upgradedFleetMember(t *testing.T, name string) (*monoclev1alpha1.Monocle, []runtime.Object) {
	t.Helper()
	m, objects := converged(t, newMonocle(name))
	if m.Status.Rollout == nil || m.Status.Rollout.Revision != version.Version || m.Status.Rollout.Cause != monoclev1alpha1.RolloutCauseCreated {
		t.Fatalf("a new Monocle's status.rollout: %+v, want revision %s, cause Created", m.Status.Rollout, version.Version)
	}
	m.Status.Rollout.Revision = "v0.0.9"
	api := find[*appsv1.Deployment](objects, resources.APIName(m))
	api.Spec.Template.Spec.Containers[0].Env = append(api.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{Name: "EARLIER_RELEASE", Value: "1"})
	return m, objects
}

// rollingCanary is another Monocle of the fleet, admitted to wave 1 of this release's
// rollout a second ago and not done.
func rollingCanary() *monoclev1alpha1.Monocle {
	c := newMonocle("canary")
	start := metav1.NewTime(time.Now().Add(-time.Second))
	c.Status.Rollout = &monoclev1alpha1.RolloutStatus{Revision: version.Version, Phase: monoclev1alpha1.RolloutRolling,
		Cause: monoclev1alpha1.RolloutCauseWave, Wave: 1, ReadyBefore: true, StartTime: &start}
	return c
}

func deploymentWrites(writes []core.Action) []string {
	var out []string
	for _, d := range describe(writes) {
		if strings.Contains(d, " deployments ") || strings.Contains(d, " statefulsets ") {
			out = append(out, d)
		}
	}
	return out
}

func TestRolloutHoldsTheOperatorsChangeUntilTheWave(t *testing.T) {
	m, objects := upgradedFleetMember(t, "test")
	_, writes, got := resyncWith(t, m, objects, func(f *fixture) { f.monocles = append(f.monocles, rollingCanary()) })
	if d := deploymentWrites(writes); len(d) != 0 {
		t.Errorf("a Monocle waiting for its wave had its workloads written: %v", d)
	}
	held := condition(t, got, monoclev1alpha1.ConditionRolloutHeld)
	if held.Status != metav1.ConditionTrue || held.Reason != reasons.WaitingForWave ||
		!strings.Contains(held.Message, "Deployment test-api") || !strings.Contains(held.Message, "waits for wave 2") {
		t.Errorf("RolloutHeld: %+v", held)
	}
	if got.Status.Rollout.Revision != "v0.0.9" {
		t.Errorf("status.rollout of a held Monocle: %+v", got.Status.Rollout)
	}
	if !apimeta.IsStatusConditionTrue(got.Status.Conditions, monoclev1alpha1.ConditionReady) {
		t.Errorf("a held Monocle is not Ready: %+v", condition(t, got, monoclev1alpha1.ConditionReady))
	}
}

// TestRolloutAdmitsThenWrites: the wave's admission is written first, the workloads by the
// next sync; the roll is judged from there.
func TestRolloutAdmitsThenWrites(t *testing.T) {
	m, objects := upgradedFleetMember(t, "test")
	f, writes, got := resync(t, m, objects)
	if d := deploymentWrites(writes); len(d) != 0 {
		t.Errorf("the sync that admits the Monocle wrote its workloads: %v", d)
	}
	r := got.Status.Rollout
	if r.Revision != version.Version || r.Phase != monoclev1alpha1.RolloutRolling || r.Cause != monoclev1alpha1.RolloutCauseWave ||
		r.Wave != 1 || !r.ReadyBefore || r.StartTime == nil {
		t.Fatalf("status.rollout of the canary: %+v", r)
	}
	if apimeta.FindStatusCondition(got.Status.Conditions, monoclev1alpha1.ConditionRolloutHeld) != nil {
		t.Errorf("an admitted Monocle keeps RolloutHeld")
	}
	expectEvent(t, f, reasons.RolloutStarted)

	f2 := newFixture(t)
	f2.monocles = []*monoclev1alpha1.Monocle{got}
	f2.kubeobjects = objects
	f2.bumpGenerations = true
	writes, got = f2.runStatus()
	if d := deploymentWrites(writes); len(d) != 1 || d[0] != "update deployments test-api" {
		t.Errorf("the sync after the admission: %v, want the API Deployment written", d)
	}
	if got.Status.Rollout.Phase != monoclev1alpha1.RolloutRolling || !strings.Contains(got.Status.Rollout.Message, "Ready again is due") {
		t.Errorf("status.rollout while the API rolls: %+v", got.Status.Rollout)
	}
}

// TestRolloutAppliesTheOwnersChangeAtOnce: a held Monocle whose owner changes its spec is
// rolled at once, with this release's templates, while the fleet waits.
func TestRolloutAppliesTheOwnersChangeAtOnce(t *testing.T) {
	m, objects := upgradedFleetMember(t, "test")
	m.Status.Rollout.Inputs = "inputs-of-an-earlier-spec"
	m.Generation++
	withCanary := func(f *fixture) { f.monocles = append(f.monocles, rollingCanary()) }
	_, writes, got := resyncWith(t, m, objects, withCanary)
	r := got.Status.Rollout
	if r.Revision != version.Version || r.Phase != monoclev1alpha1.RolloutRolled || r.Cause != monoclev1alpha1.RolloutCauseOwner || r.Wave != 0 {
		t.Fatalf("status.rollout after the owner's change: %+v", r)
	}
	if d := deploymentWrites(writes); len(d) != 0 {
		t.Errorf("the sync that records the owner's change wrote %v: the next one writes", d)
	}
	_, writes, got = resyncWith(t, got, objects, withCanary)
	if d := deploymentWrites(writes); len(d) != 1 || d[0] != "update deployments test-api" {
		t.Errorf("the sync after the owner's change: %v, want the API Deployment written", d)
	}
	if apimeta.FindStatusCondition(got.Status.Conditions, monoclev1alpha1.ConditionRolloutHeld) != nil {
		t.Errorf("RolloutHeld after the owner's change")
	}
}

// TestRolloutEarlierReleaseWithoutRecord: a Monocle an earlier release ran records no
// rollout; the spec it observed is taken as the owner's inputs, so its template change waits
// for the wave, while a spec it had not observed is the owner's change.
func TestRolloutEarlierReleaseWithoutRecord(t *testing.T) {
	m, objects := upgradedFleetMember(t, "test")
	m.Status.Rollout = nil
	withCanary := func(f *fixture) { f.monocles = append(f.monocles, rollingCanary()) }
	_, writes, got := resyncWith(t, m, objects, withCanary)
	if d := deploymentWrites(writes); len(d) != 0 || condition(t, got, monoclev1alpha1.ConditionRolloutHeld).Reason != reasons.WaitingForWave {
		t.Errorf("an observed spec of an earlier release: writes %v, status.rollout %+v", d, got.Status.Rollout)
	}
	m.Generation++
	_, _, got = resyncWith(t, m, objects, withCanary)
	if got.Status.Rollout == nil || got.Status.Rollout.Cause != monoclev1alpha1.RolloutCauseOwner {
		t.Errorf("a spec the earlier release had not observed: status.rollout %+v, want cause Owner", got.Status.Rollout)
	}
}

func TestRolloutWithoutRestartGoesAtOnce(t *testing.T) {
	m, objects := converged(t, newMonocle("test"))
	m.Status.Rollout.Revision = "v0.0.9"
	_, writes, got := resyncWith(t, m, objects, func(f *fixture) { f.monocles = append(f.monocles, rollingCanary()) })
	if d := deploymentWrites(writes); len(d) != 0 {
		t.Errorf("writes %v", d)
	}
	if r := got.Status.Rollout; r.Revision != version.Version || r.Cause != monoclev1alpha1.RolloutCauseNoRestart || r.Phase != monoclev1alpha1.RolloutRolled {
		t.Errorf("status.rollout of a Monocle the new templates do not change: %+v", r)
	}
}

// TestRolloutFailedIsLeftForUndo: a failed roll's workloads are not written (an undo is not
// fought) until a resume.
func TestRolloutFailedIsLeftForUndo(t *testing.T) {
	m, objects := upgradedFleetMember(t, "test")
	start := metav1.NewTime(time.Now().Add(-time.Hour))
	m.Status.Rollout = &monoclev1alpha1.RolloutStatus{Revision: version.Version, Inputs: m.Status.Rollout.Inputs, Phase: monoclev1alpha1.RolloutFailed,
		Cause: monoclev1alpha1.RolloutCauseWave, Wave: 1, ReadyBefore: true, StartTime: &start, CompletionTime: &start, Message: "Not Ready again"}
	_, writes, got := resync(t, m, objects)
	if d := deploymentWrites(writes); len(d) != 0 {
		t.Errorf("a failed roll's workloads were written: %v", d)
	}
	if held := condition(t, got, monoclev1alpha1.ConditionRolloutHeld); held.Reason != reasons.RolloutFailed || !strings.Contains(held.Message, "kubectl monocle rollout undo test") {
		t.Errorf("RolloutHeld of a failed roll: %+v", held)
	}
	m.Annotations = map[string]string{monoclev1alpha1.RolloutResumeAnnotation: "2026-12-02T10:00:00Z"}
	f, _, got := resync(t, m, objects)
	if r := got.Status.Rollout; r.Phase != monoclev1alpha1.RolloutRolling || r.Resumed != "2026-12-02T10:00:00Z" || r.StartTime.Before(&start) {
		t.Errorf("status.rollout after a resume: %+v", r)
	}
	expectEvent(t, f, reasons.RolloutResumed)

	// The owner's change of the failed Monocle: written at once, and judged again.
	delete(m.Annotations, monoclev1alpha1.RolloutResumeAnnotation)
	m.Generation++
	_, _, got = resync(t, m, objects)
	if r := got.Status.Rollout; r.Phase != monoclev1alpha1.RolloutRolling || r.Wave != 1 || !r.ReadyBefore || r.StartTime.Before(&start) {
		t.Errorf("status.rollout after the owner changed the failed Monocle: %+v", r)
	}
}

// expectEvent fails unless f's recorder holds an event of reason.
func expectEvent(t *testing.T, f *fixture, reason string) {
	t.Helper()
	for {
		select {
		case e := <-f.recorder.Events:
			if strings.Contains(e, " "+reason+" ") {
				return
			}
		default:
			t.Errorf("no %s event", reason)
			return
		}
	}
}
