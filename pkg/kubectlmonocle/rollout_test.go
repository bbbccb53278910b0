package kubectlmonocle

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// ago is the status time d before testNow.
func ago(d time.Duration) *metav1.Time { return &metav1.Time{Time: testNow.Add(-d)} }

// fleetMonocle is Monocle ns/name (UID "uid-<name>") that was Ready since long, with
// status.rollout r and the annotations given as key, value pairs.
func fleetMonocle(ns, name string, r *monoclev1alpha1.RolloutStatus, annotations ...string) *monoclev1alpha1.Monocle {
	m := monocle(func(m *monoclev1alpha1.Monocle) {
		m.Namespace, m.Name, m.UID = ns, name, types.UID("uid-"+name)
		m.Status.Rollout = r
		m.Status.Conditions = []metav1.Condition{{Type: monoclev1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "AllComponentsReady", LastTransitionTime: *ago(48 * time.Hour)}}
	})
	for i := 0; i+1 < len(annotations); i += 2 {
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, annotations[i], annotations[i+1])
	}
	return m
}

// held adds m's RolloutHeld condition, of reason and message.
func held(m *monoclev1alpha1.Monocle, reason, message string) *monoclev1alpha1.Monocle {
	m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: monoclev1alpha1.ConditionRolloutHeld, Status: metav1.ConditionTrue,
		Reason: reason, Message: message, LastTransitionTime: *ago(time.Hour)})
	return m
}

// wave is the status.rollout of a roll of v0.2.0 by wave n, started d ago, in phase.
func wave(n int32, phase monoclev1alpha1.RolloutPhase, d time.Duration, message string) *monoclev1alpha1.RolloutStatus {
	return &monoclev1alpha1.RolloutStatus{Revision: "v0.2.0", Phase: phase, Cause: monoclev1alpha1.RolloutCauseWave, Wave: n,
		ReadyBefore: true, StartTime: ago(d), Message: message}
}

// rolledBefore is the status.rollout of a Monocle that the owner's change rolled to v0.1.0.
func rolledBefore() *monoclev1alpha1.RolloutStatus {
	return &monoclev1alpha1.RolloutStatus{Revision: "v0.1.0", Phase: monoclev1alpha1.RolloutRolled, Cause: monoclev1alpha1.RolloutCauseOwner,
		StartTime: ago(30 * 24 * time.Hour), CompletionTime: ago(30 * 24 * time.Hour)}
}

// ownedBy sets m as the controller of o.
func ownedBy(o metav1.Object, m *monoclev1alpha1.Monocle) {
	o.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(m, monoclev1alpha1.SchemeGroupVersion.WithKind("Monocle"))})
}

// deployment is Deployment name of m at revision, every one of its replicas updated unless
// rolling.
func deployment(m *monoclev1alpha1.Monocle, name, revision string, rolling bool) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.Namespace, UID: types.UID("uid-" + name),
		Labels:      map[string]string{resources.ManagedByLabel: resources.ManagedByValue},
		Annotations: map[string]string{"deployment.kubernetes.io/revision": revision}},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
		Status: appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1}}
	if rolling {
		d.Status.Replicas = 2
	}
	ownedBy(d, m)
	return d
}

// statefulSet is m's Elasticsearch StatefulSet, its pods at ControllerRevision current and
// updated to update.
func statefulSet(m *monoclev1alpha1.Monocle, current, update string) *appsv1.StatefulSet {
	name := resources.ElasticName(m)
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.Namespace, UID: types.UID("uid-" + name),
		Labels: map[string]string{resources.ManagedByLabel: resources.ManagedByValue}},
		Status: appsv1.StatefulSetStatus{CurrentRevision: name + "-" + current, UpdateRevision: name + "-" + update}}
	ownedBy(s, m)
	return s
}

