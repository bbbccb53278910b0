// Package rollout decides how a change the operator makes of its own accord reaches the
// Monocles it watches: in waves behind a canary, each wave starting once every Monocle of
// the one before is Ready again and has stayed Ready for a soak time, the whole halting at
// the first Monocle that is not Ready again within a deadline. docs/fleet-rollouts.md
// states the rules for users.
//
// Everything here is pure: the fleet's state is derived from each Monocle's
// status.rollout, its conditions and its annotations (Member), so that a new leader, or the
// same one after a restart, reaches the decisions the last one would have.
package rollout

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// Strategy names how the fleet rolls (Policy.Strategy).
const (
	// Waves rolls one canary, then waves that double up to Policy.MaxWave Monocles.
	Waves = "waves"
	// AllAtOnce rolls every Monocle at once, as operators without staged rollouts do: for a
	// small cluster, or a test bed. A Monocle that is not Ready again within the deadline
	// is still reported Failed.
	AllAtOnce = "all-at-once"
)

// Policy is how the operator rolls its own changes out across the fleet (the flags
// --rollout-strategy, --rollout-max-wave, --rollout-soak and --rollout-deadline).
type Policy struct {
	// Strategy is Waves or AllAtOnce.
	Strategy string
	// MaxWave is the largest wave, in Monocles, at least 1.
	MaxWave int
	// Soak is how long each Monocle of a wave stays Ready after its roll before the next
	// wave starts.
	Soak time.Duration
	// Deadline is how long a Monocle of a wave has to be Ready again after its roll starts;
	// past it, the roll has failed and the fleet rollout halts.
	Deadline time.Duration
}

// DefaultPolicy is the rollout the operator's flags --rollout-* give by default: waves of up
// to 16 Monocles, each Ready for 2 minutes before the next, 15 minutes for each to be Ready
// again.
var DefaultPolicy = Policy{Strategy: Waves, MaxWave: 16, Soak: 2 * time.Minute, Deadline: 15 * time.Minute}

// Validate returns an error naming the first field out of range.
func (p Policy) Validate() error {
	switch {
	case p.Strategy != Waves && p.Strategy != AllAtOnce:
		return fmt.Errorf("rollout strategy %q is neither %q nor %q", p.Strategy, Waves, AllAtOnce)
	case p.MaxWave < 1:
		return fmt.Errorf("the largest rollout wave is %d Monocles, want at least 1", p.MaxWave)
	case p.Soak < 0:
		return fmt.Errorf("the rollout soak time %s is negative", p.Soak)
	case p.Deadline <= 0:
		return fmt.Errorf("the rollout deadline %s is not positive", p.Deadline)
	}
	return nil
}

// WaveSize is the number of Monocles wave n (from 1) rolls: 1, 2, 4 … doubling up to
// MaxWave; unbounded with AllAtOnce.
func (p Policy) WaveSize(n int32) int {
	if p.Strategy == AllAtOnce {
		return int(^uint(0) >> 1)
	}
	size := 1
	for i := int32(1); i < n && size < p.MaxWave; i++ {
		size *= 2
	}
	return min(size, p.MaxWave)
}

// Class orders the Monocles waiting for a wave: canaries first, the held-back last.
type Class int

// Classes of RolloutAnnotation.
const (
	Canary Class = iota
	Normal
	Last
)

func (c Class) String() string {
	return [...]string{"canary", "normal", "last"}[c]
}

// ClassOf reads m's RolloutAnnotation.
func ClassOf(m *monoclev1alpha1.Monocle) Class {
	switch m.Annotations[monoclev1alpha1.RolloutAnnotation] {
	case monoclev1alpha1.RolloutCanary:
		return Canary
	case monoclev1alpha1.RolloutLast:
		return Last
	}
	return Normal
}

// Member is what the fleet plan reads of one Monocle.
type Member struct {
	Key    cache.ObjectName
	Class  Class
	Paused bool
	// Ready is the Monocle's Ready condition, true when True.
	Ready bool
	// Rollout is its status.rollout (zero when it has none).
	Rollout monoclev1alpha1.RolloutStatus
}

