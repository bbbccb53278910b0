package resources

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// TestRepositoriesChangeOnlyThePodTemplate: a repository adds a volume and path.repo, or the
// keystore init container, and leaves the immutable volume claim templates as they are, so
// that the StatefulSet is updated in place on the same data PVC.
func TestRepositoriesChangeOnlyThePodTemplate(t *testing.T) {
	plain := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}}
	base := NewElasticStatefulSet(plain, ElasticDataVolume, false, "")

	volume := plain.DeepCopy()
	volume.Spec.Backup = &monoclev1alpha1.BackupSpec{}
	volume.Spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: "s", Repository: &monoclev1alpha1.BackupRepository{
		Volume: &monoclev1alpha1.BackupVolume{ClaimName: "old-backup"}}}
	s3 := plain.DeepCopy()
	s3.Spec.Backup = &monoclev1alpha1.BackupSpec{Repository: monoclev1alpha1.BackupRepository{
		S3: &monoclev1alpha1.S3Repository{Bucket: "b", SecretRef: monoclev1alpha1.SecretReference{Name: "keys"}}}}

	for name, m := range map[string]*monoclev1alpha1.Monocle{"volume": volume, "s3": s3} {
		s := NewElasticStatefulSet(m, ElasticDataVolume, false, "")
		if !equality.Semantic.DeepEqual(s.Spec.VolumeClaimTemplates, base.Spec.VolumeClaimTemplates) {
			t.Errorf("%s: the volume claim templates changed", name)
		}
		if equality.Semantic.DeepEqual(s.Spec.Template, base.Spec.Template) {
			t.Errorf("%s: the pod template did not change", name)
		}
	}

	pod := NewElasticStatefulSet(volume, ElasticDataVolume, false, "").Spec.Template.Spec
	pathRepo := ""
	for _, e := range pod.Containers[0].Env {
		if e.Name == "path.repo" {
			pathRepo = e.Value
		}
	}
	if pathRepo != BackupMountPath+","+RestoreSourceMountPath {
		t.Errorf("path.repo = %q", pathRepo)
	}
	claims := map[string]bool{}
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims[v.PersistentVolumeClaim.ClaimName] = v.PersistentVolumeClaim.ReadOnly
		}
	}
	if ro, ok := claims["m-backup"]; !ok || ro {
		t.Errorf("backup claim: mounted %v, read-only %v", ok, ro)
	}
	if ro, ok := claims["old-backup"]; !ok || !ro {
		t.Errorf("restore source claim: mounted %v, read-only %v", ok, ro)
	}

	pod = NewElasticStatefulSet(s3, ElasticDataVolume, false, "").Spec.Template.Spec
	if n := len(pod.InitContainers); n != 2 || pod.InitContainers[1].Name != "init-keystore" {
		t.Fatalf("init containers: %d", n)
	}
	script := strings.Join(pod.InitContainers[1].Command, " ")
	for _, want := range []string{"s3.client.default.access_key", "s3.client.default.secret_key", "--stdin"} {
		if !strings.Contains(script, want) {
			t.Errorf("keystore script lacks %q: %s", want, script)
		}
	}
	for _, v := range pod.Volumes {
		if v.Secret != nil && v.Secret.SecretName != ElasticUsersSecretName(s3) && (v.Secret.SecretName != "keys" || v.Secret.Optional == nil || !*v.Secret.Optional) {
			t.Errorf("S3 Secret volume %+v: want Secret keys, optional", v.Secret)
		}
	}
}

func TestBackupClaim(t *testing.T) {
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}}
	m.Spec.Backup = &monoclev1alpha1.BackupSpec{}
	c := NewBackupClaim(m)
	if c.Name != "m-backup" || len(c.OwnerReferences) != 0 {
		t.Errorf("claim %s with %d owners, want m-backup without owner", c.Name, len(c.OwnerReferences))
	}
	if got := c.Spec.Resources.Requests.Storage().String(); got != "1Gi" {
		t.Errorf("size %s, want the data volume's 1Gi", got)
	}
}

// TestExistingRepositoryNeedsNothingInThePod: a repository registered by someone else
// (backup.repository.existing) wants no backup volume, and leaves the Elasticsearch pod as
// without backups: no claim, no path.repo, no keystore.
func TestExistingRepositoryNeedsNothingInThePod(t *testing.T) {
	plain := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}}
	existing := plain.DeepCopy()
	existing.Spec.Backup = &monoclev1alpha1.BackupSpec{Repository: monoclev1alpha1.BackupRepository{Existing: "cluster-backups"}}
	if BackupVolumeWanted(existing) {
		t.Error("an existing repository wants a backup volume")
	}
	if !equality.Semantic.DeepEqual(NewElasticStatefulSet(existing, ElasticDataVolume, false, ""), NewElasticStatefulSet(plain, ElasticDataVolume, false, "")) {
		t.Error("an existing repository changed the Elasticsearch StatefulSet")
	}
}
