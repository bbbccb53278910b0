package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// enqueueMonocle adds the key of a Monocle (or of its deletion tombstone) to the queue.
func (c *Controller) enqueueMonocle(obj any) {
	key, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// handleMonocleUpdate enqueues an updated Monocle: at once for a change of its spec or
// annotations (pausing), after statusSyncDelay for a change of its status alone, which is
// mostly the operator's own write.
func (c *Controller) handleMonocleUpdate(oldObj, newObj any) {
	oldM, okOld := oldObj.(*monoclev1alpha1.Monocle)
	newM, okNew := newObj.(*monoclev1alpha1.Monocle)
	if okOld && okNew && changed(oldM, newM) && statusOnly(oldM, newM) &&
		equality.Semantic.DeepEqual(oldM.Annotations, newM.Annotations) {
		c.enqueueMonocleAfter(newM, statusSyncDelay)
		return
	}
	c.enqueueMonocle(newObj)
}

// enqueueMonocleAfter adds m's key to the queue after delay.
func (c *Controller) enqueueMonocleAfter(m *monoclev1alpha1.Monocle, delay time.Duration) {
	c.queue.AddAfter(cache.MetaObjectToName(m), delay)
}

// handleObjectUpdate enqueues the owner of an updated object, skipping the periodic resyncs
// that carry no change, and delaying by statusSyncDelay for a change of status alone.
func (c *Controller) handleObjectUpdate(oldObj, newObj any) {
	if !changed(oldObj, newObj) {
		return
	}
	if statusOnly(oldObj, newObj) {
		c.enqueueOwner(newObj, statusSyncDelay)
		return
	}
	c.enqueueOwner(newObj, 0)
}

// statusOnly reports whether an update of an object with a generation (a Monocle, Deployment,
// StatefulSet, Job or PodDisruptionBudget) left its generation alone, so its spec did not
// change.
func statusOnly(oldObj, newObj any) bool {
	oldMeta, errOld := objectMeta(oldObj)
	newMeta, errNew := objectMeta(newObj)
	return errOld == nil && errNew == nil && newMeta.GetGeneration() != 0 && oldMeta.GetGeneration() == newMeta.GetGeneration()
}

// changed reports whether an informer update carries a new resourceVersion, rather than
// being a periodic resync.
func changed(oldObj, newObj any) bool {
	oldMeta, errOld := objectMeta(oldObj)
	newMeta, errNew := objectMeta(newObj)
	return errOld != nil || errNew != nil || oldMeta.GetResourceVersion() != newMeta.GetResourceVersion()
}

// onChange is an informer's update handler that passes to handle the objects that changed,
// skipping the periodic resyncs.
func onChange(handle func(any)) func(oldObj, newObj any) {
	return func(oldObj, newObj any) {
		if changed(oldObj, newObj) {
			handle(newObj)
		}
	}
}

// handleObject enqueues the Monocle that controls obj, found through obj's controller owner
// reference with its Kind, API group and UID checked, so that an object owned by a deleted
// and recreated Monocle of the same name does not wake the new one.
func (c *Controller) handleObject(obj any) {
	c.enqueueOwner(obj, 0)
}

// enqueueOwner adds the key of the Monocle that controls obj to the queue after delay.
func (c *Controller) enqueueOwner(obj any, delay time.Duration) {
	object, err := objectMeta(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	ref := metav1.GetControllerOf(object)
	if ref == nil || !owned.IsMonocleRef(*ref) {
		return
	}
	m := c.monocleFor(object.GetNamespace(), ref.Name)
	if m == nil || m.UID != ref.UID {
		klog.V(4).InfoS("Ignoring object whose owner is gone", "object", klog.KObj(object), "owner", ref.Name)
		return
	}
	c.enqueueMonocleAfter(m, delay)
}

// objectMeta returns the object metadata of an informer object or of a deletion tombstone.
func objectMeta(obj any) (metav1.Object, error) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	return meta.Accessor(obj)
}

// handleVolumeClaim enqueues the Monocle of an Elasticsearch PVC after statusSyncDelay: PVC
// events (creation, binding, a resize) change only the Monocle's status. The StatefulSet
// creates the PVC without an owner (so it outlives the Monocle); the instance label names its
// Monocle.
func (c *Controller) handleVolumeClaim(obj any) {
	object, err := objectMeta(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	if name := object.GetLabels()[resources.InstanceLabel]; name != "" {
		if m := c.monocleFor(object.GetNamespace(), name); m != nil {
			c.enqueueMonocleAfter(m, statusSyncDelay)
		}
	}
}

// enqueueIndexed enqueues the Monocles that the Monocle informer's index names under key.
func (c *Controller) enqueueIndexed(index, key string) {
	monocles, err := c.monocleIndexer.ByIndex(index, key)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, m := range monocles {
		c.enqueueMonocle(m)
	}
}
