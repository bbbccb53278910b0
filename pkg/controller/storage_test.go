package controller

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

func TestStorage(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	pvc := func(size string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data-demo-elastic-0", Namespace: m.Namespace, Labels: resources.Labels(m, resources.ComponentElastic)},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("standard"),
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		}
	}
	class := func(expand bool) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, AllowVolumeExpansion: ptr.To(expand)}
	}
	grow := m.DeepCopy()
	grow.Spec.StorageSize = ptr.To(resource.MustParse("5Gi"))

	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{grow}
	f.kubeobjects = append(append([]runtime.Object(nil), objects...), pvc("1Gi"))
	f.uncached = []runtime.Object{class(true)}
	writes, monocleWrites := f.run()
	var expanded *corev1.PersistentVolumeClaim
	for _, a := range writes {
		if p, ok := a.(core.UpdateAction).GetObject().(*corev1.PersistentVolumeClaim); ok {
			expanded = p
		}
	}
	if expanded == nil || expanded.Spec.Resources.Requests.Storage().String() != "5Gi" {
		t.Fatalf("PVC not expanded: %v", describe(writes))
	}
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	if c := condition(t, status, monoclev1alpha1.ConditionStorageReady); c.Reason != reasons.Resizing {
		t.Errorf("StorageReady = %+v, want Resizing", c)
	}

	for name, tc := range map[string]struct {
		pvc   *corev1.PersistentVolumeClaim
		class *storagev1.StorageClass
		want  string
	}{
		"class forbids expansion": {pvc("1Gi"), class(false), "does not allow volume expansion"},
		"shrink":                  {pvc("10Gi"), class(true), "cannot shrink"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.monocles = []*monoclev1alpha1.Monocle{grow}
			f.kubeobjects = append(append([]runtime.Object(nil), objects...), tc.pvc)
			f.uncached = []runtime.Object{tc.class}
			writes, monocleWrites := f.run()
			for _, d := range describe(writes) {
				if strings.Contains(d, "persistentvolumeclaims") || strings.HasPrefix(d, "delete") {
					t.Errorf("changed storage: %s", d)
				}
			}
			status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
			c := condition(t, status, monoclev1alpha1.ConditionStorageReady)
			if c.Status != metav1.ConditionFalse || c.Reason != reasons.StorageChangeRefused || !strings.Contains(c.Message, tc.want) {
				t.Errorf("StorageReady = %+v, want refused with %q", c, tc.want)
			}
		})
	}
}

// TestExistingRepositoryHasNoBackupClaim: a repository registered by someone else needs no
// volume: the sync creates no backup claim, where a volume repository gets one.
func TestExistingRepositoryHasNoBackupClaim(t *testing.T) {
	for existing, wantClaim := range map[string]bool{"": true, "cluster-backups": false} {
		m := newMonocle("demo")
		m.Spec.Backup = &monoclev1alpha1.BackupSpec{Repository: monoclev1alpha1.BackupRepository{Existing: existing}}
		f := newFixture(t)
		f.monocles = []*monoclev1alpha1.Monocle{m}
		kubeWrites, _ := f.run()
		if got := slices.Contains(describe(kubeWrites), "create persistentvolumeclaims demo-backup"); got != wantClaim {
			t.Errorf("existing %q: backup claim created %v, want %v: %v", existing, got, wantClaim, describe(kubeWrites))
		}
	}
}
