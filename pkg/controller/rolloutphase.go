package controller

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// The rule of fleet rollouts, in one place (docs/fleet-rollouts.md tells it to users).
//
// A Monocle's status.rollout records the release whose templates its workloads (the bundled
// Elasticsearch StatefulSet, the API and crawler Deployments) were last written with
// (revision), and a hash of its owner's inputs at that write (rolloutInputs). A sync that
// finds the operator's revision recorded, and the roll not Failed, writes the workloads as
// every sync does: the gate is open. Otherwise the gate is closed, and a workload whose pod
// template this release would change is left as it is (rolloutGate.holds); after the
// workloads phase, decideRollout tells why the templates differ:
//
//   - the owner's inputs differ from those recorded (or, on a Monocle an earlier release
//     ran, the spec is one it had not observed): the owner's change, rolled at once with the
//     new templates (cause Owner, or Created for a Monocle without workloads);
//   - no workload would start a pod with the new templates (none differs, or every one that
//     differs runs no replica: hibernated): rolled at once (NoRestart);
//   - otherwise it is the operator's own change: the Monocle waits for its wave of the fleet
//     rollout (fleet.admit), held with the condition RolloutHeld meanwhile.
//
// Admission is written to the status first (phase Rolling, the wave), and the workloads are
// written by the next sync, whose gate it opens (the status write's own event enqueues the
// Monocle, handlers.go): a leader that dies between the two leaves
// the admission recorded, so that no later leader admits more than the wave holds. Each
// status write judges a Rolling roll (rollout.Policy.Judge): Rolled once the Monocle has been
// Ready for the soak time, Failed past the deadline. A Failed roll closes the gate, for undo,
// until RolloutResumeAnnotation takes a new value or the owner changes the Monocle; either
// writes the templates again, and the fleet waits for the Monocle again as for its wave.

// rolloutGate is what the rollout phase decided before the foundation: whether the
// workloads may be written with this release's templates, and, when they may not, what the
// workload steps found they would change.
type rolloutGate struct {
	// open lets every workload be written.
	open bool

	mu sync.Mutex
	// changes are the workloads whose pod template this release would change, by kind and
	// name; restarts is set when one of them runs or would run a pod.
	changes  []string
	restarts bool
	// evaluated counts the workloads the steps compared; unevaluated names those a step
	// could not build (a missing Secret or config), whose change is unknown.
	evaluated   int
	unevaluated []string
}

// planRollout opens the gate when m's status.rollout records this operator's revision and a
// roll that has not failed.
func (c *Controller) planRollout(st *syncState) {
	r := st.m.Status.Rollout
	st.rollout = &rolloutGate{open: r != nil && r.Revision == c.fleet.revision && r.Phase != monoclev1alpha1.RolloutFailed}
}

// holds reports whether the workload step leaves live as it is rather than writing desired:
// the gate is closed and desired has another pod template by the drift rule
// (owned/drift.go). A workload that does not exist yet is created. replicas are desired's and
// live's replicas: a change of a workload with none of either starts no pod. Safe for the
// parallel steps of a phase. A nil gate is open.
func (g *rolloutGate) holds(name string, live, desired *corev1.PodTemplateSpec, replicas ...int32) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.evaluated++
	if g.open || live == nil {
		return false
	}
	wrap := func(t *corev1.PodTemplateSpec) *appsv1.Deployment {
		return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: *t}}
	}
	if !owned.FieldsDiffer(wrap(desired), wrap(live), podMetadata) {
		return false
	}
	g.changes = append(g.changes, name)
	if slices.ContainsFunc(replicas, func(n int32) bool { return n > 0 }) {
		g.restarts = true
	}
	return true
}

// unknown notes that the step of the workload name could not build it.
func (g *rolloutGate) unknown(name string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.unevaluated = append(g.unevaluated, name)
}

// holdsStatefulSet is holds for the bundled Elasticsearch's StatefulSet.
func (g *rolloutGate) holdsStatefulSet(live, desired *appsv1.StatefulSet) bool {
	if live == nil {
		return g.holds(desired.Name, nil, &desired.Spec.Template)
	}
	return g.holds("StatefulSet "+desired.Name, &live.Spec.Template, &desired.Spec.Template,
		ptr.Deref(desired.Spec.Replicas, 1), ptr.Deref(live.Spec.Replicas, 1), live.Status.Replicas)
}

// holdsDeployment is holds for the API's or the crawler's Deployment.
func (g *rolloutGate) holdsDeployment(live, desired *appsv1.Deployment) bool {
	if live == nil {
		return g.holds(desired.Name, nil, &desired.Spec.Template)
	}
	return g.holds("Deployment "+desired.Name, &live.Spec.Template, &desired.Spec.Template,
		ptr.Deref(desired.Spec.Replicas, 1), ptr.Deref(live.Spec.Replicas, 1), live.Status.Replicas)
}

