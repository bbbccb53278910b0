package controller

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
)

// readCache maps Secrets (or ConfigMaps) to what the controller made of them (V) at a
// resourceVersion. It holds one small entry per object a Monocle reads, whatever the number
// or size of the cluster's Secrets and ConfigMaps.
type readCache[V any] struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]readEntry[V]
}

// readEntry is what the controller made of a Secret or ConfigMap at resourceVersion.
type readEntry[V any] struct {
	resourceVersion string
	value           V
}

// newReadCache returns an empty readCache.
func newReadCache[V any]() *readCache[V] {
	return &readCache[V]{entries: map[types.NamespacedName]readEntry[V]{}}
}

// get returns what was made of the object name at resourceVersion, and false when what the
// cache holds of it (if anything) is of another resourceVersion.
func (u *readCache[V]) get(name types.NamespacedName, resourceVersion string) (V, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	e, ok := u.entries[name]
	return e.value, ok && e.resourceVersion == resourceVersion
}

// put records v as what was made of the object name at resourceVersion.
func (u *readCache[V]) put(name types.NamespacedName, resourceVersion string, v V) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.entries[name] = readEntry[V]{resourceVersion, v}
}

// forget drops what the cache holds of the object name.
func (u *readCache[V]) forget(name types.NamespacedName) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.entries, name)
}

// readReferenced returns what keep makes of the object name of kind ("Secret",
// "ConfigMap"), and false when it does not exist. The metadata cache lister (every object of
// the kind in the watched namespaces) says whether it exists and at which resourceVersion;
// the object is read from the API server with get only when that resourceVersion was not
// read before, so a converged Monocle costs no API call.
func readReferenced[O metav1.Object, V any](ctx context.Context, kind string, lister cache.GenericLister,
	get func(context.Context, types.NamespacedName) (O, error), cache *readCache[V], name types.NamespacedName, keep func(O) V) (V, bool, error) {
	var zero V
	obj, err := lister.ByNamespace(name.Namespace).Get(name.Name)
	if apierrors.IsNotFound(err) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, fmt.Errorf("reading %s %s metadata from the cache: %w", kind, name.Name, err)
	}
	meta, err := objectMeta(obj)
	if err != nil {
		return zero, false, err
	}
	if v, ok := cache.get(name, meta.GetResourceVersion()); ok {
		return v, true, nil
	}
	live, err := get(ctx, name)
	if apierrors.IsNotFound(err) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, fmt.Errorf("reading %s %s: %w", kind, name.Name, err)
	}
	v := keep(live)
	cache.put(name, live.GetResourceVersion(), v)
	return v, true, nil
}

// handleReferenced enqueues the Monocles that index names under the "<namespace>/<name>" of
// obj, a Secret or a ConfigMap of a metadata informer (or its tombstone), once each forget
// has dropped what the controller kept of it, when it is deleted.
func (c *Controller) handleReferenced(obj any, index string, forget ...func(types.NamespacedName)) {
	object, err := objectMeta(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	name := types.NamespacedName{Namespace: object.GetNamespace(), Name: object.GetName()}
	if _, deleted := obj.(cache.DeletedFinalStateUnknown); deleted || object.GetDeletionTimestamp() != nil {
		for _, f := range forget {
			f(name)
		}
	}
	c.enqueueIndexed(index, name.String())
}
