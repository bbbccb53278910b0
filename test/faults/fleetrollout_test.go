package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	informers "github.com/change-metrics/monocle-operator/pkg/generated/informers/externalversions"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/pkg/version"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// fleetMaxWave is --rollout-max-wave in scenarios 13 and 14: waves of 1 (the canary), 2, 2 …
// so that a fleet of ten rolls in six waves.
const fleetMaxWave = 2

// fleetRolloutBudget bounds a fleet rollout of scenarios 13 and 14, from the new release's
// start (13) or the resume (14) until every Monocle is Rolled. Scenario 13's full variant
// rolls ten Monocles in six waves of a 3 s soak each and waits a Lease (8 s) for the
// standby.
const fleetRolloutBudget = 5 * time.Minute

// haltDeadline is --rollout-deadline in scenario 14: how long its canary, whose pods a
// ResourceQuota refuses, has before the rollout halts.
const haltDeadline = 20 * time.Second

// haltWindow is how long scenario 14 watches the halted fleet under the new leader once that
// leader reports the halt.
const haltWindow = 10 * time.Second

// fleetFlags are the flags of this release's replicas in scenarios 13 and 14: waves of at
// most fleetMaxWave behind the canary, a soak of 3 s (kwok makes pods Ready in a second or
// two), and deadline.
func fleetFlags(deadline time.Duration) []string {
	return []string{"--rollout-strategy=waves", fmt.Sprintf("--rollout-max-wave=%d", fleetMaxWave),
		"--rollout-soak=3s", "--rollout-deadline=" + deadline.String()}
}

// waveSize is how many Monocles wave w (from 1) may roll: 1, 2, 4 … up to fleetMaxWave, as
// docs/fleet-rollouts.md states it.
func waveSize(w int32) int {
	return min(1<<(w-1), fleetMaxWave)
}

