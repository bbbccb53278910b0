package controller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

func TestOwnedObjectEnqueuesOwner(t *testing.T) {
	m := newMonocle("demo")
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	c := f.newController()

	owned := resources.NewAPIService(m)
	c.handleObject(owned)
	if c.queue.Len() != 1 {
		t.Fatalf("queue length after an owned object's event = %d, want 1", c.queue.Len())
	}
	key, _ := c.queue.Get()
	c.queue.Done(key)
	if key != (cache.ObjectName{Namespace: m.Namespace, Name: m.Name}) {
		t.Errorf("enqueued %v", key)
	}

	stale := newMonocle("demo")
	stale.UID = "old-uid"
	c.handleObject(resources.NewAPIService(stale))
	unowned := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: m.Namespace}}
	c.handleObject(unowned)
	c.handleObject(cache.DeletedFinalStateUnknown{Key: "default/x", Obj: unowned})
	if c.queue.Len() != 0 {
		t.Errorf("objects of another owner enqueued %d keys", c.queue.Len())
	}
}

func TestStatusOnlyChangesAreCoalesced(t *testing.T) {
	m := newMonocle("demo")
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	c := f.newController()

	old := resources.NewAPIDeployment(m, resources.Inputs{})
	old.Generation, old.ResourceVersion = 1, "1"
	ready := old.DeepCopy()
	ready.ResourceVersion, ready.Status.ReadyReplicas = "2", 1
	c.handleObjectUpdate(old, ready)
	if n := c.queue.Len(); n != 0 {
		t.Fatalf("a status-only change was enqueued at once (%d keys)", n)
	}
	// The key arrives once the delay has passed.
	deadline := time.Now().Add(statusSyncDelay + 2*time.Second)
	for c.queue.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if c.queue.Len() != 1 {
		t.Fatalf("the status-only change never enqueued its Monocle")
	}
	key, _ := c.queue.Get()
	c.queue.Done(key)

	scaled := ready.DeepCopy()
	scaled.ResourceVersion, scaled.Generation, scaled.Spec.Replicas = "3", 2, ptr.To[int32](0)
	c.handleObjectUpdate(ready, scaled)
	if n := c.queue.Len(); n != 1 {
		t.Errorf("a spec change (drift) waited: %d keys queued, want 1 at once", n)
	}
}