// rolloutInputs is the hash of what m's owner controls and its workloads are built from:
// the spec's generation, the operator's annotations (but those of the rollout itself), the
// config the pods run, the data of the Secrets and the CA bundle the Monocle names, the
// credentials and CA of an Elasticsearch of its own (ECK or external), and the restarts the
// Monocle's own auto-pilot asked for. What the operator generates (keys, the bundled node's
// users) is left out: a new release may add to it. "" while the foundation misses a part.
func rolloutInputs(st *syncState, f foundation) string {
	m := st.m
	if f.apiSecret == nil || !f.configReady() || !st.cluster.resolved {
		return ""
	}
	annotations := map[string]string{}
	for k, v := range m.Annotations {
		if strings.HasPrefix(k, "monocle.change-metrics.io/") && !slices.Contains(rolloutAnnotations, k) {
			annotations[k] = v
		}
	}
	var target []any
	if t := st.cluster.target; !t.Bundled() {
		target = []any{t.URL, t.Username, t.Password, t.CA}
	}
	return resources.Hash([]any{m.Generation, annotations, f.configHash, f.secrets.hash, f.secrets.caHash, target,
		day2.CrawlerRestartedAt(m), day2.APIRestartedAt(m)})
}

// ownerChanged reports whether the owner's inputs of m are not those its workloads were last
// rolled with (recorded in was, nil when none was): on a Monocle an earlier release ran,
// which recorded none, whether its spec is one that release had not observed.
func ownerChanged(m *monoclev1alpha1.Monocle, was *monoclev1alpha1.RolloutStatus, inputs string) bool {
	if was == nil || was.Inputs == "" {
		return m.Status.ObservedGeneration != m.Generation
	}
	return inputs != "" && was.Inputs != inputs
}

// decideRollout is the phase after the workloads: it records in status.rollout why the
// workloads run the templates they run, admits a Monocle whose templates the operator's own
// change would change to its wave of the fleet rollout, and sets RolloutHeld (see the rule
// above).
func (c *Controller) decideRollout(st *syncState, f foundation) {
	// The times recorded are to the second, as the API server keeps them.
	m, g, now := st.m, st.rollout, metav1.NewTime(st.now.Truncate(time.Second))
	key := cache.MetaObjectToName(m)
	inputs := rolloutInputs(st, f)
	var r monoclev1alpha1.RolloutStatus
	if m.Status.Rollout != nil {
		r = *m.Status.Rollout
	}
	rolled := func(cause monoclev1alpha1.RolloutCause, message string) {
		r = monoclev1alpha1.RolloutStatus{Revision: c.fleet.revision, Inputs: inputs, Phase: monoclev1alpha1.RolloutRolled, Cause: cause,
			StartTime: &now, CompletionTime: &now, Resumed: r.Resumed, Message: message}
	}
	resume := m.Annotations[monoclev1alpha1.RolloutResumeAnnotation]
	held := func(reason, message string) {
		st.setCondition(metav1.Condition{Type: monoclev1alpha1.ConditionRolloutHeld, Status: metav1.ConditionTrue, Reason: reason,
			Message: day2.Truncate(message)})
	}
	switch {
	case g.open:
		if inputs != "" {
			r.Inputs = inputs
		}
	case r.Phase == monoclev1alpha1.RolloutFailed && r.Revision == c.fleet.revision && ownerChanged(m, m.Status.Rollout, inputs):
		// The owner's change of a Monocle whose roll failed is theirs, written at once, and
		// may be the fix: the fleet waits for the Monocle again as for its wave, and goes on
		// if it is Ready within the deadline.
		r.Inputs, r.Phase, r.StartTime, r.CompletionTime = inputs, monoclev1alpha1.RolloutRolling, &now, nil
		r.Message = fmt.Sprintf("The owner's change is rolled out at once with the templates of %s; the fleet waits for this Monocle again", c.fleet.revision)
	case ownerChanged(m, m.Status.Rollout, inputs):
		if st.observed.elastic == nil && st.observed.api == nil && st.observed.crawler == nil {
			rolled(monoclev1alpha1.RolloutCauseCreated, fmt.Sprintf("Created with the templates of %s", c.fleet.revision))
			break
		}
		rolled(monoclev1alpha1.RolloutCauseOwner, fmt.Sprintf("The owner's change is rolled out at once with the templates of %s", c.fleet.revision))
	case r.Phase == monoclev1alpha1.RolloutFailed && resume != "" && resume != r.Resumed:
		r.Resumed, r.CompletionTime = resume, nil
		if r.Revision == c.fleet.revision {
			r.Phase, r.StartTime = monoclev1alpha1.RolloutRolling, &now
			r.Message = "Resumed: the templates are written again"
			st.event(corev1.EventTypeNormal, reasons.RolloutResumed, fmt.Sprintf("%s=%s resumes the rollout of %s with this Monocle", monoclev1alpha1.RolloutResumeAnnotation, resume, r.Revision))
		} else {
			// Failed under an earlier release: it waits for its wave of this one.
			r.Phase, r.Message = "", fmt.Sprintf("Resumed: waits for its wave of the rollout of %s", c.fleet.revision)
			st.event(corev1.EventTypeNormal, reasons.RolloutResumed, r.Message)
		}
	case r.Phase == monoclev1alpha1.RolloutFailed:
		held(reasons.RolloutFailed, fmt.Sprintf("%s. The operator leaves the workloads as they are: `kubectl monocle rollout undo %s -n %s` brings back the templates they ran before; `kubectl monocle rollout resume` writes %s's templates again once the cause is fixed",
			r.Message, m.Name, m.Namespace, r.Revision))
	case len(g.unevaluated) == 0 && !g.restarts:
		rolled(monoclev1alpha1.RolloutCauseNoRestart, fmt.Sprintf("The templates of %s restart no pod of this Monocle", c.fleet.revision))
	default:
		started := monoclev1alpha1.RolloutStatus{Revision: c.fleet.revision, Inputs: inputs, Phase: monoclev1alpha1.RolloutRolling,
			Cause: monoclev1alpha1.RolloutCauseWave, StartTime: &now, Resumed: r.Resumed,
			ReadyBefore: apimeta.IsStatusConditionTrue(m.Status.Conditions, monoclev1alpha1.ConditionReady)}
		if started.Inputs == "" {
			started.Inputs = r.Inputs
		}
		wave, ok, plan := c.fleet.admit(key, started, st.now)
		if !ok {
			// The message changes only with the wave expected, not with the fleet's progress:
			// each change of it is a status write per waiting Monocle.
			reason, why := reasons.WaitingForWave, "the Monocle waits for its wave of the fleet rollout"
			if w, ok := plan.Expected[key]; ok {
				why = fmt.Sprintf("the Monocle waits for wave %d of the fleet rollout", w)
			}
			if plan.Halted {
				reason, why = reasons.RolloutHalted, plan.Waiting
			} else if plan.Wave == 0 && len(plan.Next) == 0 {
				why = plan.Waiting
			}
			held(reason, fmt.Sprintf("The templates of %s would restart %s; %s (`kubectl monocle rollout status` shows the fleet)", c.fleet.revision, changeList(g), why))
			break
		}
		r = started
		r.Wave = wave
		r.Message = fmt.Sprintf("Wave %d of the rollout of %s: %s", wave, c.fleet.revision, changeList(g))
		st.rolloutAdmitted = true
		st.event(corev1.EventTypeNormal, reasons.RolloutStarted, r.Message)
	}
	if st.condition(monoclev1alpha1.ConditionRolloutHeld) == nil {
		st.removeCondition(monoclev1alpha1.ConditionRolloutHeld)
	}
	if r.Revision != "" || m.Status.Rollout != nil {
		st.status.Rollout = &r
	}
}

