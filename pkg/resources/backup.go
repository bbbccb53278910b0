package resources

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// Snapshot repositories. A volume repository is a PersistentVolumeClaim mounted in
// the Elasticsearch pod under path.repo, an Elasticsearch 7.17 shared-filesystem ("fs")
// repository; an S3 repository needs the repository-s3 plugin in the image and its
// credentials in the Elasticsearch keystore (Elasticsearch 7.17 reference, "Register a
// snapshot repository", "S3 repository"). Both only change the pod template: the
// StatefulSet's volume claim templates, which are immutable, and so the data PVC, stay as
// they are; the Elasticsearch pod restarts once when a repository is added or removed.

// Repository names the operator registers in a Monocle's Elasticsearch: its own
// (spec.backup.repository), and the one spec.restore.repository names, read-only.
const (
	BackupRepositoryName        = "monocle"
	RestoreSourceRepositoryName = "restore-source"
)

// Where the repositories' volumes are mounted in the Elasticsearch container; both are in
// path.repo when mounted.
const (
	BackupMountPath        = elasticHome + "/backup"
	RestoreSourceMountPath = elasticHome + "/restore-source"
)

// S3 client names: the keystore entries of a repository's credentials are
// s3.client.<client>.access_key and so on.
const (
	BackupS3Client        = "default"
	RestoreSourceS3Client = "restore"
)

// S3 credential keys read from the Secret of an S3 repository, each written into the keystore
// as s3.client.<client>.<key> (Elasticsearch 7.17 S3 repository, client settings).
var s3CredentialKeys = []string{"access_key", "secret_key", "session_token"}

// BackupClaimName is the PersistentVolumeClaim of Monocle m's volume repository:
// spec.backup.repository.volume.claimName, or "<name>-backup".
func BackupClaimName(m *monoclev1alpha1.Monocle) string {
	if b := m.Spec.Backup; b != nil && b.Repository.Volume != nil && b.Repository.Volume.ClaimName != "" {
		return b.Repository.Volume.ClaimName
	}
	return m.Name + "-backup"
}

// BackupVolumeWanted reports whether m's own repository is a volume: spec.backup is set and
// names neither an S3 bucket nor an existing repository (one the cluster's administrators
// keep, which needs no volume of the operator's).
func BackupVolumeWanted(m *monoclev1alpha1.Monocle) bool {
	return m.Spec.Backup != nil && m.Spec.Backup.Repository.S3 == nil && m.Spec.Backup.Repository.Existing == ""
}

// S3BasePath is the key prefix of an S3 repository: its basePath, or
// "<namespace>/<name>" of m.
func S3BasePath(m *monoclev1alpha1.Monocle, s3 *monoclev1alpha1.S3Repository) string {
	if s3.BasePath != "" {
		return s3.BasePath
	}
	return m.Namespace + "/" + m.Name
}

// NewBackupClaim builds the PersistentVolumeClaim "<name>-backup" of a volume repository
// when the operator is to create it (no claimName given): ReadWriteOnce, of
// spec.backup.repository.volume's size (the data volume's by default) and StorageClass. It
// has no owner reference: deleting the Monocle keeps the snapshots.
func NewBackupClaim(m *monoclev1alpha1.Monocle) *corev1.PersistentVolumeClaim {
	size := StorageSize(m)
	var class *string
	if v := m.Spec.Backup.Repository.Volume; v != nil {
		if v.StorageSize != nil {
			size = *v.StorageSize
		}
		if v.StorageClassName != "" {
			class = ptr.To(v.StorageClassName)
		}
	}
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:      BackupClaimName(m),
			Namespace: m.Namespace,
			Labels:    Labels(m, ComponentElastic),
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: class,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
		},
	}
}

// restoreSource is spec.restore.repository when it is another repository than m's own.
func restoreSource(m *monoclev1alpha1.Monocle) *monoclev1alpha1.BackupRepository {
	if m.Spec.Restore == nil {
		return nil
	}
	return m.Spec.Restore.Repository
}