// testFleetRolloutLeaderKill is scenario 13: the previous release leads
// env.size.fleetMonocles bundled Monocles (one per namespace) to Ready, its replicas stop,
// and two replicas of this release roll its templates out (the node secured) in waves of at
// most fleetMaxWave behind a canary; once wave 2 is under way, after a seeded delay of up to
// 0.8 s, the leader is SIGKILLed and the standby takes over. From the cluster alone (each
// Monocle's status.rollout as a watch saw it, and its pods' creationTimestamps): no wave
// rolls more Monocles than its size, no roll is in flight beside one of another wave, each
// Monocle rolled once and its pods were replaced only while it rolled; every Monocle ends
// Ready and Rolled under this release, its node secured on the PVC of the same UID, with
// the same indices, passwords and Secrets, and no write fell outside its writer's tenure.
func testFleetRolloutLeaderKill(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "13. leader SIGKILLed mid-wave of a fleet rollout")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 13))
	prev := previousRelease(ctx, sc)

	const name = "fleet"
	namespaces := numbered("faults-fleet", env.size.fleetMonocles)
	flags := append([]string{"--namespaces=" + strings.Join(namespaces, ",")}, churnLeaseFlags...)
	old, _ := previousFleet(ctx, sc, prev, flags, namespaces, name, nil)
	kept, pvcs, err := keptForSwitch(ctx, namespaces, name)
	if err != nil {
		sc.Fatal(err)
	}
	for _, o := range old {
		if err := o.stop(); err != nil {
			sc.Error(err)
		}
	}

	begin := time.Now()
	rec, err := startFleetRecorder(namespaces, version.Version, begin)
	if err != nil {
		sc.Fatal(err)
	}
	defer rec.stop()
	newFlags := append(slices.Clone(flags), fleetFlags(2*time.Minute)...)
	ops := []*operator{env.operators.start(t, newFlags...), env.operators.start(t, newFlags...)}
	leader, err := waitLeader(ctx, 30*time.Second, ops)
	if err != nil {
		sc.Fatal(err)
	}
	if err := testkit.Poll(ctx, 50*time.Millisecond, fleetRolloutBudget, "wave 2 under way", func(context.Context) error {
		if rec.monoclesOfWave(2) == 0 {
			return errors.New("no Monocle admitted to wave 2")
		}
		return nil
	}); err != nil {
		sc.Fatalf("%v%s", err, testBedState(ctx))
	}
	// A sync writes a Monocle's workloads a fraction of a second after its admission: the
	// SIGKILL lands between the two, or once a wave's Monocles run the new templates.
	delay := time.Duration(rng.IntN(800)) * time.Millisecond
	time.Sleep(delay)
	at := rec.inFlight() + "; nodes secured: " + securedNodes(ctx, namespaces, name)
	killed := time.Now()
	if err := leader.kill(); err != nil {
		sc.Fatal(err)
	}
	ops = slices.DeleteFunc(ops, func(o *operator) bool { return o == leader })
	next, err := waitLeader(ctx, 30*time.Second, ops)
	if err != nil {
		sc.Fatal(err)
	}
	handover := time.Since(killed)
	t.Logf("SIGKILL of %s %s after wave 2 started (in flight: %s); %s led after %s", leader.Name, delay, at, next.Name, handover.Round(time.Millisecond))

	_, err = waitConverged(ctx, fleetRolloutBudget-time.Since(begin), namespaces, func(ctx context.Context) error {
		if err := allSecured(ctx, namespaces, name); err != nil {
			return err
		}
		return allRolled(ctx, namespaces, name)
	})
	// waitConverged times each Monocle's first Ready, which the held ones already were: the
	// rollout is done when the check that every Monocle is Rolled passes (every 250 ms).
	done := time.Now()
	ok := err == nil
	if err != nil {
		sc.Errorf("secured, Ready and Rolled within %s of the new release's start: %v%s", fleetRolloutBudget, err, testBedState(ctx))
	}
	rec.stop()
	waves, restarting, problems := rec.check()
	for ns, rolls := range rec.rollsByNamespace() {
		if len(rolls) != 1 {
			problems = append(problems, fmt.Sprintf("%s rolled %d times: %s", ns, len(rolls), describeRolls(rolls)))
		}
	}
	for _, p := range problems {
		ok = false
		sc.Errorf("waves: %s", p)
	}
	for _, ns := range namespaces {
		env.Elastic.SecureBundled(ns, name)
		if err := switchedIntact(ctx, ns, name, pvcs[ns], kept[ns]); err != nil {
			ok = false
			sc.Errorf("%s: %v", ns, err)
		}
	}
	if violations := writerViolations(sc, begin); len(violations) > 0 {
		ok = false
	}
	sc.note("%d Monocles of %s rolled to %s in waves of %v, at most %d restarting at once (pods); leader SIGKILLed %s into wave 2 (in flight: %s), %s led after %s; all Rolled %s after the new release started, %s after the SIGKILL",
		len(namespaces), prev.Version, version.Version, waves, restarting, delay.Round(time.Millisecond), at, next.Name, fmtDuration(handover),
		done.Sub(begin).Round(100*time.Millisecond), done.Sub(killed).Round(100*time.Millisecond))
	sc.run(ok, max(done.Sub(killed), time.Millisecond))
	checkInvariants(ctx, sc)
	for _, o := range ops {
		if err := o.stop(); err != nil {
			sc.Error(err)
		}
	}
}

