package controller

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// object is an API object the operator owns.
type object interface {
	metav1.Object
	runtime.Object
}

// kindClient reads one owned kind from its lister and writes it through the typed client. It
// also knows which fields of the kind the operator owns: drifted compares them, merge writes
// them into a copy of the live object. Fields the operator does not set (and the ones the API
// server defaults) are left as they are.
//
// get reads the lister cache; read asks the API server, for the rare object the filtered
// cache cannot see.
type kindClient[T object] struct {
	kind   string
	get    func(namespace, name string) (T, error)
	read   func(ctx context.Context, namespace, name string) (T, error)
	create func(ctx context.Context, obj T) (T, error)
	update func(ctx context.Context, obj T) (T, error)
	// remove deletes the object with the given preconditions.
	remove  func(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
	drifted func(desired, live T) bool
	merge   func(desired, live T) T
}

// conflictError reports an object that has the name the operator needs but is not controlled
// by the Monocle. The operator never writes such an object.
type conflictError struct {
	kind, name string
}

func (e *conflictError) Error() string {
	return fmt.Sprintf("%s %s exists and is not controlled by this Monocle: delete or rename it", e.kind, e.name)
}

// ensure makes the live object match desired in the fields the operator owns: it creates a
// missing object, updates a drifted one with the cached resourceVersion (a concurrent change
// makes the update fail with a conflict, and the key is retried), and leaves a matching one
// alone without any API call. It returns the live object after the step, and a
// *conflictError when the name is taken by an object m does not control.
func ensure[T object](ctx context.Context, c *Controller, m *monoclev1alpha1.Monocle, k kindClient[T], desired T) (T, error) {
	var zero T
	logger := klog.FromContext(ctx)
	name := desired.GetName()
	live, err := k.get(desired.GetNamespace(), name)
	if apierrors.IsNotFound(err) {
		created, createErr := k.create(ctx, desired)
		if createErr == nil {
			logger.V(2).Info("Created object", "kind", k.kind, "object", klog.KObj(created))
			c.noteCreated(ctx, m, k.kind, name)
			return created, nil
		}
		if !apierrors.IsAlreadyExists(createErr) {
			return zero, fmt.Errorf("creating %s %s: %w", k.kind, name, createErr)
		}
		// Either the cache is behind, or the object lacks our label and so is invisible to
		// the filtered informer: read it from the API server and carry on with it.
		live, err = k.read(ctx, desired.GetNamespace(), name)
		if err != nil {
			return zero, fmt.Errorf("creating %s %s: %w (and reading it: %v)", k.kind, name, createErr, err)
		}
	} else if err != nil {
		return zero, fmt.Errorf("reading %s %s from the cache: %w", k.kind, name, err)
	}
	if !isControlledBy(live, m) {
		return zero, c.nameConflict(m, k.kind, name)
	}
	if !metadataDrifted(desired, live) && !k.drifted(desired, live) {
		return live, nil
	}
	merged := k.merge(desired, live)
	mergeMetadata(desired, merged)
	updated, err := k.update(ctx, merged)
	if err != nil {
		return zero, fmt.Errorf("updating %s %s: %w", k.kind, name, err)
	}
	logger.V(2).Info("Updated object", "kind", k.kind, "object", klog.KObj(updated))
	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.Updated, "Updated %s %s to the desired state", k.kind, name)
	return updated, nil
}

// deleteOwned deletes the object name of kind k when m controls it, with the cached UID and
// resourceVersion as preconditions (an object replaced or changed since is left for the next
// sync), and records a Deleted event saying why. A missing object, or one m does not control,
// is left alone.
func deleteOwned[T object](ctx context.Context, c *Controller, m *monoclev1alpha1.Monocle, k kindClient[T], name, why string) error {
	live, err := k.get(m.Namespace, name)
	if apierrors.IsNotFound(err) || (err == nil && !isControlledBy(live, m)) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s from the cache: %w", k.kind, name, err)
	}
	uid, version := live.GetUID(), live.GetResourceVersion()
	precondition := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &version}}
	if err := k.remove(ctx, m.Namespace, name, precondition); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", k.kind, name, err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted object", "kind", k.kind, "object", klog.KObj(live))
	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.Deleted, "Deleted %s %s: %s", k.kind, name, why)
	return nil
}

// nameConflict records a Warning event for an object the Monocle needs but does not control,
// and returns the *conflictError that the status reports.
func (c *Controller) nameConflict(m *monoclev1alpha1.Monocle, kind, name string) error {
	c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.NameConflict,
		"%s %s exists and is not controlled by this Monocle; it was left unchanged", kind, name)
	return &conflictError{kind: kind, name: name}
}

// metadataDrifted reports whether live lacks one of desired's labels or annotations (the
// spec hash among them). Labels and annotations others add are not ours and are kept.
func metadataDrifted(desired, live metav1.Object) bool {
	return !isSubset(desired.GetLabels(), live.GetLabels()) || !isSubset(desired.GetAnnotations(), live.GetAnnotations())
}

