package owned

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
//
// An object another writer contests (contest.go) is left as it is while its back-off runs:
// Ensure returns it unchanged, with no error. Finding the contest costs one read of the
// object from the API server, for its managedFields, when fields the operator just wrote
// differ again; a contest found, or grown, is recorded on m as a Warning event
// FieldContested.
func (k Kind[T]) Ensure(ctx context.Context, events Events, m *monoclev1alpha1.Monocle, desired T) (T, error) {
	var zero T
	logger := klog.FromContext(ctx)
	name := desired.GetName()
	key := objectKey{kind: k.name, namespace: desired.GetNamespace(), name: name}
	live, err := k.Get(desired.GetNamespace(), name)
	if apierrors.IsNotFound(err) {
		created, createErr := k.Create(ctx, desired)
		if createErr == nil {
			k.NoteCreated(ctx, events, m, created)
			k.checkAdmission(ctx, events, m, key, desired, created)
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
		if k.contests.converged(key) {
			logger.V(2).Info("Contest ended", "kind", k.name, "object", klog.KObj(live))
		}
		return live, nil
	}
	var paths []fieldPath
	if k.contests != nil {
		paths = append(metadataPaths(desired, live), k.paths(desired, live)...)
	}
	switch act, back := k.contests.decide(key, live, paths); act {
	case hold:
		logger.V(4).Info("Leaving a contested object as it is", "kind", k.name, "object", klog.KObj(live))
		return live, nil
	case suspect:
		contested, err := k.setBack(ctx, m, key, desired, back)
		if err != nil {
			return zero, err
		}
		if contested != nil {
			logger.V(2).Info("Contested object", "kind", k.name, "object", klog.KObj(live), "contest", contested.String())
			recordContest(events, m, *contested)
			return live, nil
		}
	}
	updated, err := k.update(ctx, k.Updated(desired, live))
	if err != nil {
		return zero, fmt.Errorf("updating %s %s: %w", k.name, name, err)
	}
	logger.V(2).Info("Updated object", "kind", k.name, "object", klog.KObj(updated))
	events.Eventf(m, corev1.EventTypeNormal, reasons.Updated, "Updated %s %s to the desired state", k.name, name)
	k.contests.wrote(key, m, live.GetResourceVersion(), updated.GetResourceVersion(), paths, desired.DeepCopyObject())
	k.checkAdmission(ctx, events, m, key, desired, updated)
	return updated, nil
}

// setBack reads the object key from the API server, whose fields back were just written by
// the operator and differ again in the cache, and returns the contest it is in (Contests.setBack)
// when they still differ there, naming the field managers that own them; nil when they do not
// (the cache was behind) or the set-back starts no contest yet.
func (k Kind[T]) setBack(ctx context.Context, m *monoclev1alpha1.Monocle, key objectKey, desired T, back []fieldPath) (*Contest, error) {
	// A field the Monocle now wants otherwise than at the operator's last write differs for
	// that reason: the operator writes it, as any change of the Monocle.
	if prev, ok := k.contests.lastDesired(key); ok {
		if was, ok := prev.(T); ok {
			back = without(back, append(metadataPaths(desired, was), k.paths(desired, was)...))
			if len(back) == 0 {
				return nil, nil
			}
		}
	}
	fresh, err := k.Read(ctx, key.namespace, key.name)
	if err != nil {
		return nil, fmt.Errorf("reading %s %s for its managedFields: %w", k.name, key.name, err)
	}
	back = intersect(append(metadataPaths(desired, fresh), k.paths(desired, fresh)...), back)
	if len(back) == 0 {
		return nil, nil
	}
	c, ok := k.contests.setBack(key, m, back, fieldOwners(fresh, back, k.manager))
	if !ok {
		return nil, nil
	}
	return &c, nil
}

// checkAdmission starts or grows the contest of the object key when written, the object the
// API server returned from the operator's write of desired, differs from desired in an owned
// field: a mutating admission webhook changed it.
func (k Kind[T]) checkAdmission(ctx context.Context, events Events, m *monoclev1alpha1.Monocle, key objectKey, desired, written T) {
	if k.contests == nil || (!metadataDrifted(desired, written) && !k.drifted(desired, written)) {
		return
	}
	changed := append(metadataPaths(desired, written), k.paths(desired, written)...)
	if len(changed) == 0 {
		return
	}
	c := k.contests.contested(key, m, changed, []string{k.manager}, true)
	klog.FromContext(ctx).V(2).Info("Contested object", "kind", k.name, "object", klog.KObj(written), "contest", c.String())
	recordContest(events, m, c)
}

// recordContest records on m the Warning event FieldContested of c.
func recordContest(events Events, m *monoclev1alpha1.Monocle, c Contest) {
	events.Eventf(m, corev1.EventTypeWarning, reasons.FieldContested,
		"%s; the operator leaves %s %s as it is for %s, then writes it again, backing off further each time it is set back. "+
			"Set the value in the Monocle's spec, or exclude the Monocle's objects (label %s=%s) from that writer",
		c, c.Kind, c.Name, c.Backoff, resources.ManagedByLabel, resources.ManagedByValue)
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
	k.contests.forget(objectKey{kind: k.name, namespace: m.Namespace, name: name})
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

// metadataPaths returns the paths of desired's labels and annotations that live lacks or has
// with another value, labels first, each by key.
func metadataPaths(desired, live metav1.Object) []fieldPath {
	var out []fieldPath
	for _, f := range []struct {
		field         string
		desired, live map[string]string
	}{{"labels", desired.GetLabels(), live.GetLabels()}, {"annotations", desired.GetAnnotations(), live.GetAnnotations()}} {
		for _, key := range slices.Sorted(maps.Keys(f.desired)) {
			if got, ok := f.live[key]; !ok || got != f.desired[key] {
				out = append(out, fieldPath{"metadata", f.field, key})
			}
		}
	}
	return out
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
