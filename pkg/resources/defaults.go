package resources

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// Defaults applied when the Monocle spec leaves a field empty.
const (
	// DefaultMonocleImage is the Monocle release the operator runs by default.
	DefaultMonocleImage = "quay.io/change-metrics/monocle:1.11.2"
	// DefaultElasticsearchImage is the Elasticsearch the operator runs by default; Monocle
	// supports Elasticsearch 7 only.
	DefaultElasticsearchImage = "docker.elastic.co/elasticsearch/elasticsearch:7.17.26"
	// DefaultExporterImage is the Elasticsearch exporter spec.elasticsearch.exporter runs by
	// default (github.com/prometheus-community/elasticsearch_exporter, which supports
	// Elasticsearch 7).
	DefaultExporterImage = "quay.io/prometheuscommunity/elasticsearch-exporter:v1.9.0"
	// DefaultProxyImage is the proxy sidecar's image (spec.elasticsearch.proxy.image), NGINX's
	// unprivileged build (github.com/nginxinc/docker-nginx-unprivileged), which runs as uid
	// 101: the stable line, 1.30 (1.28 and older are no longer supported upstream), at 1.30.1,
	// which fixes CVE-2026-42945 (nginx.org security advisories). nginx 1.30 keeps HTTP/1.1
	// and keepalive to upstreams by default; the sidecar's nginx.conf sets both anyway.
	DefaultProxyImage = "docker.io/nginxinc/nginx-unprivileged:1.30.1-alpine"
	// DefaultStorageSize is the default size of the Elasticsearch volume.
	DefaultStorageSize = "1Gi"
	// DefaultJavaOpts is the default ES_JAVA_OPTS: a 512 MiB heap, half the default limit.
	DefaultJavaOpts = "-Xms512m -Xmx512m"
	// DefaultConfig is the config.yaml used when spec.config is empty: Monocle's minimal
	// valid config, one workspace with no crawler.
	DefaultConfig = "workspaces:\n  - name: demo\n    crawlers: []\n"
)

// Ports Monocle and Elasticsearch listen on (Monocle 1.11.2 defaults), and the Elasticsearch
// exporter (its default, 9114).
const (
	APIPort      = 8080
	CrawlerPort  = 9001
	ElasticPort  = 9200
	ExporterPort = 9114
)

// ConfigDir is where config.yaml is mounted; the ConfigMap is mounted as a directory, never
// with subPath, which would never see updates.
const ConfigDir = "/etc/monocle"

// ConfigPath is the path of config.yaml in Monocle's containers (MONOCLE_CONFIG).
const ConfigPath = ConfigDir + "/config.yaml"

// ConfigKey is the ConfigMap key holding config.yaml.
const ConfigKey = "config.yaml"

// ReplacedConfigKey is the ConfigMap key where the operator keeps the user's config.yaml that
// spec.config replaced (when spec.config is set on a Monocle whose config was edited in the
// ConfigMap), so that setting spec.config never loses a config. Monocle reads only ConfigKey.
const ReplacedConfigKey = "config.yaml.replaced"

// MonocleImage returns the image of a Monocle component: its override, else spec.image, else
// DefaultMonocleImage.
func MonocleImage(m *monoclev1alpha1.Monocle, override string) string {
	switch {
	case override != "":
		return override
	case m.Spec.Image != "":
		return m.Spec.Image
	default:
		return DefaultMonocleImage
	}
}

// APIImage is the image of the API container.
func APIImage(m *monoclev1alpha1.Monocle) string { return MonocleImage(m, m.Spec.API.Image) }

// CrawlerImage is the image of the crawler container.
func CrawlerImage(m *monoclev1alpha1.Monocle) string { return MonocleImage(m, m.Spec.Crawler.Image) }

// ElasticImage is the image of the Elasticsearch container.
func ElasticImage(m *monoclev1alpha1.Monocle) string {
	if m.Spec.Elasticsearch.Image != "" {
		return m.Spec.Elasticsearch.Image
	}
	return DefaultElasticsearchImage
}

// ExporterImage is the image of the Elasticsearch exporter container.
func ExporterImage(m *monoclev1alpha1.Monocle) string {
	if e := m.Spec.Elasticsearch.Exporter; e != nil && e.Image != "" {
		return e.Image
	}
	return DefaultExporterImage
}

// ImageTag returns the tag of an image reference ("1.11.2" for
// quay.io/change-metrics/monocle:1.11.2), the digest for a digest reference, or "latest" when
// it has neither, as a container runtime reads it.
func ImageTag(image string) string {
	_, tag, digest := SplitImage(image)
	switch {
	case digest != "":
		return digest
	case tag != "":
		return tag
	}
	return "latest"
}

// SplitImage splits an image reference into its repository, tag and digest, each empty when
// absent: localhost:5000/a/b:v1@sha256:x is localhost:5000/a/b, v1 and sha256:x. A port of
// the registry host is not a tag.
func SplitImage(ref string) (repository, tag, digest string) {
	repository, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(repository, ":"); i > strings.LastIndex(repository, "/") {
		repository, tag = repository[:i], repository[i+1:]
	}
	return repository, tag, digest
}

// Config returns the config.yaml content of m: spec.config, else DefaultConfig.
func Config(m *monoclev1alpha1.Monocle) string {
	if m.Spec.Config != "" {
		return m.Spec.Config
	}
	return DefaultConfig
}

// APIReplicas is the number of API pods: spec.api.replicas, else 1.
func APIReplicas(m *monoclev1alpha1.Monocle) int32 {
	if m.Spec.API.Replicas != nil {
		return *m.Spec.API.Replicas
	}
	return 1
}

