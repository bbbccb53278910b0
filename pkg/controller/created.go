package controller

import (
	"context"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// createdLog collects the objects one sync creates, so that the sync records one Created event
// listing them instead of one event per object (a new Monocle costs one Event write, and
// kubectl describe still shows what was made). It is safe for the sync's parallel steps.
type createdLog struct {
	mu      sync.Mutex
	objects []string
}

type createdLogKey struct{}

// withCreatedLog returns a context whose ensure calls note created objects in the returned
// log rather than recording an event each.
func withCreatedLog(ctx context.Context) (context.Context, *createdLog) {
	l := &createdLog{}
	return context.WithValue(ctx, createdLogKey{}, l), l
}

// noteCreated notes that the object kind/name was created for m: in the context's log when it
// has one, else as an event of its own.
func (c *Controller) noteCreated(ctx context.Context, m *monoclev1alpha1.Monocle, kind, name string) {
	if l, ok := ctx.Value(createdLogKey{}).(*createdLog); ok {
		l.mu.Lock()
		l.objects = append(l.objects, kind+" "+name)
		l.mu.Unlock()
		return
	}
	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.Created, "Created %s %s", kind, name)
}

// recordCreated records one Created event listing, sorted, the objects l holds, if any.
func (c *Controller) recordCreated(m *monoclev1alpha1.Monocle, l *createdLog) {
	l.mu.Lock()
	objects := slices.Sorted(slices.Values(l.objects))
	l.mu.Unlock()
	if len(objects) > 0 {
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.Created, "Created %s", strings.Join(objects, ", "))
	}
}