// testFleetRolloutHalt is scenario 14: the previous release leads env.size.haltMonocles
// bundled Monocles to Ready, the last by name annotated as the canary; a ResourceQuota in
// the canary's namespace then allows no pod, so that the pods its roll replaces are refused.
// Two replicas of this release start with a deadline of haltDeadline: the canary's roll
// fails and the rollout halts; the leader is SIGKILLed. Under the standby,
// which must report monocle_operator_rollout_halted 1, for haltWindow: the canary stays
// Failed, every other Monocle stays held (RolloutHalted) with its workloads untouched (the
// same generations, no write of the operator to a StatefulSet or Deployment). Then the quota
// is deleted and, once the canary is Ready, it is annotated with
// monocle.change-metrics.io/rollout-resume, as a user does with kubectl: the canary, and only
// then the others in waves, roll to Ready under this release, with the rule of waves, the
// PVCs, indices, passwords and Secrets checked as in scenario 13.
func testFleetRolloutHalt(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "14. leader SIGKILLed while a fleet rollout is halted")
	defer sc.finish()
	prev := previousRelease(ctx, sc)

	const name = "halt"
	namespaces := numbered("faults-halt", env.size.haltMonocles)
	// The canary is the last by name: only its annotation makes it the first wave.
	canary := namespaces[len(namespaces)-1]
	flags := append([]string{"--namespaces=" + strings.Join(namespaces, ",")}, churnLeaseFlags...)
	old, _ := previousFleet(ctx, sc, prev, flags, namespaces, name, func(m *monoclev1alpha1.Monocle) {
		if m.Namespace == canary {
			m.Annotations = map[string]string{monoclev1alpha1.RolloutAnnotation: monoclev1alpha1.RolloutCanary}
		}
	})
	kept, pvcs, err := keptForSwitch(ctx, namespaces, name)
	if err != nil {
		sc.Fatal(err)
	}
	quota, err := refusePods(ctx, canary)
	if err != nil {
		sc.Fatal(err)
	}
	for _, o := range old {
		if err := o.stop(); err != nil {
			sc.Error(err)
		}
	}

	begin := time.Now()
	rec, err := startFleetRecorder(namespaces, version.Version, begin)
	if err != nil {
		sc.Fatal(err)
	}
	defer rec.stop()
	newFlags := append(slices.Clone(flags), fleetFlags(haltDeadline)...)
	ops := []*operator{env.operators.start(t, newFlags...), env.operators.start(t, newFlags...)}
	leader, err := waitLeader(ctx, 30*time.Second, ops)
	if err != nil {
		sc.Fatal(err)
	}
	var failedAt time.Time
	last := "not read"
	if err := testkit.Poll(ctx, 100*time.Millisecond, haltDeadline+90*time.Second, "the canary's roll Failed", func(ctx context.Context) error {
		m, err := env.Monocles.MonocleV1alpha1().Monocles(canary).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if r := m.Status.Rollout; r == nil || r.Revision != version.Version || r.Phase != monoclev1alpha1.RolloutFailed {
			last = describeRollout(r)
			return fmt.Errorf("status.rollout %s", last)
		}
		failedAt = time.Now()
		return nil
	}); err != nil {
		sc.Fatalf("%v (the canary's last status.rollout read: %s)%s", err, last, testBedState(ctx))
	}
	before, err := workloadGenerations(ctx, namespaces, name)
	if err != nil {
		sc.Fatal(err)
	}

	killed := time.Now()
	if err := leader.kill(); err != nil {
		sc.Fatal(err)
	}
	ops = slices.DeleteFunc(ops, func(o *operator) bool { return o == leader })
	next, err := waitLeader(ctx, 30*time.Second, ops)
	if err != nil {
		sc.Fatal(err)
	}
	handover := time.Since(killed)
	ok := true
	halted := func(ctx context.Context) error {
		m, err := next.Metrics(ctx)
		if err != nil {
			return err
		}
		if v, n := m.Family("monocle_operator_rollout_halted", `revision="`+version.Version+`"`); n != 1 || v != 1 {
			return fmt.Errorf("%s reports monocle_operator_rollout_halted %v (%d series)", next.Name, v, n)
		}
		return nil
	}
	if err := testkit.Poll(ctx, 250*time.Millisecond, 30*time.Second, "the new leader reporting the halt", halted); err != nil {
		ok = false
		sc.Error(err)
	}
	time.Sleep(haltWindow)
	if err := halted(ctx); err != nil {
		ok = false
		sc.Errorf("after %s: %v", haltWindow, err)
	}
	after, err := workloadGenerations(ctx, namespaces, name)
	if err != nil {
		sc.Fatal(err)
	}
	for _, ns := range namespaces {
		if before[ns] != after[ns] {
			ok = false
			sc.Errorf("%s: the workloads changed while the rollout was halted: generations %s, then %s", ns, before[ns], after[ns])
		}
	}
	if err := everyMonocle(ctx, namespaces, name, func(m *monoclev1alpha1.Monocle) error {
		return heldBy(m, canary)
	}); err != nil {
		ok = false
		sc.Errorf("halted under %s: %v", next.Name, err)
	}
	writes, err := auditBetween(killed, time.Now(), func(e testkit.AuditEvent) bool {
		return counted(e) && e.IsWrite() && slices.Contains(namespaces, e.ObjectRef.Namespace) &&
			(e.ObjectRef.Resource == "statefulsets" || e.ObjectRef.Resource == "deployments")
	})
	if err != nil {
		sc.Fatal(err)
	}
	for _, e := range writes {
		ok = false
		sc.Errorf("a workload written while the rollout was halted: %s", describe(e))
	}

	// As docs/fleet-rollouts.md tells a user: fix the cause, see the Monocle Ready, resume.
	// Its workloads, left with the new templates, go on once the quota is gone, as soon as
	// kube-controller-manager retries the refused pods (its backoff doubles from 5 ms).
	fixed := time.Now()
	if err := env.Kube.CoreV1().ResourceQuotas(canary).Delete(ctx, quota, metav1.DeleteOptions{}); err != nil {
		sc.Fatal(err)
	}
	if _, err := waitConverged(ctx, 3*time.Minute, []string{canary}, nil); err != nil {
		sc.Fatalf("the canary is not Ready once its quota is gone: %v%s", err, testBedState(ctx))
	}
	readyAgain := time.Since(fixed)
	resume := time.Now().UTC().Format(time.RFC3339)
	if out, err := env.Kubectl.Run(ctx, "annotate", "monocles", name, "-n", canary, "--overwrite",
		monoclev1alpha1.RolloutResumeAnnotation+"="+resume); err != nil {
		sc.Fatalf("kubectl annotate: %v: %s", err, out)
	}
	resumed := time.Now()
	_, err = waitConverged(ctx, fleetRolloutBudget, namespaces, func(ctx context.Context) error {
		if err := allSecured(ctx, namespaces, name); err != nil {
			return err
		}
		return allRolled(ctx, namespaces, name)
	})
	done := time.Now()
	if err != nil {
		ok = false
		sc.Errorf("secured, Ready and Rolled within %s of the resume: %v%s", fleetRolloutBudget, err, testBedState(ctx))
	}
	rec.stop()
	waves, restarting, problems := rec.check()
	problems = append(problems, resumedFirst(ctx, rec, namespaces, name, canary, resume)...)
	for _, p := range problems {
		ok = false
		sc.Errorf("waves: %s", p)
	}
	for _, reason := range []string{reasons.RolloutFailed, reasons.RolloutResumed} {
		if err := eventRecorded(ctx, canary, name, reason); err != nil {
			ok = false
			sc.Error(err)
		}
	}
	for _, ns := range namespaces {
		env.Elastic.SecureBundled(ns, name)
		if err := switchedIntact(ctx, ns, name, pvcs[ns], kept[ns]); err != nil {
			ok = false
			sc.Errorf("%s: %v", ns, err)
		}
	}
	if violations := writerViolations(sc, begin); len(violations) > 0 {
		ok = false
	}
	sc.note("%d Monocles of %s; the canary's roll to %s Failed %s after the new release started (deadline %s), its leader SIGKILLed, %s led after %s and kept the rollout halted for %s (no workload written, halted metric 1); the canary Ready %s after its quota was deleted, then resumed by annotation: all Rolled %s later, in waves of %v, at most %d restarting at once (pods)",
		len(namespaces), prev.Version, version.Version, failedAt.Sub(begin).Round(100*time.Millisecond), haltDeadline, next.Name,
		fmtDuration(handover), haltWindow, readyAgain.Round(100*time.Millisecond), done.Sub(resumed).Round(100*time.Millisecond), waves, restarting)
	sc.run(ok, max(done.Sub(resumed), time.Millisecond))
	checkInvariants(ctx, sc)
	for _, o := range ops {
		if err := o.stop(); err != nil {
			sc.Error(err)
		}
	}
}

