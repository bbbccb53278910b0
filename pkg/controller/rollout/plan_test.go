package rollout

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

var (
	t0     = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	policy = Policy{Strategy: Waves, MaxWave: 4, Soak: time.Minute, Deadline: 10 * time.Minute}
)

const rev = "v0.3.0"

func key(name string) cache.ObjectName { return cache.ObjectName{Namespace: "ns", Name: name} }

// pending is a Ready Monocle an earlier release rolled.
func pending(name string) Member {
	return Member{Key: key(name), Class: Normal, Ready: true, Rollout: monoclev1alpha1.RolloutStatus{Revision: "v0.2.0", Phase: monoclev1alpha1.RolloutRolled}}
}

// inWave is a Monocle wave rolled, started at start, in phase.
func inWave(name string, wave int32, phase monoclev1alpha1.RolloutPhase, start time.Time) Member {
	return Member{Key: key(name), Class: Normal, Ready: true, Rollout: monoclev1alpha1.RolloutStatus{Revision: rev, Phase: phase,
		Cause: monoclev1alpha1.RolloutCauseWave, Wave: wave, ReadyBefore: true, StartTime: &metav1.Time{Time: start}}}
}

func names(keys []cache.ObjectName) string {
	var out []string
	for _, k := range keys {
		out = append(out, k.Name)
	}
	return strings.Join(out, ",")
}

