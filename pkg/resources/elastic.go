package resources

import (
	"fmt"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// ElasticDataVolume is the name of the Elasticsearch volume claim template of the
// StatefulSets this operator creates; the PVC of Monocle "x" is "data-x-elastic-0".
const ElasticDataVolume = "data"

// EarlierElasticDataVolume is the volume claim template name of the Elasticsearch StatefulSet
// the earlier operator (change-metrics/monocle-operator v0.0.2) made: "<name>-elastic-data-volume",
// so its PVC is "<name>-elastic-data-volume-<name>-elastic-0". An adopted StatefulSet keeps it:
// volume claim templates are immutable, and the PVC holding the index is named after it.
func EarlierElasticDataVolume(m *monoclev1alpha1.Monocle) string {
	return ElasticName(m) + "-data-volume"
}

// BundledElasticsearch reports whether m uses the Elasticsearch the operator runs, the
// StatefulSet "<name>-elastic": neither elasticsearchRef nor external is set.
func BundledElasticsearch(m *monoclev1alpha1.Monocle) bool {
	return m.Spec.Elasticsearch.ElasticsearchRef == nil && m.Spec.Elasticsearch.External == nil
}

// elasticUID is the uid and gid the Elasticsearch 7.17 image drops to. Setting it lets the pod
// run with runAsNonRoot; fsGroup makes the data volume writable.
const elasticUID = 1000

// NewElasticService builds the ClusterIP Service "<name>-elastic" on port 9200, which the API
// and janitor Jobs reach Elasticsearch through.
func NewElasticService(m *monoclev1alpha1.Monocle) *corev1.Service {
	return newService(m, ElasticName(m), ComponentElastic, "http", ElasticPort)
}

// elasticHome is the Elasticsearch image's home directory (ES_HOME).
const elasticHome = "/usr/share/elasticsearch"

// ElasticPVCName is the name of the PVC the StatefulSet of Monocle m creates from its volume
// claim template named volume (ElasticDataVolume, or EarlierElasticDataVolume for an adopted
// StatefulSet): "<volume>-<name>-elastic-0".
func ElasticPVCName(m *monoclev1alpha1.Monocle, volume string) string {
	return volume + "-" + ElasticName(m) + "-0"
}

// elasticGCLogOptions replace the GC logging of Elasticsearch 7.17's jvm.options, which keeps
// up to 32 files of 64 MiB (2 GiB) in logs/, by the same logging in 4 files of 16 MiB, within
// the logs volume's sizeLimit: -Xlog:disable ends the image's settings, then the JVM's
// default warnings to stderr and the image's GC log come back with smaller bounds, as
// Elasticsearch's "GC logging settings" (reference 7.17, Advanced configuration) describes.
// A file in config/jvm.options.d applies after jvm.options and before ES_JAVA_OPTS, so
// spec.elasticsearch.javaOpts keeps them.
var elasticGCLogOptions = []string{
	"-Xlog:disable",
	"-Xlog:all=warning:stderr:utctime,level,tags",
	"-Xlog:gc*,gc+age=trace,safepoint:file=logs/gc.log:utctime,pid,tags:filecount=4,filesize=16m",
}

// elasticGCLogFile is the file of config/jvm.options.d that holds elasticGCLogOptions.
const elasticGCLogFile = "monocle-operator-gc.options"

// NewElasticStatefulSet builds the single-node Elasticsearch StatefulSet "<name>-elastic"
// with one PVC from its volume claim template named volume (see ElasticPVCName). PVCs are
// retained when the StatefulSet is deleted or scaled down: index data is only deleted by a
// user. It has one replica, none when stopped is set (hibernation stops it). Elasticsearch
// runs with node.store.allow_mmap=false so it needs no privileged sysctl, and single-node
// discovery.
//
// Its root filesystem is read-only. Elasticsearch 7.17's official image writes, besides the
// data directory: its config directory (the bootstrap creates or upgrades
// config/elasticsearch.keystore, through a keystore.tmp beside it: elastic/elasticsearch#119341),
// logs/ (the GC log of jvm.options), and /tmp (ES_TMPDIR, made by bin/elasticsearch-env, and
// the here-documents of the image's docker-entrypoint.sh: elastic/elasticsearch#95542). Each
// gets an emptyDir; the config directory's is filled with the image's own config by an init
// container of the same image, as ECK's elastic-internal-init-filesystem does.
func NewElasticStatefulSet(m *monoclev1alpha1.Monocle, volume string, stopped bool, usersHash string) *appsv1.StatefulSet {
	image := ElasticImage(m)
	configVol, configMount := emptyDir("config", elasticHome+"/config", elasticConfigLimit)
	probeVol, probeMount := elasticUsersVolume(m, "probe", elasticProbeDir, ElasticProbeUser)
	realmVol, realmMount := elasticUsersVolume(m, "realm", elasticRealmDir, ElasticRealmFiles...)
	logsVol, logsMount := emptyDir("logs", elasticHome+"/logs", elasticLogsLimit)
	tmpVol, tmpMount := emptyDir("tmp", "/tmp", elasticTmpLimit)
	initConfigMount := configMount
	initConfigMount.MountPath = "/mnt/config"
	// The image's configuration, then the file realm's files over its empty ones, then the
	// GC log's bounds.
	realmFiles := ""
	for _, f := range ElasticRealmFiles {
		realmFiles += " " + elasticRealmDir + "/" + f
	}
	gcOptions := ""
	for _, o := range elasticGCLogOptions {
		gcOptions += " '" + o + "'"
	}
	initContainer := corev1.Container{
		Name:  "init-config",
		Image: image,
		Command: []string{"sh", "-c", fmt.Sprintf("cp -R %[1]s/config/. %[2]s/ && cp%[3]s %[2]s/ && mkdir -p %[2]s/jvm.options.d && printf '%%s\\n'%[4]s > %[2]s/jvm.options.d/%[5]s",
			elasticHome, initConfigMount.MountPath, realmFiles, gcOptions, elasticGCLogFile)},
		Resources:                ElasticInitResources(m),
		VolumeMounts:             []corev1.VolumeMount{initConfigMount, realmMount},
		SecurityContext:          restrictedContainerSecurityContext(),
		ImagePullPolicy:          corev1.PullIfNotPresent,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	container := corev1.Container{
		Name:  ComponentElastic,
		Image: image,
		Env: []corev1.EnvVar{
			{Name: "discovery.type", Value: "single-node"},
			{Name: "node.store.allow_mmap", Value: "false"},
			{Name: "ES_JAVA_OPTS", Value: JavaOpts(m)},
			// Security on; with single-node discovery, Elasticsearch 7.17 does not require
			// TLS on the transport layer (its bootstrap checks, TLS's among them, apply to
			// a node that forms a cluster by discovery). HTTP stays plain: Monocle 1.11.2
			// speaks plain HTTP only, through the proxy sidecar on the pod's loopback.
			{Name: elasticSecurityEnv, Value: "true"},
		},
		Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: ElasticPort, Protocol: corev1.ProtocolTCP},
		},
		StartupProbe: tcpProbe("http", 5, 5, 60),
		// Ready once the cluster reaches yellow: a single node never has replicas for green.
		ReadinessProbe:           elasticReadinessProbe(probeMount.MountPath + "/" + ElasticProbeUser),
		LivenessProbe:            tcpProbe("http", 20, 5, 3),
		Resources:                ElasticResources(m),
		VolumeMounts:             []corev1.VolumeMount{{Name: volume, MountPath: elasticHome + "/data"}, configMount, logsMount, tmpMount, probeMount},
		SecurityContext:          restrictedContainerSecurityContext(),
		ImagePullPolicy:          corev1.PullIfNotPresent,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	pod := corev1.PodSpec{
		InitContainers:                []corev1.Container{initContainer},
		Volumes:                       []corev1.Volume{configVol, logsVol, tmpVol, probeVol, realmVol},
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](60),
	}
	s3 := addRepositories(m, &pod, &container)
	pod.InitContainers = append(pod.InitContainers, keystoreContainer(m, &pod, s3, configMount, tmpMount))
	containers := []corev1.Container{container}
	if m.Spec.Elasticsearch.Exporter != nil {
		containers = append(containers, exporterContainer(m))
	}
	podSecurity := restrictedPodSecurityContext()
	podSecurity.RunAsUser = ptr.To[int64](elasticUID)
	podSecurity.RunAsGroup = ptr.To[int64](elasticUID)
	podSecurity.FSGroup = ptr.To[int64](elasticUID)
	pod.Containers, pod.SecurityContext = containers, podSecurity

	var storageClass *string
	if m.Spec.StorageClassName != "" {
		storageClass = ptr.To(m.Spec.StorageClassName)
	}
	labels := Labels(m, ComponentElastic)
	labels[VersionLabel] = versionLabel(image)
	annotations := map[string]string{}
	if usersHash != "" {
		annotations[ElasticUsersHashAnnotation] = usersHash
	}
	s := &appsv1.StatefulSet{
		ObjectMeta: objectMeta(m, ElasticName(m), ComponentElastic),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(elasticReplicas(stopped)),
			ServiceName:         ElasticName(m),
			Selector:            &metav1.LabelSelector{MatchLabels: SelectorLabels(m, ComponentElastic)},
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec:       pod,
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{
					Name: volume,
					// The managed-by label puts the PVC in the operator's filtered cache,
					// for volume expansion. The PVC has no owner: it outlives the Monocle.
					Labels: Labels(m, ComponentElastic),
				},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: storageClass,
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: StorageSize(m)},
					},
				},
			}},
		},
	}
	applyPlacement(m, ComponentElastic, &s.Spec.Template)
	setSpecHash(&s.ObjectMeta, s.Spec)
	return s
}

