package controller

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// The events of the day-2 operations (package day2): each is recorded once, by the sync that
// writes the status change it tells of.

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

// recordMaintenanceTransition records an event when a request finished since the last status.
func (c *Controller) recordMaintenanceTransition(m *monoclev1alpha1.Monocle, r monoclev1alpha1.MaintenanceRequest, before, after *monoclev1alpha1.MaintenanceJobStatus) {
	if before.Phase == after.Phase {
		return
	}
	switch after.Phase {
	case monoclev1alpha1.JobSucceeded:
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.MaintenanceSucceeded, "Request %s (%s) succeeded", r.Name, describeRequest(r))
	case monoclev1alpha1.JobFailed:
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.MaintenanceFailed, "Request %s (%s) failed: %s", r.Name, describeRequest(r), after.Message)
	}
}