// securedNodes names the namespaces of namespaces whose node's StatefulSet runs with
// security, as this release writes it.
func securedNodes(ctx context.Context, namespaces []string, name string) string {
	var out []string
	for _, ns := range namespaces {
		s, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, name+"-elastic", metav1.GetOptions{})
		if err != nil {
			out = append(out, ns+" ("+err.Error()+")")
		} else if resources.ElasticSecured(&s.Spec.Template.Spec) {
			out = append(out, ns)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// allRolled returns nil once the status.rollout of every Monocle name of namespaces shows
// this release (version.Version, which the suite's build of the operator shares) Rolled.
func allRolled(ctx context.Context, namespaces []string, name string) error {
	return everyMonocle(ctx, namespaces, name, func(m *monoclev1alpha1.Monocle) error {
		if r := m.Status.Rollout; r == nil || r.Revision != version.Version || r.Phase != monoclev1alpha1.RolloutRolled {
			return fmt.Errorf("status.rollout %s", describeRollout(r))
		}
		return nil
	})
}

// heldBy returns nil when m is as a rollout halted by the failed roll of the canary in
// namespace canary leaves it: the canary Failed under this release, any other Monocle
// without a roll of this release and held (condition RolloutHeld, reason RolloutHalted).
func heldBy(m *monoclev1alpha1.Monocle, canary string) error {
	r := m.Status.Rollout
	if m.Namespace == canary {
		if r == nil || r.Revision != version.Version || r.Phase != monoclev1alpha1.RolloutFailed {
			return fmt.Errorf("the canary's status.rollout %s, want Failed", describeRollout(r))
		}
		return nil
	}
	if r != nil && r.Revision == version.Version {
		return fmt.Errorf("status.rollout %s while the rollout is halted", describeRollout(r))
	}
	c := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionRolloutHeld)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reasons.RolloutHalted {
		return fmt.Errorf("condition %s is %+v, want True with reason %s", monoclev1alpha1.ConditionRolloutHeld, c, reasons.RolloutHalted)
	}
	return nil
}

// resumedFirst returns what contradicts a resume by the canary of namespace canary: its last
// roll must be of wave 1 and record resume, and every other Monocle's roll must start once
// it was Rolled.
func resumedFirst(ctx context.Context, rec *fleetRecorder, namespaces []string, name, canary, resume string) []string {
	m, err := env.Monocles.MonocleV1alpha1().Monocles(canary).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	r := m.Status.Rollout
	if r == nil || r.Resumed != resume || r.Wave != 1 || r.CompletionTime == nil {
		return []string{fmt.Sprintf("the canary's status.rollout %s, want wave 1 resumed with %q and complete", describeRollout(r), resume)}
	}
	var problems []string
	rolls := rec.rollsByNamespace()
	for _, ns := range namespaces {
		if ns == canary {
			continue
		}
		for _, roll := range rolls[ns] {
			if roll.start.Before(r.CompletionTime.Time) {
				problems = append(problems, fmt.Sprintf("%s started its roll at %s, before the resumed canary was Rolled at %s",
					ns, roll.start.Format(time.TimeOnly), r.CompletionTime.Format(time.TimeOnly)))
			}
		}
	}
	return problems
}

// refusePods creates a ResourceQuota in ns that allows no pod (count/pods 0), waits until
// the quota controller has counted the pods there, and returns its name: the pods that run
// go on, but no pod a workload replaces or adds is admitted.
func refusePods(ctx context.Context, ns string) (string, error) {
	const name = "no-pods"
	count := corev1.ResourceName("count/pods")
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{count: resource.MustParse("0")}},
	}
	if _, err := env.Kube.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	return name, testkit.Poll(ctx, 100*time.Millisecond, time.Minute, "the quota counted", func(ctx context.Context) error {
		q, err := env.Kube.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok := q.Status.Used[count]; !ok {
			return fmt.Errorf("quota %s/%s has counted nothing yet", ns, name)
		}
		return nil
	})
}