// fleet is a fleet rolling v0.2.0 in waves: the canary ns/a Rolled by wave 1; wave 2 with
// ns/b Rolling and ns/c Failed; ns/d and ns/f (marked last) waiting for a wave; ns/e paused;
// other/g hibernated, rolled at once. With withFailed false, ns/c is Rolled instead and the
// others wait for wave 2.
func fleet(withFailed bool) []runtime.Object {
	a := fleetMonocle("ns", "a", wave(1, monoclev1alpha1.RolloutRolled, 40*time.Minute, "Ready for 2m0s after the roll to v0.2.0"),
		monoclev1alpha1.RolloutAnnotation, monoclev1alpha1.RolloutCanary)
	b := fleetMonocle("ns", "b", wave(2, monoclev1alpha1.RolloutRolling, 5*time.Minute, "Rolling; Ready again is due by 2026-11-26T10:10:00Z"))
	c := held(fleetMonocle("ns", "c", wave(2, monoclev1alpha1.RolloutFailed, 20*time.Minute, "Not Ready again within 15m0s of the roll to v0.2.0: Elasticsearch is not ready")),
		reasons.RolloutFailed, "Not Ready again within 15m0s of the roll to v0.2.0: Elasticsearch is not ready. The operator leaves the workloads as they are")
	reason, why := reasons.RolloutHalted, "the rollout of v0.2.0 is halted: ns/c not Ready again within 15m0s"
	if !withFailed {
		c = fleetMonocle("ns", "c", wave(2, monoclev1alpha1.RolloutRolled, 20*time.Minute, "Ready for 2m0s after the roll to v0.2.0"))
		reason, why = reasons.WaitingForWave, "wave 2 of the rollout of v0.2.0 is under way"
	}
	d := held(fleetMonocle("ns", "d", rolledBefore()), reason, "The templates of v0.2.0 would restart StatefulSet d-elastic; "+why)
	e := fleetMonocle("ns", "e", rolledBefore(), monoclev1alpha1.PausedAnnotation, "true")
	f := held(fleetMonocle("ns", "f", rolledBefore(), monoclev1alpha1.RolloutAnnotation, monoclev1alpha1.RolloutLast), reason, "The templates of v0.2.0 would restart Deployment f-api; "+why)
	g := fleetMonocle("other", "g", &monoclev1alpha1.RolloutStatus{Revision: "v0.2.0", Phase: monoclev1alpha1.RolloutRolled, Cause: monoclev1alpha1.RolloutCauseNoRestart,
		StartTime: ago(38 * time.Minute), CompletionTime: ago(38 * time.Minute), Message: "The templates of v0.2.0 restart no pod of this Monocle"})
	return []runtime.Object{a, b, c, d, e, f, g,
		deployment(a, "a-api", "3", false), deployment(a, "a-crawler", "2", false), statefulSet(a, "7c9d5f", "7c9d5f"),
		deployment(b, "b-api", "5", true), deployment(b, "b-crawler", "1", false), statefulSet(b, "5b8c6d", "6f7a8b"),
		// Named as c's, but another's: not c's revision.
		deployment(a, "c-api", "9", false),
	}
}

