package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
)

// TestCreatedObjectsInOneEvent: the objects syncs create while the API waits for
// Elasticsearch are held, and the sync that creates the API lists them all in one Created
// event; a hold that lasts maxCreatedHold ends with the event even if the API still waits.
func TestCreatedObjectsInOneEvent(t *testing.T) {
	m := newMonocle("demo")
	sync := func(c *Controller, at time.Time, apiWaits bool, objects ...string) {
		ctx, log := owned.WithCreatedLog(context.Background())
		for _, o := range objects {
			kind, name, _ := strings.Cut(o, " ")
			owned.NoteCreated(ctx, c.recorder, m, kind, name)
		}
		c.recordCreated(&syncState{m: m, now: at, apiWaits: apiWaits}, log)
	}
	t0 := time.Now()

	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	c := f.newController()
	sync(c, t0, true, "Secret demo-api", "StatefulSet demo-elastic")
	sync(c, t0.Add(time.Second), true)
	if events := drain(f); len(events) != 0 {
		t.Errorf("events %q while the API waits, want none", events)
	}
	sync(c, t0.Add(2*time.Second), false, "Deployment demo-api")
	want := "Normal Created Created Deployment demo-api, Secret demo-api, StatefulSet demo-elastic"
	if events := drain(f); len(events) != 1 || events[0] != want {
		t.Errorf("events %q once the API is created, want one: %q", events, want)
	}
	sync(c, t0.Add(3*time.Second), false)
	if events := drain(f); len(events) != 0 {
		t.Errorf("events %q after the hold ended, want none", events)
	}

	c = f.newController()
	sync(c, t0, true, "Secret demo-api")
	sync(c, t0.Add(maxCreatedHold), true)
	if events := drain(f); len(events) != 1 || events[0] != "Normal Created Created Secret demo-api" {
		t.Errorf("events %q once the hold lasted %s, want the held object's", events, maxCreatedHold)
	}
}
