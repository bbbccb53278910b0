package owned

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Events records events on a Monocle; client-go's record.EventRecorder is one.
type Events interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
}

// ConflictError reports an object that has the name the operator needs but is not controlled
// by the Monocle. The operator never writes such an object.
type ConflictError struct {
	// Kind and Name name the object ("Deployment", "demo-api").
	Kind, Name string
}

// Error says which object holds the name and what the user can do about it.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s exists and is not controlled by this Monocle: delete or rename it", e.Kind, e.Name)
}

// NameConflict records on m a Warning event for the object kind/name that m needs but does
// not control, and returns the *ConflictError that the status reports.
func NameConflict(events Events, m *monoclev1alpha1.Monocle, kind, name string) error {
	events.Eventf(m, corev1.EventTypeWarning, reasons.NameConflict,
		"%s %s exists and is not controlled by this Monocle; it was left unchanged", kind, name)
	return &ConflictError{Kind: kind, Name: name}
}

// Ensure makes the live object match desired in the fields the operator owns: it creates a
// missing object, updates a drifted one with the cached resourceVersion (a concurrent change
// makes the update fail with a conflict, and the key is retried), and leaves a matching one
// alone without any API call. It returns the live object after the step, and a
// *ConflictError when the name is taken by an object m does not control. A creation is noted
// as NoteCreated says, an update recorded on m as an Updated event.
func (k Kind[T]) Ensure(ctx context.Context, events Events, m *monoclev1alpha1.Monocle, desired T) (T, error) {
	var zero T
	logger := klog.FromContext(ctx)
	name := desired.GetName()
	live, err := k.Get(desired.GetNamespace(), name)
	if apierrors.IsNotFound(err) {
		created, createErr := k.Create(ctx, desired)
		if createErr == nil {
			logger.V(2).Info("Created object", "kind", k.name, "object", klog.KObj(created))
			NoteCreated(ctx, events, m, k.name, name)
			return created, nil
		}
		if !apierrors.IsAlreadyExists(createErr) {
			return zero, fmt.Errorf("creating %s %s: %w", k.name, name, createErr)
		}
		// Either the cache is behind, or the object lacks our label and so is invisible to
		// the filtered informer: read it from the API server and carry on with it.
		live, err = k.Read(ctx, desired.GetNamespace(), name)
		if err != nil {
			return zero, fmt.Errorf("creating %s %s: %w (and reading it: %v)", k.name, name, createErr, err)
		}
	} else if err != nil {
		return zero, fmt.Errorf("reading %s %s from the cache: %w", k.name, name, err)
	}
	if !IsControlledBy(live, m) {
		return zero, NameConflict(events, m, k.name, name)
	}
	if !metadataDrifted(desired, live) && !k.drifted(desired, live) {
		return live, nil
	}
	updated, err := k.update(ctx, k.Updated(desired, live))
	if err != nil {
		return zero, fmt.Errorf("updating %s %s: %w", k.name, name, err)
	}
	logger.V(2).Info("Updated object", "kind", k.name, "object", klog.KObj(updated))
	events.Eventf(m, corev1.EventTypeNormal, reasons.Updated, "Updated %s %s to the desired state", k.name, name)
	return updated, nil
}

// Delete deletes the object name of m's namespace when m controls it, with the cached UID and
// resourceVersion as preconditions (an object replaced or changed since is left for the next
// sync), and records on m a Deleted event saying why. A missing object, or one m does not
// control, is left alone.
func (k Kind[T]) Delete(ctx context.Context, events Events, m *monoclev1alpha1.Monocle, name, why string) error {
	live, err := k.Get(m.Namespace, name)
	if apierrors.IsNotFound(err) || (err == nil && !IsControlledBy(live, m)) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s from the cache: %w", k.name, name, err)
	}
	uid, version := live.GetUID(), live.GetResourceVersion()
	precondition := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &version}}
	if err := k.client(m.Namespace).Delete(ctx, name, precondition); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", k.name, name, err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted object", "kind", k.name, "object", klog.KObj(live))
	events.Eventf(m, corev1.EventTypeNormal, reasons.Deleted, "Deleted %s %s: %s", k.name, name, why)
	return nil
}

// IsMonocleRef reports whether an owner reference points at a Monocle of the operator's API
// group (any version).
func IsMonocleRef(ref metav1.OwnerReference) bool {
	if ref.Kind != "Monocle" {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == monoclev1alpha1.GroupName
}

// IsControlledBy reports whether m is the controller of obj, checking Kind, group and UID, so
// that an object of a deleted Monocle is not taken for one of a new Monocle of the same name.
func IsControlledBy(obj metav1.Object, m *monoclev1alpha1.Monocle) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && IsMonocleRef(*ref) && ref.UID == m.UID
}

// metadataDrifted reports whether live lacks one of desired's labels or annotations (the
// spec hash among them). Labels and annotations others add are not ours and are kept.
func metadataDrifted(desired, live metav1.Object) bool {
	return !IsSubset(desired.GetLabels(), live.GetLabels()) || !IsSubset(desired.GetAnnotations(), live.GetAnnotations())
}

// mergeMetadata writes desired's labels and annotations into out, keeping the others' but
// dropping the operator's own annotations (resources.AnnotationPrefix) desired no longer has.
func mergeMetadata(desired, out metav1.Object) {
	out.SetLabels(Union(out.GetLabels(), desired.GetLabels()))
	annotations := map[string]string{}
	for k, v := range out.GetAnnotations() {
		if _, ours := desired.GetAnnotations()[k]; ours || !strings.HasPrefix(k, resources.AnnotationPrefix) {
			annotations[k] = v
		}
	}
	if len(annotations) == 0 && len(desired.GetAnnotations()) == 0 {
		return
	}
	out.SetAnnotations(Union(annotations, desired.GetAnnotations()))
}

// IsSubset reports whether set holds every entry of sub, with the same value.
func IsSubset(sub, set map[string]string) bool {
	for k, v := range sub {
		if got, ok := set[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Union returns a new map with base's entries overwritten by over's.
func Union(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
