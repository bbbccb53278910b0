package controller

import (
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
)

// maxCreatedHold bounds how long the objects of a new Monocle are held back from its Created
// event while its API waits for Elasticsearch (see createdHold).
const maxCreatedHold = 2 * time.Minute

// createdHold holds, per Monocle, the objects that syncs created while the API Deployment
// waited for a ready Elasticsearch pod (workloads.go), so that a new Monocle's objects are told
// in one Created event, by the sync that creates the API, rather than in one per sync. Objects
// are held for at most maxCreatedHold: a sync then tells them even if the API still waits. It
// is memory only: an operator that restarts meanwhile tells what it creates from then on.
type createdHold struct {
	mu   sync.Mutex
	held map[cache.ObjectName]heldObjects
}

// heldObjects are the objects held for one Monocle, and since when.
type heldObjects struct {
	since   time.Time
	objects []string
}

// recordCreated records the Created event of the objects log holds and of those held for the
// Monocle of st, or holds them while the sync left the API waiting, enqueueing the Monocle
// for when the hold ends.
func (c *Controller) recordCreated(st *syncState, log *owned.CreatedLog) {
	key := cache.MetaObjectToName(st.m)
	c.created.mu.Lock()
	h, ok := c.created.held[key]
	created := log.Objects()
	if st.apiWaits && (!ok || st.now.Sub(h.since) < maxCreatedHold) && (ok || len(created) > 0) {
		if !ok {
			h.since = st.now
			c.queue.AddAfter(key, maxCreatedHold)
		}
		h.objects = append(h.objects, created...)
		c.created.held[key] = h
		c.created.mu.Unlock()
		return
	}
	delete(c.created.held, key)
	c.created.mu.Unlock()
	log.Record(c.recorder, st.m, h.objects...)
}

// forget drops what is held for the Monocle key names.
func (h *createdHold) forget(key cache.ObjectName) {
	h.mu.Lock()
	delete(h.held, key)
	h.mu.Unlock()
}