// StorageSize is the requested size of the Elasticsearch volume: spec.storageSize, else
// DefaultStorageSize.
func StorageSize(m *monoclev1alpha1.Monocle) resource.Quantity {
	if m.Spec.StorageSize != nil {
		return m.Spec.StorageSize.DeepCopy()
	}
	return resource.MustParse(DefaultStorageSize)
}

// LocalPort is the port of the documented access path of a Monocle that is not exposed:
// `kubectl port-forward service/<name>-api 8090:8080`, then http://localhost:8090 (the
// earlier operator's README, change-metrics/monocle-operator v0.0.2, gives that command and
// publicURL).
const LocalPort = 8090

// PortForwardCommand is the command that makes the web UI of Monocle m reachable at
// http://localhost:8090 from the user's machine.
func PortForwardCommand(m *monoclev1alpha1.Monocle) string {
	return fmt.Sprintf("kubectl port-forward -n %s service/%s %d:%d", m.Namespace, APIName(m), LocalPort, APIPort)
}

// PublicURL is the external URL of the web UI, the URL the browser calls (Monocle's API
// serves index.html with __API_URL__ replaced by it, mkStaticMiddleware in
// src/Monocle/Main.hs at 1.11.2): spec.publicURL, else the first exposure's (ExposedURL),
// else http://localhost:8090, where PortForwardCommand makes it reachable. An in-cluster
// Service name would be no use there: no browser resolves it.
func PublicURL(m *monoclev1alpha1.Monocle) string {
	if m.Spec.PublicURL != "" {
		return m.Spec.PublicURL
	}
	if u := ExposedURL(m); u != "" {
		return u
	}
	return fmt.Sprintf("http://localhost:%d", LocalPort)
}

// ElasticResources are the Elasticsearch container's requests and limits:
// elasticsearch.resources, by default requests of 100m CPU and 1Gi memory and a 1Gi memory
// limit.
func ElasticResources(m *monoclev1alpha1.Monocle) corev1.ResourceRequirements {
	return resourcesOr(m.Spec.Elasticsearch.Resources, "100m", "1Gi", "1Gi")
}

// ElasticInitResources are the requests and limits of the Elasticsearch pod's init containers
// (init-config, init-keystore): elasticsearch.initResources, by default requests of 10m CPU
// and 128Mi memory and a 256Mi memory limit, which the keystore tool's JVM (a 64m heap)
// needs.
func ElasticInitResources(m *monoclev1alpha1.Monocle) corev1.ResourceRequirements {
	return resourcesOr(m.Spec.Elasticsearch.InitResources, "10m", "128Mi", "256Mi")
}

// JavaOpts is ES_JAVA_OPTS: elasticsearch.javaOpts, by default a heap of half the memory limit
// in MiB ("-Xms512m -Xmx512m" for the default 1Gi limit), as Elasticsearch advises ("Heap
// size settings" of its 7.17 reference); DefaultJavaOpts without a memory limit.
func JavaOpts(m *monoclev1alpha1.Monocle) string {
	if m.Spec.Elasticsearch.JavaOpts != "" {
		return m.Spec.Elasticsearch.JavaOpts
	}
	limits := ElasticResources(m).Limits
	limit := limits.Memory()
	if limit.IsZero() {
		return DefaultJavaOpts
	}
	half := limit.Value() >> 21
	return fmt.Sprintf("-Xms%dm -Xmx%dm", half, half)
}

// resourcesOr returns a copy of r, or the default requests and memory limit when r is nil. A
// limit without a request gets the limit as its request, as the API server would default it,
// so the live object compares equal to the built one.
func resourcesOr(r *corev1.ResourceRequirements, cpu, memory, memoryLimit string) corev1.ResourceRequirements {
	if r != nil {
		out := *r.DeepCopy()
		for name, limit := range out.Limits {
			if _, ok := out.Requests[name]; !ok {
				if out.Requests == nil {
					out.Requests = corev1.ResourceList{}
				}
				out.Requests[name] = limit.DeepCopy()
			}
		}
		return out
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse(memory),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse(memoryLimit),
		},
	}
}

// lastReleaseWithoutConfigReload is the newest Monocle release that does not see ConfigMap
// volume updates (its reload checks the file's modification time, which a ConfigMap update
// does not change; fixed on Monocle's master after 1.11.2).
var lastReleaseWithoutConfigReload = [3]int{1, 11, 2}

// RestartsOnConfigChange reports whether pods running image must be restarted to apply a new
// config.yaml: true for Monocle releases up to 1.11.2, and for tags that are not a release
// version (latest, a digest, a branch), where a restart is the safe choice.
func RestartsOnConfigChange(image string) bool {
	v, ok := parseVersion(ImageTag(image))
	if !ok {
		return true
	}
	for i := range v {
		if v[i] != lastReleaseWithoutConfigReload[i] {
			return v[i] < lastReleaseWithoutConfigReload[i]
		}
	}
	return true
}

// ImageVersion is the release version of image's tag ("7.17.26" or "v1.11.2": major, minor,
// patch), and false for a tag that is not one (latest, a digest, a suffixed build).
func ImageVersion(image string) ([3]int, bool) { return parseVersion(ImageTag(image)) }

// parseVersion parses "1.11.2" or "v1.11.2" into its three numbers.
func parseVersion(tag string) ([3]int, bool) {
	var v [3]int
	parts := strings.Split(strings.TrimPrefix(tag, "v"), ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}
