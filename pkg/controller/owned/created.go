package owned

import (
	"context"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// CreatedLog collects the objects one sync creates, so that the sync records one Created event
// listing them instead of one event per object (a new Monocle costs one Event write, and
// kubectl describe still shows what was made). It is safe for the sync's parallel steps.
type CreatedLog struct {
	mu      sync.Mutex
	objects []string
}

type createdLogKey struct{}

// WithCreatedLog returns a context whose Ensure calls (and NoteCreated) note created objects
// in the returned log rather than recording an event each.
func WithCreatedLog(ctx context.Context) (context.Context, *CreatedLog) {
	l := &CreatedLog{}
	return context.WithValue(ctx, createdLogKey{}, l), l
}

// NoteCreated notes that the object kind/name was created for m: in the context's log when it
// has one (WithCreatedLog), else as a Created event of its own on m.
func NoteCreated(ctx context.Context, events Events, m *monoclev1alpha1.Monocle, kind, name string) {
	if l, ok := ctx.Value(createdLogKey{}).(*CreatedLog); ok {
		l.mu.Lock()
		l.objects = append(l.objects, kind+" "+name)
		l.mu.Unlock()
		return
	}
	events.Eventf(m, corev1.EventTypeNormal, reasons.Created, "Created %s %s", kind, name)
}

// NoteCreated logs created, an object of this kind that Create made for m, and notes it as
// NoteCreated says: what Ensure does after its own create, for the objects created outside it.
func (k Kind[T]) NoteCreated(ctx context.Context, events Events, m *monoclev1alpha1.Monocle, created T) {
	klog.FromContext(ctx).V(2).Info("Created object", "kind", k.name, "object", klog.KObj(created))
	NoteCreated(ctx, events, m, k.name, created.GetName())
}

// Objects returns the objects l holds, "<Kind> <name>" each, in the order they were noted.
func (l *CreatedLog) Objects() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.objects)
}

// Record records on m one Created event listing, sorted, the objects l holds and those of
// earlier (objects an earlier sync created and held back), if any.
func (l *CreatedLog) Record(events Events, m *monoclev1alpha1.Monocle, earlier ...string) {
	objects := slices.Sorted(slices.Values(append(l.Objects(), earlier...)))
	if len(objects) > 0 {
		events.Eventf(m, corev1.EventTypeNormal, reasons.Created, "Created %s", strings.Join(objects, ", "))
	}
}