// workloadGenerations returns, for Monocle name of each of namespaces, the generations of
// its StatefulSet and Deployments: any change of their specs changes it.
func workloadGenerations(ctx context.Context, namespaces []string, name string) (map[string]string, error) {
	out := map[string]string{}
	for _, ns := range namespaces {
		s, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, name+"-elastic", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		gens := []string{fmt.Sprintf("%s %d", s.Name, s.Generation)}
		for _, d := range []string{name + "-api", name + "-crawler"} {
			dep, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			gens = append(gens, fmt.Sprintf("%s %d", d, dep.Generation))
		}
		out[ns] = strings.Join(gens, ", ")
	}
	return out, nil
}

// eventRecorded returns nil once an Event of reason is recorded for Monocle name of ns.
func eventRecorded(ctx context.Context, ns, name, reason string) error {
	return testkit.Poll(ctx, 250*time.Millisecond, 10*time.Second, "event "+reason, func(ctx context.Context) error {
		events, err := env.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=" + reason})
		if err != nil {
			return err
		}
		if len(events.Items) == 0 {
			return fmt.Errorf("no %s event for Monocle %s/%s", reason, ns, name)
		}
		return nil
	})
}

// writerViolations checks the operator's writes since begin against the Lease tenures
// (tenureViolations, no replica released the Lease), logs the tenures, fails sc for each
// violation and returns them.
func writerViolations(sc *scenario, begin time.Time) []string {
	violations, tenures, err := tenureViolations(begin, time.Now(), nil)
	if err != nil {
		sc.Fatal(err)
	}
	sc.Logf("lease tenures:\n  %s", joinLines(tenures))
	for _, v := range violations {
		sc.Errorf("two writers: %s", v)
	}
	return violations
}

