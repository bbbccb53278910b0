package controller

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// Events go with the write they tell of, so that each is recorded once:
//
//   - An event of an object write (Created, KeyGenerated, VolumeExpansionRequested, Adopted)
//     is recorded where the write is made, once it succeeded.
//   - An event of a status change (a condition taking a reason that warns, Ready turning, a
//     day-2 operation's transition, and what the phases decided with st.event) is recorded by
//     recordStatusEvents, once the status that carries the change is written: a sync whose
//     write is left for later (statusWrites, holdStatus) or fails records none of them, and
//     the sync that writes it finds the same change again against the same last status.
//   - SyncFailed tells of the sync itself, and is recorded for each sync that fails.

// event is an event a phase decided on, recorded on the Monocle with the status write that
// carries the change it tells of.
type event struct {
	eventType, reason, message string
}

// event records an event on the Monocle with the status write that carries this sync's
// changes (recordStatusEvents).
func (st *syncState) event(eventType, reason, message string) {
	st.events = append(st.events, event{eventType, reason, message})
}

// recordStatusEvents records the events of the change from was, the status the Monocle had,
// to m's status, which the sync of st has just written: the Warning of each per-concern
// condition that takes a reason worth one (reasons.Warns), Ready turning (but a starting Monocle
// becoming Ready, and hibernation, which tells its own), the day-2 operations' transitions
// and the phases' events.
func (c *Controller) recordStatusEvents(m *monoclev1alpha1.Monocle, was monoclev1alpha1.MonocleStatus, st *syncState) {
	is := m.Status
	for _, cond := range orderedConditions(st.conditions) {
		before := apimeta.FindStatusCondition(was.Conditions, cond.Type)
		if reasons.Warns(cond.Reason, cond.Status == metav1.ConditionFalse) && (before == nil || before.Reason != cond.Reason) {
			c.recorder.Event(m, corev1.EventTypeWarning, cond.Reason, cond.Message)
		}
	}
	wasReady, ready := apimeta.FindStatusCondition(was.Conditions, monoclev1alpha1.ConditionReady), apimeta.FindStatusCondition(is.Conditions, monoclev1alpha1.ConditionReady)
	if wasReady != nil && ready != nil && wasReady.Status != ready.Status {
		if ready.Status == metav1.ConditionTrue {
			if wasReady.Reason != reasons.Starting {
				c.recorder.Event(m, corev1.EventTypeNormal, reasons.Ready, ready.Message)
			}
		} else if !reasons.Hibernation(ready.Reason) {
			c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.NotReady, "%s: %s", ready.Reason, ready.Message)
		}
	}
	c.recordJobTransition(m, was.UpdateIdents, is.UpdateIdents)
	for _, after := range is.Maintenance {
		var before monoclev1alpha1.MaintenanceJobStatus
		if i := slices.IndexFunc(was.Maintenance, func(s monoclev1alpha1.MaintenanceJobStatus) bool { return s.Request == after.Request }); i >= 0 {
			before = was.Maintenance[i]
		}
		c.recordMaintenanceTransition(m, before, after)
	}
	c.recordBackupTransition(m, was.Backup, is.Backup)
	c.recordRestoreTransition(m, was.Restore, is.Restore)
	c.recordUpgradeTransition(m, was.Upgrade, is.Upgrade)
	c.recordHibernationTransition(m, was.Hibernation, is.Hibernation)
	c.recordIndexDeletion(m, was.IndexDeletion, is.IndexDeletion)
	c.recordRolloutTransition(m, was.Rollout, is.Rollout)
	for _, e := range st.events {
		c.recorder.Event(m, e.eventType, e.reason, e.message)
	}
}

// recordBackupTransition emits the events of a backup status change: BackupSucceeded when a
// new snapshot succeeded, BackupFailed when a new failure appeared.
func (c *Controller) recordBackupTransition(m *monoclev1alpha1.Monocle, was, is *monoclev1alpha1.BackupStatus) {
	if is == nil {
		return
	}
	if ls := is.LastSuccessful; ls != nil && (was == nil || was.LastSuccessful == nil || was.LastSuccessful.Name != ls.Name) {
		size := ""
		if ls.Size != nil {
			size = " (" + ls.Size.String() + ")"
		}
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.BackupSucceeded, "Snapshot %s succeeded%s", ls.Name, size)
	}
	if f := is.LastFailure; f != nil && (was == nil || was.LastFailure == nil || was.LastFailure.Name != f.Name || was.LastFailure.Reason != f.Reason) {
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.BackupFailed, "Snapshot %s failed: %s", f.Name, f.Reason)
	}
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

// recordUpgradeTransition emits an event for each phase an upgrade enters.
func (c *Controller) recordUpgradeTransition(m *monoclev1alpha1.Monocle, was, is *monoclev1alpha1.UpgradeStatus) {
	if is == nil || (was != nil && was.To == is.To && was.Phase == is.Phase) {
		return
	}
	typ, reason := corev1.EventTypeNormal, reasons.Upgrading
	switch is.Phase {
	case monoclev1alpha1.UpgradeBlocked:
		typ, reason = corev1.EventTypeWarning, reasons.UpgradeBlocked
	case monoclev1alpha1.UpgradeSucceeded:
		reason = reasons.UpgradeSucceeded
	}
	c.recorder.Eventf(m, typ, reason, "Upgrade from %s to %s: %s", is.From, is.To, is.Phase)
}

// recordIndexDeletion emits the event of a deletion this sync recorded.
func (c *Controller) recordIndexDeletion(m *monoclev1alpha1.Monocle, was, is *monoclev1alpha1.IndexDeletion) {
	if is == nil || (was != nil && was.Request == is.Request) {
		return
	}
	if is.Refused != "" {
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.IndexDeletionRefused, "Not deleting the index of %s: %s", is.Request, is.Refused)
		return
	}
	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.IndexDeleted, "Deleted index %s of the removed workspace %s", is.Index, is.Request)
}

// recordJobTransition records an event when the update-idents Job finished since the last
// status.
func (c *Controller) recordJobTransition(m *monoclev1alpha1.Monocle, before, after *monoclev1alpha1.MaintenanceJobStatus) {
	if after == nil || equality.Semantic.DeepEqual(before, after) || (before != nil && before.Name == after.Name && before.Phase == after.Phase) {
		return
	}
	switch after.Phase {
	case monoclev1alpha1.JobSucceeded:
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.UpdateIdentsSucceeded, "Job %s succeeded", after.Name)
	case monoclev1alpha1.JobFailed:
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.UpdateIdentsFailed, "Job %s failed: %s", after.Name, after.Message)
	}
}

// recordMaintenanceTransition records an event when a request finished since the last status
// (before: the zero status for a request the last status did not have).
func (c *Controller) recordMaintenanceTransition(m *monoclev1alpha1.Monocle, before, after monoclev1alpha1.MaintenanceJobStatus) {
	if before.Phase == after.Phase || !day2.FinishedPhase(after.Phase) {
		return
	}
	described := after.Request
	if r := after.Automatic; r != nil {
		described += " (" + describeRequest(*r) + ")"
	} else if i := slices.IndexFunc(m.Spec.Maintenance, func(r monoclev1alpha1.MaintenanceRequest) bool { return r.Name == after.Request }); i >= 0 {
		described += " (" + describeRequest(m.Spec.Maintenance[i]) + ")"
	}
	if after.Phase == monoclev1alpha1.JobSucceeded {
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.MaintenanceSucceeded, "Request %s succeeded", described)
		return
	}
	c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.MaintenanceFailed, "Request %s failed: %s", described, after.Message)
}
