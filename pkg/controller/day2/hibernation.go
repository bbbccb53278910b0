package day2

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Hibernation. spec.hibernate stops a Monocle without deleting anything of it:
//
//   - Hibernating: the crawler is scaled to zero; once it has no pod left, the API; once the
//     API has no pod left, no Job of the Monocle runs and no snapshot is being taken, the
//     bundled Elasticsearch (a cluster of elasticsearchRef or external is not the operator's
//     to stop). A snapshot cut off by the stop of its only node never completes, and the
//     backup it was is lost, so Elasticsearch runs on until status.backup.running is empty;
//     the operand follows the snapshot meanwhile with listings of the repository that take
//     nothing (HibernationStep.AwaitedSnapshots). The StatefulSet retains its PVC when
//     scaled down; the Secrets and the ConfigMap stay as they are.
//   - Hibernated: no pod of the Monocle runs.
//   - Waking (spec.hibernate false or removed): Elasticsearch starts first, the API once
//     Elasticsearch has a ready pod, the crawler once the API has one. status.hibernation is
//     removed once every component serves again.
//
// Each sync derives the step from the spec, the workloads as the cache has them and the
// status it wrote last: an operator killed at any point resumes where the workloads stand,
// and a component is never started or stopped out of order. A component this step stopped
// stays stopped while the Monocle hibernates, and one it started stays started while it
// wakes, so a pod that turns unready does not send the order back.
//
// While a restore (status.restore Pending or Restoring) or an upgrade (status.upgrade not
// Succeeded) is in progress, spec.hibernate is deferred: the Hibernated condition says why,
// and the Monocle hibernates once it ends. The other way round, an image change or a restore
// asked for while status.hibernation is set waits until the Monocle is awake (HoldUpgrade,
// HoldRestore).

// HibernationObserved is what a sync saw of a Monocle's workloads, from the cache: the
// Deployments and the StatefulSet it controls (nil: none), whether a Job of it is running,
// and the snapshots the last read of Elasticsearch found running.
type HibernationObserved struct {
	API, Crawler *appsv1.Deployment
	Elastic      *appsv1.StatefulSet
	JobsRunning  bool
	// SnapshotsRunning is status.backup.running (comma-separated names) when the operator
	// reads Elasticsearch, and "" when it does not (--elasticsearch-read-interval=0): it
	// would never see a snapshot end.
	SnapshotsRunning string
}

// HibernationStep is what hibernation asks of a sync.
type HibernationStep struct {
	// Stopped are the components to build with zero replicas.
	Stopped resources.Stopped
	// Status is status.hibernation after the sync: nil while the Monocle is awake.
	Status *monoclev1alpha1.HibernationStatus
	// Condition is the Hibernated condition; nil when the Monocle is awake and not asked to
	// hibernate, and the condition is removed.
	Condition *metav1.Condition
	// AwaitedSnapshots names the snapshots (comma-separated) that keep the bundled
	// Elasticsearch running while the Monocle hibernates: the operand keeps listing the
	// backup repository, taking no snapshot, so that status.backup.running tells when they
	// end. "" when none does.
	AwaitedSnapshots string
}

// Active reports whether the Monocle hibernates or wakes (status.hibernation is set): an
// upgrade or a restore asked for meanwhile waits.
func (s HibernationStep) Active() bool { return s.Status != nil }

// Stopping reports whether the Monocle is hibernating or hibernated: nothing reads
// Elasticsearch or the API, takes a backup, starts a Job or restarts a component
// (auto-pilot) meanwhile, except the listing of the backup repository that follows
// AwaitedSnapshots to their end. They resume when it wakes.
func (s HibernationStep) Stopping() bool {
	return s.Status != nil && s.Status.Phase != monoclev1alpha1.HibernationWaking
}

