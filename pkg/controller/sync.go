package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// syncHandler converges the objects of the Monocle named by key and writes its status, in
// phases over one syncState, after one read of the workloads as the caches have them
// (observe.go): adoption of an earlier operator's objects, the Elasticsearch
// cluster it uses (target.go), what spec.hibernate stops (planhibernation.go), whether the
// workloads may take this release's templates (planRollout), the foundation
// objects (keys, Secrets, config, Services, Elasticsearch, exposure…), the API and crawler
// workloads, the Monocle's place in the fleet rollout (decideRollout, rolloutphase.go), the
// maintenance Jobs, what the operand worker reads and does in Elasticsearch,
// and the status.
//
// A Monocle that is gone or being deleted needs nothing: owner references let the garbage
// collector remove what it owned, and the Elasticsearch PVC, which has no owner, stays. The
// steps of a phase are independent where they can be, so one failing object does not hold
// back the others; their errors are returned together and the key is retried. Two errors end
// the sync at once instead, since every later request would meet them too: the API server
// being unavailable (the sync returns an *unavailableError) and the namespace being deleted
// (the sync returns nil: the namespace's deletion removes the Monocle).
func (c *Controller) syncHandler(ctx context.Context, key cache.ObjectName) error {
	cached, err := c.monoclesLister.Monocles(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(4).Info("Monocle is gone")
		c.forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Monocle from the cache: %w", err)
	}
	if cached.DeletionTimestamp != nil {
		return nil
	}
	m := cached.DeepCopy()
	ctx, st := newSyncState(ctx, m, time.Now())
	defer st.abort(nil)
	if m.Annotations[monoclev1alpha1.PausedAnnotation] == "true" {
		return c.syncPaused(ctx, st)
	}
	ctx, created := owned.WithCreatedLog(ctx)
	defer c.recordCreated(st, created)

	st.observed = c.observe(m)
	adopted, err := c.adopt(ctx, st)
	if err != nil {
		return err
	}
	st.adoption = adopted
	st.cluster = c.resolveElasticsearch(ctx, st)
	st.hibernation = c.planHibernation(st)
	c.planRollout(st)
	found := c.ensureFoundation(ctx, st)
	work := c.ensureWorkloads(ctx, st, found)
	c.decideRollout(st, found)
	c.ensureJobs(ctx, st, found, work)
	c.readOperand(ctx, st, found, work)

	if cause := context.Cause(ctx); cause != nil {
		if namespaceTerminating(cause) {
			klog.FromContext(ctx).V(2).Info("Namespace is being deleted, stopping", "err", cause)
			return nil
		}
		return &unavailableError{cause}
	}
	c.noteContests(st, key)
	return c.finishSync(ctx, st)
}

// noteContests hands the contests of the Monocle's objects to the status (st.contests), and
// syncs the Monocle again when the next of them is due: its back-off ends and the operator
// writes the object again, or that write has stood long enough for the contest to end.
func (c *Controller) noteContests(st *syncState, key cache.ObjectName) {
	contests := c.kinds.Contests()
	st.contests = contests.Of(st.m)
	if next, ok := contests.NextCheck(st.m); ok {
		c.queue.AddAfter(key, max(0, next.Sub(time.Now())))
	}
}

// forget drops what the operator keeps of a Monocle that is gone: its metrics and its reads.
func (c *Controller) forget(key cache.ObjectName) {
	monocleReady.DeleteLabelValues(key.Namespace, key.Name)
	forgetBackup(key)
	forgetCrawlers(key)
	c.operand.Forget(key)
	c.created.forget(key)
	c.progress.forget(key)
	c.kinds.Contests().Forget(key.Namespace, key.Name)
}

// finishSync writes the status of a sync, unless its pacing leaves the write for later
// (pacing.go), records the events of its changes with that write (events.go), and returns
// the sync's errors.
func (c *Controller) finishSync(ctx context.Context, st *syncState) error {
	m, errs := st.m, st.errs
	p := classify(errs)
	if statusHeld(st) {
		c.releaseAdmission(st, false)
		return nil
	}
	if p.transientOnly() {
		// The cache was behind the API server; the retry will see the current state, so a
		// status written now would only flap.
		return &staleCacheError{utilerrors.NewAggregate(errs)}
	}
	for _, err := range p.failures {
		c.recorder.Event(m, corev1.EventTypeWarning, reasons.SyncFailed, err.Error())
	}
	was := m.Status
	wrote, err := c.updateMonocleStatus(ctx, st, p)
	c.releaseAdmission(st, wrote)
	if wrote {
		c.recordStatusEvents(m, was, st)
	}
	if err != nil {
		if apierrors.IsConflict(err) && len(errs) == 0 {
			return &staleCacheError{err}
		}
		if serverUnavailable(err) {
			return &unavailableError{err}
		}
		errs = append(errs, err)
	}
	return utilerrors.NewAggregate(errs)
}

// releaseAdmission drops the fleet's reservation of the wave this sync admitted the Monocle
// to, unless the status write that records the admission went through (wrote).
func (c *Controller) releaseAdmission(st *syncState, wrote bool) {
	if st.rolloutAdmitted && !wrote {
		c.fleet.release(cache.MetaObjectToName(st.m))
	}
}

// syncPaused only reports: a paused Monocle's objects are left as they are, for manual
// maintenance, and the Paused condition says so.
func (c *Controller) syncPaused(ctx context.Context, st *syncState) error {
	m := st.m
	// Nothing is resolved: the status names the workloads of the spec's kind of cluster.
	st.cluster.target = resources.NewTarget(m, true)
	st.observed = c.observe(m)
	st.elastic, st.api, st.crawler = st.observed.elastic, st.observed.api, st.observed.crawler
	st.status.URL = statusURL(m, "")
	st.setCondition(metav1.Condition{
		Type: monoclev1alpha1.ConditionPaused, Status: metav1.ConditionTrue, Reason: reasons.Paused,
		Message: fmt.Sprintf("The annotation %s=true pauses the operator: it leaves this Monocle's objects alone; remove it to resume",
			monoclev1alpha1.PausedAnnotation),
	})
	return c.finishSync(ctx, st)
}
