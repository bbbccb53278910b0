package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// updateMonocleStatus computes the status from what the sync observed and writes it with
// UpdateStatus when it differs from the cached one, unless its pacing (statusWrites.wait,
// pacing.go) leaves the write to a later sync (then it enqueues the Monocle for it). It reports whether it wrote; m, the sync's
// own copy of the Monocle, then holds the status written.
func (c *Controller) updateMonocleStatus(ctx context.Context, st *syncState, p problems) (bool, error) {
	m := st.m
	status := computeStatus(st, p)
	c.judgeRollout(st, &status)
	readyValue := 0.0
	if apimeta.IsStatusConditionTrue(status.Conditions, monoclev1alpha1.ConditionReady) {
		readyValue = 1
	}
	monocleReady.WithLabelValues(m.Namespace, m.Name).Set(readyValue)
	if c := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionBackupReady); c != nil {
		recordBackupMetrics(m, status.Backup, *c)
	}
	recordCrawlerMetrics(m, status.Crawlers)
	if equality.Semantic.DeepEqual(m.Status, status) {
		return false, nil
	}
	key := cache.MetaObjectToName(m)
	if wait := c.progress.wait(key, m.Status, status, time.Now()); wait > 0 {
		// A later sync writes it, with whatever else has moved by then.
		c.queue.AddAfter(key, wait)
		return false, nil
	}
	was := m.Status
	m.Status = status
	if _, err := c.monocleclientset.MonocleV1alpha1().Monocles(m.Namespace).UpdateStatus(ctx, m, metav1.UpdateOptions{FieldManager: ControllerName}); err != nil {
		m.Status = was
		if apierrors.IsNotFound(err) {
			// Deleted while this sync ran: nothing left to report on.
			return false, nil
		}
		return false, fmt.Errorf("updating status: %w", err)
	}
	c.progress.wrote(key, time.Now())
	klog.FromContext(ctx).V(2).Info("Updated Monocle status")
	return true, nil
}

// computeStatus derives the status from what the phases of the sync left in st and the
// problems the sync met: the workloads' status, the version, and the Ready, Progressing and
// Degraded conditions beside the per-concern ones. It is pure.
func computeStatus(st *syncState, p problems) monoclev1alpha1.MonocleStatus {
	m := st.m
	status := *st.status.DeepCopy()
	status.ObservedGeneration = m.Generation
	status.Elasticsearch = statefulSetStatus(st.elastic)
	status.API = deploymentStatus(st.api)
	status.Crawler = deploymentStatus(st.crawler)
	if status.API.Ready && status.API.Image != "" {
		status.Version = resources.ImageTag(status.API.Image)
	}

	type component struct {
		name   string
		status monoclev1alpha1.ComponentStatus
		done   bool
	}
	components := []component{
		{"api", status.API, day2.DeploymentRolledOut(st.api)},
		{"crawler", status.Crawler, day2.DeploymentRolledOut(st.crawler)},
	}
	if st.cluster.target.Bundled() {
		// An Elasticsearch of elasticsearchRef or external is no workload of the Monocle.
		components = append([]component{{"elasticsearch", status.Elasticsearch, day2.StatefulSetRolledOut(st.elastic)}}, components...)
	}
	// Ready asks whether each component serves: enough ready pods, old or new. Progressing
	// tells a rollout apart; component status.ready needs both.
	var notReady, rolling []string
	for _, comp := range components {
		name := comp.name
		if name == "api" && st.apiWaits {
			// Neither created nor rolled until Elasticsearch has a ready pod (workloads.go).
			name = "api (waits for a ready Elasticsearch pod)"
			comp.done = false
		}
		if comp.status.ReadyReplicas < comp.status.Replicas || comp.status.Image == "" {
			notReady = append(notReady, fmt.Sprintf("%s %d/%d ready", name, comp.status.ReadyReplicas, comp.status.Replicas))
		}
		if !comp.done {
			rolling = append(rolling, name)
		}
	}

	// Degraded gathers what keeps the operator from converging, most pressing first.
	var causes, messages []string
	if len(p.conflicts) > 0 {
		causes = append(causes, reasons.NameConflict)
		messages = append(messages, "Objects with the names this Monocle needs exist and are not controlled by it; delete or rename them: "+
			strings.Join(p.conflicts, ", "))
	}
	if len(st.contests) > 0 {
		causes = append(causes, reasons.FieldContested)
		messages = append(messages, contestedMessage(st.contests))
	}
	for _, cond := range orderedConditions(st.conditions) {
		if cond.Status == metav1.ConditionFalse && reasons.Blocking(cond.Reason) {
			causes = append(causes, cond.Reason)
			messages = append(messages, cond.Message)
		}
	}
	if len(p.failures) > 0 {
		causes = append(causes, reasons.SyncFailed)
		messages = append(messages, p.failures[0].Error())
	}
	degraded := metav1.Condition{Type: monoclev1alpha1.ConditionDegraded, Status: metav1.ConditionFalse, Reason: reasons.AsExpected,
		Message: "The operator converges every owned object"}
	if len(causes) > 0 {
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, causes[0], day2.Truncate(strings.Join(messages, ". "))
	}

	progressing := metav1.Condition{Type: monoclev1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: reasons.RolloutComplete,
		Message: "Every workload runs the desired spec"}
	if len(rolling) > 0 {
		progressing.Status, progressing.Reason = metav1.ConditionTrue, reasons.RollingOut
		progressing.Message = "Rolling out: " + strings.Join(rolling, ", ")
	}

	// Ready says whether Monocle serves. A Degraded Monocle may well serve (an invalid config
	// leaves the last valid one running), unless objects it needs cannot be made.
	ready := metav1.Condition{Type: monoclev1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: reasons.AllComponentsReady,
		Message: "Elasticsearch, the API and the crawler are ready"}
	switch restore := st.condition(monoclev1alpha1.ConditionRestored); {
	case len(p.conflicts) > 0:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, degraded.Reason, degraded.Message
	case status.Hibernation != nil:
		// Stopped or starting on purpose: no failure, Degraded says nothing of it.
		ready.Status, ready.Reason = metav1.ConditionFalse, day2.HibernationReason(status.Hibernation.Phase)
		ready.Message = status.Hibernation.Message
	case restore != nil && restore.Status == metav1.ConditionFalse:
		// The restore keeps the API and the crawler stopped.
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, restore.Reason, restore.Message
	case day2.UpgradeStopsMonocle(status.Upgrade):
		// The upgrade stops the crawler, then replaces the API.
		ready.Status, ready.Reason = metav1.ConditionFalse, reasons.Upgrading
		ready.Message = day2.UpgradingCondition(status.Upgrade).Message
	case len(notReady) > 0 && degraded.Status == metav1.ConditionTrue:
		ready.Status, ready.Reason = metav1.ConditionFalse, degraded.Reason
		ready.Message = day2.Truncate("Waiting for " + strings.Join(notReady, ", ") + ". " + degraded.Message)
	case len(notReady) > 0:
		ready.Status, ready.Reason = metav1.ConditionFalse, reasons.ComponentsNotReady
		if was := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionReady); was == nil || was.Reason == reasons.Starting {
			ready.Reason = reasons.Starting
		}
		ready.Message = "Waiting for " + strings.Join(notReady, ", ")
	}

	if m.Spec.Restore == nil {
		apimeta.RemoveStatusCondition(&status.Conditions, monoclev1alpha1.ConditionRestored)
	}
	st.writeConditions(&status, ready, progressing, degraded)
	return status
}

