package controller

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// TestTransitionEventsGoWithTheStatusWrite: while a starting Monocle's status write is spaced
// (startProgressInterval), a transition the sync found (here a snapshot that succeeded) is
// recorded once, by the sync that writes the status carrying it, not by every sync that finds
// it and leaves the write for later.
func TestTransitionEventsGoWithTheStatusWrite(t *testing.T) {
	f := newFixture(t)
	m := newMonocle("demo")
	m.Status = monoclev1alpha1.MonocleStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
		{Type: monoclev1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: reasons.Starting, ObservedGeneration: 1},
	}}
	// The status a sync that found nothing new writes: only the snapshot differs below.
	_, base := newSyncState(t.Context(), m, time.Now())
	m.Status = computeStatus(base, classify(nil))
	if !starting(m.Status) {
		t.Fatalf("the Monocle does not start: %+v", m.Status.Conditions)
	}
	f.monocles = append(f.monocles, m)
	c := f.newController()
	_, ctx := ktesting.NewTestContext(t)
	key := cache.MetaObjectToName(m)
	sync := func() {
		t.Helper()
		ctx, st := newSyncState(ctx, m.DeepCopy(), time.Now())
		st.status.Backup = &monoclev1alpha1.BackupStatus{LastSuccessful: &monoclev1alpha1.SnapshotStatus{Name: "snap-1"}}
		if err := c.finishSync(ctx, st); err != nil {
			t.Fatalf("finishSync: %v", err)
		}
	}
	succeeded := func() (n int) {
		for len(f.recorder.Events) > 0 {
			if e := <-f.recorder.Events; strings.HasPrefix(e, "Normal "+reasons.BackupSucceeded) {
				n++
			}
		}
		return n
	}

	c.progress.wrote(key, time.Now())
	for range 3 {
		sync()
	}
	if n := len(writes(f.client.Actions())); n != 0 {
		t.Fatalf("%d status writes within startProgressInterval of the last, want them left for later", n)
	}
	if n := succeeded(); n != 0 {
		t.Errorf("%d BackupSucceeded events while the status that carries the snapshot is not written, want none yet", n)
	}

	c.progress.wrote(key, time.Now().Add(-startProgressInterval))
	sync()
	if n := len(writes(f.client.Actions())); n != 1 {
		t.Fatalf("%d status writes once startProgressInterval ran, want 1", n)
	}
	if n := succeeded(); n != 1 {
		t.Errorf("%d BackupSucceeded events with the write that carries the snapshot, want 1", n)
	}
}
