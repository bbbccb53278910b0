package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Monocle is one Monocle instance: an API with its web UI, a crawler and an Elasticsearch
// database, configured by a config.yaml held in the spec. The operator creates and keeps
// correct the Secrets, ConfigMap, StatefulSet, Deployments and Services the instance needs,
// and reports their state in the status.
//
// The name is a DNS-1035 label of at most 40 characters: the owned objects are named after it
// ("<name>-elastic-0" pod, "<name>-update-idents-<8 hex>" Job, "<name>-api" Service), and those
// names must be DNS-1035 labels of at most 63 characters.
//
// Admission refuses changes that would lose the Elasticsearch data: a new storageClassName, a
// smaller storageSize (Kubernetes volumes only grow), or a switch between the bundled
// Elasticsearch, elasticsearchRef and external.
//
// Short name "mon", category "monocle" ("kubectl get monocle" lists Monocles). Monocles are
// deliberately not in the "all" category: "kubectl delete all --all", a common way to clean a
// namespace of its workloads, would then delete the Monocles that own the index data.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mon,categories=monocle
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be at most 40 characters of lowercase letters, digits and '-', start with a letter and end with a letter or digit (a DNS-1035 label): the names of the objects made for it, such as <name>-update-idents-<hash>, must fit in 63 characters"
// +kubebuilder:validation:XValidation:rule="(has(self.spec) && has(self.spec.elasticsearch) && has(self.spec.elasticsearch.elasticsearchRef)) == (has(oldSelf.spec) && has(oldSelf.spec.elasticsearch) && has(oldSelf.spec.elasticsearch.elasticsearchRef)) && (has(self.spec) && has(self.spec.elasticsearch) && has(self.spec.elasticsearch.external)) == (has(oldSelf.spec) && has(oldSelf.spec.elasticsearch) && has(oldSelf.spec.elasticsearch.external))",message="spec.elasticsearch cannot switch between the bundled Elasticsearch, elasticsearchRef and external after creation: the data would not follow; take a backup and restore it into a new Monocle",fieldPath=".spec.elasticsearch"
// +kubebuilder:validation:XValidation:rule="(has(self.spec) && has(self.spec.storageClassName) ? self.spec.storageClassName : \"\") == (has(oldSelf.spec) && has(oldSelf.spec.storageClassName) ? oldSelf.spec.storageClassName : \"\")",message="spec.storageClassName cannot be changed after creation: the Elasticsearch volume would have to be recreated, which loses its data",fieldPath=".spec.storageClassName"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec) || !has(oldSelf.spec.storageSize) || !isQuantity(string(oldSelf.spec.storageSize)) || (has(self.spec) && has(self.spec.storageSize) ? (!isQuantity(string(self.spec.storageSize)) || quantity(string(self.spec.storageSize)).compareTo(quantity(string(oldSelf.spec.storageSize))) >= 0) : quantity('1Gi').compareTo(quantity(string(oldSelf.spec.storageSize))) >= 0)",message="spec.storageSize cannot shrink: a volume can only grow; removing storageSize means the default 1Gi",fieldPath=".spec.storageSize"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Reason",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Elasticsearch",type=string,priority=1,JSONPath=`.status.elasticsearchHealth.status`
// +kubebuilder:printcolumn:name="Disk",type=integer,priority=1,JSONPath=`.status.elasticsearchHealth.diskUsedPercent`
// +kubebuilder:printcolumn:name="Backup",type=string,priority=1,JSONPath=`.status.backup.lastSuccessful.name`
// +kubebuilder:printcolumn:name="Crawlers",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="CrawlersHealthy")].message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Monocle struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the Monocle instance.
	// +optional
	Spec MonocleSpec `json:"spec,omitempty"`
	// Status is the state the operator observed, written by the operator only.
	// +optional
	Status MonocleStatus `json:"status,omitempty"`
}

