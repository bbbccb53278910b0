package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// ensureBackupClaim creates the PersistentVolumeClaim "<name>-backup" of a volume repository
// when the operator names it (no claimName) and it is missing, and grows it with
// spec.backup.repository.volume.storageSize; it never shrinks or deletes it.
func (c *Controller) ensureBackupClaim(ctx context.Context, m *monoclev1alpha1.Monocle) error {
	if !resources.BackupVolumeWanted(m) || (m.Spec.Backup.Repository.Volume != nil && m.Spec.Backup.Repository.Volume.ClaimName != "") {
		return nil
	}
	want := resources.NewBackupClaim(m)
	pvc, err := c.pvcs.Get(m.Namespace, want.Name)
	if apierrors.IsNotFound(err) {
		_, err = c.kubeclientset.CoreV1().PersistentVolumeClaims(m.Namespace).Create(ctx, want, metav1.CreateOptions{FieldManager: ControllerName})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("creating PVC %s of the snapshot repository: %w", want.Name, err)
		}
		owned.NoteCreated(ctx, c.recorder, m, "PersistentVolumeClaim", want.Name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading PVC %s from the cache: %w", want.Name, err)
	}
	size := want.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.Cmp(pvc.Spec.Resources.Requests[corev1.ResourceStorage]) <= 0 {
		return nil
	}
	grown := pvc.DeepCopy()
	grown.Spec.Resources.Requests[corev1.ResourceStorage] = size
	if _, err := c.kubeclientset.CoreV1().PersistentVolumeClaims(m.Namespace).Update(ctx, grown, metav1.UpdateOptions{FieldManager: ControllerName}); err != nil {
		return fmt.Errorf("expanding PVC %s of the snapshot repository to %s: %w", want.Name, size.String(), err)
	}
	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.VolumeExpansionRequested, "Requested %s for PVC %s", size.String(), want.Name)
	return nil
}
