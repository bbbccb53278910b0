package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Restores. spec.restore names a snapshot; the operator restores it once, in
// steps each taken only once the status holds the phase before it, so that an operator
// killed at any point resumes without restoring twice:
//
//   - Pending: the API and the crawler are scaled to zero (a new Monocle's are created so).
//     Once neither has a pod and Elasticsearch is ready, a read registers the source
//     repository, reads the snapshot's indices and closes those that exist open: nothing
//     writes to them any more, and Elasticsearch restores only over closed indices.
//     Closing is idempotent; its end moves the status to Restoring, with the indices.
//   - Restoring: a read starts the restore. Elasticsearch refuses to restore over an open
//     index, and only a restore reopens the closed indices: a refusal for that reason means
//     a restore this operator started before it died, which is then only waited for. When
//     the indices are recovered, the status moves to Succeeded and the API and the crawler
//     start (update-idents runs then for a new Monocle).
//   - Failed (the snapshot does not exist, cannot be read, or Elasticsearch refused the
//     restore): the API and the crawler stay stopped, so that nothing writes over closed or
//     missing indices. Give another snapshot, or remove spec.restore to start as is.

// restoreWanted reports whether spec.restore asks for a restore that has not succeeded.
func restoreWanted(m *monoclev1alpha1.Monocle) bool {
	r := m.Spec.Restore
	if r == nil {
		return false
	}
	st := m.Status.Restore
	return st == nil || st.Snapshot != r.Snapshot || st.Phase != monoclev1alpha1.RestoreSucceeded
}

// restoreSourceOf is the repository spec.restore reads from: its own repository, or another
// one registered read-only as "restore-source".
func restoreSourceOf(m *monoclev1alpha1.Monocle) (string, elastic.Repository) {
	src := m.Spec.Restore.Repository
	if src == nil || (src.Volume != nil && resources.BackupVolumeWanted(m) && src.Volume.ClaimName == resources.BackupClaimName(m)) {
		return resources.BackupRepositoryName, ownRepository(m)
	}
	return resources.RestoreSourceRepositoryName,
		repositoryOf(m, src, resources.RestoreSourceMountPath, resources.RestoreSourceS3Client, true)
}

// planRestore returns the restore step due for m, given whether its API and crawler have
// no pod left and whether Elasticsearch is ready.
func planRestore(m *monoclev1alpha1.Monocle, workloadsStopped, elasticReady bool) restorePlan {
	st := m.Status.Restore
	if !restoreWanted(m) || st == nil || st.Snapshot != m.Spec.Restore.Snapshot || !elasticReady {
		return restorePlan{}
	}
	name, repo := restoreSourceOf(m)
	p := restorePlan{repoName: name, repo: repo, snapshot: st.Snapshot}
	switch {
	case st.Phase == monoclev1alpha1.RestorePending && workloadsStopped:
		p.phase = monoclev1alpha1.RestorePending
	case st.Phase == monoclev1alpha1.RestoreRestoring:
		p.phase, p.indices = monoclev1alpha1.RestoreRestoring, strings.Join(st.Indices, ",")
	default:
		return restorePlan{}
	}
	return p
}

