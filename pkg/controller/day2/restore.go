package day2

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Restores. spec.restore names a snapshot; the operator restores it once, in steps each
// taken only once the status holds the phase before it, so that an operator killed at any
// point resumes without restoring twice:
//
//   - Pending: the API and the crawler are scaled to zero (a new Monocle's are created so).
//     Once neither has a pod and Elasticsearch is ready, the worker registers the source
//     repository, reads the snapshot's indices and closes those that exist open: nothing
//     writes to them any more, and Elasticsearch restores only over closed indices.
//     Closing is idempotent; its end moves the status to Restoring, with the indices.
//   - Restoring: the worker starts the restore, or waits for the one it started before it
//     died. When the indices are recovered, the status moves to Succeeded and the API and
//     the crawler start (update-idents runs then for a new Monocle).
//   - Failed (the snapshot does not exist, cannot be read, or Elasticsearch refused the
//     restore): the API and the crawler stay stopped, so that nothing writes over closed or
//     missing indices. Give another snapshot, or remove spec.restore to start as is.

// RestoreWanted reports whether spec.restore asks for a restore that has not succeeded.
func RestoreWanted(m *monoclev1alpha1.Monocle) bool {
	r := m.Spec.Restore
	if r == nil {
		return false
	}
	st := m.Status.Restore
	return st == nil || st.Snapshot != r.Snapshot || st.Phase != monoclev1alpha1.RestoreSucceeded
}

// restoreSourceOf is the repository spec.restore reads from: its own repository (the
// existing one of spec.backup, checked, never registered), or another one registered
// read-only as "restore-source".
func restoreSourceOf(m *monoclev1alpha1.Monocle) (string, elastic.Repository) {
	src := m.Spec.Restore.Repository
	if src == nil || (src.Volume != nil && resources.BackupVolumeWanted(m) && src.Volume.ClaimName == resources.BackupClaimName(m)) {
		return backupRepositoryName(m), ownRepository(m)
	}
	return resources.RestoreSourceRepositoryName,
		repositoryOf(m, src, resources.RestoreSourceMountPath, resources.RestoreSourceS3Client, true)
}

// PlanRestore returns the restore step due for m, given whether its API and crawler have
// no pod left and whether Elasticsearch is ready.
func PlanRestore(m *monoclev1alpha1.Monocle, workloadsStopped, elasticReady bool) contract.RestorePlan {
	st := m.Status.Restore
	if !RestoreWanted(m) || st == nil || st.Snapshot != m.Spec.Restore.Snapshot || !elasticReady {
		return contract.RestorePlan{}
	}
	name, repo := restoreSourceOf(m)
	p := contract.RestorePlan{RepoName: name, Repo: repo, Snapshot: st.Snapshot}
	switch {
	case st.Phase == monoclev1alpha1.RestorePending && workloadsStopped:
		p.Phase = monoclev1alpha1.RestorePending
	case st.Phase == monoclev1alpha1.RestoreRestoring:
		p.Phase, p.Indices = monoclev1alpha1.RestoreRestoring, strings.Join(st.Indices, ",")
	default:
		return contract.RestorePlan{}
	}
	return p
}

// WorkloadsStopped reports whether the API and crawler Deployments have no pod left. A
// Deployment created with zero replicas and never changed (generation 1), as a restoring
// Monocle's are, never had a pod, whether or not its controller has observed it yet: after an
// API server restart kube-controller-manager's watches can take minutes to resume.
func WorkloadsStopped(deployments ...*appsv1.Deployment) bool {
	for _, d := range deployments {
		if d == nil || (d.Generation == 1 && ptr.Deref(d.Spec.Replicas, 1) == 0) {
			continue
		}
		if d.Status.Replicas > 0 || d.Generation > d.Status.ObservedGeneration {
			return false
		}
	}
	return true
}

