// Package owned is the engine of the objects a Monocle owns: for each owned kind, a Kind reads
// the informer's cache and writes through the API server; Ensure creates a missing object,
// updates one that drifted from the desired object by the drift rule (drift.go) and leaves an
// equal one alone; Delete removes one the Monocle no longer wants. A Registry registers each
// kind once, with its informer; Optional does the same for the kinds of APIs a cluster may not
// serve. Events go to an Events sink, so the package needs no controller.
package owned

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Object is an API object the operator owns: a pointer to a typed object (*corev1.Secret) or
// an *unstructured.Unstructured.
type Object interface {
	metav1.Object
	runtime.Object
}

// Client is the part of a client-go typed client (CoreV1().Secrets(ns) and the like) that a
// Kind uses.
type Client[T Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// Kind reads one owned kind from its informer's cache and writes it through its client. It
// also knows which fields of the kind the operator owns: Drifted compares them, Merge writes
// them into a copy of the live object. Fields the operator does not set (and the ones the API
// server defaults) are left as they are.
//
// Get and List read the cache; Read asks the API server, for the rare object the filtered
// cache cannot see. A Kind is a value: WithDrift returns a copy with another rule.
type Kind[T Object] struct {
	name    string
	cache   cache.Indexer
	gr      schema.GroupResource
	client  func(namespace string) Client[T]
	manager string
	drifted func(desired, live T) bool
	merge   func(desired, live T) T
	// paths are the paths of the owned fields in which live differs from desired (for the
	// contests; metadata aside).
	paths func(desired, live T) []fieldPath
	// contests tracks the objects another writer contests (contest.go); nil: none is.
	contests *Contests
}

// newKind returns the Kind named kind (as events and logs name it, "StatefulSet") that reads
// indexer (gr names the resource in its NotFound errors), writes through client(namespace)
// with field manager manager, and follows the drift rule of drift.go, skipping the fields
// Kubernetes does not let an update of T change (immutableFields), owning the pod template's
// placement fields even when empty (ownedWhenEmpty) and reading its record of labels and
// annotations with podMetadata.
func newKind[T Object](kind string, indexer cache.Indexer, gr schema.GroupResource, client func(namespace string) Client[T], manager string, podMetadata PodMetadataRecord) Kind[T] {
	r := ruleFor(reflect.TypeFor[T](), podMetadata)
	k := Kind[T]{
		name: kind, cache: indexer, gr: gr, client: client, manager: manager,
		drifted: func(desired, live T) bool { return ownedDiffers(desired, live, r) },
		merge:   func(desired, live T) T { return mergeOwned(desired, live, r) },
		paths:   func(desired, live T) []fieldPath { return driftedPaths(desired, live, r) },
	}
	if reflect.TypeFor[T]() == reflect.TypeFor[*unstructured.Unstructured]() {
		k.paths = func(desired, live T) []fieldPath {
			return unstructuredPaths(any(desired).(*unstructured.Unstructured), any(live).(*unstructured.Unstructured))
		}
	}
	return k
}

// Name is the kind's name, as events and logs name it ("StatefulSet").
func (k Kind[T]) Name() string { return k.name }

// Get returns the object namespace/name from the cache: a NotFound error when the cache does
// not hold it.
func (k Kind[T]) Get(namespace, name string) (T, error) {
	var zero T
	obj, exists, err := k.cache.GetByKey(namespace + "/" + name)
	if err != nil {
		return zero, err
	}
	if !exists {
		return zero, apierrors.NewNotFound(k.gr, name)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("the %s cache holds a %T", k.gr, obj)
	}
	return t, nil
}

// List returns the objects of namespace in the cache whose labels selector matches.
func (k Kind[T]) List(namespace string, selector labels.Selector) ([]T, error) {
	var out []T
	err := cache.ListAllByNamespace(k.cache, namespace, selector, func(obj any) {
		if t, ok := obj.(T); ok {
			out = append(out, t)
		}
	})
	return out, err
}

// Read returns the object namespace/name from the API server.
func (k Kind[T]) Read(ctx context.Context, namespace, name string) (T, error) {
	return k.client(namespace).Get(ctx, name, metav1.GetOptions{})
}

// Create creates obj through the API server, as the operator's field manager.
func (k Kind[T]) Create(ctx context.Context, obj T) (T, error) {
	return k.client(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{FieldManager: k.manager})
}

// update writes obj through the API server, as the operator's field manager.
func (k Kind[T]) update(ctx context.Context, obj T) (T, error) {
	return k.client(obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{FieldManager: k.manager})
}

// Drifted reports whether live differs from desired in a field the operator owns (its
// metadata aside, which Ensure compares itself).
func (k Kind[T]) Drifted(desired, live T) bool { return k.drifted(desired, live) }

// Merge returns a copy of live with the fields the operator owns written from desired (its
// metadata aside); live is not changed.
func (k Kind[T]) Merge(desired, live T) T { return k.merge(desired, live) }

// Updated is the object Ensure writes to bring live back to desired: Merge, then desired's
// labels and annotations (mergeMetadata).
func (k Kind[T]) Updated(desired, live T) T {
	out := k.merge(desired, live)
	mergeMetadata(desired, out)
	return out
}

// WithDrift returns a copy of k whose owned fields are those drifted compares and merge
// writes, for an object the operator owns only in part (a ConfigMap whose data is the
// user's). The contests (contest.go) still name the drifted fields by the kind's own rule.
func (k Kind[T]) WithDrift(drifted func(desired, live T) bool, merge func(desired, live T) T) Kind[T] {
	k.drifted, k.merge = drifted, merge
	return k
}
