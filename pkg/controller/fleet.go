package controller

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/rollout"
	listers "github.com/change-metrics/monocle-operator/pkg/generated/listers/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/version"
)

// Fleet coordinates the rollout of the operator's own changes across the Monocles it
// watches (package rollout): one Fleet serves every Controller of a process (one per
// namespace of --namespaces), so that the waves span them all. It keeps no state of its own
// but the admissions whose status write the caches do not show yet: each plan is derived
// from the Monocles' status.rollout. Create it with NewFleet.
type Fleet struct {
	policy rollout.Policy
	// revision is the release whose templates this operator writes.
	revision string

	mu sync.Mutex
	// sources are the Monocle caches of the controllers, with their queues.
	sources []fleetSource
	// running is set once run started.
	running bool
	// reserved are the Monocles admitted to a wave, by key, with the status.rollout that
	// records the admission, until the cache shows it: two workers, or two syncs in a row,
	// then never admit more Monocles than the wave holds.
	reserved map[cache.ObjectName]monoclev1alpha1.RolloutStatus
}

// fleetTick is how often the fleet's plan is computed again (metrics, and the Monocles
// that may start their roll are synced): the Monocles' own status writes end a soak or a
// roll, and the next tick starts the next wave.
const fleetTick = 2 * time.Second

// fleetSource is one controller's cache of Monocles and its queue.
type fleetSource struct {
	lister  listers.MonocleLister
	enqueue func(cache.ObjectName)
	synced  cache.InformerSynced
}

// NewFleet returns the Fleet that rolls the templates of revision (the operator's release:
// version.Version when "") as policy says, or an error naming a field of policy out of range.
func NewFleet(policy rollout.Policy, revision string) (*Fleet, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	return &Fleet{policy: policy, revision: cmp.Or(revision, version.Version), reserved: map[cache.ObjectName]monoclev1alpha1.RolloutStatus{}}, nil
}

// add makes the Monocles of lister part of the fleet; enqueue syncs one of them.
// until synced reports that its cache has synced.
func (f *Fleet) add(lister listers.MonocleLister, enqueue func(cache.ObjectName), synced cache.InformerSynced) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sources = append(f.sources, fleetSource{lister, enqueue, synced})
}

// plan is the fleet's plan at now, with the reservations; mu is held. Until every cache has
// synced, a Monocle rolling in one not yet read could be missed: the plan then admits none.
func (f *Fleet) plan(now time.Time) rollout.Plan {
	var members []rollout.Member
	for _, src := range f.sources {
		if !src.synced() {
			return rollout.Plan{Revision: f.revision, Counts: map[rollout.State]int{}, Waiting: "the operator reads the Monocles of every namespace it watches first"}
		}
		members = f.appendMembers(members, src.lister)
	}
	return f.policy.NewPlan(f.revision, members, now)
}

// appendMembers appends to members those of lister's Monocles, with the reservations; mu is
// held.
func (f *Fleet) appendMembers(members []rollout.Member, lister listers.MonocleLister) []rollout.Member {
	monocles, err := lister.List(labels.Everything())
	if err != nil {
		// The lister reads a cache; it fails only on a broken selector.
		klog.Background().Error(err, "Listing Monocles for the fleet rollout")
	}
	for _, m := range monocles {
		mem := rollout.MemberOf(m)
		if r, ok := f.reserved[mem.Key]; ok {
			// The API server keeps times to the second.
			if mem.Rollout.Revision == r.Revision && mem.Rollout.StartTime != nil && !mem.Rollout.StartTime.Time.Before(r.StartTime.Truncate(time.Second)) {
				delete(f.reserved, mem.Key)
			} else {
				mem.Rollout = r
			}
		}
		members = append(members, mem)
	}
	return members
}

// admit reserves a place in the rollout's current wave for key at now, when the plan has one
// for it, and returns the wave; otherwise it returns the plan that holds key back. The
// caller writes the status.rollout of the admission (started) and calls release when that
// write fails.
func (f *Fleet) admit(key cache.ObjectName, started monoclev1alpha1.RolloutStatus, now time.Time) (int32, bool, rollout.Plan) {
	f.mu.Lock()
	defer f.mu.Unlock()
	plan := f.plan(now)
	if !plan.Admits(key) {
		return 0, false, plan
	}
	started.Wave = plan.NextWave
	f.reserved[key] = started
	return plan.NextWave, true, plan
}

// release drops the reservation of key, whose admission was not written.
func (f *Fleet) release(key cache.ObjectName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.reserved, key)
}

// run computes the plan every fleetTick until ctx ends: it sets the rollout metrics and
// enqueues the Monocles that may start their roll. Every Controller calls it; the first
// call runs, the others return at once.
func (f *Fleet) run(ctx context.Context) {
	f.mu.Lock()
	if f.running {
		f.mu.Unlock()
		return
	}
	f.running = true
	f.mu.Unlock()
	ticker := time.NewTicker(fleetTick)
	defer ticker.Stop()
	halted := false
	for {
		f.mu.Lock()
		plan := f.plan(time.Now())
		sources := slices.Clone(f.sources)
		f.mu.Unlock()
		recordRolloutMetrics(plan)
		wake := plan.Next
		if plan.Halted != halted {
			// The waiting Monocles' RolloutHeld tells the halt, and its end.
			halted = plan.Halted
			wake = plan.Pending
		}
		for _, key := range wake {
			for _, src := range sources {
				if _, err := src.lister.Monocles(key.Namespace).Get(key.Name); err == nil {
					src.enqueue(key)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// The metrics of the fleet rollout of this operator's revision.
var (
	rolloutMonocles = operand.NewGaugeVec("rollout_monocles",
		"Monocles by state in the fleet rollout of the operator's templates: current, rolling, pending, failed, paused.",
		[]string{"state"})
	rolloutWave = operand.NewGaugeVec("rollout_wave",
		"The last wave started of the fleet rollout of the operator's templates, labelled with the operator release (revision); 0 before the first.",
		[]string{"revision"})
	rolloutHalted = operand.NewGaugeVec("rollout_halted",
		"1 while the fleet rollout of the operator's templates is halted by a Monocle that was not Ready again within the deadline, else 0.",
		[]string{"revision"})
)

// recordRolloutMetrics sets the rollout metrics from plan.
func recordRolloutMetrics(plan rollout.Plan) {
	for _, s := range rollout.States {
		rolloutMonocles.WithLabelValues(string(s)).Set(float64(plan.Counts[s]))
	}
	rolloutWave.WithLabelValues(plan.Revision).Set(float64(plan.Wave))
	halted := 0.0
	if plan.Halted {
		halted = 1
	}
	rolloutHalted.WithLabelValues(plan.Revision).Set(halted)
}
