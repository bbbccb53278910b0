package controller

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// syncState is what one sync of a Monocle has seen, decided and met, handed from phase to
// phase (see syncHandler).
//
// Its status starts as a copy of the Monocle's: unchanged is the default, and a phase with
// nothing new to say of a field leaves it as the last sync wrote it. Conditions enter through
// setCondition and leave through removeCondition, errors through fail, and the events a phase
// decides on through event; finishSync writes the status and records those events with it
// (events.go). Everything else a phase decides it returns: syncHandler keeps here what the
// phases before the foundation decided (observed, adoption, cluster, hibernation), and hands
// the foundation's and the workloads' results to the later phases as arguments. Only the
// sync's goroutine writes the state: a phase's parallel steps (run) hand their results back,
// and run applies them in a fixed order once every step has returned.
type syncState struct {
	// m is the sync's own copy of the Monocle; now is the time its decisions are made at.
	m   *monoclev1alpha1.Monocle
	now time.Time
	// status is the status to write, as the phases leave it; the conditions, Ready,
	// Progressing and Degraded are set from the rest by computeStatus.
	status monoclev1alpha1.MonocleStatus

	// conditions are the per-concern conditions the phases set, by type; removed are the
	// types they drop from the status; pinned are the types a later phase may not replace
	// or drop (pinCondition).
	conditions map[string]metav1.Condition
	removed    []string
	pinned     map[string]bool

	// observed is what the sync read of the workloads before its phases (observe.go).
	observed observed
	// adoption is what the adopt phase decided: whether the earlier operator's objects are
	// being adopted, and the name of the Elasticsearch volume claim template.
	adoption adoption
	// cluster is what the resolve phase decided of the Elasticsearch cluster the Monocle
	// uses (target.go).
	cluster clusterTarget
	// hibernation is what spec.hibernate asks of the sync (planHibernation): the components
	// built with zero replicas, and whether the operand reads, Jobs, upgrades and restores
	// wait.
	hibernation day2.HibernationStep

	// The objects the workloads' status is read from: the StatefulSet and the Deployments m
	// controls, as the sync left them (nil: none): as observed, then as the phases wrote them.
	elastic      *appsv1.StatefulSet
	api, crawler *appsv1.Deployment
	// rollout is what the rollout phase decided of the workloads' templates (rolloutphase.go);
	// rolloutAdmitted is set when this sync admitted the Monocle to a wave of the fleet
	// rollout, which its status write records.
	rollout         *rolloutGate
	rolloutAdmitted bool
	// apiWaits is set when the API Deployment was neither created nor rolled because
	// Elasticsearch has no ready pod (workloads.go).
	apiWaits bool
	// holdStatus leaves the status write to a later sync: a first read of Elasticsearch or
	// of the API is under way, and its end enqueues the Monocle (statusHeld, pacing.go).
	holdStatus bool

	// contests are the Monocle's objects that another writer contests, as the phases left
	// them (owned.Contests): the operator leaves them as they are while each one's back-off
	// runs.
	contests []owned.Contest

	// events are those the phases decided on, recorded in order with the status write
	// (recordStatusEvents).
	events []event

	// mu guards errs, which parallel steps add to.
	mu   sync.Mutex
	errs []error
	// abort cancels the context of the sync's requests with its cause (see fail).
	abort context.CancelCauseFunc
}

// newSyncState returns the state of a sync of m at now, and the context of the sync's
// requests, which fail cancels.
func newSyncState(ctx context.Context, m *monoclev1alpha1.Monocle, now time.Time) (context.Context, *syncState) {
	ctx, abort := context.WithCancelCause(ctx)
	return ctx, &syncState{m: m, now: now, status: *m.Status.DeepCopy(), conditions: map[string]metav1.Condition{},
		pinned: map[string]bool{}, abort: abort}
}

// elasticAccess is how m's pods reach the target, the proxy Secret's data being proxyData
// (nil: none) and the Secret "<name>-api"'s apiSecretData, which salts its hash.
func (st *syncState) elasticAccess(proxyData, apiSecretData map[string][]byte) resources.ElasticAccess {
	e := resources.ElasticAccess{Target: st.cluster.target}
	if proxyData != nil {
		e.ProxyHash = resources.ProxyHash(proxyData, apiSecretData)
	}
	return e
}

// setCondition sets a per-concern condition of the status, replacing one of the same type
// this sync set before, unless that one is pinned.
func (st *syncState) setCondition(c metav1.Condition) {
	if !st.pinned[c.Type] {
		st.conditions[c.Type] = c
	}
}

// pinCondition sets c and keeps it for the rest of the sync: the resolve phase pins what
// keeps the Monocle from using its cluster (ElasticsearchHealthy, SecretsReady), which the
// later phases' conditions of the same type, saying less, would hide.
func (st *syncState) pinCondition(c metav1.Condition) {
	st.conditions[c.Type] = c
	st.pinned[c.Type] = true
}