// MemberOf is the Member of m.
func MemberOf(m *monoclev1alpha1.Monocle) Member {
	mem := Member{
		Key:    cache.MetaObjectToName(m),
		Class:  ClassOf(m),
		Paused: m.Annotations[monoclev1alpha1.PausedAnnotation] == "true",
		Ready:  apimeta.IsStatusConditionTrue(m.Status.Conditions, monoclev1alpha1.ConditionReady),
	}
	if m.Status.Rollout != nil {
		mem.Rollout = *m.Status.Rollout
	}
	return mem
}

// State is where a Monocle stands in the fleet rollout of a revision, as `kubectl monocle
// rollout status` and the metric monocle_operator_rollout_monocles show it.
type State string

// States of a Monocle in the fleet rollout of a revision.
const (
	// StateCurrent: the workloads run the revision's templates, and their roll is done.
	StateCurrent State = "current"
	// StateRolling: the roll to the revision is under way (written, soaking).
	StateRolling State = "rolling"
	// StatePending: the Monocle waits for its wave.
	StatePending State = "pending"
	// StateFailed: the roll failed; the rollout is halted.
	StateFailed State = "failed"
	// StatePaused: the Monocle is paused (PausedAnnotation); the rollout passes it by.
	StatePaused State = "paused"
)

// States lists every State, in the order of a roll.
var States = []State{StateCurrent, StateRolling, StatePending, StateFailed, StatePaused}

// StateOf is where m stands in the rollout of revision at now.
func (p Policy) StateOf(m Member, revision string, now time.Time) State {
	r := m.Rollout
	switch {
	case m.Paused:
		return StatePaused
	case r.Phase == monoclev1alpha1.RolloutFailed || p.overdue(r, now):
		return StateFailed
	case r.Revision != revision:
		return StatePending
	case r.Phase == monoclev1alpha1.RolloutRolling:
		return StateRolling
	}
	return StateCurrent
}

// overdue reports whether a roll the fleet waits for is past the deadline at now: the
// Monocle's own sync marks it Failed, and the plan counts it failed before that.
func (p Policy) overdue(r monoclev1alpha1.RolloutStatus, now time.Time) bool {
	return r.Phase == monoclev1alpha1.RolloutRolling && r.ReadyBefore && r.StartTime != nil &&
		!now.Before(r.StartTime.Add(p.Deadline))
}

// Plan is the fleet rollout of a revision at one time.
type Plan struct {
	// Revision is the operator release rolled out.
	Revision string
	// Wave is the last wave started, from 1; 0 before the first.
	Wave int32
	// Halted is set while a Monocle's roll has failed: no wave starts.
	Halted bool
	// Failed are the Monocles whose roll failed, by key.
	Failed []cache.ObjectName
	// Next are the Monocles that may start their roll now, as wave NextWave: the rest of
	// the current wave, or the next wave once the current one is done.
	Next     []cache.ObjectName
	NextWave int32
	// Pending are the Monocles waiting for their wave, in the order the waves take them;
	// Expected is the wave each is to be in as the fleet stands: the rest of the current
	// wave, then waves of WaveSize, none of two classes.
	Pending  []cache.ObjectName
	Expected map[cache.ObjectName]int32
	// Counts are the Monocles in each State.
	Counts map[State]int
	// Waiting says what the pending Monocles wait for, for their RolloutHeld condition.
	Waiting string
}