// MonocleSpec is the desired state of a Monocle. Every field is optional: an empty spec
// gives a working Monocle with one empty "demo" workspace. The fields publicURL,
// storageClassName, storageSize, image and route come from the earlier operator (v0.0.2) and
// keep their meaning.
// +kubebuilder:validation:XValidation:rule="!has(self.storageGrowth) || !isQuantity(string(self.storageGrowth.maxSize)) || quantity(string(self.storageGrowth.maxSize)).compareTo(has(self.storageSize) && isQuantity(string(self.storageSize)) ? quantity(string(self.storageSize)) : quantity('1Gi')) > 0",message="storageGrowth.maxSize must be larger than storageSize",fieldPath=".storageGrowth.maxSize"
// +kubebuilder:validation:XValidation:rule="!has(self.restore) || has(self.restore.repository) || has(self.backup)",message="restore needs restore.repository, or backup whose repository holds the snapshot",fieldPath=".restore"
type MonocleSpec struct {
	// PublicURL is the external URL users reach the web UI and API at, given to the API as
	// MONOCLE_PUBLIC_URL (used by the web app and for OIDC redirects). Defaults to the first
	// exposure's host: https://<ingress.host> (http:// when the Ingress has no tls),
	// https://<httpRoute.hostnames[0]>, https://<route.host>; without one, to
	// http://localhost:8090, reached with `kubectl port-forward service/<name>-api 8090:8080`
	// (status.url and the Exposed condition give the command).
	// Must be an absolute http:// or https:// URL without whitespace.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^https?://[^\\s/?#@]+([/?#][^\\s]*)?$') && isURL(self)",message="publicURL must be an absolute http:// or https:// URL without whitespace or credentials, such as https://monocle.example.com"
	PublicURL string `json:"publicURL,omitempty"`

	// Image is the Monocle container image for the API, the crawler and maintenance Jobs.
	// Defaults to quay.io/change-metrics/monocle:1.11.2. api.image and crawler.image
	// override it per component. An image reference has no whitespace.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^\S+$`
	Image string `json:"image,omitempty"`

	// StorageClassName is the StorageClass of the Elasticsearch data volume, a DNS subdomain
	// name. Empty means the cluster's default StorageClass. It cannot be changed after
	// creation (empty and unset count as the same).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	StorageClassName string `json:"storageClassName,omitempty"`

	// StorageSize is the size of the Elasticsearch data volume, a quantity such as "1Gi" or
	// "20Gi", from 1Gi to 64Ti (the largest single volume the major clouds offer: AWS EBS,
	// Google Persistent Disk and Azure Ultra Disk stop at 64 TiB). Defaults to 1Gi. It can
	// grow (when the StorageClass allows volume expansion) but never shrink.
	// +optional
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('1Gi')) >= 0 && quantity(string(self)).compareTo(quantity('64Ti')) <= 0",message="storageSize must be a quantity of at least 1Gi and at most 64Ti, such as 1Gi or 20Gi"
	StorageSize *resource.Quantity `json:"storageSize,omitempty"`

	// StorageGrowth, when set, lets the operator grow the Elasticsearch data volume by itself
	// when Elasticsearch reports it more than DiskPressurePercent full or its indices
	// read-only: one step at a time, each after the last one reached the volume, never beyond
	// maxSize, and only when the volume's StorageClass allows volume expansion. Unset: the
	// volume stays at storageSize. status.storageGrowth reports each step; the volume never
	// shrinks back, even when storageGrowth is removed.
	// +optional
	StorageGrowth *StorageGrowthSpec `json:"storageGrowth,omitempty"`

	// Ingress exposes the web UI and API outside the cluster through a networking.k8s.io/v1
	// Ingress "<name>-api" to the API Service: host, IngressClass, TLS (a Secret, optionally
	// filled by cert-manager) and annotations for the Ingress controller.
	// +optional
	Ingress *IngressSpec `json:"ingress,omitempty"`

	// HTTPRoute exposes the web UI and API through a Gateway API HTTPRoute "<name>-api"
	// (gateway.networking.k8s.io/v1) attached to the Gateways in parentRefs. When the
	// cluster does not serve the Gateway API, the Exposed condition says so and the rest of
	// the Monocle runs.
	// +optional
	HTTPRoute *HTTPRouteSpec `json:"httpRoute,omitempty"`

	// Route exposes the web UI and API through an OpenShift Route "<name>-api-route"
	// (route.openshift.io/v1) with edge TLS, as the earlier operator did: host is the Route's
	// host (empty lets the OpenShift router assign one) and labels go on the Route. When the
	// cluster does not serve Routes, the Exposed condition says so and the rest of the
	// Monocle runs.
	// +optional
	Route *RouteSpec `json:"route,omitempty"`

	// Monitoring asks for a prometheus-operator PodMonitor "<name>" (monitoring.coreos.com/v1)
	// that scrapes the /metrics of the API (port 8080) and of the crawler (port 9001). When
	// the cluster does not serve the PodMonitor API, the Monitored condition says so and the
	// rest of the Monocle runs.
	// +optional
	Monitoring *MonitoringSpec `json:"monitoring,omitempty"`

	// Config is the content of Monocle's config.yaml: workspaces with their crawlers,
	// projects, idents and groups, and the optional about and auth sections. Defaults to one
	// workspace named "demo" with no crawlers. Tokens are never written here: a crawler names
	// the environment variable holding its token (e.g. github_token: GITHUB_TOKEN) and
	// secretRef provides it.
	// +optional
	// +kubebuilder:validation:MaxLength=1048576
	Config string `json:"config,omitempty"`

	// SecretRef names a Secret in the Monocle's namespace whose keys are loaded as
	// environment variables into the API and the crawler: provider tokens (GITHUB_TOKEN,
	// GITLAB_TOKEN, GERRIT_PASSWORD, BUGZILLA_TOKEN or the names config.yaml gives),
	// MONOCLE_ADMIN_TOKEN, MONOCLE_OIDC_<NAME>_CLIENT_SECRET. The operator reads it but never
	// creates, labels or changes it.
	// +optional
	SecretRef *SecretReference `json:"secretRef,omitempty"`

	// Maintenance requests one-off runs of Monocle's maintenance commands (`monocle janitor
	// wipe-crawler-data` and `set-crawler-commit-date`, src/CLI.hs at 1.11.2) against this
	// Monocle's index. Each request runs once, as a Job of the Monocle's image and config,
	// identified by its name: to run one again, give it a new name. While data is wiped the
	// crawler is stopped. status.maintenance reports each request.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Maintenance []MaintenanceRequest `json:"maintenance,omitempty"`

	// API holds the settings of the API and web UI Deployment.
	// +optional
	API APISpec `json:"api,omitempty"`

	// Crawler holds the settings of the crawler Deployment.
	// +optional
	Crawler CrawlerSpec `json:"crawler,omitempty"`

	// Elasticsearch holds the settings of the Elasticsearch StatefulSet. Its volume is set by
	// storageSize and storageClassName.
	// +optional
	Elasticsearch ElasticsearchSpec `json:"elasticsearch,omitempty"`

	// Backup turns on Elasticsearch snapshots of the Monocle's indices into a snapshot
	// repository: on a schedule, and on demand with the annotation BackupAnnotation
	// (monocle.change-metrics.io/backup). status.backup and the BackupReady condition report
	// them. A failed backup never stops the Monocle.
	// +optional
	Backup *BackupSpec `json:"backup,omitempty"`

	// Restore restores the Monocle's indices from a snapshot, once per snapshot name: the
	// API and the crawler are stopped (a new Monocle's never start) until Elasticsearch has
	// restored the snapshot's indices, existing ones being closed first, never merged.
	// status.restore and the Restored condition report it. Changing snapshot restores again.
	// +optional
	Restore *RestoreSpec `json:"restore,omitempty"`

	// Jobs holds the settings of the Jobs the operator runs for the Monocle.
	// +optional
	Jobs JobsSpec `json:"jobs,omitempty"`

	// ImagePullSecrets are the Secrets (kubernetes.io/dockerconfigjson, in the Monocle's
	// namespace) every pod of the Monocle pulls its images with: the API, the crawler,
	// Elasticsearch, the proxy sidecar and the Jobs. For a mirrored or private registry.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// Proxy is the HTTP proxy the crawler and the API reach the outside through
	// (https_proxy, http_proxy, no_proxy). Elasticsearch and the Jobs do not get it. Changing
	// it restarts the crawler and the API pods.
	// +optional
	Proxy *OutboundProxy `json:"proxy,omitempty"`

	// TrustedCA names a ConfigMap key holding PEM certificates (a bundle such as
	// trust-manager writes) that the crawler and the API trust instead of the image's own:
	// it is mounted read-only at /etc/pki/tls/certs/ca-bundle.crt, the file Monocle loads
	// its CAs from, and SSL_CERT_FILE names it. For code hosts and OIDC
	// providers whose certificates a private CA signs; the bundle must also hold the public
	// CAs the pods need (trust-manager's useDefaultCAs). A change of the ConfigMap's key
	// restarts the crawler and the API.
	// +optional
	TrustedCA *ConfigMapKeyReference `json:"trustedCA,omitempty"`

	// Hibernate, when true, stops the Monocle: the crawler, then the API, then the bundled
	// Elasticsearch, each once the previous one has no pod left (Elasticsearch also once no
	// Job and no snapshot runs). Volumes, generated keys,
	// config and Secrets are kept; status.hibernation and the Ready condition (False,
	// Hibernated) report it. Set back to false (or removed), the Monocle wakes in the reverse
	// order. Not acted on while a restore or an upgrade is in progress.
	// +optional
	Hibernate bool `json:"hibernate,omitempty"`
}