func TestRolloutStatus(t *testing.T) {
	tests := map[string]struct {
		objects []runtime.Object
		args    []string
	}{
		"rollout-status-halted.txt":    {objects: fleet(true), args: []string{"-A"}},
		"rollout-status-waves.txt":     {objects: fleet(false), args: []string{"-A"}},
		"rollout-status-namespace.txt": {objects: fleet(true), args: []string{"-n", "other"}},
		// With a deadline of 3m, b's roll is overdue: failed before the operator marks it.
		"rollout-status-deadline.txt": {objects: fleet(false), args: []string{"-A", "--rollout-deadline", "3m"}},
		"rollout-status-revision.txt": {objects: fleet(false), args: []string{"-A", "--revision", "v0.1.0"}},
		"rollout-status-none.txt":     {objects: []runtime.Object{monocle(nil)}},
	}
	for golden, tc := range tests {
		t.Run(golden, func(t *testing.T) {
			f, err := run(t, tc.objects, append([]string{"rollout", "status"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.writes()) != 0 {
				t.Errorf("rollout status wrote %v", f.writes())
			}
			expectGolden(t, golden, f.out.Bytes())
		})
	}

	if f, err := run(t, nil, "rollout", "status"); err != nil || f.out.String() != "No Monocles found in namespace ns.\n" {
		t.Errorf("no Monocle: %v, printed %q", err, f.out.String())
	}
	if _, err := run(t, fleet(true), "rollout", "status", "--rollout-max-wave", "0"); err == nil || !strings.Contains(err.Error(), "want at least 1") {
		t.Errorf("a policy out of range: %v", err)
	}
}

// TestRolloutStatusWithoutWorkloads: a user who may not list Deployments still sees the
// rollout, and why the workloads' revisions are missing.
func TestRolloutStatusWithoutWorkloads(t *testing.T) {
	f, err := runWith(t, fleet(true), func(f *fixture) {
		f.kube.PrependReactor("list", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(appsv1.Resource("deployments"), "", nil)
		})
	}, "rollout", "status")
	if err != nil {
		t.Fatal(err)
	}
	out := f.out.String()
	for _, want := range []string{"Rollout of v0.2.0 ", "\nWORKLOADS (revisions of the pod templates)\n  not read: deployments.apps is forbidden"} {
		if !strings.Contains(out, want) {
			t.Errorf("printed %q, want %q", out, want)
		}
	}
}

func TestRolloutRevision(t *testing.T) {
	at := func(revision string, d time.Duration) monoclev1alpha1.Monocle {
		return *fleetMonocle("ns", revision, &monoclev1alpha1.RolloutStatus{Revision: revision, StartTime: ago(d)})
	}
	tests := map[string]struct {
		monocles []monoclev1alpha1.Monocle
		want     string
	}{
		"the roll started last":                 {[]monoclev1alpha1.Monocle{at("v0.2.0", time.Hour), at("v0.3.0", time.Minute), at("v0.2.0", 0)}, "v0.2.0"},
		"the greater revision on a tie":         {[]monoclev1alpha1.Monocle{at("v0.3.0", time.Minute), at("v0.4.0", time.Minute), at("v0.3.1", time.Minute)}, "v0.4.0"},
		"none recorded":                         {[]monoclev1alpha1.Monocle{*monocle(nil)}, ""},
		"a roll without a start is not counted": {[]monoclev1alpha1.Monocle{at("v0.1.0", time.Hour), *fleetMonocle("ns", "x", &monoclev1alpha1.RolloutStatus{Revision: "v9"})}, "v0.1.0"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := RolloutRevision(tc.monocles); got != tc.want {
				t.Errorf("RolloutRevision = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRolloutResume(t *testing.T) {
	const resumed = "monocle.change-metrics.io/rollout-resume=2026-11-26T10:00:00Z"
	f, err := run(t, fleet(true), "rollout", "resume", "c")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.monocle(t, "c").Annotations[monoclev1alpha1.RolloutResumeAnnotation]; got != "2026-11-26T10:00:00Z" {
		t.Errorf("annotation %s = %q", monoclev1alpha1.RolloutResumeAnnotation, got)
	}
	if want := "monocle.monocle.monocle.change-metrics.io/c annotated " + resumed + "\n"; f.out.String() != want {
		t.Errorf("printed %q, want %q", f.out.String(), want)
	}

	f, err = run(t, fleet(true), "rollout", "resume", "b")
	expectRefused(t, f, err, "status.rollout.phase is Rolling, not Failed: the operator acts on monocle.change-metrics.io/rollout-resume only after a failed roll")
	f, err = run(t, []runtime.Object{monocle(nil)}, "rollout", "resume", "demo")
	expectRefused(t, f, err, "status.rollout is unset")

	// --all -A: the failed Monocles of every namespace, and none other.
	objects := fleet(true)
	objects = append(objects, fleetMonocle("other", "h", wave(3, monoclev1alpha1.RolloutFailed, time.Hour, "")))
	f, err = run(t, objects, "rollout", "resume", "--all", "-A")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`patch c {"metadata":{"annotations":{"monocle.change-metrics.io/rollout-resume":"2026-11-26T10:00:00Z"}}}`,
		`patch h {"metadata":{"annotations":{"monocle.change-metrics.io/rollout-resume":"2026-11-26T10:00:00Z"}}}`,
	}
	if got := f.writes(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("writes %v, want %v", got, want)
	}
	if got := f.out.String(); got != "monocle.monocle.monocle.change-metrics.io/c annotated "+resumed+"\nmonocle.monocle.monocle.change-metrics.io/h annotated "+resumed+"\n" {
		t.Errorf("printed %q", got)
	}
	// --all in one namespace.
	f, err = run(t, objects, "rollout", "resume", "--all", "-n", "other")
	if err != nil || len(f.writes()) != 1 || !strings.HasPrefix(f.writes()[0], "patch h ") {
		t.Errorf("--all -n other: %v, writes %v", err, f.writes())
	}
	f, err = run(t, fleet(false), "rollout", "resume", "--all")
	if err != nil || len(f.writes()) != 0 || f.out.String() != "No Monocle's roll is Failed in namespace ns: nothing to resume\n" {
		t.Errorf("--all without a failed roll: %v, writes %v, printed %q", err, f.writes(), f.out.String())
	}

	for _, args := range [][]string{{}, {"c", "--all"}, {"c", "-A"}, {"c", "d"}} {
		if _, err := run(t, fleet(true), append([]string{"rollout", "resume"}, args...)...); err == nil {
			t.Errorf("rollout resume %v: no error", args)
		}
	}
}
