package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// Status pacing: when a Monocle's status is written. Its changes come in bursts (pods ready
// one by one, components and their health coming up while a Monocle starts), and a write
// for each would cost the API server a write per step with nothing for the user to act on.
// Three rules space them, all decided here; the events of a change are recorded with the
// write that carries it (events.go), so a write left for later records none:
//
//   - A change of an owned object's or the Monocle's status alone syncs after
//     statusSyncDelay, so that one sync follows a burst (handlers.go enqueues with it).
//   - A sync that starts the first read of Elasticsearch or of the API writes nothing
//     (statusHeld): the read's end enqueues the Monocle, and that sync writes the status
//     with what was read.
//   - A status that differs from the last written one only in progress waits for
//     progressInterval after that write, startProgressInterval while the Monocle starts
//     (statusWrites.wait); any other change is written at once.

// statusSyncDelay is how long the controller waits before syncing a Monocle after a change
// of an owned object's status alone, such as pods becoming ready one by one during a rollout.
// Those changes come in bursts; one sync after the burst writes the Monocle's status once
// rather than once per change. Spec changes and deletions of owned objects, the drift the
// operator repairs, sync at once.
const statusSyncDelay = time.Second

// statusHeld reports whether the sync of st leaves its status unwritten: a first read of
// Elasticsearch or of the API is under way (syncState.holdStatus), and the sync met no error,
// which would be reported at once.
func statusHeld(st *syncState) bool { return st.holdStatus && len(st.errs) == 0 }

// progressInterval is the least time between two status writes of a Monocle that differ only
// in the progress of its workloads (progressOnly): while a Monocle rolls out, its pods come
// up one after the other, and a status write for each would cost the API server a write per
// pod with nothing for the user to act on. While a new Monocle starts, its components and
// their health come up one after the other too, and what the user waits for is Ready:
// startProgressInterval spaces those writes. Any other change is written at once.
const (
	progressInterval      = 5 * time.Second
	startProgressInterval = time.Minute
)

// statusWrites remembers when the status of each Monocle was last written, for
// progressInterval. It is memory only: after a restart, the first write goes through.
type statusWrites struct {
	mu   sync.Mutex
	last map[cache.ObjectName]time.Time
}

// wait returns how long the write of status over was, at now, is to wait: zero unless the
// change is progressOnly and the last write is less than progressInterval old.
func (w *statusWrites) wait(key cache.ObjectName, was, status monoclev1alpha1.MonocleStatus, now time.Time) time.Duration {
	w.mu.Lock()
	last, ok := w.last[key]
	w.mu.Unlock()
	if !ok || !progressOnly(was, status) {
		return 0
	}
	interval := progressInterval
	if starting(was) && starting(status) {
		interval = startProgressInterval
	}
	return max(0, interval-now.Sub(last))
}

// wrote notes that the status of key was written at now.
func (w *statusWrites) wrote(key cache.ObjectName, now time.Time) {
	w.mu.Lock()
	w.last[key] = now
	w.mu.Unlock()
}

// forget drops what w remembers of key.
func (w *statusWrites) forget(key cache.ObjectName) {
	w.mu.Lock()
	delete(w.last, key)
	w.mu.Unlock()
}

// progressOnly reports whether status differs from was only in progress: the workloads'
// replica counts and readiness, and the messages of Ready and Progressing, which name them;
// or, while a new Monocle starts (Ready False with reason Starting before and after), anything
// but Degraded, since its components and their health come up one after the other. A change
// of Degraded, of another condition's status or reason outside the start, or of anything
// else, is not progress.
func progressOnly(was, status monoclev1alpha1.MonocleStatus) bool {
	if starting(was) && starting(status) && sameCondition(was, status, monoclev1alpha1.ConditionDegraded) {
		return true
	}
	strip := func(s monoclev1alpha1.MonocleStatus) monoclev1alpha1.MonocleStatus {
		s = *s.DeepCopy()
		s.Elasticsearch, s.API, s.Crawler = monoclev1alpha1.ComponentStatus{}, monoclev1alpha1.ComponentStatus{}, monoclev1alpha1.ComponentStatus{}
		for i, c := range s.Conditions {
			if c.Type == monoclev1alpha1.ConditionReady || c.Type == monoclev1alpha1.ConditionProgressing {
				s.Conditions[i].Message = ""
			}
		}
		return s
	}
	return equality.Semantic.DeepEqual(strip(was), strip(status))
}

// starting reports whether s says its Monocle has not been Ready yet.
func starting(s monoclev1alpha1.MonocleStatus) bool {
	ready := apimeta.FindStatusCondition(s.Conditions, monoclev1alpha1.ConditionReady)
	return ready != nil && ready.Status == metav1.ConditionFalse && ready.Reason == reasons.Starting
}

// sameCondition reports whether a and b have the condition typ with the same status, reason
// and message, or both lack it.
func sameCondition(a, b monoclev1alpha1.MonocleStatus, typ string) bool {
	ca, cb := apimeta.FindStatusCondition(a.Conditions, typ), apimeta.FindStatusCondition(b.Conditions, typ)
	if ca == nil || cb == nil {
		return ca == cb
	}
	return ca.Status == cb.Status && ca.Reason == cb.Reason && ca.Message == cb.Message
}