// SecretReference names a Secret in the Monocle's own namespace.
type SecretReference struct {
	// Name is the Secret's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// APISpec is the API and web UI component: `monocle api`, listening on port 8080.
type APISpec struct {
	// Image overrides spec.image for the API.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^\S+$`
	Image string `json:"image,omitempty"`
	// Replicas is the number of API pods. Defaults to 1; 0 stops the API.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	Replicas *int32 `json:"replicas,omitempty"`
	// Title is the web UI title (MONOCLE_WEBAPP_TITLE). Defaults to Monocle's own, "Monocle".
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Title string `json:"title,omitempty"`
	// Resources are the API container's requests and limits. Defaults to requests of 100m
	// CPU and 256Mi memory and a 1Gi memory limit.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// PodPlacement places the API's pods.
	PodPlacement `json:",inline"`
}

// CrawlerSpec is the crawler component: `monocle crawler`, always a single replica because
// two crawlers at once are not known to be safe.
type CrawlerSpec struct {
	// Image overrides spec.image for the crawler.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^\S+$`
	Image string `json:"image,omitempty"`
	// Resources are the crawler container's requests and limits. Defaults to requests of
	// 50m CPU and 128Mi memory and a 512Mi memory limit.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// StuckAfter is how long a running crawler may go without progress (a crawler of
	// status.crawlers whose crawledUntil does not move) before the operator restarts the
	// crawler pod: a Monocle 1.11.2 crawler can hang on one request for hours
	// (change-metrics/monocle#1154) while its /health answers 200. A duration such as 6h;
	// defaults to 6h; 0s turns the restarts off. After a restart the operator waits as long
	// again for progress.
	// +optional
	StuckAfter *metav1.Duration `json:"stuckAfter,omitempty"`
	// MaxRestarts is how many restarts in a row, without progress in between, the operator
	// makes before it stops and reports the crawler stuck (CrawlersProgressing=False,
	// CrawlerStuck): a crawler that fails on an entity is not helped by restarts. Defaults to
	// 3.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
	// TLS are the crawler's TLS settings towards its code hosts (TLS_NO_VERIFY,
	// TLS_CIPHERS). Changing them restarts the crawler only.
	// +optional
	TLS *CrawlerTLS `json:"tls,omitempty"`
	// PodPlacement places the crawler's pod.
	PodPlacement `json:",inline"`
}

// ElasticsearchSpec is the Elasticsearch database: by default one single-node StatefulSet
// with a volume (the bundled Elasticsearch); with elasticsearchRef or external, a cluster the
// operator does not run, and then no StatefulSet, volume or Service of its own (image,
// javaOpts, resources and exporter shape the bundled node only).
// +kubebuilder:validation:XValidation:rule="!(has(self.elasticsearchRef) && has(self.external))",message="set at most one of elasticsearchRef and external"
// +kubebuilder:validation:XValidation:rule="!(has(self.elasticsearchRef) || has(self.external)) || !(has(self.image) || has(self.javaOpts) || has(self.resources) || has(self.initResources) || has(self.exporter))",message="image, javaOpts, resources, initResources and exporter shape the bundled Elasticsearch: leave them unset with elasticsearchRef or external"
// +kubebuilder:validation:XValidation:rule="!(has(self.elasticsearchRef) || has(self.external)) || !(has(self.nodeSelector) || has(self.tolerations) || has(self.affinity) || has(self.topologySpreadConstraints) || has(self.priorityClassName) || has(self.podLabels) || has(self.podAnnotations))",message="nodeSelector, tolerations, affinity, topologySpreadConstraints, priorityClassName, podLabels and podAnnotations place the bundled Elasticsearch's pod: leave them unset with elasticsearchRef or external"
type ElasticsearchSpec struct {
	// ElasticsearchRef names an ECK-managed Elasticsearch (elasticsearch.k8s.elastic.co/v1)
	// the Monocle uses instead of the bundled one. It cannot be set, unset or changed after
	// creation: the data would not follow (back up, then restore into a new Monocle).
	// +optional
	ElasticsearchRef *ElasticsearchReference `json:"elasticsearchRef,omitempty"`
	// External is an Elasticsearch 7.17 cluster by URL the Monocle uses instead of the
	// bundled one. It cannot be set or unset after creation.
	// +optional
	External *ExternalElasticsearch `json:"external,omitempty"`
	// Proxy is the sidecar through which the Monocle's pods reach its Elasticsearch: the
	// bundled node, as the user "monocle", or a cluster of elasticsearchRef or external that
	// needs credentials or TLS.
	// +optional
	Proxy *ElasticsearchProxy `json:"proxy,omitempty"`
	// IndexReplicas is the number_of_replicas the operator keeps on Monocle's indices
	// (Monocle creates them with 0), new workspaces' included. It must be below the cluster's
	// data nodes; the bundled Elasticsearch has one. Unset: the operator leaves replicas as
	// they are.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	IndexReplicas *int32 `json:"indexReplicas,omitempty"`

	// Image is the Elasticsearch image. Defaults to
	// docker.elastic.co/elasticsearch/elasticsearch:7.17.26. Monocle does not support
	// Elasticsearch 8; stay on 7.17.x.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^\S+$`
	Image string `json:"image,omitempty"`
	// JavaOpts is ES_JAVA_OPTS, the JVM options, mostly the heap. Defaults to a heap of half
	// the memory limit ("-Xms512m -Xmx512m" for the default 1Gi limit). An -Xmx heap above
	// 75% of the memory limit is refused (the SpecAccepted condition): the JVM needs memory
	// beyond its heap, and the pod would be OOM-killed.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	JavaOpts string `json:"javaOpts,omitempty"`
	// Resources are the Elasticsearch container's requests and limits. Defaults to requests
	// of 100m CPU and 1Gi memory and a 1Gi memory limit.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// InitResources are the requests and limits of the Elasticsearch pod's init containers,
	// which copy its configuration and write its keystore one after the other. Defaults to
	// requests of 10m CPU and 128Mi memory and a 256Mi memory limit (the keystore tool is a
	// JVM).
	// +optional
	InitResources *corev1.ResourceRequirements `json:"initResources,omitempty"`
	// Exporter, when set, runs the Prometheus community's Elasticsearch exporter in the
	// Elasticsearch pod, beside Elasticsearch: it serves Elasticsearch's own metrics on port
	// 9114 (named "exporter"), which spec.monitoring's PodMonitor then scrapes and the
	// NetworkPolicy admits. Off by default; setting or unsetting it restarts the Elasticsearch
	// pod once.
	// +optional
	Exporter *ElasticsearchExporter `json:"exporter,omitempty"`
	// PodPlacement places the bundled Elasticsearch's pod. A change restarts it.
	PodPlacement `json:",inline"`
}

// ElasticsearchExporter is the Elasticsearch exporter sidecar
// (github.com/prometheus-community/elasticsearch_exporter).
type ElasticsearchExporter struct {
	// Image is the exporter image. Defaults to
	// quay.io/prometheuscommunity/elasticsearch-exporter:v1.9.0.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^\S+$`
	Image string `json:"image,omitempty"`
	// Resources are the exporter container's requests and limits. Defaults to requests of
	// 10m CPU and 32Mi memory and a 128Mi memory limit.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// MonocleList is a list of Monocles.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type MonocleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Monocles.
	Items []Monocle `json:"items"`
}