// contestedMessage is the Degraded message of contests: each object, its fields, who sets
// them back, and the current back-off; then the two ways out.
func contestedMessage(contests []owned.Contest) string {
	each := make([]string, len(contests))
	for i, c := range contests {
		each[i] = fmt.Sprintf("%s (back-off %s)", c, c.Backoff)
	}
	return fmt.Sprintf("Another writer sets back fields the operator owns, so the operator leaves these objects as they are, "+
		"writing them again with a growing back-off: %s. Set the values in the Monocle's spec, or exclude the Monocle's objects (label %s=%s) from that writer",
		strings.Join(each, "; "), resources.ManagedByLabel, resources.ManagedByValue)
}

// deploymentStatus reports a Deployment's pods; Ready means its latest spec is observed and
// exactly the desired number of pods run it, all ready.
func deploymentStatus(d *appsv1.Deployment) monoclev1alpha1.ComponentStatus {
	if d == nil {
		return monoclev1alpha1.ComponentStatus{}
	}
	return componentStatus(&d.Spec.Template.Spec, d.Spec.Replicas, d.Status.ReadyReplicas, day2.DeploymentRolledOut(d))
}

// componentStatus is the status of a workload with pod template spec, desired replicas (nil
// means 1) and readyReplicas ready pods: Ready when it is rolledOut and at least the desired
// number of pods are ready.
func componentStatus(spec *corev1.PodSpec, replicas *int32, readyReplicas int32, rolledOut bool) monoclev1alpha1.ComponentStatus {
	want := ptr.Deref(replicas, 1)
	return monoclev1alpha1.ComponentStatus{
		Image:         firstImage(spec),
		Replicas:      want,
		ReadyReplicas: readyReplicas,
		Ready:         rolledOut && readyReplicas >= want,
	}
}

// statefulSetStatus reports a StatefulSet's pods, like deploymentStatus.
func statefulSetStatus(s *appsv1.StatefulSet) monoclev1alpha1.ComponentStatus {
	if s == nil {
		return monoclev1alpha1.ComponentStatus{}
	}
	return componentStatus(&s.Spec.Template.Spec, s.Spec.Replicas, s.Status.ReadyReplicas, day2.StatefulSetRolledOut(s))
}

func firstImage(spec *corev1.PodSpec) string {
	if len(spec.Containers) == 0 {
		return ""
	}
	return spec.Containers[0].Image
}