// addRepositories puts m's repositories into the Elasticsearch pod: volumes mounted under
// path.repo, and returns the credentials of the S3 ones, which init-keystore writes into the
// keystore (keystoreContainer). The Secret of an S3 repository is optional in the pod: a
// missing one leaves Elasticsearch running and the repository's registration failing, which
// the BackupReady condition reports.
func addRepositories(m *monoclev1alpha1.Monocle, pod *corev1.PodSpec, es *corev1.Container) []s3Credentials {
	var paths []string
	var s3 []s3Credentials
	if m.Spec.Backup != nil {
		switch r := m.Spec.Backup.Repository; {
		case BackupVolumeWanted(m):
			addClaim(pod, es, "backup", BackupClaimName(m), BackupMountPath, false)
			paths = append(paths, BackupMountPath)
		case r.S3 != nil:
			s3 = append(s3, s3Credentials{BackupS3Client, r.S3.SecretRef.Name})
		}
	}
	if src := restoreSource(m); src != nil {
		switch {
		case src.S3 != nil:
			s3 = append(s3, s3Credentials{RestoreSourceS3Client, src.S3.SecretRef.Name})
		case src.Volume != nil && src.Volume.ClaimName != "" && !(BackupVolumeWanted(m) && src.Volume.ClaimName == BackupClaimName(m)):
			addClaim(pod, es, "restore-source", src.Volume.ClaimName, RestoreSourceMountPath, true)
			paths = append(paths, RestoreSourceMountPath)
		}
	}
	if len(paths) > 0 {
		es.Env = append(es.Env, corev1.EnvVar{Name: "path.repo", Value: strings.Join(paths, ",")})
	}
	return s3
}

// s3Credentials is an S3 client's keystore entries, from a Secret.
type s3Credentials struct{ client, secret string }

func addClaim(pod *corev1.PodSpec, c *corev1.Container, name, claim, path string, readOnly bool) {
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly},
	}})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: readOnly})
}

// keystoreContainer is the init container "init-keystore": with ES_PATH_CONF on the config
// emptyDir (which init-config filled), it creates the keystore when missing and adds, with
// elasticsearch-keystore's --stdin and --force, the elastic user's bootstrap password
// (bootstrap.password, from the Secret "<name>-elastic-users"), then each credential file of
// each S3 Secret (mounted from optional Secret volumes) as s3.client.<client>.<key>. It runs
// at every start of the pod: the keystore is in an emptyDir, and a rotated password is read
// anew.
func keystoreContainer(m *monoclev1alpha1.Monocle, pod *corev1.PodSpec, creds []s3Credentials, configMount, tmpMount corev1.VolumeMount) corev1.Container {
	mount := configMount
	mount.MountPath = "/mnt/config"
	bootstrapVol, bootstrapMount := elasticUsersVolume(m, "bootstrap", elasticUsersDir, ElasticSuperuser)
	pod.Volumes = append(pod.Volumes, bootstrapVol)
	mounts := []corev1.VolumeMount{mount, tmpMount, bootstrapMount}
	script := "set -e\nks=" + elasticHome + "/bin/elasticsearch-keystore\n[ -f /mnt/config/elasticsearch.keystore ] || $ks create\n" +
		"$ks add --stdin --force bootstrap.password < " + elasticUsersDir + "/" + ElasticSuperuser + "\n"
	for _, c := range creds {
		vol := "s3-" + c.client
		dir := "/mnt/" + vol
		items := make([]corev1.KeyToPath, 0, len(s3CredentialKeys))
		for _, k := range s3CredentialKeys {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
			script += "if [ -s " + dir + "/" + k + " ]; then $ks add --stdin --force s3.client." + c.client + "." + k + " < " + dir + "/" + k + "; fi\n"
		}
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: c.secret, Items: items, Optional: ptr.To(true)},
		}})
		mounts = append(mounts, corev1.VolumeMount{Name: vol, MountPath: dir, ReadOnly: true})
	}
	return corev1.Container{
		Name:    "init-keystore",
		Image:   ElasticImage(m),
		Command: []string{"sh", "-c", script},
		Env: []corev1.EnvVar{
			{Name: "ES_PATH_CONF", Value: "/mnt/config"},
			// elasticsearch-keystore is a JVM tool: a small heap keeps it under the limit.
			{Name: "ES_JAVA_OPTS", Value: "-Xms32m -Xmx64m"},
		},
		Resources:                ElasticInitResources(m),
		VolumeMounts:             mounts,
		SecurityContext:          restrictedContainerSecurityContext(),
		ImagePullPolicy:          corev1.PullIfNotPresent,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}