func describeRollout(r *monoclev1alpha1.RolloutStatus) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("{revision %q, phase %q, cause %q, wave %d, message %q}", r.Revision, r.Phase, r.Cause, r.Wave, r.Message)
}

// fleetRoll is one roll of a Monocle to the new release, as its status.rollout showed it.
type fleetRoll struct {
	wave  int32
	cause monoclev1alpha1.RolloutCause
	phase monoclev1alpha1.RolloutPhase
	// start is status.rollout.startTime; end its completionTime, zero while it is in flight.
	start, end time.Time
}

func describeRolls(rolls []fleetRoll) string {
	parts := make([]string, len(rolls))
	for i, r := range rolls {
		parts[i] = fmt.Sprintf("wave %d (%s) %s → %s %s", r.wave, r.cause, r.start.Format(time.TimeOnly), r.end.Format(time.TimeOnly), r.phase)
	}
	return strings.Join(parts, "; ")
}

// fleetRecorder watches, from a rollout's start, the Monocles (one per namespace) and the
// pods of a fleet's namespaces and keeps what the cluster shows of the rollout: every roll to
// revision each Monocle's status.rollout recorded (a new startTime is a new roll), and the
// creationTimestamps of the pods of its workloads created since. It reads nothing of the
// operator but the Monocles' status.
type fleetRecorder struct {
	revision string
	since    time.Time
	in       map[string]bool
	cancel   context.CancelFunc

	mu    sync.Mutex
	rolls map[string][]fleetRoll
	// pods are the creation times of the API, crawler and Elasticsearch pods created since,
	// by namespace and pod UID.
	pods map[string]map[types.UID]time.Time
}