// NewPlan is the plan of the rollout of revision over members at now.
//
// A wave is done when each Monocle it rolled that was Ready before its roll is Rolled:
// Ready again, and for the soak time (Judge). The next wave then takes the Monocles
// waiting, in order (canaries, then the others, then those marked last; within each, Ready
// ones before the others, then by namespace and name), as many as WaveSize allows, and
// never Monocles of two classes. A wave under way and not yet full (its members are admitted
// one sync at a time) takes more Monocles of its class while it has room. A failed roll
// halts it all.
func (p Policy) NewPlan(revision string, members []Member, now time.Time) Plan {
	plan := Plan{Revision: revision, Counts: map[State]int{}, Expected: map[cache.ObjectName]int32{}}
	var pending []Member
	var inFlight []Member
	waveMembers := map[int32][]Member{}
	for _, m := range members {
		state := p.StateOf(m, revision, now)
		plan.Counts[state]++
		switch state {
		case StateFailed:
			plan.Failed = append(plan.Failed, m.Key)
		case StatePending:
			pending = append(pending, m)
		}
		if state == StateRolling || (state == StatePending && m.Rollout.Phase == monoclev1alpha1.RolloutRolling) {
			// A roll of this or an earlier revision is under way: it holds the next wave
			// while the fleet waits for it.
			if m.Rollout.ReadyBefore {
				inFlight = append(inFlight, m)
			}
		}
		if m.Rollout.Revision == revision && m.Rollout.Cause == monoclev1alpha1.RolloutCauseWave && state != StatePaused {
			plan.Wave = max(plan.Wave, m.Rollout.Wave)
			waveMembers[m.Rollout.Wave] = append(waveMembers[m.Rollout.Wave], m)
		}
	}
	slices.SortFunc(plan.Failed, compareKeys)
	slices.SortFunc(pending, func(a, b Member) int {
		return cmp.Or(cmp.Compare(a.Class, b.Class), compareBool(b.Ready, a.Ready), compareKeys(a.Key, b.Key))
	})
	if p.Strategy == AllAtOnce {
		// One wave: no class waits for another.
		for i := range pending {
			pending[i].Class = Normal
		}
		for i := range waveMembers[plan.Wave] {
			waveMembers[plan.Wave][i].Class = Normal
		}
	}
	current := waveMembers[plan.Wave]
	open := slices.ContainsFunc(current, func(m Member) bool { return m.Rollout.Phase == monoclev1alpha1.RolloutRolling })
	if !open {
		current = nil
	}
	p.expect(&plan, pending, current)
	if len(plan.Failed) > 0 {
		plan.Halted = true
		plan.Waiting = fmt.Sprintf("the rollout of %s is halted: %s not Ready again within %s; `kubectl monocle rollout resume` goes on once it is fixed",
			revision, keyList(plan.Failed), p.Deadline)
		return plan
	}
	if len(pending) == 0 {
		return plan
	}
	if room := p.WaveSize(plan.Wave) - len(current); open && room > 0 {
		// The current wave, under way, has room for more of its class: its members are
		// admitted one sync at a time. Once it is done, a Monocle that never came to take
		// its place (its syncs fail before the rollout phase) waits for the next wave.
		class := current[0].Class
		for _, m := range pending {
			if m.Class != class || len(plan.Next) == room {
				break
			}
			plan.Next = append(plan.Next, m.Key)
		}
		if len(plan.Next) > 0 {
			plan.NextWave = plan.Wave
			return plan
		}
	}
	if len(inFlight) > 0 {
		slices.SortFunc(inFlight, func(a, b Member) int { return compareKeys(a.Key, b.Key) })
		keys := make([]cache.ObjectName, len(inFlight))
		for i, m := range inFlight {
			keys[i] = m.Key
		}
		if plan.Wave == 0 {
			plan.Waiting = fmt.Sprintf("a roll of an earlier revision is under way: the first wave of the rollout of %s starts once %s %s Ready for %s",
				revision, keyList(keys), isAre(len(keys)), p.Soak)
		} else {
			plan.Waiting = fmt.Sprintf("wave %d of the rollout of %s is under way: the next wave starts once %s %s Ready for %s",
				plan.Wave, revision, keyList(keys), isAre(len(keys)), p.Soak)
		}
		return plan
	}
	plan.NextWave = plan.Wave + 1
	size, class := p.WaveSize(plan.NextWave), pending[0].Class
	for _, m := range pending {
		if m.Class != class || len(plan.Next) == size {
			break
		}
		plan.Next = append(plan.Next, m.Key)
	}
	plan.Waiting = fmt.Sprintf("wave %d of the rollout of %s starts with %s", plan.NextWave, revision, keyList(plan.Next))
	return plan
}