// ElasticSecured reports whether spec, the pod template of the bundled node's StatefulSet,
// runs Elasticsearch with security on (NewElasticStatefulSet's xpack.security.enabled): a
// StatefulSet of a release of the operator before security does not.
func ElasticSecured(spec *corev1.PodSpec) bool {
	for _, c := range spec.Containers {
		if c.Name != ComponentElastic {
			continue
		}
		for _, e := range c.Env {
			if e.Name == elasticSecurityEnv {
				return e.Value == "true"
			}
		}
	}
	return false
}

// elasticSecurityEnv is the setting that turns Elasticsearch's security on, as the node's env.
const elasticSecurityEnv = "xpack.security.enabled"

// exporterContainer is the Elasticsearch exporter of spec.elasticsearch.exporter: it reads
// Elasticsearch over the pod's loopback and serves Prometheus metrics on ExporterPort, port
// "exporter" (elasticsearch_exporter's --es.uri and --web.listen-address). It reads as
// ElasticProbeUser, whose monitor privilege is all its default collectors need (cluster
// health, nodes' stats, cluster info); elasticsearch_exporter v1.9.0 takes a password from the
// env only (ES_USERNAME and ES_PASSWORD, main.go), so ES_PASSWORD references the Secret's key
// and the pod spec holds no password.
func exporterContainer(m *monoclev1alpha1.Monocle) corev1.Container {
	return corev1.Container{
		Name:  "exporter",
		Image: ExporterImage(m),
		Args: []string{
			fmt.Sprintf("--es.uri=http://localhost:%d", ElasticPort),
			fmt.Sprintf("--web.listen-address=:%d", ExporterPort),
		},
		Env: []corev1.EnvVar{
			{Name: "ES_USERNAME", Value: ElasticProbeUser},
			{Name: "ES_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: ElasticUsersSecretName(m)}, Key: ElasticProbeUser,
			}}},
		},
		Ports:                    []corev1.ContainerPort{{Name: "exporter", ContainerPort: ExporterPort, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe:           tcpProbe("exporter", 10, 5, 3),
		LivenessProbe:            tcpProbe("exporter", 20, 5, 3),
		Resources:                resourcesOr(m.Spec.Elasticsearch.Exporter.Resources, "10m", "32Mi", "128Mi"),
		SecurityContext:          restrictedContainerSecurityContext(),
		ImagePullPolicy:          corev1.PullIfNotPresent,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// elasticRealmDir is where the init container of the bundled node finds the file realm's
// files (ElasticRealmFiles), which it copies into the configuration directory;
// elasticUsersDir where init-keystore finds the elastic user's password, and elasticProbeDir
// where the node's readiness probe finds the probe user's.
const (
	elasticRealmDir = "/mnt/elastic-realm"
	elasticUsersDir = "/mnt/elastic-users"
	elasticProbeDir = "/mnt/elastic-probe"
)

// ElasticUsersHashAnnotation on the bundled node's pod template is the hash of the Secret
// "<name>-elastic-users" (ElasticUsersHash): a rotated password restarts the node, which reads
// the file realm and the bootstrap password at start.
const ElasticUsersHashAnnotation = "monocle.change-metrics.io/elastic-users-hash"

// ElasticUsersHash is the value of ElasticUsersHashAnnotation for the data of the Secret
// "<name>-elastic-users". The data holds the generated passwords themselves, so the hash,
// which whoever reads StatefulSets reads, cannot be used to test guesses of one.
func ElasticUsersHash(users map[string][]byte) string { return Hash(users) }

// elasticUsersVolume is the volume name of the keys of the Secret "<name>-elastic-users",
// mounted read-only at dir, readable by the pod's group (fsGroup): a container mounts only
// the keys it needs.
func elasticUsersVolume(m *monoclev1alpha1.Monocle, name, dir string, keys ...string) (corev1.Volume, corev1.VolumeMount) {
	items := make([]corev1.KeyToPath, 0, len(keys))
	for _, k := range keys {
		items = append(items, corev1.KeyToPath{Key: k, Path: k})
	}
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: ElasticUsersSecretName(m), Items: items, DefaultMode: ptr.To[int32](0o440),
		}}},
		corev1.VolumeMount{Name: name, MountPath: dir, ReadOnly: true}
}

// elasticReadinessProbe asks the bundled node for the cluster's health as ElasticProbeUser,
// whose password is in the file password: ready once the cluster reaches yellow (a single node
// never has replicas for green). The credentials reach curl as a config on its stdin (-K -),
// written by the shell's printf builtin: never in an argument, which any process of the pod
// could read. sed escapes a backslash or a double quote of a password an administrator set,
// as curl's config quoting needs (curl(1), --config). ECK's readiness probe, which this
// follows, reads its probe user's password from a file in the same way
// (github.com/elastic/cloud-on-k8s, pkg/controller/elasticsearch/nodespec/readiness_probe.go).
func elasticReadinessProbe(password string) *corev1.Probe {
	script := fmt.Sprintf(`printf 'user = "%s:%%s"\n' "$(sed 's/[\\"]/\\&/g' %s)" | curl -fsS -o /dev/null --max-time 4 -K - 'http://127.0.0.1:%d/_cluster/health?wait_for_status=yellow&timeout=2s'`,
		ElasticProbeUser, password, ElasticPort)
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", script}}},
		PeriodSeconds:    10,
		TimeoutSeconds:   5,
		FailureThreshold: 3,
		SuccessThreshold: 1,
	}
}
