package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	clientset "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
	informers "github.com/change-metrics/monocle-operator/pkg/generated/informers/externalversions"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// monocleName is the name of every Monocle the bench creates (one per namespace).
const monocleName = "m"

// readyTracker watches every Monocle and records when the bench first saw each one Ready, so
// end-to-end times are measured to the watch event, not to a polling interval.
type readyTracker struct {
	mu    sync.Mutex
	ready map[string]time.Time // by namespace
}

func startReadyTracker(ctx context.Context, client clientset.Interface) (*readyTracker, error) {
	t := &readyTracker{ready: map[string]time.Time{}}
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Monocle().V1alpha1().Monocles().Informer()
	observe := func(obj any) {
		m, ok := obj.(*monoclev1alpha1.Monocle)
		if !ok || !apimeta.IsStatusConditionTrue(m.Status.Conditions, monoclev1alpha1.ConditionReady) {
			return
		}
		t.mu.Lock()
		if _, seen := t.ready[m.Namespace]; !seen {
			t.ready[m.Namespace] = time.Now()
		}
		t.mu.Unlock()
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
	}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil, fmt.Errorf("syncing the Monocle informer")
	}
	return t, nil
}

// readyAt returns when the Monocle in ns was first seen Ready.
func (t *readyTracker) readyAt(ns string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.ready[ns]
	return at, ok
}

// waitAllReady waits until every Monocle in namespaces is Ready and returns the time the last
// one was seen Ready, or an error naming how many are not after timeout.
func (t *readyTracker) waitAllReady(ctx context.Context, namespaces []string, timeout time.Duration) (time.Time, error) {
	var last time.Time
	notReady := 0
	err := testkit.Poll(ctx, 20*time.Millisecond, timeout, "Monocles Ready", func(context.Context) error {
		last, notReady = time.Time{}, 0
		for _, ns := range namespaces {
			at, ok := t.readyAt(ns)
			if !ok {
				notReady++
				continue
			}
			if at.After(last) {
				last = at
			}
		}
		if notReady > 0 {
			return fmt.Errorf("%d not Ready", notReady)
		}
		return nil
	})
	if err != nil {
		return last, fmt.Errorf("%d of %d Monocles not Ready: %w", notReady, len(namespaces), err)
	}
	return last, nil
}

func newMonocle(ns string) *monoclev1alpha1.Monocle {
	return &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: monocleName, Namespace: ns}}
}

// createMonocles creates one Monocle (spec: {}) in each namespace, 16 at a time, and returns
// when the last create returned.
func (e *env) createMonocles(ctx context.Context, namespaces []string) (time.Time, error) {
	err := parallel(ctx, len(namespaces), 16, func(i int) error {
		_, err := e.Monocles.MonocleV1alpha1().Monocles(namespaces[i]).Create(ctx, newMonocle(namespaces[i]), metav1.CreateOptions{})
		return err
	})
	return time.Now(), err
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}

// waitQuiet waits until the operator has made no write in namespaces (all when nil, leases
// excluded) for quiet, or until timeout; it returns the time of the last write seen.
func (e *env) waitQuiet(ctx context.Context, after time.Time, quiet, timeout time.Duration, namespaces ...string) (time.Time, error) {
	last := after
	err := testkit.Poll(ctx, 100*time.Millisecond, timeout, "the operator to go quiet", func(context.Context) error {
		writes, err := e.operatorWritesAfter(after, namespaces...)
		if err != nil {
			return err
		}
		for _, w := range writes {
			if w.Completed.After(last) {
				last = w.Completed
			}
		}
		if time.Since(last) < quiet {
			return fmt.Errorf("last write at %s", last.Format(time.StampMilli))
		}
		return nil
	})
	return last, err
}
