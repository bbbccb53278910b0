package resources

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// restrictedPodSecurityContext passes the "restricted" Pod Security Standard. The Monocle
// image runs as uid 1000 (numeric USER), so runAsNonRoot alone is enough for it; the
// Elasticsearch image starts as root and needs runAsUser/fsGroup set (see elasticPodSpec).
func restrictedPodSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// restrictedContainerSecurityContext passes the "restricted" Pod Security Standard, with a
// read-only root filesystem: each container writes only to the volumes it is given (see
// monoclePodSpec and elasticPodSpec for what Monocle and Elasticsearch write).
func restrictedContainerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		ReadOnlyRootFilesystem:   ptr.To(true),
	}
}

// The sizeLimit of each scratch volume: the kubelet evicts a pod whose emptyDir grows past
// it, so that no container fills the node's disk. Each is what its writer needs with margin.
var (
	// scratchLimit bounds a /tmp nothing is known to write to: Monocle 1.11.2 writes no file
	// (monoclePodSpec) and the janitor neither.
	scratchLimit = resource.MustParse("64Mi")
	// elasticConfigLimit bounds Elasticsearch's config directory: the image's files, the
	// realm's and the keystore, a few hundred KiB.
	elasticConfigLimit = resource.MustParse("64Mi")
	// elasticLogsLimit bounds Elasticsearch's logs/: its GC log, which elasticGCLogOptions caps
	// at 4 files of 16 MiB (the image logs everything else to the console).
	elasticLogsLimit = resource.MustParse("128Mi")
	// elasticTmpLimit bounds ES_TMPDIR: the JNA library Elasticsearch unpacks there and the
	// entrypoint's here-documents, a few MiB.
	elasticTmpLimit = resource.MustParse("256Mi")
	// proxyTmpLimit bounds NGINX's temporary files: request bodies past its 16 KiB buffer, up
	// to client_max_body_size (100m) each; responses are not buffered (proxy_buffering off).
	proxyTmpLimit = resource.MustParse("512Mi")
)

// emptyDir returns a scratch volume name of at most limit and its mount at path.
func emptyDir(name, path string, limit resource.Quantity) (corev1.Volume, corev1.VolumeMount) {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &limit}}},
		corev1.VolumeMount{Name: name, MountPath: path}
}

// httpProbe returns an HTTP GET probe. Every numeric field is set, including those the API
// server would default, so the live object compares equal to the built one.
func httpProbe(path, port string, period, timeout, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString(port), Scheme: corev1.URISchemeHTTP},
		},
		PeriodSeconds:    period,
		TimeoutSeconds:   timeout,
		FailureThreshold: failures,
		SuccessThreshold: 1,
	}
}

// tcpProbe returns a TCP probe with every numeric field set.
func tcpProbe(port string, period, timeout, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(port)}},
		PeriodSeconds:    period,
		TimeoutSeconds:   timeout,
		FailureThreshold: failures,
		SuccessThreshold: 1,
	}
}

// configVolume mounts the ConfigMap as a directory: a subPath mount never sees updates.
func configVolume(configMap string) (corev1.Volume, corev1.VolumeMount) {
	return corev1.Volume{
			Name: "config",
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
				DefaultMode:          ptr.To[int32](0o444),
			}},
		}, corev1.VolumeMount{
			Name: "config", MountPath: ConfigDir, ReadOnly: true,
		}
}

// envFromSecret loads every key of a Secret as environment variables.
func envFromSecret(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

// secretKeyEnv sets the variable named key from the key of the same name in a Secret. The
// generated keys are loaded this way besides envFrom, so that they win over a key of the same
// name in the user's Secret.
func secretKeyEnv(secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: key, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret},
		Key:                  key,
	}}}
}

// monocleEnvFrom loads every key of the Secret "<name>-api" (the generated keys and the tokens
// users add there, as under the earlier operator), then those of the Secret spec.secretRef
// names, which win for a key both hold.
func monocleEnvFrom(m *monoclev1alpha1.Monocle) []corev1.EnvFromSource {
	envFrom := []corev1.EnvFromSource{envFromSecret(SecretName(m))}
	if m.Spec.SecretRef != nil {
		envFrom = append(envFrom, envFromSecret(m.Spec.SecretRef.Name))
	}
	return envFrom
}

// podTemplateAnnotations carries the hashes of the data the pods read, so a change rolls them.
// The config hash is left out for images that reload config.yaml by themselves.
func podTemplateAnnotations(in Inputs, image string) map[string]string {
	a := map[string]string{SecretHashAnnotation: in.SecretHash}
	if RestartsOnConfigChange(image) {
		a[ConfigHashAnnotation] = in.ConfigHash
	}
	return a
}

// monoclePodSpec is the pod spec shared by the API and the crawler. Monocle (1.11.2) writes
// nothing at run time: the API reads index.html into memory and serves it with __API_URL__
// replaced (mkStaticMiddleware in src/Monocle/Main.hs), the config is read from the
// ConfigMap, and the only file writes of src/ are in tests (src/Monocle/Effects.hs). Its
// root filesystem is read-only, with an emptyDir at /tmp for libraries that may want one.
func monoclePodSpec(container corev1.Container, configMap string) corev1.PodSpec {
	vol, mount := configVolume(configMap)
	tmp, tmpMount := emptyDir("tmp", "/tmp", scratchLimit)
	container.VolumeMounts = append(container.VolumeMounts, mount, tmpMount)
	container.SecurityContext = restrictedContainerSecurityContext()
	container.ImagePullPolicy = corev1.PullIfNotPresent
	container.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	return corev1.PodSpec{
		Containers:                    []corev1.Container{container},
		Volumes:                       []corev1.Volume{vol, tmp},
		SecurityContext:               restrictedPodSecurityContext(),
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](30),
	}
}

// newMonocleDeployment wraps the container of a Monocle component (API or crawler) in its
// Deployment: per-instance selector, version label, the data hashes that roll the pods, the
// component's placement (applyPlacement), and the spec hash.
func newMonocleDeployment(m *monoclev1alpha1.Monocle, name, component string, container corev1.Container, in Inputs,
	replicas int32, strategy appsv1.DeploymentStrategy) *appsv1.Deployment {
	labels := Labels(m, component)
	labels[VersionLabel] = versionLabel(container.Image)
	d := &appsv1.Deployment{
		ObjectMeta: objectMeta(m, name, component),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(m, component)},
			Strategy: strategy,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: podTemplateAnnotations(in, container.Image)},
				Spec:       monoclePodSpec(container, ConfigMapName(m)),
			},
		},
	}
	applyPlacement(m, component, &d.Spec.Template)
	setSpecHash(&d.ObjectMeta, d.Spec)
	return d
}
