package day2

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// workload is a Deployment asking for spec replicas with pods pods, ready of them ready, and
// terminating pods on their way out; its controller has observed its spec and counts its
// terminating pods, as from Kubernetes 1.35.
func workload(spec, pods, ready, terminating int32) *appsv1.Deployment {
	d := deploymentOf(oldMonocleImage, spec)
	d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas = pods, pods, ready
	d.Status.TerminatingReplicas = ptr.To(terminating)
	return d
}

// uncounted is w on a cluster whose Deployments do not count their terminating pods.
func uncounted(w *appsv1.Deployment) *appsv1.Deployment {
	w.Status.TerminatingReplicas = nil
	return w
}

// elasticOf is the Elasticsearch StatefulSet asking for spec replicas with pods pods, ready of
// them ready.
func elasticOf(spec, pods, ready int32) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{}
	s.Generation, s.Status.ObservedGeneration = 3, 3
	s.Spec.Replicas = ptr.To(spec)
	s.Status.Replicas, s.Status.ReadyReplicas = pods, ready
	return s
}

// hibernationMonocle is Monocle "m" with spec.hibernate set to hibernate and status.hibernation
// in phase (none when "").
func hibernationMonocle(hibernate bool, phase monoclev1alpha1.HibernationPhase) *monoclev1alpha1.Monocle {
	m := newMonocle("m")
	m.Spec.Hibernate = hibernate
	if phase != "" {
		m.Status.Hibernation = &monoclev1alpha1.HibernationStatus{Phase: phase, Since: StatusTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))}
	}
	return m
}

// withRestore is m with spec.restore of snapshot "nightly" and status.restore of it in phase.
func withRestore(m *monoclev1alpha1.Monocle, phase monoclev1alpha1.RestorePhase) *monoclev1alpha1.Monocle {
	m.Spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: "nightly"}
	m.Status.Restore = &monoclev1alpha1.RestoreStatus{Snapshot: "nightly", Phase: phase}
	return m
}