// PlanHibernation returns the hibernation step of m at now, given what the sync observed of
// its workloads.
func PlanHibernation(m *monoclev1alpha1.Monocle, o HibernationObserved, now time.Time) HibernationStep {
	cur := m.Status.Hibernation
	switch {
	case cur == nil && !m.Spec.Hibernate:
		return HibernationStep{}
	case cur == nil:
		if why := HibernationDeferral(m); why != "" {
			return HibernationStep{Condition: &metav1.Condition{Type: monoclev1alpha1.ConditionHibernated, Status: metav1.ConditionFalse,
				Reason: reasons.HibernationDeferred, Message: why}}
		}
	}
	bundled := resources.BundledElasticsearch(m)
	var step HibernationStep
	var phase monoclev1alpha1.HibernationPhase
	var message string
	if m.Spec.Hibernate {
		phase, message, step.Stopped, step.AwaitedSnapshots = hibernate(o, bundled)
	} else {
		phase, message, step.Stopped = wake(m, o, bundled)
		if phase == "" {
			return HibernationStep{}
		}
	}
	down := resources.Stopped{Crawler: deploymentDown(o.Crawler), API: deploymentDown(o.API), Elastic: bundled && statefulSetDown(o.Elastic)}
	step.Status = &monoclev1alpha1.HibernationStatus{Phase: phase, Stopped: down.Names(), Since: StatusTime(now), Message: message}
	if cur != nil && cur.Phase == phase && cur.Since != nil {
		step.Status.Since = cur.Since.DeepCopy()
	}
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionHibernated, Status: metav1.ConditionFalse,
		Reason: HibernationReason(phase), Message: message}
	if phase == monoclev1alpha1.HibernationHibernated {
		cond.Status = metav1.ConditionTrue
	}
	step.Condition = &cond
	return step
}

// hibernate is the phase, message and stops of a Monocle asked to hibernate, and the
// snapshots Elasticsearch is kept running for: the crawler always stops, the API once the
// crawler has no pod, Elasticsearch (bundled) once the API has none, no Job runs and no
// snapshot is being taken. A snapshot is waited for only while Elasticsearch has a ready pod:
// without one, no read can see it end, and it does not progress either.
func hibernate(o HibernationObserved, bundled bool) (monoclev1alpha1.HibernationPhase, string, resources.Stopped, string) {
	crawlerDown, apiDown := deploymentDown(o.Crawler), deploymentDown(o.API)
	s := resources.Stopped{Crawler: true, API: crawlerDown || scaledToZero(o.API)}
	elasticStopped := o.Elastic != nil && ptr.Deref(o.Elastic.Spec.Replicas, 1) == 0
	snapshots := ""
	if bundled && !elasticStopped && o.Elastic != nil && o.Elastic.Status.ReadyReplicas > 0 {
		snapshots = o.SnapshotsRunning
	}
	s.Elastic = bundled && ((crawlerDown && apiDown && !o.JobsRunning && snapshots == "") || elasticStopped)
	after := ""
	if bundled {
		after = "; Elasticsearch stops after it"
	}
	phase, message, snapshots := hibernationStep(o, bundled, crawlerDown, apiDown, s, snapshots, after)
	if terminatingUncounted(o.Crawler) || terminatingUncounted(o.API) {
		message += ". " + UncountedTerminatingNote
	}
	return phase, message, s, snapshots
}

// UncountedTerminatingNote is what the hibernation's messages add on a cluster whose
// Deployments do not count their terminating pods (terminatingUncounted).
const UncountedTerminatingNote = "This cluster does not count a Deployment's terminating pods (status.terminatingReplicas, " +
	"Kubernetes 1.35 or the feature gate DeploymentReplicaSetTerminatingReplicas): each component stops once the one before " +
	"has no running pod, possibly while its last pod still ends its grace period"

// hibernationStep is hibernate's phase, message and followed snapshots, from what it found.
func hibernationStep(o HibernationObserved, bundled, crawlerDown, apiDown bool, s resources.Stopped, snapshots, after string) (monoclev1alpha1.HibernationPhase, string, string) {
	switch {
	case !crawlerDown:
		return monoclev1alpha1.HibernationHibernating, "Stopping the crawler; the API stops once it has no pod left" + after, snapshots
	case !apiDown:
		return monoclev1alpha1.HibernationHibernating, "Stopping the API, the crawler has no pod left" + after, snapshots
	case bundled && o.JobsRunning && !s.Elastic:
		return monoclev1alpha1.HibernationHibernating, "Waiting for the Monocle's Jobs to finish before stopping Elasticsearch", snapshots
	case bundled && snapshots != "" && !s.Elastic:
		return monoclev1alpha1.HibernationHibernating, "Waiting for snapshot " + snapshots + " to finish before stopping Elasticsearch (status.backup.running)", snapshots
	case bundled && !statefulSetDown(o.Elastic):
		return monoclev1alpha1.HibernationHibernating, "Stopping Elasticsearch, the crawler and the API have no pod left", ""
	}
	return monoclev1alpha1.HibernationHibernated,
		"No pod of the Monocle runs; its volume, keys, Secrets and config are kept. Set spec.hibernate to false to wake it", ""
}