// changeList names the workloads g found changed, then those it could not build.
func changeList(g *rolloutGate) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	parts := slices.Clone(g.changes)
	slices.Sort(parts)
	for _, name := range g.unevaluated {
		parts = append(parts, name+" (not built yet)")
	}
	if len(parts) == 0 {
		return "no workload"
	}
	return strings.Join(parts, ", ")
}

// judgeRollout judges status.rollout with the conditions status carries (rollout.Policy.Judge)
// and syncs the Monocle again when the next judgement is due. A roll admitted by this sync is
// judged by the next, which writes its templates.
func (c *Controller) judgeRollout(st *syncState, status *monoclev1alpha1.MonocleStatus) {
	if status.Rollout == nil || st.rolloutAdmitted {
		return
	}
	r, after := c.fleet.policy.Judge(*status.Rollout, status.Conditions, st.now)
	status.Rollout = &r
	if after > 0 {
		c.queue.AddAfter(cache.MetaObjectToName(st.m), after)
	}
}

// recordRolloutTransition records the events of a roll's end: RolloutSucceeded when it is
// Rolled, RolloutFailed (a Warning) when it failed.
func (c *Controller) recordRolloutTransition(m *monoclev1alpha1.Monocle, was, is *monoclev1alpha1.RolloutStatus) {
	if is == nil || (was != nil && was.Phase == is.Phase && was.Revision == is.Revision) {
		return
	}
	switch {
	case is.Phase == monoclev1alpha1.RolloutFailed:
		c.recorder.Event(m, corev1.EventTypeWarning, reasons.RolloutFailed, is.Message)
	case is.Phase == monoclev1alpha1.RolloutRolled && was != nil && was.Phase == monoclev1alpha1.RolloutRolling && was.Revision == is.Revision &&
		is.Cause == monoclev1alpha1.RolloutCauseWave:
		c.recorder.Event(m, corev1.EventTypeNormal, reasons.RolloutSucceeded, is.Message)
	}
}

// rolloutAnnotations are the Monocle's annotations that change only the rollout, which a
// change of the owner's inputs leaves out.
var rolloutAnnotations = []string{monoclev1alpha1.RolloutAnnotation, monoclev1alpha1.RolloutResumeAnnotation}