func TestPlanHibernation(t *testing.T) {
	now := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	up := func() *appsv1.Deployment { return workload(1, 1, 1, 0) }
	gone := func() *appsv1.Deployment { return workload(0, 0, 0, 0) }
	all := resources.Stopped{Crawler: true, API: true, Elastic: true}
	tests := map[string]struct {
		m        *monoclev1alpha1.Monocle
		o        HibernationObserved
		stopped  resources.Stopped
		phase    monoclev1alpha1.HibernationPhase // "": no status.hibernation
		down     []string
		reason   string // of the Hibernated condition; "": removed
		message  string
		external bool
		awaited  string // the snapshots the step keeps Elasticsearch running for
	}{
		"awake and not asked: nothing": {
			m: hibernationMonocle(false, ""), o: HibernationObserved{API: up(), Crawler: up(), Elastic: elasticOf(1, 1, 1)},
		},
		"asked: the crawler stops first": {
			m: hibernationMonocle(true, ""), o: HibernationObserved{API: up(), Crawler: up(), Elastic: elasticOf(1, 1, 1)},
			stopped: resources.Stopped{Crawler: true}, phase: monoclev1alpha1.HibernationHibernating, reason: reasons.Hibernating,
			message: "Stopping the crawler",
		},
		"the crawler is scaled to zero but still has its pod: the API runs on": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: up(), Crawler: workload(0, 1, 1, 0), Elastic: elasticOf(1, 1, 1)},
			stopped: resources.Stopped{Crawler: true}, phase: monoclev1alpha1.HibernationHibernating, reason: reasons.Hibernating,
		},
		"the crawler's pod is terminating: the API runs on": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: up(), Crawler: workload(0, 0, 0, 1), Elastic: elasticOf(1, 1, 1)},
			stopped: resources.Stopped{Crawler: true}, phase: monoclev1alpha1.HibernationHibernating, reason: reasons.Hibernating,
		},
		"the crawler's controller has not observed the scale-down: the API runs on": {
			m:       hibernationMonocle(true, monoclev1alpha1.HibernationHibernating),
			o:       HibernationObserved{API: up(), Crawler: func() *appsv1.Deployment { d := gone(); d.Generation++; return d }(), Elastic: elasticOf(1, 1, 1)},
			stopped: resources.Stopped{Crawler: true}, phase: monoclev1alpha1.HibernationHibernating, reason: reasons.Hibernating,
		},
		"no crawler pod left: the API stops": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: up(), Crawler: gone(), Elastic: elasticOf(1, 1, 1)},
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler"},
			reason: reasons.Hibernating, message: "Stopping the API",
		},
		"no crawler pod left where terminating pods are not counted: the API stops, and the message says so": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: uncounted(up()), Crawler: uncounted(gone()), Elastic: elasticOf(1, 1, 1)},
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler"},
			reason: reasons.Hibernating, message: "Stopping the API, the crawler has no pod left; Elasticsearch stops after it. " + UncountedTerminatingNote,
		},
		"hibernated where terminating pods are not counted: the message says so": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: uncounted(gone()), Crawler: uncounted(gone()), Elastic: elasticOf(0, 0, 0)},
			stopped: all, phase: monoclev1alpha1.HibernationHibernated, down: []string{"crawler", "api", "elastic"},
			reason: reasons.Hibernated, message: UncountedTerminatingNote,
		},
		"the API still has a pod: Elasticsearch runs on": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: workload(0, 2, 1, 0), Crawler: gone(), Elastic: elasticOf(1, 1, 1)},
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler"},
			reason: reasons.Hibernating,
		},
		"no API pod left but a Job runs: Elasticsearch waits for it": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(1, 1, 1), JobsRunning: true},
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler", "api"},
			reason: reasons.Hibernating, message: "Jobs to finish",
		},
		"no API pod left: Elasticsearch stops": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(1, 1, 1)},
			stopped: all, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler", "api"},
			reason: reasons.Hibernating, message: "Stopping Elasticsearch",
		},
		"no API pod left but a snapshot runs: Elasticsearch waits for it": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(1, 1, 1), SnapshotsRunning: "manual-1c2d3e4f"},
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler", "api"},
			reason: reasons.Hibernating, message: "Waiting for snapshot manual-1c2d3e4f to finish before stopping Elasticsearch", awaited: "manual-1c2d3e4f",
		},
		"a Job and a snapshot run: the Jobs are named, the snapshot is followed": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(1, 1, 1), JobsRunning: true, SnapshotsRunning: "s1"},
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler", "api"},
			reason: reasons.Hibernating, message: "Jobs to finish", awaited: "s1",
		},
		"a snapshot runs while the crawler stops: followed, Elasticsearch not stopped yet anyway": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: up(), Crawler: up(), Elastic: elasticOf(1, 1, 1), SnapshotsRunning: "s1"},
			stopped: resources.Stopped{Crawler: true}, phase: monoclev1alpha1.HibernationHibernating,
			reason: reasons.Hibernating, message: "Stopping the crawler", awaited: "s1",
		},
		"a snapshot runs but Elasticsearch has no ready pod: no read can see it end, Elasticsearch stops": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(1, 1, 0), SnapshotsRunning: "s1"},
			stopped: all, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler", "api"},
			reason: reasons.Hibernating, message: "Stopping Elasticsearch",
		},
		"Elasticsearch scaled to zero stays so while a snapshot shows running": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(0, 1, 1), SnapshotsRunning: "s1"},
			stopped: all, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler", "api"}, reason: reasons.Hibernating,
		},
		"a cluster of one's own is not stopped: its snapshots are not waited for": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: gone(), SnapshotsRunning: "s1"}, external: true,
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationHibernated, down: []string{"crawler", "api"},
			reason: reasons.Hibernated,
		},
		"Elasticsearch scaled to zero stays so while a Job started meanwhile": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(0, 1, 0), JobsRunning: true},
			stopped: all, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler", "api"}, reason: reasons.Hibernating,
		},
		"no pod left: hibernated": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(0, 0, 0)},
			stopped: all, phase: monoclev1alpha1.HibernationHibernated, down: []string{"crawler", "api", "elastic"},
			reason: reasons.Hibernated, message: "No pod of the Monocle runs",
		},
		"a cluster of one's own is not stopped: hibernated once the API has no pod": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: gone()}, external: true,
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationHibernated, down: []string{"crawler", "api"},
			reason: reasons.Hibernated,
		},
		"an API already scaled to zero stays stopped when a crawler pod shows up again": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationHibernating), o: HibernationObserved{API: gone(), Crawler: workload(0, 1, 0, 0), Elastic: elasticOf(1, 1, 1)},
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationHibernating, down: []string{"api"},
			reason: reasons.Hibernating,
		},
		"a new Monocle created hibernated: everything is created stopped": {
			m: hibernationMonocle(true, ""), stopped: all, phase: monoclev1alpha1.HibernationHibernated,
			down: []string{"crawler", "api", "elastic"}, reason: reasons.Hibernated,
		},
		"a restore in progress defers the hibernation": {
			m:      withRestore(hibernationMonocle(true, ""), monoclev1alpha1.RestoreRestoring),
			o:      HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(1, 1, 1)},
			reason: reasons.HibernationDeferred, message: "the restore of snapshot nightly (phase Restoring)",
		},
		"an upgrade in progress defers the hibernation": {
			m: func() *monoclev1alpha1.Monocle {
				m := hibernationMonocle(true, "")
				m.Status.Upgrade = &monoclev1alpha1.UpgradeStatus{From: oldMonocleImage, To: newMonocleImage, Phase: monoclev1alpha1.UpgradeReplacingAPI}
				return m
			}(),
			o:      HibernationObserved{API: up(), Crawler: gone(), Elastic: elasticOf(1, 1, 1)},
			reason: reasons.HibernationDeferred, message: "the upgrade from " + oldMonocleImage + " to " + newMonocleImage + " (phase ReplacingAPI)",
		},
		"a failed restore does not defer it": {
			m:       withRestore(hibernationMonocle(true, ""), monoclev1alpha1.RestoreFailed),
			o:       HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(1, 1, 1)},
			stopped: all, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler", "api"}, reason: reasons.Hibernating,
		},
		"woken: Elasticsearch starts first, the API and the crawler stay stopped": {
			m: hibernationMonocle(false, monoclev1alpha1.HibernationHibernated), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(0, 0, 0)},
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationWaking,
			down: []string{"crawler", "api", "elastic"}, reason: reasons.Waking, message: "Starting Elasticsearch",
		},
		"Elasticsearch has a pod that is not ready: the API waits": {
			m: hibernationMonocle(false, monoclev1alpha1.HibernationWaking), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(1, 1, 0)},
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationWaking,
			down: []string{"crawler", "api"}, reason: reasons.Waking,
		},
		"Elasticsearch ready: the API starts, the crawler waits": {
			m: hibernationMonocle(false, monoclev1alpha1.HibernationWaking), o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(1, 1, 1)},
			stopped: resources.Stopped{Crawler: true}, phase: monoclev1alpha1.HibernationWaking,
			down: []string{"crawler", "api"}, reason: reasons.Waking, message: "Starting the API",
		},
		"the API started stays started when Elasticsearch turns unready": {
			m: hibernationMonocle(false, monoclev1alpha1.HibernationWaking), o: HibernationObserved{API: workload(1, 1, 0, 0), Crawler: gone(), Elastic: elasticOf(1, 1, 0)},
			stopped: resources.Stopped{Crawler: true}, phase: monoclev1alpha1.HibernationWaking,
			down: []string{"crawler"}, reason: reasons.Waking,
		},
		"the API ready: the crawler starts": {
			m: hibernationMonocle(false, monoclev1alpha1.HibernationWaking), o: HibernationObserved{API: up(), Crawler: gone(), Elastic: elasticOf(1, 1, 1)},
			phase: monoclev1alpha1.HibernationWaking, down: []string{"crawler"}, reason: reasons.Waking, message: "Starting the crawler",
		},
		"every component serves: awake, the status and the condition go": {
			m: hibernationMonocle(false, monoclev1alpha1.HibernationWaking), o: HibernationObserved{API: up(), Crawler: up(), Elastic: elasticOf(1, 1, 1)},
		},
		"a failed restore keeps the API and the crawler stopped: awake once Elasticsearch serves": {
			m: withRestore(hibernationMonocle(false, monoclev1alpha1.HibernationWaking), monoclev1alpha1.RestoreFailed),
			o: HibernationObserved{API: gone(), Crawler: gone(), Elastic: elasticOf(1, 1, 1)},
		},
		"asked again while waking: the crawler stops first again": {
			m: hibernationMonocle(true, monoclev1alpha1.HibernationWaking), o: HibernationObserved{API: up(), Crawler: gone(), Elastic: elasticOf(1, 1, 1)},
			stopped: resources.Stopped{Crawler: true, API: true}, phase: monoclev1alpha1.HibernationHibernating, down: []string{"crawler"},
			reason: reasons.Hibernating,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.external {
				tc.m.Spec.Elasticsearch.External = &monoclev1alpha1.ExternalElasticsearch{URL: "https://es.example.com:9200"}
			}
			step := PlanHibernation(tc.m, tc.o, now)
			if step.Stopped != tc.stopped {
				t.Errorf("stopped %+v, want %+v", step.Stopped, tc.stopped)
			}
			if step.AwaitedSnapshots != tc.awaited {
				t.Errorf("awaited snapshots %q, want %q", step.AwaitedSnapshots, tc.awaited)
			}
			switch {
			case tc.phase == "" && step.Status != nil:
				t.Errorf("status.hibernation %+v, want none", step.Status)
			case tc.phase != "" && step.Status == nil:
				t.Errorf("no status.hibernation, want phase %s", tc.phase)
			case tc.phase != "":
				if step.Status.Phase != tc.phase || !slices.Equal(step.Status.Stopped, tc.down) {
					t.Errorf("status.hibernation phase %s stopped %v, want %s %v", step.Status.Phase, step.Status.Stopped, tc.phase, tc.down)
				}
				if !strings.Contains(step.Status.Message, tc.message) {
					t.Errorf("message %q, want it to contain %q", step.Status.Message, tc.message)
				}
				if noted := strings.Contains(step.Status.Message, UncountedTerminatingNote); noted != strings.Contains(tc.message, UncountedTerminatingNote) {
					t.Errorf("message %q: the note on uncounted terminating pods is there: %t, want %t", step.Status.Message, noted, !noted)
				}
			}
			switch c := step.Condition; {
			case tc.reason == "" && c != nil:
				t.Errorf("condition %+v, want it removed", *c)
			case tc.reason != "" && c == nil:
				t.Errorf("no condition, want reason %s", tc.reason)
			case c != nil:
				wantStatus := metav1.ConditionFalse
				if tc.reason == reasons.Hibernated {
					wantStatus = metav1.ConditionTrue
				}
				if c.Type != monoclev1alpha1.ConditionHibernated || c.Reason != tc.reason || c.Status != wantStatus || !strings.Contains(c.Message, tc.message) {
					t.Errorf("condition %+v, want %s %s containing %q", *c, wantStatus, tc.reason, tc.message)
				}
			}
		})
	}
}