// wake is the phase, message and stops of a Monocle no longer asked to hibernate, whose
// status.hibernation is set: Elasticsearch starts, the API once Elasticsearch has a ready pod,
// the crawler once the API has one. The phase is "" once every component serves: the API and
// the crawler count as serving while a failed restore keeps them stopped, the API also when
// spec.api.replicas is 0.
func wake(m *monoclev1alpha1.Monocle, o HibernationObserved, bundled bool) (monoclev1alpha1.HibernationPhase, string, resources.Stopped) {
	elasticServes := !bundled || (o.Elastic != nil && o.Elastic.Status.ReadyReplicas > 0)
	heldByRestore := m.Spec.Restore != nil && m.Status.Restore != nil && m.Status.Restore.Phase != monoclev1alpha1.RestoreSucceeded
	apiServes := heldByRestore || resources.APIReplicas(m) == 0 || serves(o.API)
	s := resources.Stopped{API: !elasticServes && scaledToZero(o.API), Crawler: !apiServes && scaledToZero(o.Crawler)}
	switch {
	case !elasticServes:
		return monoclev1alpha1.HibernationWaking, "Starting Elasticsearch; the API starts once it has a ready pod, then the crawler", s
	case !apiServes:
		return monoclev1alpha1.HibernationWaking, "Starting the API; the crawler starts once it has a ready pod", s
	case !heldByRestore && !serves(o.Crawler):
		return monoclev1alpha1.HibernationWaking, "Starting the crawler", s
	}
	return "", "", s
}

// HibernationReason is the reason of the Hibernated and Ready conditions in hibernation
// phase p.
func HibernationReason(p monoclev1alpha1.HibernationPhase) string {
	switch p {
	case monoclev1alpha1.HibernationHibernated:
		return reasons.Hibernated
	case monoclev1alpha1.HibernationWaking:
		return reasons.Waking
	}
	return reasons.Hibernating
}

// HibernationDeferral is the message of the Hibernated condition (reason
// HibernationDeferred) while a restore (status.restore Pending or Restoring for
// spec.restore's snapshot) or an upgrade (status.upgrade in any phase but Succeeded, Blocked
// included) defers the hibernation spec.hibernate asks for, or "" when nothing does. Both
// stop and start the API and the crawler in steps of their own. The kubectl plugin refuses to
// ask for a hibernation with this message.
func HibernationDeferral(m *monoclev1alpha1.Monocle) string {
	if busy := hibernationBlocker(m); busy != "" {
		return fmt.Sprintf("spec.hibernate waits for %s to end: the Monocle hibernates then", busy)
	}
	return ""
}

// hibernationBlocker names the restore or the upgrade in progress that defers m's
// hibernation, or is "".
func hibernationBlocker(m *monoclev1alpha1.Monocle) string {
	if r := m.Status.Restore; r != nil && m.Spec.Restore != nil && r.Snapshot == m.Spec.Restore.Snapshot &&
		(r.Phase == monoclev1alpha1.RestorePending || r.Phase == monoclev1alpha1.RestoreRestoring) {
		return fmt.Sprintf("the restore of snapshot %s (phase %s)", r.Snapshot, r.Phase)
	}
	if u := m.Status.Upgrade; u != nil && u.Phase != monoclev1alpha1.UpgradeSucceeded {
		return fmt.Sprintf("the upgrade from %s to %s (phase %s)", u.From, u.To, u.Phase)
	}
	return ""
}