// workloadsStopped reports whether the API and crawler Deployments have no pod left. A
// Deployment created with zero replicas and never changed (generation 1), as a restoring
// Monocle's are, never had a pod, whether or not its controller has observed it yet: after an
// API server restart kube-controller-manager's watches can take minutes to resume.
func workloadsStopped(deployments ...*appsv1.Deployment) bool {
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

// restoreOutcome is what a read did of a restore step.
type restoreOutcome struct {
	// indices are the snapshot's, all closed or missing (Pending step).
	indices []string
	// closed is true when the Pending step ended: the indices are closed or missing.
	closed bool
	// done is true when the restore's indices are recovered (Restoring step).
	done bool
	// failed says why the restore cannot be done (the phase becomes Failed); err why the
	// step could not end this time (it is tried again).
	failed, err string
}

// runRestore carries out restore step p against client.
func runRestore(ctx context.Context, client elastic.Client, p restorePlan) restoreOutcome {
	var out restoreOutcome
	if err := client.EnsureRepository(ctx, p.repoName, p.repo); err != nil {
		out.err = "registering the repository " + p.repoName + ": " + err.Error()
		return out
	}
	switch p.phase {
	case monoclev1alpha1.RestorePending:
		snap, err := client.Snapshot(ctx, p.repoName, p.snapshot)
		switch {
		case elastic.IsNotFound(err):
			out.failed = fmt.Sprintf("snapshot %s is not in repository %s: %v", p.snapshot, p.repoName, err)
			return out
		case err != nil:
			out.err = err.Error()
			return out
		case snap.State != elastic.SnapshotSuccess && snap.State != elastic.SnapshotPartial:
			out.failed = fmt.Sprintf("snapshot %s is %s, not SUCCESS", p.snapshot, snap.State)
			return out
		case len(snap.Indices) == 0:
			out.failed = fmt.Sprintf("snapshot %s holds no index", p.snapshot)
			return out
		}
		existing, err := client.Indices(ctx, "*")
		if err != nil {
			out.err = err.Error()
			return out
		}
		var open []string
		for _, ix := range existing {
			if ix.Status == "open" && slices.Contains(snap.Indices, ix.Name) {
				open = append(open, ix.Name)
			}
		}
		if len(open) > 0 {
			if err := client.CloseIndices(ctx, open...); err != nil {
				out.err = err.Error()
				return out
			}
		}
		out.indices, out.closed = snap.Indices, true
	case monoclev1alpha1.RestoreRestoring:
		indices := strings.Split(p.indices, ",")
		err := client.Restore(ctx, p.repoName, p.snapshot, indices)
		var se *elastic.StatusError
		switch {
		case err == nil:
		case errors.As(err, &se) && se.Type == "snapshot_restore_exception" && strings.Contains(se.Reason, "open index with same name already exists"):
			// Only this restore reopens the indices the Pending step closed: it was started
			// before, by this operator.
		case elastic.IsNotFound(err):
			out.failed = err.Error()
			return out
		case errors.As(err, &se) && se.Code >= 400 && se.Code < 500:
			out.failed = err.Error()
			return out
		default:
			out.err = err.Error()
			return out
		}
		done, err := client.RestoreDone(ctx, indices)
		if err != nil {
			out.err = err.Error()
			return out
		}
		out.done = done
	}
	return out
}

// restoreResult is the restore status of m and its Restored condition (nil without
// spec.restore).
type restoreResult struct {
	status    *monoclev1alpha1.RestoreStatus
	condition *metav1.Condition
}

// restoreStatus returns m's restore status at now from its status and the outcome out of the
// step plan p (out nil: no step ended since the plan was made).
func restoreStatus(m *monoclev1alpha1.Monocle, p restorePlan, out *restoreOutcome, now time.Time) restoreResult {
	r := m.Spec.Restore
	if r == nil {
		return restoreResult{}
	}
	st := m.Status.Restore.DeepCopy()
	if st == nil || st.Snapshot != r.Snapshot {
		st = &monoclev1alpha1.RestoreStatus{Snapshot: r.Snapshot, Phase: monoclev1alpha1.RestorePending, StartTime: statusTime(now)}
	}
	if out != nil && p.phase == st.Phase && p.snapshot == st.Snapshot {
		switch {
		case out.failed != "":
			st.Phase, st.Message, st.CompletionTime = monoclev1alpha1.RestoreFailed, truncate(out.failed), statusTime(now)
		case p.phase == monoclev1alpha1.RestorePending && out.closed:
			st.Phase, st.Indices, st.Message = monoclev1alpha1.RestoreRestoring, out.indices, ""
		case p.phase == monoclev1alpha1.RestoreRestoring && out.done:
			st.Phase, st.Message, st.CompletionTime = monoclev1alpha1.RestoreSucceeded, "", statusTime(now)
		case out.err != "":
			st.Message = truncate(out.err)
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
		cond.Message = truncate(fmt.Sprintf("Restoring snapshot %s failed: %s; the API and the crawler stay stopped: give another snapshot, or remove spec.restore to start with the index as it is",
			st.Snapshot, st.Message))
	}
	if st.Message != "" && st.Phase != monoclev1alpha1.RestoreFailed {
		cond.Message = truncate(cond.Message + "; last attempt: " + st.Message)
	}
	return restoreResult{status: st, condition: &cond}
}

// restoreStatusAfter is restoreStatus after the last read's outcome (nil: none yet).
func restoreStatusAfter(m *monoclev1alpha1.Monocle, last *backupOutcome, now time.Time) restoreResult {
	if last == nil {
		return restoreStatus(m, restorePlan{}, nil, now)
	}
	return restoreStatus(m, last.plan.restore, &last.restore, now)
}

// recordRestoreTransition emits the events of a restore's phase changes.
func (c *Controller) recordRestoreTransition(m *monoclev1alpha1.Monocle, was, is *monoclev1alpha1.RestoreStatus) {
	if is == nil || (was != nil && was.Snapshot == is.Snapshot && was.Phase == is.Phase) {
		return
	}
	switch is.Phase {
	case monoclev1alpha1.RestorePending:
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.RestorePending, "Restoring snapshot %s: stopping the API and the crawler", is.Snapshot)
	case monoclev1alpha1.RestoreRestoring:
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.Restoring, "Restoring snapshot %s: indices %s", is.Snapshot, strings.Join(is.Indices, ", "))
	case monoclev1alpha1.RestoreSucceeded:
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.Restored, "Restored snapshot %s; starting the API and the crawler", is.Snapshot)
	case monoclev1alpha1.RestoreFailed:
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.RestoreFailed, "Restoring snapshot %s failed: %s", is.Snapshot, is.Message)
	}
}