// TestHibernationSince keeps since while the phase stays and sets it when the phase changes.
func TestHibernationSince(t *testing.T) {
	now := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	m := hibernationMonocle(true, monoclev1alpha1.HibernationHibernating)
	was := m.Status.Hibernation.Since
	o := HibernationObserved{API: workload(1, 1, 1, 0), Crawler: workload(0, 1, 1, 0), Elastic: elasticOf(1, 1, 1)}
	if got := PlanHibernation(m, o, now).Status.Since; !got.Equal(was) {
		t.Errorf("since %v, want %v kept", got, was)
	}
	o.Crawler, o.API, o.Elastic = nil, nil, nil
	if got := PlanHibernation(m, o, now).Status.Since; !got.Equal(StatusTime(now)) {
		t.Errorf("since %v, want %v: the phase turned Hibernated", got, now)
	}
}

// TestHibernationWalk runs a hibernation and a waking to the end, each step from the
// workloads the one before left (every component's controller acting at once), and records
// the order components stop and start in.
func TestHibernationWalk(t *testing.T) {
	now := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	m := hibernationMonocle(true, "")
	o := HibernationObserved{API: workload(2, 2, 2, 0), Crawler: workload(1, 1, 1, 0), Elastic: elasticOf(1, 1, 1)}
	var order []string
	apply := func(s resources.Stopped) {
		for _, c := range []struct {
			d       **appsv1.Deployment
			stopped bool
			name    string
			want    int32
		}{{&o.Crawler, s.Crawler, "crawler", 1}, {&o.API, s.API, "api", 2}} {
			n := c.want
			if c.stopped {
				n = 0
			}
			if ptr.Deref((*c.d).Spec.Replicas, 1) != n {
				order = append(order, map[bool]string{true: "stop ", false: "start "}[c.stopped]+c.name)
				*c.d = workload(n, n, n, 0)
			}
		}
		n := int32(1)
		if s.Elastic {
			n = 0
		}
		if *o.Elastic.Spec.Replicas != n {
			order = append(order, map[bool]string{true: "stop ", false: "start "}[s.Elastic]+"elastic")
			o.Elastic = elasticOf(n, n, n)
		}
	}
	for i := 0; i < 10 && (m.Status.Hibernation == nil || m.Status.Hibernation.Phase != monoclev1alpha1.HibernationHibernated); i++ {
		step := PlanHibernation(m, o, now)
		apply(step.Stopped)
		m.Status.Hibernation = step.Status
	}
	m.Spec.Hibernate = false
	for i := 0; i < 10 && m.Status.Hibernation != nil; i++ {
		step := PlanHibernation(m, o, now)
		apply(step.Stopped)
		m.Status.Hibernation = step.Status
	}
	want := []string{"stop crawler", "stop api", "stop elastic", "start elastic", "start api", "start crawler"}
	if !slices.Equal(order, want) || m.Status.Hibernation != nil {
		t.Errorf("order %v (status %+v), want %v and awake", order, m.Status.Hibernation, want)
	}
}

