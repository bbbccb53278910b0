package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
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

// handleObjectUpdate enqueues the owner of an updated object, skipping the periodic resyncs
// that carry no change.
func (c *Controller) handleObjectUpdate(oldObj, newObj any) {
	if changed(oldObj, newObj) {
		c.handleObject(newObj)
	}
}

// changed reports whether an informer update carries a new resourceVersion, rather than
// being a periodic resync.
func changed(oldObj, newObj any) bool {
	oldMeta, errOld := objectMeta(oldObj)
	newMeta, errNew := objectMeta(newObj)
	return errOld != nil || errNew != nil || oldMeta.GetResourceVersion() != newMeta.GetResourceVersion()
}

// handleObject enqueues the Monocle that controls obj, found through obj's controller owner
// reference with its Kind, API group and UID checked, so that an object owned by a deleted
// and recreated Monocle of the same name does not wake the new one.
func (c *Controller) handleObject(obj any) {
	object, err := objectMeta(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	ref := metav1.GetControllerOf(object)
	if ref == nil || !isMonocleRef(*ref) {
		return
	}
	m := c.monocleFor(object.GetNamespace(), ref.Name)
	if m == nil || m.UID != ref.UID {
		klog.V(4).InfoS("Ignoring object whose owner is gone", "object", klog.KObj(object), "owner", ref.Name)
		return
	}
	c.enqueueMonocle(m)
}

// objectMeta returns the object metadata of an informer object or of a deletion tombstone.
func objectMeta(obj any) (metav1.Object, error) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	return meta.Accessor(obj)
}

// isMonocleRef reports whether an owner reference points at a Monocle of our API group.
func isMonocleRef(ref metav1.OwnerReference) bool {
	if ref.Kind != "Monocle" {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == monoclev1alpha1.GroupName
}

// isControlledBy reports whether m is the controller of obj, checking Kind, group and UID.
func isControlledBy(obj metav1.Object, m *monoclev1alpha1.Monocle) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && isMonocleRef(*ref) && ref.UID == m.UID
}

// handleVolumeClaim enqueues the Monocle of an Elasticsearch PVC. The StatefulSet creates the
// PVC without an owner (so it outlives the Monocle); the instance label names its Monocle.
func (c *Controller) handleVolumeClaim(obj any) {
	object, err := objectMeta(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	if name := object.GetLabels()[resources.InstanceLabel]; name != "" {
		if m := c.monocleFor(object.GetNamespace(), name); m != nil {
			c.enqueueMonocle(m)
		}
	}
}