// mergeMetadata writes desired's labels and annotations into out, keeping the others' but
// dropping the operator's own annotations desired no longer has.
func mergeMetadata(desired, out metav1.Object) {
	out.SetLabels(union(out.GetLabels(), desired.GetLabels()))
	annotations := map[string]string{}
	for k, v := range out.GetAnnotations() {
		if _, ours := desired.GetAnnotations()[k]; ours || !strings.HasPrefix(k, resources.AnnotationPrefix) {
			annotations[k] = v
		}
	}
	if len(annotations) == 0 && len(desired.GetAnnotations()) == 0 {
		return
	}
	out.SetAnnotations(union(annotations, desired.GetAnnotations()))
}

func isSubset(sub, set map[string]string) bool {
	for k, v := range sub {
		if got, ok := set[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// union returns a new map with base's entries overwritten by over's.
func union(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// typedClient is the part of a client-go typed client (CoreV1().Secrets(ns) and the like)
// that ensure uses.
type typedClient[T object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// newKindClient returns the kindClient of one owned kind: get reads its lister, client(ns)
// is its typed client, and immutable names the fields ("Spec.Selector") an update cannot
// change. Drift follows the rule of drift.go.
func newKindClient[T object](kind string, get func(ns, name string) (T, error), client func(ns string) typedClient[T], immutable ...string) kindClient[T] {
	skip := map[string]bool{}
	for _, f := range immutable {
		skip[f] = true
	}
	return kindClient[T]{
		kind: kind,
		get:  get,
		read: func(ctx context.Context, ns, name string) (T, error) {
			return client(ns).Get(ctx, name, metav1.GetOptions{})
		},
		create: func(ctx context.Context, o T) (T, error) {
			return client(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{FieldManager: ControllerName})
		},
		update: func(ctx context.Context, o T) (T, error) {
			return client(o.GetNamespace()).Update(ctx, o, metav1.UpdateOptions{FieldManager: ControllerName})
		},
		remove: func(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
			return client(ns).Delete(ctx, name, opts)
		},
		drifted: func(desired, live T) bool { return ownedDiffers(desired, live, skip) },
		merge:   func(desired, live T) T { return mergeOwned(desired, live, skip) },
	}
}

// ownKind wires one owned kind: its informer's events enqueue the owning Monocle, HasSynced
// waits for it, and the returned kindClient reads its cache (resource gr names it in NotFound
// errors) and writes through client(ns). immutable is as for newKindClient.
func ownKind[T object](c *Controller, kind string, informer cache.SharedIndexInformer, gr schema.GroupResource, client func(ns string) typedClient[T], immutable ...string) (kindClient[T], error) {
	if _, err := informer.AddEventHandler(c.ownedHandler); err != nil {
		return kindClient[T]{}, fmt.Errorf("adding %s event handler: %w", kind, err)
	}
	c.ownedSynced = append(c.ownedSynced, informer.HasSynced)
	return newKindClient(kind, indexerGetter[T](informer.GetIndexer(), gr), client, immutable...), nil
}

// newKindClients wires the listers and typed clients of every owned kind.
func (c *Controller) newKindClients() {
	core, apps, policy := c.kubeclientset.CoreV1(), c.kubeclientset.AppsV1(), c.kubeclientset.PolicyV1()
	c.secrets = newKindClient("Secret", func(ns, name string) (*corev1.Secret, error) { return c.secretsLister.Secrets(ns).Get(name) },
		func(ns string) typedClient[*corev1.Secret] { return core.Secrets(ns) }, "Type")
	c.configMaps = newKindClient("ConfigMap", func(ns, name string) (*corev1.ConfigMap, error) { return c.configMapsLister.ConfigMaps(ns).Get(name) },
		func(ns string) typedClient[*corev1.ConfigMap] { return core.ConfigMaps(ns) })
	// The user's ConfigMap (spec.config unset): created when missing, its data never written.
	c.userConfigMaps = c.configMaps
	c.userConfigMaps.drifted = func(_, _ *corev1.ConfigMap) bool { return false }
	c.userConfigMaps.merge = func(_, live *corev1.ConfigMap) *corev1.ConfigMap { return live.DeepCopy() }
	c.services = newKindClient("Service", func(ns, name string) (*corev1.Service, error) { return c.servicesLister.Services(ns).Get(name) },
		func(ns string) typedClient[*corev1.Service] { return core.Services(ns) })
	c.deployments = newKindClient("Deployment", func(ns, name string) (*appsv1.Deployment, error) {
		return c.deploymentsLister.Deployments(ns).Get(name)
	},
		func(ns string) typedClient[*appsv1.Deployment] { return apps.Deployments(ns) }, "Spec.Selector")
	c.statefulSets = newKindClient("StatefulSet", func(ns, name string) (*appsv1.StatefulSet, error) {
		return c.statefulSetsLister.StatefulSets(ns).Get(name)
	},
		func(ns string) typedClient[*appsv1.StatefulSet] { return apps.StatefulSets(ns) },
		"Spec.Selector", "Spec.ServiceName", "Spec.VolumeClaimTemplates", "Spec.PodManagementPolicy")
	c.pdbs = newKindClient("PodDisruptionBudget", func(ns, name string) (*policyv1.PodDisruptionBudget, error) {
		return c.pdbsLister.PodDisruptionBudgets(ns).Get(name)
	}, func(ns string) typedClient[*policyv1.PodDisruptionBudget] { return policy.PodDisruptionBudgets(ns) })
}
