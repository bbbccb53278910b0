package owned

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// Registry registers each owned kind once, with its informer: the informer's events go to one
// handler (the controller's, which enqueues the owning Monocle), its cache drops managedFields
// (StripManagedFields), and HasSynced waits for it.
type Registry struct {
	handler     cache.ResourceEventHandler
	manager     string
	podMetadata PodMetadataRecord
	contests    *Contests
	synced      []cache.InformerSynced
	errs        []error
}

// NewRegistry returns a Registry whose kinds send their informers' events to handler, write
// as field manager manager, read the record of their pod templates' labels and annotations
// with podMetadata (the drift rule, drift.go), and share one Contests (contest.go).
func NewRegistry(manager string, handler cache.ResourceEventHandler, podMetadata PodMetadataRecord) *Registry {
	return &Registry{handler: handler, manager: manager, podMetadata: podMetadata, contests: NewContests(clock.RealClock{})}
}

// Contests returns the contests of the objects of the Registry's kinds.
func (r *Registry) Contests() *Contests { return r.contests }

// Register registers the owned kind named kind ("StatefulSet") whose objects informer
// watches: it sets the informer's transform to StripManagedFields, adds the Registry's
// handler, and returns the Kind that reads the informer's cache (gr names the resource in its
// NotFound errors) and writes through client(namespace). It must be called before the
// informer starts; a failure is kept for Err, and the Kind is returned all the same.
func Register[T Object](r *Registry, kind string, informer cache.SharedIndexInformer, gr schema.GroupResource, client func(namespace string) Client[T]) Kind[T] {
	if err := informer.SetTransform(StripManagedFields); err != nil {
		r.errs = append(r.errs, fmt.Errorf("setting the managedFields transform: %w", err))
	}
	if _, err := informer.AddEventHandler(r.handler); err != nil {
		r.errs = append(r.errs, fmt.Errorf("adding %s event handler: %w", kind, err))
	}
	r.synced = append(r.synced, informer.HasSynced)
	k := newKind(kind, informer.GetIndexer(), gr, client, r.manager, r.podMetadata)
	k.contests = r.contests
	return k
}

// Err returns the errors of the Register calls, joined; nil when there were none.
func (r *Registry) Err() error {
	return errors.Join(r.errs...)
}

// HasSynced reports whether the informer of every registered kind has synced.
func (r *Registry) HasSynced() bool {
	for _, synced := range r.synced {
		if !synced() {
			return false
		}
	}
	return true
}

// StripManagedFields is an informer transform that drops the managedFields of an object
// entering a cache: the controller never reads them, and they are a large part of a
// workload's size (most of a cache's memory with many Monocles). An update built from a cached
// object then sends none, and the API server keeps the live ones (it replaces them only when
// an update sets them).
func StripManagedFields(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
	}
	return obj, nil
}