// startFleetRecorder starts a fleetRecorder of namespaces' rolls to revision, and of their
// pods created from since (to the second, the resolution of a creationTimestamp).
func startFleetRecorder(namespaces []string, revision string, since time.Time) (*fleetRecorder, error) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &fleetRecorder{revision: revision, since: since.Truncate(time.Second), in: map[string]bool{}, cancel: cancel,
		rolls: map[string][]fleetRoll{}, pods: map[string]map[types.UID]time.Time{}}
	for _, ns := range namespaces {
		r.in[ns] = true
	}
	monocles := informers.NewSharedInformerFactory(env.Monocles, 0).Monocle().V1alpha1().Monocles().Informer()
	pods := kubeinformers.NewSharedInformerFactory(env.Kube, 0).Core().V1().Pods().Informer()
	for informer, observe := range map[cache.SharedIndexInformer]func(any){monocles: r.monocle, pods: r.pod} {
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: observe, UpdateFunc: func(_, obj any) { observe(obj) },
		}); err != nil {
			cancel()
			return nil, err
		}
		go informer.Run(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), monocles.HasSynced, pods.HasSynced) {
		cancel()
		return nil, errors.New("the fleet recorder's caches did not sync")
	}
	return r, nil
}

func (r *fleetRecorder) stop() { r.cancel() }