func TestHoldUpgrade(t *testing.T) {
	now := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	api, crawler := deploymentOf(oldMonocleImage, 0), deploymentOf(oldMonocleImage, 0)
	// The image changes while hibernated: the upgrade would start; it waits.
	m := upgradeMonocle(newMonocleImage, oldMonocleImage, true, nil)
	held := HoldUpgrade(m, PlanUpgrade(m, api, crawler, nil, false, now))
	if held.Status != nil || held.APIImage != oldMonocleImage || held.CrawlerImage != oldMonocleImage ||
		held.Condition.Reason != reasons.WaitingForWake || held.Snapshot != "" || held.StopCrawler {
		t.Errorf("held upgrade %+v, want no status, the running images and WaitingForWake", held)
	}
	// Nothing to upgrade: the plan stands.
	m = upgradeMonocle(oldMonocleImage, oldMonocleImage, true, nil)
	if planned := PlanUpgrade(m, api, crawler, nil, false, now); HoldUpgrade(m, planned).Condition != planned.Condition {
		t.Errorf("an up-to-date Monocle's step changed: %+v", HoldUpgrade(m, planned))
	}
	// An upgrade under way (which deferred the hibernation) goes on.
	m = upgradeMonocle(newMonocleImage, oldMonocleImage, true,
		&monoclev1alpha1.UpgradeStatus{From: oldMonocleImage, To: newMonocleImage, Phase: monoclev1alpha1.UpgradeStoppingCrawler})
	if held := HoldUpgrade(m, PlanUpgrade(m, api, crawler, nil, false, now)); !held.StopCrawler || held.Condition.Reason != reasons.Upgrading ||
		held.Status.Phase != monoclev1alpha1.UpgradeReplacingAPI {
		t.Errorf("an upgrade under way was held: %+v", held)
	}
}

