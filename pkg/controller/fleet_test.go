package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/rollout"
	listers "github.com/change-metrics/monocle-operator/pkg/generated/listers/monocle/v1alpha1"
)

// TestFleetAdmitsAWaveOnce: a wave's admission is reserved until the cache shows it, as the
// API server keeps it (to the second), and the fleet then reads it from the status alone.
func TestFleetAdmitsAWaveOnce(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	earlier := func(name string) *monoclev1alpha1.Monocle {
		m := newMonocle(name)
		m.Status.Rollout = &monoclev1alpha1.RolloutStatus{Revision: "v0.0.9", Phase: monoclev1alpha1.RolloutRolled}
		m.Status.Conditions = []metav1.Condition{{Type: monoclev1alpha1.ConditionReady, Status: metav1.ConditionTrue}}
		mustAdd(t, indexer, m)
		return m
	}
	a, b := earlier("a"), earlier("b")
	f, err := NewFleet(rollout.Policy{Strategy: rollout.Waves, MaxWave: 4, Soak: time.Minute, Deadline: time.Hour}, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	f.add(listers.NewMonocleLister(indexer), func(cache.ObjectName) {}, func() bool { return true })

	now := time.Date(2026, 12, 2, 10, 0, 0, 123456789, time.UTC)
	start := metav1.NewTime(now)
	started := monoclev1alpha1.RolloutStatus{Revision: "v0.1.0", Phase: monoclev1alpha1.RolloutRolling, Cause: monoclev1alpha1.RolloutCauseWave,
		ReadyBefore: true, StartTime: &start}
	if wave, ok, _ := f.admit(cache.MetaObjectToName(a), started, now); !ok || wave != 1 {
		t.Fatalf("the canary: admitted %v to wave %d", ok, wave)
	}
	if _, ok, plan := f.admit(cache.MetaObjectToName(b), started, now); ok || plan.Wave != 1 {
		t.Fatalf("b admitted while the canary's admission is reserved (plan %+v)", plan)
	}

	// The cache shows the admission, its time to the second, and then its roll done.
	a = a.DeepCopy()
	recorded := started
	recorded.Wave, recorded.StartTime = 1, &metav1.Time{Time: now.Truncate(time.Second)}
	a.Status.Rollout = &recorded
	mustAdd(t, indexer, a)
	f.mu.Lock()
	f.plan(now)
	if len(f.reserved) != 0 {
		t.Errorf("reservations once the cache shows the admission: %v", f.reserved)
	}
	f.mu.Unlock()
	a = a.DeepCopy()
	a.Status.Rollout.Phase = monoclev1alpha1.RolloutRolled
	mustAdd(t, indexer, a)
	if wave, ok, plan := f.admit(cache.MetaObjectToName(b), started, now.Add(2*time.Minute)); !ok || wave != 2 {
		t.Errorf("b after the canary's roll: admitted %v to wave %d (plan %+v)", ok, wave, plan)
	}
}