// removeCondition drops the condition of type typ from the status, unless it is pinned.
func (st *syncState) removeCondition(typ string) {
	if st.pinned[typ] {
		return
	}
	delete(st.conditions, typ)
	st.removed = append(st.removed, typ)
}

// condition returns the condition of type typ this sync set, or nil.
func (st *syncState) condition(typ string) *metav1.Condition {
	if c, ok := st.conditions[typ]; ok {
		return &c
	}
	return nil
}

// fail adds err (nil: nothing) to the sync's errors. An error that every later request of the
// sync would meet too, the API server being unavailable or the namespace being deleted, also
// aborts the sync: the remaining requests then fail in the client, before they are sent, and
// syncHandler ends with it. Safe for parallel steps.
func (st *syncState) fail(err error) {
	if err == nil {
		return
	}
	st.mu.Lock()
	st.errs = append(st.errs, err)
	st.mu.Unlock()
	if serverUnavailable(err) || namespaceTerminating(err) {
		st.abort(err)
	}
}

// step is one of a phase's independent pieces of work: it makes its requests with ctx and
// returns how its result enters the state (nil: it adds nothing) and its errors.
type step func(ctx context.Context) (apply func(*syncState), errs []error)

// run runs steps at once and returns when all have returned. Each step's errors go to fail as
// soon as it returns, so that one meeting an unavailable API server stops the others; the
// results are then applied in the order of steps, by the sync's goroutine alone.
func (st *syncState) run(ctx context.Context, steps ...step) {
	applies := make([]func(*syncState), len(steps))
	var wg sync.WaitGroup
	for i, s := range steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			apply, errs := s(ctx)
			for _, err := range errs {
				st.fail(err)
			}
			applies[i] = apply
		}()
	}
	wg.Wait()
	for _, apply := range applies {
		if apply != nil {
			apply(st)
		}
	}
}

// conditionOrder is the order of the conditions in a status the operator writes first: the
// summary (Ready, Progressing, Degraded), then the per-concern conditions in the order of the
// phases that set them. A condition already in the status keeps its place.
var conditionOrder = []string{
	monoclev1alpha1.ConditionReady,
	monoclev1alpha1.ConditionProgressing,
	monoclev1alpha1.ConditionDegraded,
	monoclev1alpha1.ConditionConfigValid,
	monoclev1alpha1.ConditionSecretsReady,
	monoclev1alpha1.ConditionSpecAccepted,
	monoclev1alpha1.ConditionOIDCReady,
	monoclev1alpha1.ConditionAdopted,
	monoclev1alpha1.ConditionStorageReady,
	monoclev1alpha1.ConditionExposed,
	monoclev1alpha1.ConditionMonitored,
	monoclev1alpha1.ConditionIdentsUpdated,
	monoclev1alpha1.ConditionPaused,
	monoclev1alpha1.ConditionElasticsearchHealthy,
	monoclev1alpha1.ConditionDiskPressure,
	monoclev1alpha1.ConditionAPIHealthy,
	monoclev1alpha1.ConditionCrawlersHealthy,
	monoclev1alpha1.ConditionCrawlersProgressing,
	monoclev1alpha1.ConditionUpgraded,
	monoclev1alpha1.ConditionBackupReady,
	monoclev1alpha1.ConditionRestored,
	monoclev1alpha1.ConditionHibernated,
}

// orderedConditions returns conds sorted by conditionOrder; a type it does not list comes
// last, by name.
func orderedConditions(conds map[string]metav1.Condition) []metav1.Condition {
	rank := func(typ string) int {
		if i := slices.Index(conditionOrder, typ); i >= 0 {
			return i
		}
		return len(conditionOrder)
	}
	out := make([]metav1.Condition, 0, len(conds))
	for _, c := range conds {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b metav1.Condition) int {
		return cmp.Or(cmp.Compare(rank(a.Type), rank(b.Type)), cmp.Compare(a.Type, b.Type))
	})
	return out
}

// writeConditions sets the summary conditions and those of st into status, and drops the
// removed ones; meta.SetStatusCondition keeps lastTransitionTime when a condition's status
// does not change.
func (st *syncState) writeConditions(status *monoclev1alpha1.MonocleStatus, summary ...metav1.Condition) {
	for _, typ := range st.removed {
		apimeta.RemoveStatusCondition(&status.Conditions, typ)
	}
	all := maps.Clone(st.conditions)
	for _, c := range summary {
		all[c.Type] = c
	}
	for _, cond := range orderedConditions(all) {
		cond.ObservedGeneration = st.m.Generation
		apimeta.SetStatusCondition(&status.Conditions, cond)
	}
}