func TestWaveSize(t *testing.T) {
	var got []int
	for n := int32(1); n <= 6; n++ {
		got = append(got, policy.WaveSize(n))
	}
	if want := []int{1, 2, 4, 4, 4, 4}; !slices.Equal(got, want) {
		t.Errorf("wave sizes with MaxWave 4: %v, want %v", got, want)
	}
	all := Policy{Strategy: AllAtOnce, MaxWave: 4, Deadline: time.Minute}
	if all.WaveSize(1) < 1000 {
		t.Errorf("all at once: the first wave holds %d", all.WaveSize(1))
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := policy.Validate(); err != nil {
		t.Errorf("valid policy: %v", err)
	}
	for _, bad := range []Policy{
		{Strategy: "fast", MaxWave: 1, Deadline: time.Minute},
		{Strategy: Waves, MaxWave: 0, Deadline: time.Minute},
		{Strategy: Waves, MaxWave: 1, Soak: -time.Second, Deadline: time.Minute},
		{Strategy: Waves, MaxWave: 1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestPlanWaves walks a fleet of eight through its rollout: the canary alone, then waves of
// 2 and 4, each once the one before has soaked.
func TestPlanWaves(t *testing.T) {
	fleet := []Member{pending("h"), pending("b"), pending("c"), pending("d"), pending("e"), pending("f"), pending("g"), pending("a")}
	canary := pending("z")
	canary.Class = Canary
	fleet = append(fleet, canary)

	plan := policy.NewPlan(rev, fleet, t0)
	if plan.NextWave != 1 || names(plan.Next) != "z" {
		t.Fatalf("first wave: %d %q, want the marked canary alone", plan.NextWave, names(plan.Next))
	}
	fleet[8] = inWave("z", 1, monoclev1alpha1.RolloutRolling, t0)
	fleet[8].Class = Canary
	plan = policy.NewPlan(rev, fleet, t0.Add(time.Second))
	if len(plan.Next) != 0 || plan.Wave != 1 || !strings.Contains(plan.Waiting, "ns/z is Ready") {
		t.Fatalf("while the canary rolls: next %q, wave %d, waiting %q", names(plan.Next), plan.Wave, plan.Waiting)
	}
	if plan.Counts[StateRolling] != 1 || plan.Counts[StatePending] != 8 {
		t.Errorf("counts while the canary rolls: %v", plan.Counts)
	}
	fleet[8].Rollout.Phase = monoclev1alpha1.RolloutRolled
	plan = policy.NewPlan(rev, fleet, t0.Add(2*time.Minute))
	if plan.NextWave != 2 || names(plan.Next) != "a,b" {
		t.Fatalf("second wave: %d %q, want a,b", plan.NextWave, names(plan.Next))
	}
	// One of wave 2 admitted: the wave has room for one more.
	fleet[7] = inWave("a", 2, monoclev1alpha1.RolloutRolling, t0.Add(2*time.Minute))
	plan = policy.NewPlan(rev, fleet, t0.Add(2*time.Minute))
	if plan.NextWave != 2 || names(plan.Next) != "b" {
		t.Fatalf("the rest of wave 2: %d %q, want b", plan.NextWave, names(plan.Next))
	}
	fleet[1] = inWave("b", 2, monoclev1alpha1.RolloutRolling, t0.Add(2*time.Minute))
	fleet[7].Rollout.Phase = monoclev1alpha1.RolloutRolled
	plan = policy.NewPlan(rev, fleet, t0.Add(4*time.Minute))
	if len(plan.Next) != 0 {
		t.Fatalf("wave 3 started while b of wave 2 rolls: %q", names(plan.Next))
	}
	fleet[1].Rollout.Phase = monoclev1alpha1.RolloutRolled
	plan = policy.NewPlan(rev, fleet, t0.Add(5*time.Minute))
	if plan.NextWave != 3 || names(plan.Next) != "c,d,e,f" {
		t.Fatalf("third wave: %d %q, want c,d,e,f", plan.NextWave, names(plan.Next))
	}
}

// TestPlanOrder: canaries first, Ready before not Ready, those marked last at the end, and
// no wave mixes two classes.
func TestPlanOrder(t *testing.T) {
	notReady := pending("a")
	notReady.Ready = false
	last := pending("b")
	last.Class = Last
	fleet := []Member{notReady, last, pending("c")}
	plan := policy.NewPlan(rev, fleet, t0)
	if names(plan.Next) != "c" {
		t.Fatalf("the default canary: %q, want the first Ready unmarked Monocle, c", names(plan.Next))
	}
	if names(plan.Pending) != "c,a,b" || plan.Expected[key("c")] != 1 || plan.Expected[key("a")] != 2 || plan.Expected[key("b")] != 3 {
		t.Errorf("expected waves: %q %v, want c in 1, a in 2, b in 3", names(plan.Pending), plan.Expected)
	}
	fleet[2] = inWave("c", 1, monoclev1alpha1.RolloutRolled, t0)
	plan = policy.NewPlan(rev, fleet, t0.Add(time.Hour))
	if names(plan.Next) != "a" {
		t.Fatalf("wave 2: %q, want a alone (b is held to the last wave)", names(plan.Next))
	}
	// a was not Ready: the fleet does not wait for it.
	fleet[0] = inWave("a", 2, monoclev1alpha1.RolloutRolling, t0.Add(time.Hour))
	fleet[0].Rollout.ReadyBefore = false
	plan = policy.NewPlan(rev, fleet, t0.Add(time.Hour+time.Second))
	if plan.NextWave != 3 || names(plan.Next) != "b" {
		t.Fatalf("wave 3: %d %q, want b", plan.NextWave, names(plan.Next))
	}
}

// TestPlanHalts: a failed roll, or one past its deadline that its sync has not marked yet,
// halts the rollout; a paused Monocle is passed by.
func TestPlanHalts(t *testing.T) {
	paused := pending("p")
	paused.Paused = true
	for _, failing := range []Member{
		inWave("a", 1, monoclev1alpha1.RolloutFailed, t0),
		inWave("a", 1, monoclev1alpha1.RolloutRolling, t0.Add(-11*time.Minute)),
	} {
		plan := policy.NewPlan(rev, []Member{failing, pending("b"), paused}, t0)
		if !plan.Halted || len(plan.Next) != 0 || names(plan.Failed) != "a" || !strings.Contains(plan.Waiting, "halted") {
			t.Errorf("%s: halted %v, next %q, failed %q, waiting %q", failing.Rollout.Phase, plan.Halted, names(plan.Next), names(plan.Failed), plan.Waiting)
		}
		if plan.Counts[StatePaused] != 1 || plan.Counts[StateFailed] != 1 || plan.Counts[StatePending] != 1 {
			t.Errorf("counts: %v", plan.Counts)
		}
	}
	// A roll of an earlier revision under way holds the first wave of this one.
	earlier := inWave("a", 3, monoclev1alpha1.RolloutRolling, t0)
	earlier.Rollout.Revision = "v0.2.5"
	plan := policy.NewPlan(rev, []Member{earlier, pending("b")}, t0.Add(time.Minute))
	if len(plan.Next) != 0 {
		t.Errorf("a wave started while an earlier revision's roll is under way: %q", names(plan.Next))
	}
}

func TestPlanAllAtOnce(t *testing.T) {
	all := Policy{Strategy: AllAtOnce, MaxWave: 1, Soak: time.Minute, Deadline: time.Minute}
	var fleet []Member
	for i := range 40 {
		fleet = append(fleet, pending(fmt.Sprintf("m%02d", i)))
	}
	fleet[3].Class, fleet[7].Class = Canary, Last
	if plan := all.NewPlan(rev, fleet, t0); len(plan.Next) != 40 || plan.NextWave != 1 {
		t.Errorf("all at once admits %d of 40 in wave %d, want all in one", len(plan.Next), plan.NextWave)
	}
}

func conditions(ready metav1.ConditionStatus, readySince time.Time, progressing metav1.ConditionStatus, progressingSince time.Time) []metav1.Condition {
	return []metav1.Condition{
		{Type: monoclev1alpha1.ConditionReady, Status: ready, LastTransitionTime: metav1.NewTime(readySince), Message: "Waiting for api 0/1 ready"},
		{Type: monoclev1alpha1.ConditionProgressing, Status: progressing, LastTransitionTime: metav1.NewTime(progressingSince)},
	}
}

func TestJudge(t *testing.T) {
	rolling := inWave("a", 1, monoclev1alpha1.RolloutRolling, t0).Rollout
	// Ready all along, the rollout of the workloads done a minute and a half after the start.
	done := conditions(metav1.ConditionTrue, t0.Add(-time.Hour), metav1.ConditionFalse, t0.Add(90*time.Second))
	r, after := policy.Judge(rolling, done, t0.Add(2*time.Minute))
	if r.Phase != monoclev1alpha1.RolloutRolling || after != 30*time.Second {
		t.Errorf("soaking: %s, again after %s; want Rolling, 30s", r.Phase, after)
	}
	r, after = policy.Judge(rolling, done, t0.Add(150*time.Second))
	if r.Phase != monoclev1alpha1.RolloutRolled || r.CompletionTime == nil || after != 0 {
		t.Errorf("soaked: %s %v %s; want Rolled", r.Phase, r.CompletionTime, after)
	}
	down := conditions(metav1.ConditionFalse, t0.Add(time.Second), metav1.ConditionTrue, t0.Add(time.Second))
	r, after = policy.Judge(rolling, down, t0.Add(time.Minute))
	if r.Phase != monoclev1alpha1.RolloutRolling || after != 9*time.Minute {
		t.Errorf("not Ready yet: %s, again after %s; want Rolling, 9m", r.Phase, after)
	}
	r, _ = policy.Judge(rolling, down, t0.Add(10*time.Minute))
	if r.Phase != monoclev1alpha1.RolloutFailed || !strings.Contains(r.Message, "Waiting for api 0/1 ready") {
		t.Errorf("past the deadline: %s %q; want Failed with Ready's message", r.Phase, r.Message)
	}
	unjudged := rolling
	unjudged.ReadyBefore = false
	if r, _ := policy.Judge(unjudged, down, t0.Add(time.Hour)); r.Phase != monoclev1alpha1.RolloutRolling {
		t.Errorf("a roll the fleet does not wait for failed: %s", r.Phase)
	}
	for _, other := range []monoclev1alpha1.RolloutPhase{monoclev1alpha1.RolloutRolled, monoclev1alpha1.RolloutFailed} {
		r := rolling
		r.Phase = other
		if got, _ := policy.Judge(r, done, t0.Add(time.Hour)); got.Phase != other || got.Message != r.Message {
			t.Errorf("Judge changed a %s roll: %+v", other, got)
		}
	}
}