func TestHoldRestore(t *testing.T) {
	now := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	m := newMonocle("m")
	m.Spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: "nightly"}
	held := HoldRestore(m, RestoreStatusAfter(m, nil, now))
	if held.Status != nil || held.Condition.Reason != reasons.WaitingForWake || !strings.Contains(held.Condition.Message, "nightly") {
		t.Errorf("held restore %+v %+v, want no status and WaitingForWake", held.Status, held.Condition)
	}
	// Another snapshot than the one restored before: status.restore keeps the earlier one.
	m.Status.Restore = &monoclev1alpha1.RestoreStatus{Snapshot: "weekly", Phase: monoclev1alpha1.RestoreSucceeded}
	if held := HoldRestore(m, RestoreStatusAfter(m, nil, now)); held.Status.Snapshot != "weekly" || held.Condition.Reason != reasons.WaitingForWake {
		t.Errorf("held restore %+v %+v, want status.restore of weekly kept", held.Status, held.Condition)
	}
	// The restore status holds already: the result stands.
	m.Status.Restore = &monoclev1alpha1.RestoreStatus{Snapshot: "nightly", Phase: monoclev1alpha1.RestoreFailed, Message: "gone"}
	if held := HoldRestore(m, RestoreStatusAfter(m, nil, now)); held.Condition.Reason != reasons.RestoreFailed {
		t.Errorf("a failed restore's result changed: %+v", held.Condition)
	}
}