func (r *fleetRecorder) monocle(obj any) {
	m, ok := obj.(*monoclev1alpha1.Monocle)
	if !ok || !r.in[m.Namespace] {
		return
	}
	s := m.Status.Rollout
	if s == nil || s.Revision != r.revision || s.StartTime == nil {
		return
	}
	roll := fleetRoll{wave: s.Wave, cause: s.Cause, phase: s.Phase, start: s.StartTime.Time}
	if s.CompletionTime != nil {
		roll.end = s.CompletionTime.Time
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rolls := r.rolls[m.Namespace]
	if i := slices.IndexFunc(rolls, func(x fleetRoll) bool { return x.start.Equal(roll.start) }); i >= 0 {
		rolls[i] = roll
		return
	}
	r.rolls[m.Namespace] = append(rolls, roll)
}

func (r *fleetRecorder) pod(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok || !r.in[p.Namespace] || p.CreationTimestamp.Before(&metav1.Time{Time: r.since}) {
		return
	}
	switch p.Labels[resources.ComponentLabel] {
	case resources.ComponentAPI, resources.ComponentCrawler, resources.ComponentElastic:
	default:
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pods[p.Namespace] == nil {
		r.pods[p.Namespace] = map[types.UID]time.Time{}
	}
	r.pods[p.Namespace][p.UID] = p.CreationTimestamp.Time
}

// rollsByNamespace returns a copy of the rolls seen, by namespace.
func (r *fleetRecorder) rollsByNamespace() map[string][]fleetRoll {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]fleetRoll{}
	for ns, rolls := range r.rolls {
		out[ns] = slices.Clone(rolls)
	}
	return out
}

// monoclesOfWave is how many Monocles have had a roll of wave w.
func (r *fleetRecorder) monoclesOfWave(w int32) int {
	n := 0
	for _, rolls := range r.rollsByNamespace() {
		if slices.ContainsFunc(rolls, func(x fleetRoll) bool { return x.wave == w }) {
			n++
		}
	}
	return n
}

// inFlight names the Monocles whose roll is in flight, with its wave.
func (r *fleetRecorder) inFlight() string {
	var out []string
	for ns, rolls := range r.rollsByNamespace() {
		for _, x := range rolls {
			if x.end.IsZero() {
				out = append(out, fmt.Sprintf("%s (wave %d)", ns, x.wave))
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// check returns how many Monocles each wave rolled, the most Monocles whose pods were being
// replaced at one time (from the first to the last new pod of each, to the second), and what
// breaks the rule of waves: a roll not caused by a wave; a wave with more Monocles than
// waveSize, or numbered past a wave that rolled none; a roll in flight beside one of another
// wave, or beside more than its wave holds; a pod created before its Monocle's first roll
// started or after its last ended.
func (r *fleetRecorder) check() (waves []int, restarting int, problems []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	type span struct {
		ns         string
		wave       int32
		start, end time.Time
	}
	var spans []span
	byWave := map[int32]map[string]bool{}
	for ns, rolls := range r.rolls {
		for _, x := range rolls {
			if x.cause != monoclev1alpha1.RolloutCauseWave || x.wave < 1 {
				problems = append(problems, fmt.Sprintf("%s rolled by %s (wave %d)", ns, x.cause, x.wave))
				continue
			}
			if byWave[x.wave] == nil {
				byWave[x.wave] = map[string]bool{}
			}
			byWave[x.wave][ns] = true
			spans = append(spans, span{ns, x.wave, x.start, x.end})
		}
	}
	for w := int32(1); int(w) <= len(byWave); w++ {
		n := len(byWave[w])
		waves = append(waves, n)
		if n == 0 {
			problems = append(problems, fmt.Sprintf("waves %v: wave %d rolled no Monocle", byWave, w))
		} else if n > waveSize(w) {
			problems = append(problems, fmt.Sprintf("wave %d rolled %d Monocles, more than its %d", w, n, waveSize(w)))
		}
	}
	// Times are to the second: a roll is in flight from its start until, excluded, its end;
	// the next wave may start in the second the last one ended.
	for _, s := range spans {
		var with []string
		for _, o := range spans {
			if !o.start.After(s.start) && (o.end.IsZero() || o.end.After(s.start)) {
				with = append(with, fmt.Sprintf("%s (wave %d)", o.ns, o.wave))
				if o.wave != s.wave {
					problems = append(problems, fmt.Sprintf("%s's roll of wave %d started at %s while %s's of wave %d was in flight",
						s.ns, s.wave, s.start.Format(time.TimeOnly), o.ns, o.wave))
				}
			}
		}
		if len(with) > waveSize(s.wave) {
			problems = append(problems, fmt.Sprintf("at %s, %d rolls in flight: %s", s.start.Format(time.TimeOnly), len(with), strings.Join(with, ", ")))
		}
	}
	type restart struct{ first, last time.Time }
	var restarts []restart
	for ns, pods := range r.pods {
		var first, last time.Time
		for _, created := range pods {
			if first.IsZero() || created.Before(first) {
				first = created
			}
			last = later(last, created)
		}
		restarts = append(restarts, restart{first, last})
		rolls := r.rolls[ns]
		if len(rolls) == 0 {
			problems = append(problems, fmt.Sprintf("%s: %d pods created at %s without a roll", ns, len(pods), first.Format(time.TimeOnly)))
			continue
		}
		start, end := rolls[0].start, rolls[0].end
		for _, x := range rolls {
			if x.start.Before(start) {
				start = x.start
			}
			if end.IsZero() || x.end.IsZero() {
				end = time.Time{}
			} else {
				end = later(end, x.end)
			}
		}
		if first.Before(start) || (!end.IsZero() && last.After(end)) {
			problems = append(problems, fmt.Sprintf("%s: pods created %s → %s, outside its rolls %s", ns,
				first.Format(time.TimeOnly), last.Format(time.TimeOnly), describeRolls(rolls)))
		}
	}
	for _, s := range restarts {
		n := 0
		for _, o := range restarts {
			if !o.first.After(s.first) && !o.last.Before(s.first) {
				n++
			}
		}
		restarting = max(restarting, n)
	}
	sort.Strings(problems)
	return waves, restarting, slices.Compact(problems)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