// HoldUpgrade is the upgrade step up, planned by PlanUpgrade, as a sync carries it out while
// hibernation is active: an upgrade it would start waits until the Monocle is awake. The
// API and the crawler keep the images they run, status.upgrade stays as it was, and Upgraded
// says why (WaitingForWake). Any other step is up.
func HoldUpgrade(m *monoclev1alpha1.Monocle, up UpgradeStep) UpgradeStep {
	was := m.Status.Upgrade
	starts := up.Status != nil && up.Status.Phase != monoclev1alpha1.UpgradeSucceeded &&
		(was == nil || was.Phase == monoclev1alpha1.UpgradeSucceeded || was.To != up.Status.To)
	if !starts {
		return up
	}
	return UpgradeStep{APIImage: up.APIImage, CrawlerImage: up.CrawlerImage, Status: was.DeepCopy(),
		Condition: metav1.Condition{Type: monoclev1alpha1.ConditionUpgraded, Status: metav1.ConditionFalse, Reason: reasons.WaitingForWake,
			Message: fmt.Sprintf("The change of image to %s waits until the Monocle is awake; the API and the crawler keep %s until then, and the upgrade then runs in its phases",
				up.Status.To, up.Status.From)}}
}

// HoldRestore is the restore result r, from RestoreStatusAfter, as a sync reports it while
// hibernation is active: a restore of a snapshot status.restore does not hold yet waits
// until the Monocle is awake, status.restore stays as it was, and Restored says why
// (WaitingForWake). Any other result is r.
func HoldRestore(m *monoclev1alpha1.Monocle, r RestoreResult) RestoreResult {
	was := m.Status.Restore
	if r.Status == nil || (was != nil && was.Snapshot == r.Status.Snapshot) {
		return r
	}
	return RestoreResult{Status: was.DeepCopy(), Condition: &metav1.Condition{Type: monoclev1alpha1.ConditionRestored, Status: metav1.ConditionFalse,
		Reason:  reasons.WaitingForWake,
		Message: fmt.Sprintf("The restore of snapshot %s waits until the Monocle is awake", r.Status.Snapshot)}}
}

// deploymentDown reports whether d has no pod left: nil, or scaled to zero with its
// controller having observed it and counting no pod, terminating ones included
// (status.terminatingReplicas, apps/v1 DeploymentStatus, set while Kubernetes' feature
// DeploymentReplicaSetTerminatingReplicas is on, by default from 1.35; status.replicas counts
// only the pods that are not terminating). A Deployment created with zero replicas and never
// changed (generation 1) never had a pod.
func deploymentDown(d *appsv1.Deployment) bool {
	if d == nil {
		return true
	}
	if !scaledToZero(d) {
		return false
	}
	return d.Generation == 1 || (d.Status.ObservedGeneration >= d.Generation && d.Status.Replicas == 0 &&
		ptr.Deref(d.Status.TerminatingReplicas, 0) == 0)
}

// terminatingUncounted reports whether d's controller has observed it without counting its
// terminating pods (status.terminatingReplicas unset): Kubernetes before 1.35, or 1.33 and
// 1.34 without the feature gate DeploymentReplicaSetTerminatingReplicas (from 1.35 the
// Deployment controller sets it, 0 included, on every status it writes: pkg/controller/
// deployment/sync.go, Kubernetes 1.36.3). Such a Deployment's last pod may still be ending
// its grace period when status.replicas reaches 0.
func terminatingUncounted(d *appsv1.Deployment) bool {
	return d != nil && d.Status.ObservedGeneration > 0 && d.Status.TerminatingReplicas == nil
}

// statefulSetDown reports whether s has no pod left: nil, or scaled to zero with its
// controller having observed it and counting no pod (a StatefulSet's status.replicas counts
// every pod it created, terminating ones included: apps/v1 StatefulSetStatus).
func statefulSetDown(s *appsv1.StatefulSet) bool {
	if s == nil {
		return true
	}
	return ptr.Deref(s.Spec.Replicas, 1) == 0 && s.Status.ObservedGeneration >= s.Generation && s.Status.Replicas == 0
}

// scaledToZero reports whether Deployment d exists with zero replicas asked.
func scaledToZero(d *appsv1.Deployment) bool {
	return d != nil && ptr.Deref(d.Spec.Replicas, 1) == 0
}

// serves reports whether Deployment d is rolled out with a ready pod.
func serves(d *appsv1.Deployment) bool {
	return DeploymentRolledOut(d) && d.Status.ReadyReplicas > 0
}
