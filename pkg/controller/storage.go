package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// ensureStorage brings the Elasticsearch PVC to spec.storageSize, or the larger size storage
// growth reached (day2.StorageWant), where that can be done in place: a larger size is requested from the PVC when its StorageClass allows volume
// expansion. A shrink, a change of StorageClass or an expansion the class does not allow is
// refused in the StorageReady condition; nothing is ever deleted to apply it. The StatefulSet's
// volume claim template is immutable and keeps the size it was created with; the PVC is what
// counts.
//
// volume is the StatefulSet's volume claim template name (see resources.ElasticPVCName).
func (c *Controller) ensureStorage(ctx context.Context, m *monoclev1alpha1.Monocle, volume string) (metav1.Condition, error) {
	// One message whether the PVC exists yet or not, so its creation changes no status.
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionStorageReady, Status: metav1.ConditionTrue, Reason: reasons.AsRequested,
		Message: "No storage change is pending"}
	name := resources.ElasticPVCName(m, volume)
	pvc, err := c.pvcs.Get(m.Namespace, name)
	if apierrors.IsNotFound(err) {
		return cond, nil
	}
	if err != nil {
		return cond, fmt.Errorf("reading PVC %s from the cache: %w", name, err)
	}
	refuse := func(format string, args ...any) (metav1.Condition, error) {
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.StorageChangeRefused
		cond.Message = fmt.Sprintf(format, args...) + "; the volume and its data are kept as they are"
		return cond, nil
	}

	class := ptr.Deref(pvc.Spec.StorageClassName, "")
	if m.Spec.StorageClassName != "" && m.Spec.StorageClassName != class {
		return refuse("storageClassName %q differs from the volume's StorageClass %q and cannot be changed in place", m.Spec.StorageClassName, class)
	}
	want := day2.StorageWant(m)
	requested := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	switch want.Cmp(requested) {
	case -1:
		return refuse("storageSize %s is smaller than the volume's %s: volumes cannot shrink", want.String(), requested.String())
	case 1:
		expands, err := c.storageClassExpands(ctx, pvc)
		if err != nil {
			return cond, fmt.Errorf("expanding PVC %s: %w", name, err)
		}
		if !expands {
			return refuse("StorageClass %q does not allow volume expansion, so the volume stays at %s instead of storageSize %s",
				class, requested.String(), want.String())
		}
		expanded := pvc.DeepCopy()
		expanded.Spec.Resources.Requests[corev1.ResourceStorage] = want
		if _, err := c.kubeclientset.CoreV1().PersistentVolumeClaims(m.Namespace).Update(ctx, expanded, metav1.UpdateOptions{FieldManager: ControllerName}); err != nil {
			return cond, fmt.Errorf("expanding PVC %s to %s: %w", name, want.String(), err)
		}
		klog.FromContext(ctx).V(2).Info("Requested volume expansion", "pvc", klog.KObj(pvc), "size", want.String())
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.VolumeExpansionRequested, "Requested %s for PVC %s (was %s)", want.String(), name, requested.String())
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.Resizing
		cond.Message = fmt.Sprintf("PVC %s is being expanded from %s to %s", name, requested.String(), want.String())
		return cond, nil
	}
	capacity := pvc.Status.Capacity[corev1.ResourceStorage]
	if pvc.Status.Phase == corev1.ClaimBound && capacity.Cmp(want) < 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.Resizing
		cond.Message = fmt.Sprintf("PVC %s is being expanded from %s to %s", name, capacity.String(), want.String())
	}
	return cond, nil
}

// elasticPVC is the Elasticsearch PVC of m from the cache, or nil.
func (c *Controller) elasticPVC(m *monoclev1alpha1.Monocle, volume string) *corev1.PersistentVolumeClaim {
	pvc, err := c.pvcs.Get(m.Namespace, resources.ElasticPVCName(m, volume))
	if err != nil {
		return nil
	}
	return pvc
}

// storageClassExpands reports whether the StorageClass of pvc allows volume expansion,
// reading it from the API server (StorageClasses are not cached: they are read only to grow
// a volume).
func (c *Controller) storageClassExpands(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (bool, error) {
	class := ptr.Deref(pvc.Spec.StorageClassName, "")
	sc, err := c.kubeclientset.StorageV1().StorageClasses().Get(ctx, class, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("reading StorageClass %q: %w", class, err)
	}
	return ptr.Deref(sc.AllowVolumeExpansion, false), nil
}

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