func TestHibernationDeferral(t *testing.T) {
	restore := &monoclev1alpha1.RestoreSpec{Snapshot: "s1"}
	restored := func(snapshot string, phase monoclev1alpha1.RestorePhase) *monoclev1alpha1.RestoreStatus {
		return &monoclev1alpha1.RestoreStatus{Snapshot: snapshot, Phase: phase}
	}
	upgrade := func(phase monoclev1alpha1.UpgradePhase) *monoclev1alpha1.UpgradeStatus {
		return &monoclev1alpha1.UpgradeStatus{From: "1.10.0", To: "1.11.2", Phase: phase}
	}
	tests := map[string]struct {
		restore *monoclev1alpha1.RestoreSpec
		status  monoclev1alpha1.MonocleStatus
		want    string // the whole message; "" for none
	}{
		"nothing":                    {},
		"a restore pending":          {restore: restore, status: monoclev1alpha1.MonocleStatus{Restore: restored("s1", monoclev1alpha1.RestorePending)}, want: "spec.hibernate waits for the restore of snapshot s1 (phase Pending) to end: the Monocle hibernates then"},
		"a restore restoring":        {restore: restore, status: monoclev1alpha1.MonocleStatus{Restore: restored("s1", monoclev1alpha1.RestoreRestoring)}, want: "spec.hibernate waits for the restore of snapshot s1 (phase Restoring) to end: the Monocle hibernates then"},
		"a restore succeeded":        {restore: restore, status: monoclev1alpha1.MonocleStatus{Restore: restored("s1", monoclev1alpha1.RestoreSucceeded)}},
		"a restore failed":           {restore: restore, status: monoclev1alpha1.MonocleStatus{Restore: restored("s1", monoclev1alpha1.RestoreFailed)}},
		"another snapshot's restore": {restore: restore, status: monoclev1alpha1.MonocleStatus{Restore: restored("s0", monoclev1alpha1.RestoreRestoring)}},
		"an upgrade stopping the crawler": {status: monoclev1alpha1.MonocleStatus{Upgrade: upgrade(monoclev1alpha1.UpgradeStoppingCrawler)},
			want: "spec.hibernate waits for the upgrade from 1.10.0 to 1.11.2 (phase StoppingCrawler) to end: the Monocle hibernates then"},
		"an upgrade blocked": {status: monoclev1alpha1.MonocleStatus{Upgrade: upgrade(monoclev1alpha1.UpgradeBlocked)},
			want: "spec.hibernate waits for the upgrade from 1.10.0 to 1.11.2 (phase Blocked) to end: the Monocle hibernates then"},
		"an upgrade succeeded": {status: monoclev1alpha1.MonocleStatus{Upgrade: upgrade(monoclev1alpha1.UpgradeSucceeded)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := &monoclev1alpha1.Monocle{Spec: monoclev1alpha1.MonocleSpec{Restore: tc.restore}, Status: tc.status}
			if got := HibernationDeferral(m); got != tc.want {
				t.Errorf("HibernationDeferral = %q, want %q", got, tc.want)
			}
		})
	}
}