// RestoreResult is the restore status of m and its Restored condition (nil without
// spec.restore).
type RestoreResult struct {
	// Status is status.restore.
	Status *monoclev1alpha1.RestoreStatus
	// Condition is the Restored condition.
	Condition *metav1.Condition
}

// UnderWay reports whether r holds a restore that has not succeeded (status.restore in phase
// Pending, Restoring or Failed): the API and the crawler stay stopped and no Job runs until
// it succeeds, or spec.restore is removed.
func (r RestoreResult) UnderWay() bool {
	return r.Status != nil && r.Status.Phase != monoclev1alpha1.RestoreSucceeded
}

// RestoreStatus returns m's restore status at now from its status and the outcome out of the
// step plan p (out nil: no step ended since the plan was made).
func RestoreStatus(m *monoclev1alpha1.Monocle, p contract.RestorePlan, out *contract.RestoreOutcome, now time.Time) RestoreResult {
	r := m.Spec.Restore
	if r == nil {
		return RestoreResult{}
	}
	st := m.Status.Restore.DeepCopy()
	if st == nil || st.Snapshot != r.Snapshot {
		st = &monoclev1alpha1.RestoreStatus{Snapshot: r.Snapshot, Phase: monoclev1alpha1.RestorePending, StartTime: StatusTime(now)}
	}
	if out != nil && p.Phase == st.Phase && p.Snapshot == st.Snapshot {
		switch {
		case out.Failed != "":
			st.Phase, st.Message, st.CompletionTime = monoclev1alpha1.RestoreFailed, Truncate(out.Failed), StatusTime(now)
		case p.Phase == monoclev1alpha1.RestorePending && out.Closed:
			st.Phase, st.Indices, st.Message = monoclev1alpha1.RestoreRestoring, out.Indices, ""
		case p.Phase == monoclev1alpha1.RestoreRestoring && out.Done:
			st.Phase, st.Message, st.CompletionTime = monoclev1alpha1.RestoreSucceeded, "", StatusTime(now)
		case out.Err != "":
			st.Message = Truncate(out.Err)
		}
	}
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionRestored, Status: metav1.ConditionFalse}
	source, _ := restoreSourceOf(m)
	switch st.Phase {
	case monoclev1alpha1.RestorePending:
		cond.Reason = reasons.RestorePending
		cond.Message = fmt.Sprintf("Restoring snapshot %s of repository %s: the API and the crawler are stopped; the indices are closed once they have no pod and Elasticsearch is ready", st.Snapshot, source)
	case monoclev1alpha1.RestoreRestoring:
		cond.Reason = reasons.Restoring
		cond.Message = fmt.Sprintf("Elasticsearch is restoring snapshot %s (%s); the API and the crawler start when it is done", st.Snapshot, strings.Join(st.Indices, ", "))
	case monoclev1alpha1.RestoreSucceeded:
		cond.Status, cond.Reason = metav1.ConditionTrue, reasons.Restored
		cond.Message = fmt.Sprintf("Snapshot %s was restored", st.Snapshot)
	case monoclev1alpha1.RestoreFailed:
		cond.Reason = reasons.RestoreFailed
		cond.Message = Truncate(fmt.Sprintf("Restoring snapshot %s failed: %s; the API and the crawler stay stopped: give another snapshot, or remove spec.restore to start with the index as it is",
			st.Snapshot, st.Message))
	}
	if st.Message != "" && st.Phase != monoclev1alpha1.RestoreFailed {
		cond.Message = Truncate(cond.Message + "; last attempt: " + st.Message)
	}
	return RestoreResult{Status: st, Condition: &cond}
}

// RestoreStatusAfter is RestoreStatus after the last read's outcome (nil: none yet).
func RestoreStatusAfter(m *monoclev1alpha1.Monocle, last *contract.BackupOutcome, now time.Time) RestoreResult {
	if last == nil {
		return RestoreStatus(m, contract.RestorePlan{}, nil, now)
	}
	return RestoreStatus(m, last.Plan.Restore, &last.Restore, now)
}