// expect fills plan.Pending and plan.Expected from pending, in order, and current, the
// members of the current wave while it is under way (nil once it is done).
func (p Policy) expect(plan *Plan, pending, current []Member) {
	wave, room, class := plan.Wave, 0, Normal
	if wave > 0 && len(current) > 0 {
		room, class = p.WaveSize(wave)-len(current), current[0].Class
	}
	for _, m := range pending {
		if room <= 0 || m.Class != class {
			wave++
			room, class = p.WaveSize(wave), m.Class
		}
		plan.Pending = append(plan.Pending, m.Key)
		plan.Expected[m.Key] = wave
		room--
	}
}

// Admits reports whether key may start its roll now.
func (p Plan) Admits(key cache.ObjectName) bool { return slices.Contains(p.Next, key) }

// Judge is what a sync makes of the roll r of a Monocle whose conditions are conditions, at
// now: while it is Rolling, Rolled once Ready is True and Progressing False since at least
// the soak time (and the roll's start), Failed once the deadline has passed without that
// for a Monocle that was Ready before; after is when to look again (0: no need). A roll the
// fleet does not wait for (ReadyBefore false) never fails.
func (p Policy) Judge(r monoclev1alpha1.RolloutStatus, conditions []metav1.Condition, now time.Time) (out monoclev1alpha1.RolloutStatus, after time.Duration) {
	if r.Phase != monoclev1alpha1.RolloutRolling || r.StartTime == nil {
		return r, 0
	}
	ready := apimeta.FindStatusCondition(conditions, monoclev1alpha1.ConditionReady)
	progressing := apimeta.FindStatusCondition(conditions, monoclev1alpha1.ConditionProgressing)
	start := r.StartTime.Time
	if ready != nil && ready.Status == metav1.ConditionTrue && (progressing == nil || progressing.Status == metav1.ConditionFalse) {
		since := start
		for _, c := range []*metav1.Condition{ready, progressing} {
			if c != nil && c.LastTransitionTime.After(since) {
				since = c.LastTransitionTime.Time
			}
		}
		if done := since.Add(p.Soak); !now.Before(done) {
			r.Phase, r.CompletionTime = monoclev1alpha1.RolloutRolled, &metav1.Time{Time: now}
			r.Message = fmt.Sprintf("Ready for %s after the roll to %s", p.Soak, r.Revision)
			return r, 0
		} else {
			r.Message = fmt.Sprintf("Ready again; soaking until %s", done.UTC().Format(time.RFC3339))
			return r, done.Sub(now)
		}
	}
	if !r.ReadyBefore {
		r.Message = "Rolling; the fleet does not wait for this Monocle, which was not Ready before its roll"
		return r, 0
	}
	deadline := start.Add(p.Deadline)
	if !now.Before(deadline) {
		why := "no Ready condition"
		if ready != nil {
			why = ready.Message
		}
		r.Phase, r.CompletionTime = monoclev1alpha1.RolloutFailed, &metav1.Time{Time: now}
		r.Message = truncate(fmt.Sprintf("Not Ready again within %s of the roll to %s: %s", p.Deadline, r.Revision, why))
		return r, 0
	}
	r.Message = fmt.Sprintf("Rolling; Ready again is due by %s", deadline.UTC().Format(time.RFC3339))
	return r, deadline.Sub(now)
}

func compareKeys(a, b cache.ObjectName) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// keyList names up to five keys, then how many more.
func keyList(keys []cache.ObjectName) string {
	names := make([]string, 0, 5)
	for i, k := range keys {
		if i == 5 {
			names = append(names, fmt.Sprintf("%d more", len(keys)-5))
			break
		}
		names = append(names, k.String())
	}
	return strings.Join(names, ", ")
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// truncate keeps a message within what a condition's message holds comfortably.
func truncate(s string) string {
	const limit = 1024
	if len(s) <= limit {
		return s
	}
	return s[:limit-3] + "..."
}
