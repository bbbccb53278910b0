package resources

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// ComponentUpdateIdents labels the update-idents Jobs and their pods.
const ComponentUpdateIdents = "update-idents"

// Limits of the update-idents Job.
const (
	// UpdateIdentsBackoffLimit is how many times a failed update-idents pod is retried before
	// the Job fails for good; the operator reports the failure and does not start it again.
	UpdateIdentsBackoffLimit = 3
	// UpdateIdentsTTL is how long a finished Job is kept (seconds) before the TTL controller
	// deletes it; its outcome stays in the Monocle's status.
	UpdateIdentsTTL = 24 * 3600
	// UpdateIdentsDeadline bounds one Job's run (seconds).
	UpdateIdentsDeadline = 3600
)

// UpdateIdentsJobName is the name of the update-idents Job for a config hash:
// "<name>-update-idents-<hash[:8]>". Deriving it from the config means the same config never
// runs twice and no delete-then-create race exists. With Monocle names of at most 40
// characters it stays within the 63 characters of the job-name pod label.
func UpdateIdentsJobName(m *monoclev1alpha1.Monocle, configHash string) string {
	h := configHash
	if len(h) > 8 {
		h = h[:8]
	}
	return m.Name + "-" + ComponentUpdateIdents + "-" + h
}

// NewUpdateIdentsJob builds the Job that runs `monocle janitor update-idents` against the
// Monocle's Elasticsearch (e) with the config in the ConfigMap, re-applying idents and groups
// to indexed data after a config change. The janitor needs no secret: an Elasticsearch that
// needs credentials or TLS is reached through the proxy sidecar. Its pod is placed by
// spec.jobs (applyPlacement). The ConfigMap must already hold the config of configHash when
// the Job starts.
func NewUpdateIdentsJob(m *monoclev1alpha1.Monocle, configHash string, e ElasticAccess) *batchv1.Job {
	vol, mount := configVolume(ConfigMapName(m))
	tmp, tmpMount := emptyDir("tmp", "/tmp", scratchLimit)
	labels := Labels(m, ComponentUpdateIdents)
	job := &batchv1.Job{
		ObjectMeta: objectMeta(m, UpdateIdentsJobName(m, configHash), ComponentUpdateIdents),
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](UpdateIdentsBackoffLimit),
			TTLSecondsAfterFinished: ptr.To[int32](UpdateIdentsTTL),
			ActiveDeadlineSeconds:   ptr.To[int64](UpdateIdentsDeadline),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{ConfigHashAnnotation: configHash}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:  ComponentUpdateIdents,
						Image: APIImage(m),
						Command: []string{"monocle", "janitor", "update-idents",
							"--elastic", e.Target.PodURL(), "--config", ConfigPath},
						VolumeMounts:             []corev1.VolumeMount{mount, tmpMount},
						Resources:                resourcesOr(m.Spec.Jobs.Resources, "50m", "128Mi", "512Mi"),
						SecurityContext:          restrictedContainerSecurityContext(),
						ImagePullPolicy:          corev1.PullIfNotPresent,
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					}},
					Volumes:                      []corev1.Volume{vol, tmp},
					SecurityContext:              restrictedPodSecurityContext(),
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
				},
			},
		},
	}
	addProxy(m, e, &job.Spec.Template, false)
	applyPlacement(m, ComponentUpdateIdents, &job.Spec.Template)
	return job
}
