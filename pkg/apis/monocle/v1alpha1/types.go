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
	// Elasticsearch, each once the previous one has no pod left. Volumes, generated keys,
	// config and Secrets are kept; status.hibernation and the Ready condition (False,
	// Hibernated) report it. Set back to false (or removed), the Monocle wakes in the reverse
	// order. Not acted on while a restore or an upgrade is in progress.
	// +optional
	Hibernate bool `json:"hibernate,omitempty"`
}

// BackupSpec is where and when a Monocle's indices are snapshotted.
type BackupSpec struct {
	// Repository is the snapshot repository. Defaults to a volume of its own.
	// +optional
	Repository BackupRepository `json:"repository,omitempty"`
	// Schedule is a cron expression in the five-field syntax of Kubernetes CronJobs
	// (minute hour day-of-month month day-of-week, or a macro such as @daily), in UTC, such
	// as "0 3 * * *". Empty means on-demand snapshots only. A schedule the operator cannot
	// parse is reported by the BackupReady condition.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule,omitempty"`
	// Keep is how many of the scheduled snapshots are kept, the newest successful ones; older
	// ones are deleted from the repository. On-demand snapshots are never deleted by the
	// operator. Defaults to 7.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Keep *int32 `json:"keep,omitempty"`
}

// BackupRepository is an Elasticsearch 7.17 snapshot repository: a volume mounted in the
// Elasticsearch pod (a shared-filesystem "fs" repository under path.repo), or an
// S3-compatible bucket. At most one of volume and s3 is set; neither means a volume.
// +kubebuilder:validation:XValidation:rule="[has(self.volume), has(self.s3), has(self.existing)].filter(x, x).size() <= 1",message="set at most one of volume, s3 and existing"
type BackupRepository struct {
	// Existing names a snapshot repository already registered in the cluster, such as one
	// the administrators of a cluster of elasticsearchRef or external keep: the operator
	// snapshots into it and lists and deletes its own snapshots there, but never registers,
	// changes or removes it.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-z0-9][-a-z0-9._]*$`
	Existing string `json:"existing,omitempty"`

	// Volume is a PersistentVolumeClaim mounted at /usr/share/elasticsearch/backup in the
	// Elasticsearch pod.
	// +optional
	Volume *BackupVolume `json:"volume,omitempty"`
	// S3 is a bucket of Amazon S3 or of an S3-compatible store (MinIO, Ceph). Elasticsearch
	// 7.17 needs the repository-s3 plugin in its image (spec.elasticsearch.image): it is
	// bundled only from 8.0.
	// +optional
	S3 *S3Repository `json:"s3,omitempty"`
}

// BackupVolume is the PersistentVolumeClaim of a volume repository.
type BackupVolume struct {
	// ClaimName is the PersistentVolumeClaim. Defaults to "<name>-backup", which the operator
	// creates without an owner reference (deleting the Monocle keeps the snapshots, as it
	// keeps the data volume). An existing claim is used as it is: give a new Monocle the
	// claim of a deleted one to restore its snapshots.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ClaimName string `json:"claimName,omitempty"`
	// StorageSize is the size of a claim the operator creates, from 1Gi to 64Ti. Defaults
	// to the data volume's (spec.storageSize). It can grow (when the StorageClass allows
	// volume expansion) but never shrink.
	// +optional
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('1Gi')) >= 0 && quantity(string(self)).compareTo(quantity('64Ti')) <= 0",message="storageSize must be a quantity of at least 1Gi and at most 64Ti, such as 1Gi or 20Gi"
	StorageSize *resource.Quantity `json:"storageSize,omitempty"`
	// StorageClassName is the StorageClass of a claim the operator creates. Empty means the
	// cluster's default.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	StorageClassName string `json:"storageClassName,omitempty"`
}

// S3Repository is an S3 snapshot repository (Elasticsearch 7.17 repository-s3 plugin).
type S3Repository struct {
	// Bucket is the bucket's name.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][-a-z0-9.]*[a-z0-9]$`
	Bucket string `json:"bucket"`
	// BasePath is the key prefix of the repository in the bucket. Defaults to
	// "<namespace>/<name>", so that Monocles can share a bucket.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^\s,#*?"<>|\\]*$`
	BasePath string `json:"basePath,omitempty"`
	// Endpoint is the host (and port) of an S3-compatible store, such as
	// minio.storage.svc:9000. Defaults to Amazon S3's.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[^\s/]+$`
	Endpoint string `json:"endpoint,omitempty"`
	// Protocol is http or https (the default).
	// +optional
	// +kubebuilder:validation:Enum=http;https
	Protocol string `json:"protocol,omitempty"`
	// PathStyleAccess addresses the bucket in the path rather than the host name, as most
	// S3-compatible stores need.
	// +optional
	PathStyleAccess bool `json:"pathStyleAccess,omitempty"`
	// SecretRef names a Secret of the Monocle's namespace with the keys access_key and
	// secret_key (and optionally session_token): the operator's init container writes them
	// into the Elasticsearch keystore as s3.client.default.access_key and so on, where
	// Elasticsearch 7.17 reads them. The operator reads the Secret but never changes it.
	SecretRef SecretReference `json:"secretRef"`
}

// RestoreSpec names the snapshot a Monocle restores.
// +kubebuilder:validation:XValidation:rule="!has(self.repository) || has(self.repository.s3) || (has(self.repository.volume) && has(self.repository.volume.claimName))",message="restore.repository names an s3 bucket, or a volume by its claimName"
type RestoreSpec struct {
	// Snapshot is the snapshot's name, as status.backup or GET _snapshot/<repo>/_all lists
	// it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-z0-9][-a-z0-9._]*$`
	Snapshot string `json:"snapshot"`
	// Repository is where the snapshot is, when it is not this Monocle's own
	// spec.backup.repository: another Monocle's bucket, or the claim of a deleted Monocle.
	// It is registered read-only, as "restore-source".
	// +optional
	Repository *BackupRepository `json:"repository,omitempty"`
}

// RouteSpec is an OpenShift Route, with the fields of the earlier operator's: the host it
// exposes the API at and labels put on the Route.
type RouteSpec struct {
	// Host is the DNS name the Monocle web UI is reached at, in lowercase. Empty lets the
	// OpenShift router assign a host, which status.url then shows.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Host string `json:"host,omitempty"`
	// Labels are put on the Route, for example to pick the router shard that admits it.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Labels map[string]string `json:"labels,omitempty"`
}

// MaintenanceRequest is one run of a `monocle janitor` command on one crawler of a workspace.
// +kubebuilder:validation:XValidation:rule="self.operation == 'SetCrawlerCommitDate' ? has(self.commitDate) : !has(self.commitDate)",message="commitDate is required by SetCrawlerCommitDate and allowed only there"
type MaintenanceRequest struct {
	// Name identifies the request, a DNS label of at most 20 characters; the Job is
	// "<monocle>-maintenance-<name>".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Operation is WipeCrawlerData (delete the changes, task data and events the crawler
	// indexed, with the crawler stopped meanwhile: it crawls them again from its update_since)
	// or SetCrawlerCommitDate (move the date the crawler resumes from to commitDate, for
	// example to crawl again from an earlier date).
	// +kubebuilder:validation:Enum=WipeCrawlerData;SetCrawlerCommitDate
	Operation MaintenanceOperation `json:"operation"`
	// Workspace names a workspace of config.yaml.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Workspace string `json:"workspace"`
	// Crawler names a crawler of that workspace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Crawler string `json:"crawler"`
	// CommitDate is SetCrawlerCommitDate's new date, in a form of update_since: YYYY-MM-DD,
	// "YYYY-MM-DD hh:mm:ss UTC" or YYYY-MM-DDThh:mm:ssZ.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	CommitDate string `json:"commitDate,omitempty"`
}

// MaintenanceOperation is a maintenance command of Monocle's janitor.
type MaintenanceOperation string

// The maintenance operations.
const (
	// WipeCrawlerData runs `monocle janitor wipe-crawler-data`.
	WipeCrawlerData MaintenanceOperation = "WipeCrawlerData"
	// SetCrawlerCommitDate runs `monocle janitor set-crawler-commit-date`.
	SetCrawlerCommitDate MaintenanceOperation = "SetCrawlerCommitDate"
)

// IngressSpec is the Ingress that exposes the API Service's port 8080 at host, path "/".
type IngressSpec struct {
	// Host is the DNS name the web UI is reached at, in lowercase, without a wildcard.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Host string `json:"host"`
	// ClassName is the IngressClass that serves the Ingress (spec.ingressClassName). Empty
	// means the cluster's default IngressClass.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ClassName string `json:"className,omitempty"`
	// TLS serves the host over HTTPS with the certificate of a kubernetes.io/tls Secret. Unset
	// means plain HTTP (and a default publicURL of http://<host>).
	// +optional
	TLS *IngressTLS `json:"tls,omitempty"`
	// Annotations are put on the Ingress, for the Ingress controller (such as
	// nginx.ingress.kubernetes.io/proxy-body-size). Annotations removed here are not removed
	// from the Ingress: delete them there too.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Annotations map[string]string `json:"annotations,omitempty"`
}

// IngressTLS is the certificate of an Ingress host.
type IngressTLS struct {
	// SecretName names the kubernetes.io/tls Secret holding the certificate and key, in the
	// Monocle's namespace. Defaults to "<name>-api-tls". The operator never writes it: the
	// user, or cert-manager when issuerRef is set, fills it.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SecretName string `json:"secretName,omitempty"`
	// IssuerRef names a cert-manager Issuer or ClusterIssuer: the Ingress then carries
	// cert-manager's annotation (cert-manager.io/issuer or cert-manager.io/cluster-issuer),
	// and cert-manager's ingress-shim issues the certificate into secretName.
	// +optional
	IssuerRef *IssuerReference `json:"issuerRef,omitempty"`
}

// IssuerReference names a cert-manager issuer (cert-manager.io/v1).
type IssuerReference struct {
	// Name is the Issuer's or ClusterIssuer's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Kind is Issuer (in the Monocle's namespace) or ClusterIssuer. Defaults to ClusterIssuer.
	// +optional
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	Kind string `json:"kind,omitempty"`
}

// MonitoringSpec is the PodMonitor of a Monocle's API and crawler.
type MonitoringSpec struct {
	// Labels go on the PodMonitor, next to the operator's own: the ones the
	// podMonitorSelector of your Prometheus asks for (often release: <its Helm release>).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Interval is the scrape interval, a Prometheus duration such as 30s or 1m. Defaults to
	// the Prometheus's own.
	// +optional
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`
	Interval string `json:"interval,omitempty"`
}

// HTTPRouteSpec is the Gateway API HTTPRoute that sends the hostnames' traffic, path "/", to
// the API Service's port 8080.
type HTTPRouteSpec struct {
	// ParentRefs are the Gateways (or listeners of them, by sectionName) the route attaches
	// to. A Gateway in another namespace must allow routes from this one.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	ParentRefs []ParentReference `json:"parentRefs"`
	// Hostnames are the host names the route answers, in lowercase; a leading "*." matches
	// one label. Empty means the Gateway listener's. The first one without a wildcard gives
	// the default publicURL (https://<hostname>: set publicURL when the listener serves
	// plain HTTP).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Hostnames []string `json:"hostnames,omitempty"`
}

// ParentReference names a Gateway (gateway.networking.k8s.io/v1) an HTTPRoute attaches to.
type ParentReference struct {
	// Name is the Gateway's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace is the Gateway's namespace. Defaults to the Monocle's.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// SectionName is the name of one listener of the Gateway. Empty means every listener
	// that admits the route.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SectionName string `json:"sectionName,omitempty"`
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
// +kubebuilder:validation:XValidation:rule="!(has(self.elasticsearchRef) || has(self.external)) || !(has(self.image) || has(self.javaOpts) || has(self.resources) || has(self.exporter))",message="image, javaOpts, resources and exporter shape the bundled Elasticsearch: leave them unset with elasticsearchRef or external"
// +kubebuilder:validation:XValidation:rule="!(has(self.elasticsearchRef) || has(self.external)) || !(has(self.nodeSelector) || has(self.tolerations) || has(self.affinity) || has(self.topologySpreadConstraints) || has(self.priorityClassName) || has(self.podLabels) || has(self.podAnnotations))",message="nodeSelector, tolerations, affinity, topologySpreadConstraints, priorityClassName, podLabels and podAnnotations place the bundled Elasticsearch's pod: leave them unset with elasticsearchRef or external"
// +kubebuilder:validation:XValidation:rule="has(self.elasticsearchRef) || has(self.external) || !has(self.proxy)",message="proxy is for a cluster of elasticsearchRef or external"
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
	// Proxy is the sidecar through which the Monocle's pods reach a cluster of
	// elasticsearchRef or external that needs credentials or TLS.
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
}

// MonocleStatus is the state of a Monocle as the operator last observed it.
type MonocleStatus struct {
	// ObservedGeneration is the metadata.generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are the latest observations: Ready (every component is available),
	// Progressing (a rollout is under way), Degraded (the operator cannot converge).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Version is the Monocle version the API runs: the tag of its image.
	// +optional
	Version string `json:"version,omitempty"`
	// URL is the public URL of the web UI: the one given to the API, or, for a Route whose
	// host the OpenShift router assigned, https://<assigned host>.
	// +optional
	URL string `json:"url,omitempty"`
	// ConfigHash is the hash of the config.yaml the pods run with: the last valid config.
	// +optional
	ConfigHash string `json:"configHash,omitempty"`
	// ConfigSource says where the config.yaml in force comes from: Spec (spec.config) or
	// ConfigMap (spec.config is unset, so the ConfigMap "<name>-api" belongs to the user, as
	// with the earlier operator).
	// +optional
	ConfigSource ConfigSource `json:"configSource,omitempty"`
	// UpdateIdents is the last `monocle janitor update-idents` Job, run after a config change.
	// +optional
	UpdateIdents *MaintenanceJobStatus `json:"updateIdents,omitempty"`
	// Maintenance reports each request of spec.maintenance, by request name, in spec order,
	// then the requests the operator made itself (automatic).
	// +optional
	Maintenance []MaintenanceJobStatus `json:"maintenance,omitempty"`
	// Crawlers are the crawlers of the config in force, with the update_since each was last
	// started with: when one moves earlier, the operator runs set-crawler-commit-date for it
	// (Monocle's crawler otherwise resumes from its stored position and ignores it).
	// +optional
	Crawlers []CrawlerStatus `json:"crawlers,omitempty"`
	// API is the state of the API Deployment.
	// +optional
	API ComponentStatus `json:"api,omitempty"`
	// Crawler is the state of the crawler Deployment.
	// +optional
	Crawler ComponentStatus `json:"crawler,omitempty"`
	// Elasticsearch is the state of the Elasticsearch StatefulSet.
	// +optional
	Elasticsearch ComponentStatus `json:"elasticsearch,omitempty"`
	// ElasticsearchCluster is the Elasticsearch cluster the Monocle uses: the bundled one, an
	// ECK Elasticsearch or one by URL, with what the operator last found of it.
	// +optional
	ElasticsearchCluster *ElasticsearchClusterStatus `json:"elasticsearchCluster,omitempty"`
	// ElasticsearchHealth is what Elasticsearch last reported of itself to the operator,
	// which reads it in the background while Elasticsearch has a ready pod; unset until a
	// first read succeeds. The ElasticsearchHealthy and DiskPressure conditions tell the
	// same, and why a read failed.
	// +optional
	ElasticsearchHealth *ElasticsearchHealth `json:"elasticsearchHealth,omitempty"`
	// Backup reports the snapshots of spec.backup; unset without spec.backup.
	// +optional
	Backup *BackupStatus `json:"backup,omitempty"`
	// Restore reports the restore of spec.restore.
	// +optional
	Restore *RestoreStatus `json:"restore,omitempty"`
	// UnusedIndices are the indices of workspaces config.yaml no longer has: Monocle leaves
	// them in Elasticsearch (monocle-facts). The operator never deletes one by itself; the
	// annotation DeleteIndexAnnotation asks for it.
	// +optional
	// +listType=atomic
	UnusedIndices []UnusedIndex `json:"unusedIndices,omitempty"`
	// IndexDeletion reports the last deletion DeleteIndexAnnotation asked for.
	// +optional
	IndexDeletion *IndexDeletion `json:"indexDeletion,omitempty"`
	// CrawlerRestarts reports the restarts of the crawler pod for want of progress.
	// +optional
	CrawlerRestarts *CrawlerRestarts `json:"crawlerRestarts,omitempty"`
	// StorageGrowth reports the growth of the Elasticsearch volume spec.storageGrowth asked
	// for; its size is the least the operator keeps the volume at.
	// +optional
	StorageGrowth *StorageGrowthStatus `json:"storageGrowth,omitempty"`
	// APIRestart reports the last restart of the API pods the operator made: after the
	// flood-stage read-only block was lifted from the indices, an API that was not ready (one
	// that crash-looped on its index settings update at start) is restarted once.
	// +optional
	APIRestart *APIRestart `json:"apiRestart,omitempty"`
	// Upgrade reports the last Monocle version upgrade: a change of the API's image, which
	// the operator carries out in phases so that one API version runs at a time.
	// +optional
	Upgrade *UpgradeStatus `json:"upgrade,omitempty"`

	// Hibernation reports a hibernation (spec.hibernate) and the waking after it.
	// +optional
	Hibernation *HibernationStatus `json:"hibernation,omitempty"`
}

// UpgradeStatus is a Monocle version upgrade: a change of the API's image.
type UpgradeStatus struct {
	// From is the API image that ran before.
	From string `json:"from"`
	// To is the API image upgraded to.
	To string `json:"to"`
	// Phase is BackingUp (with spec.backup: the snapshot named in snapshot is taken first),
	// Blocked (that snapshot failed; the message says how to go on), StoppingCrawler,
	// ReplacingAPI (the old API pods are gone before the new one starts and migrates the
	// index), StartingCrawler (the new API is ready; the new crawler starts) or Succeeded.
	Phase UpgradePhase `json:"phase"`
	// Snapshot is the snapshot taken before the upgrade, pre-upgrade-<8 hex of to>.
	// +optional
	Snapshot string `json:"snapshot,omitempty"`
	// StartTime is when the upgrade started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when it succeeded.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Message explains a blocked upgrade.
	// +optional
	Message string `json:"message,omitempty"`
}

// UpgradePhase is the phase of an upgrade.
// +kubebuilder:validation:Enum=BackingUp;Blocked;StoppingCrawler;ReplacingAPI;StartingCrawler;Succeeded
type UpgradePhase string

// Phases of an upgrade, in order (Blocked stops BackingUp).
const (
	UpgradeBackingUp       UpgradePhase = "BackingUp"
	UpgradeBlocked         UpgradePhase = "Blocked"
	UpgradeStoppingCrawler UpgradePhase = "StoppingCrawler"
	UpgradeReplacingAPI    UpgradePhase = "ReplacingAPI"
	UpgradeStartingCrawler UpgradePhase = "StartingCrawler"
	UpgradeSucceeded       UpgradePhase = "Succeeded"
)

// UpgradeWithoutBackupAnnotation on a Monocle whose upgrade is Blocked by a failed
// pre-upgrade snapshot, set to "true", lets the upgrade go on without it.
const UpgradeWithoutBackupAnnotation = "monocle.change-metrics.io/upgrade-without-backup"

// BackupStatus is what the operator knows of a Monocle's snapshots.
type BackupStatus struct {
	// Repository describes the snapshot repository in force: "volume <claim>" or
	// "s3 <bucket>/<basePath>".
	// +optional
	Repository string `json:"repository,omitempty"`
	// LastSuccessful is the newest snapshot that succeeded.
	// +optional
	LastSuccessful *SnapshotStatus `json:"lastSuccessful,omitempty"`
	// LastFailure is the newest failure: a snapshot that failed, or a request that did not
	// reach Elasticsearch (its reason says why). Cleared when a later snapshot succeeds.
	// +optional
	LastFailure *SnapshotStatus `json:"lastFailure,omitempty"`
	// Running is the snapshot under way, if any.
	// +optional
	Running string `json:"running,omitempty"`
	// Snapshots is the number of snapshots in the repository.
	// +optional
	Snapshots int32 `json:"snapshots,omitempty"`
	// Schedule is the spec.backup.schedule that nextScheduled was computed from.
	// +optional
	Schedule string `json:"schedule,omitempty"`
	// NextScheduled is when the schedule takes its next snapshot.
	// +optional
	NextScheduled *metav1.Time `json:"nextScheduled,omitempty"`
	// LastRequest is the last value of the annotation BackupAnnotation whose snapshot was
	// started.
	// +optional
	LastRequest string `json:"lastRequest,omitempty"`
}

// SnapshotStatus is one snapshot, or one failure to take one.
type SnapshotStatus struct {
	// Name is the snapshot's name: scheduled-<yyyymmdd-hhmm> (the schedule's slot, UTC) or
	// manual-<8 hex of the annotation's value>.
	Name string `json:"name"`
	// Time is when it ended (or when the failure was seen).
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
	// Size is the size of the files the snapshot references in the repository, shared ones
	// included (Elasticsearch's snapshot status API).
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// Reason says why it failed.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// RestoreStatus is the state of the restore of spec.restore.
type RestoreStatus struct {
	// Snapshot is the snapshot restored.
	Snapshot string `json:"snapshot"`
	// Phase is Pending (the API and the crawler are stopping, or Elasticsearch is not ready:
	// the operator then closes the indices the snapshot holds), Restoring (the restore was
	// or is being started, and Elasticsearch recovers the indices), Succeeded or Failed.
	Phase RestorePhase `json:"phase"`
	// Indices are the indices the snapshot holds, restored.
	// +optional
	Indices []string `json:"indices,omitempty"`
	// StartTime is when the restore was asked for.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when it succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Message explains a failure.
	// +optional
	Message string `json:"message,omitempty"`
}

// RestorePhase is the phase of a restore.
// +kubebuilder:validation:Enum=Pending;Restoring;Succeeded;Failed
type RestorePhase string

// Phases of a restore.
const (
	RestorePending   RestorePhase = "Pending"
	RestoreRestoring RestorePhase = "Restoring"
	RestoreSucceeded RestorePhase = "Succeeded"
	RestoreFailed    RestorePhase = "Failed"
)

// BackupAnnotation on a Monocle with spec.backup asks for an on-demand snapshot: each new
// value (any string, such as the date) takes one, named manual-<8 hex of the value's
// SHA-256>; status.backup.lastRequest shows the last value served.
//
//	kubectl annotate monocle <name> monocle.change-metrics.io/backup="$(date +%s)" --overwrite
const BackupAnnotation = "monocle.change-metrics.io/backup"

// ElasticsearchHealth is the health and disk use of a Monocle's Elasticsearch as Elasticsearch
// reports them (Elasticsearch 7.17: GET _cluster/health, GET _cat/allocation).
type ElasticsearchHealth struct {
	// Status is the cluster health: green (every shard assigned), yellow (a replica shard is
	// unassigned, as on any single node whose indices ask for replicas; every document can be
	// read and written) or red (a primary shard is unassigned: some indices cannot be read or
	// written).
	// +optional
	Status string `json:"status,omitempty"`
	// DiskUsedPercent is the share of Elasticsearch's data volume in use, 0 to 100, on its
	// fullest node.
	// +optional
	DiskUsedPercent *int32 `json:"diskUsedPercent,omitempty"`
	// DiskSize is the size of the data volume as Elasticsearch sees it, in MiB.
	// +optional
	DiskSize *resource.Quantity `json:"diskSize,omitempty"`
	// IndicesSize is the disk space the indices take, in MiB (rounded up).
	// +optional
	IndicesSize *resource.Quantity `json:"indicesSize,omitempty"`
	// ReadOnlyIndices are the indices Elasticsearch made read-only at its flood-stage
	// watermark (index.blocks.read_only_allow_delete), hidden ones included, read when the
	// disk is past any of its disk watermarks in force (more than DiskPressurePercent full
	// when they cannot be read): Monocle drops what it crawls into them.
	// +optional
	// +listType=atomic
	ReadOnlyIndices []string `json:"readOnlyIndices,omitempty"`
}

// ComponentStatus is the observed state of one component's workload.
type ComponentStatus struct {
	// Image is the image the component's pod template runs.
	// +optional
	Image string `json:"image,omitempty"`
	// Replicas is the number of pods the spec asks for.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the number of pods that are ready and run the current pod template.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Ready is true when every desired pod is ready and up to date.
	// +optional
	Ready bool `json:"ready,omitempty"`
}

// MaintenanceJobStatus is the state of a maintenance Job the operator ran.
type MaintenanceJobStatus struct {
	// Request is the name of the spec.maintenance request the Job runs; empty for
	// update-idents.
	// +optional
	Request string `json:"request,omitempty"`
	// Automatic is the request the operator made itself, when a crawler's update_since moved
	// earlier; unset for spec.maintenance's requests and update-idents.
	// +optional
	Automatic *MaintenanceRequest `json:"automatic,omitempty"`
	// Name is the Job's name.
	// +optional
	Name string `json:"name,omitempty"`
	// ConfigHash is the hash of the config.yaml the Job ran with.
	// +optional
	ConfigHash string `json:"configHash,omitempty"`
	// Phase is Pending (waiting for another Job of this Monocle to finish), Running,
	// Succeeded or Failed.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// StartTime is when the Job started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the Job succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Message explains a failure.
	// +optional
	Message string `json:"message,omitempty"`
}

// CrawlerStatus is one crawler of the config in force.
type CrawlerStatus struct {
	// Workspace is the crawler's workspace.
	Workspace string `json:"workspace"`
	// Name is the crawler's name.
	Name string `json:"name"`
	// UpdateSince is the update_since the crawler was last started with.
	// +optional
	UpdateSince string `json:"updateSince,omitempty"`
	// CrawledUntil is how far the crawler has indexed: the oldest of the dates up to which
	// Monocle has crawled each entity its config in force names (last_commit_at of its
	// crawler metadata in the workspace's index, Monocle 1.11.2; documents of entities the
	// config no longer names are left out), read from Elasticsearch with its health. The
	// crawler moves an entity's date to the start of its pass once the pass has indexed it:
	// a date that stops moving means a hung or failing crawler. Unset before its first read.
	// +optional
	CrawledUntil *metav1.Time `json:"crawledUntil,omitempty"`
	// Entities is the number of entities (projects, organizations, task data, users) the
	// crawler's config in force names that have crawler metadata.
	// +optional
	Entities int32 `json:"entities,omitempty"`
	// LastProgressTime is when the operator last saw crawledUntil move, or the crawler
	// (re)start from which it waits for progress.
	// +optional
	LastProgressTime *metav1.Time `json:"lastProgressTime,omitempty"`
	// Errors sums up the errors the crawler stored in the workspace's index (Monocle 1.11
	// and later, /api/2/crawler/errors), read from Elasticsearch with its health; unset when
	// it has none.
	// +optional
	Errors *CrawlerErrorsStatus `json:"errors,omitempty"`
}

// CrawlerErrorsStatus is a bounded summary of a crawler's errors.
type CrawlerErrorsStatus struct {
	// LastDay counts the errors of the last 24 hours; Total all of them in the index.
	LastDay int32 `json:"lastDay"`
	// Total counts every error of the crawler in the index.
	Total int32 `json:"total"`
	// LastTime is when the newest error happened.
	// +optional
	LastTime *metav1.Time `json:"lastTime,omitempty"`
	// LastEntity is what the crawler was crawling then, "<type> <name>" (project x/y).
	// +optional
	LastEntity string `json:"lastEntity,omitempty"`
	// LastMessage is the newest error's message, cut to 256 bytes.
	// +optional
	LastMessage string `json:"lastMessage,omitempty"`
}

// UnusedIndex is the index of a workspace that config.yaml no longer has.
type UnusedIndex struct {
	// Workspace is the removed workspace.
	Workspace string `json:"workspace"`
	// Index is its index, monocle.changes.1.<workspace>.
	Index string `json:"index"`
	// Docs is its document count.
	// +optional
	Docs int64 `json:"docs,omitempty"`
	// Size is the disk space it takes, its replicas included.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
}

// IndexDeletion is a deletion of the index of a removed workspace.
type IndexDeletion struct {
	// Request is the value of DeleteIndexAnnotation served: the workspace.
	Request string `json:"request"`
	// Index is the index deleted.
	// +optional
	Index string `json:"index,omitempty"`
	// Time is when it was deleted, or refused.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
	// Refused says why the operator did not delete it: the workspace is in config.yaml.
	// +optional
	Refused string `json:"refused,omitempty"`
}

// DeleteIndexAnnotation on a Monocle, set to the name of a workspace config.yaml no longer
// has (one of status.unusedIndices), deletes that workspace's index, once: its documents are
// gone for good. A workspace config.yaml has is refused (status.indexDeletion.refused).
//
//	kubectl annotate monocle <name> monocle.change-metrics.io/delete-index=<workspace>
const DeleteIndexAnnotation = "monocle.change-metrics.io/delete-index"

// StorageGrowthSpec bounds the growth of the Elasticsearch data volume.
// +kubebuilder:validation:XValidation:rule="!has(self.step) || (isQuantity(string(self.step)) && quantity(string(self.step)).compareTo(quantity('1Gi')) >= 0)",message="storageGrowth.step must be a quantity of at least 1Gi",fieldPath=".step"
type StorageGrowthSpec struct {
	// MaxSize is the size the operator never grows the volume beyond, from 1Gi to 64Ti.
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('1Gi')) >= 0 && quantity(string(self)).compareTo(quantity('64Ti')) <= 0",message="storageGrowth.maxSize must be a quantity of at least 1Gi and at most 64Ti, such as 50Gi"
	MaxSize resource.Quantity `json:"maxSize"`
	// Step is what each growth adds to the volume, at least 1Gi; the new size is rounded up
	// to whole GiB. Defaults to half the volume's size at the time of the step.
	// +optional
	Step *resource.Quantity `json:"step,omitempty"`
}

// StorageGrowthStatus reports the growth of the Elasticsearch data volume.
type StorageGrowthStatus struct {
	// Size is the size the operator last asked of the volume's PVC.
	Size resource.Quantity `json:"size"`
	// Steps counts the growths of this Monocle's volume.
	Steps int32 `json:"steps"`
	// LastTime is when the last step was asked for.
	// +optional
	LastTime *metav1.Time `json:"lastTime,omitempty"`
	// ExpandedTime is when the PVC was first seen with the capacity of Size; unset while it
	// expands. A next step needs a read of Elasticsearch taken after it.
	// +optional
	ExpandedTime *metav1.Time `json:"expandedTime,omitempty"`
	// Message says why the last step was taken, or why none can be.
	// +optional
	Message string `json:"message,omitempty"`
}

// APIRestart is a restart of the API pods the operator made.
type APIRestart struct {
	// Time is when the restart was asked for; the API's pod template carries it.
	Time metav1.Time `json:"time"`
	// Reason says why.
	Reason string `json:"reason"`
}

// CrawlerRestarts are the restarts of the crawler pod the operator made because crawlers
// made no progress (spec.crawler.stuckAfter).
type CrawlerRestarts struct {
	// Total counts every such restart of this Monocle.
	Total int32 `json:"total"`
	// SinceProgress counts the restarts since a crawler last made progress; at
	// spec.crawler.maxRestarts the operator stops restarting.
	SinceProgress int32 `json:"sinceProgress"`
	// LastTime is when the last restart was asked for; the crawler pod template carries it.
	// +optional
	LastTime *metav1.Time `json:"lastTime,omitempty"`
	// Reason names the crawlers that made no progress.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ConfigSource is where a Monocle's config.yaml comes from.
// +kubebuilder:validation:Enum=Spec;ConfigMap
type ConfigSource string

// Sources of config.yaml.
const (
	// ConfigFromSpec: spec.config is set and written by the operator into the ConfigMap
	// "<name>-api".
	ConfigFromSpec ConfigSource = "Spec"
	// ConfigFromConfigMap: spec.config is unset; the user edits config.yaml in the ConfigMap
	// "<name>-api", which the operator creates with the default config only when it is
	// missing and never overwrites.
	ConfigFromConfigMap ConfigSource = "ConfigMap"
)

// JobPhase is the phase of a maintenance Job.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type JobPhase string

// Phases of a maintenance Job.
const (
	JobPending   JobPhase = "Pending"
	JobRunning   JobPhase = "Running"
	JobSucceeded JobPhase = "Succeeded"
	JobFailed    JobPhase = "Failed"
)

// PausedAnnotation on a Monocle, set to "true", makes the operator leave the Monocle's objects
// alone (for manual maintenance); the Paused condition shows it. Removing it resumes.
const PausedAnnotation = "monocle.change-metrics.io/paused"

// AutoPilotOffAnnotation on a Monocle turns off automatic actions of the operator, named in
// a comma-separated list of the AutoPilot* parts ("upgrade-phases,block-clearing"). Names
// that are no part are ignored and listed in the Paused condition's message.
const AutoPilotOffAnnotation = "monocle.change-metrics.io/auto-pilot-off"

// The parts of the operator's auto-pilot AutoPilotOffAnnotation can turn off.
const (
	// AutoPilotUpgradePhases: a change of the API's image rolls the API and the crawler at
	// once, as a config change does, instead of going through the upgrade phases (no
	// snapshot, old and new API side by side). An upgrade under way finishes.
	AutoPilotUpgradePhases = "upgrade-phases"
	// AutoPilotBlockClearing: a flood-stage read-only block that stays once the disk is under
	// the high watermark is left for Elasticsearch or the admin to lift.
	AutoPilotBlockClearing = "block-clearing"
	// AutoPilotAPIRestart: an API that is not ready once a read-only block is gone is not
	// restarted.
	AutoPilotAPIRestart = "api-restart"
	// AutoPilotElasticsearchFirst: the API Deployment is created and rolled without waiting
	// for a ready Elasticsearch pod.
	AutoPilotElasticsearchFirst = "elasticsearch-first"
)

// Condition types of a Monocle, following the Kubernetes API conventions.
const (
	// ConditionReady is True when Elasticsearch, the API and the crawler all run the desired
	// spec with every pod ready, and the operator met no problem.
	ConditionReady = "Ready"
	// ConditionProgressing is True while a workload rolls out a new spec.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the operator cannot converge the Monocle: a name taken
	// by a foreign object, an invalid config, a missing Secret, a refused change, or API
	// errors. The message says what to fix.
	ConditionDegraded = "Degraded"
	// ConditionConfigValid is False when spec.config is not a config.yaml Monocle accepts;
	// the pods keep running the last valid config.
	ConditionConfigValid = "ConfigValid"
	// ConditionSecretsReady is False when the Secret named by spec.secretRef is missing or
	// lacks a token variable config.yaml names; nothing is rolled until it is fixed.
	ConditionSecretsReady = "SecretsReady"
	// ConditionIdentsUpdated reports the last update-idents Job: True when it succeeded, False
	// while it runs or when it failed.
	ConditionIdentsUpdated = "IdentsUpdated"
	// ConditionStorageReady is False while the Elasticsearch volume is being expanded or when
	// a storage change cannot be applied in place.
	ConditionStorageReady = "StorageReady"
	// ConditionPaused is True while the Monocle carries PausedAnnotation.
	ConditionPaused = "Paused"
	// ConditionSpecAccepted is False when the operator refuses a part of the spec that
	// admission cannot check: an Elasticsearch image of a major version Monocle does not
	// support, or older than the running one (a downgrade Elasticsearch cannot read its data
	// back from), or a javaOpts heap too large for the memory limit. The workload it concerns
	// is left as it is.
	ConditionSpecAccepted = "SpecAccepted"
	// ConditionExposed reports the objects that expose the web UI outside the cluster
	// (ingress, httpRoute, route): True when each one asked for exists, False when the cluster
	// does not serve an API one needs (the message names it; the rest of the Monocle runs),
	// and False with reason NotExposed when none is asked for.
	ConditionExposed = "Exposed"
	// ConditionAdopted is True on a Monocle whose objects were made by the earlier operator
	// (change-metrics/monocle-operator v0.0.2) and adopted by this one; its message lists what
	// was kept and changed. Monocles this operator created never carry it.
	ConditionAdopted = "Adopted"
	// ConditionElasticsearchHealthy reports the cluster health Elasticsearch gives the
	// operator: True when green or yellow, False when red, Unknown while Elasticsearch has no
	// ready pod or cannot be read (the message says why).
	ConditionElasticsearchHealthy = "ElasticsearchHealthy"
	// ConditionDiskPressure is True when Elasticsearch's data volume is more than
	// DiskPressurePercent full: at its flood-stage watermark (95% by default) Elasticsearch
	// makes the indices read-only, and Monocle then drops crawled documents without a word.
	ConditionDiskPressure = "DiskPressure"
	// ConditionMonitored reports the PodMonitor spec.monitoring asks for: True when it
	// exists, False when the cluster does not serve the PodMonitor API (the rest of the
	// Monocle runs), and False with reason NotMonitored when spec.monitoring is unset.
	ConditionMonitored = "Monitored"
	// ConditionAPIHealthy reports the health the Monocle API gives the operator, which asks
	// it (GET /health) through the API Service with each read of Elasticsearch: True when it
	// answers 200, False when it does not (the message gives the error), Unknown while the
	// API has no ready pod.
	ConditionAPIHealthy = "APIHealthy"
	// ConditionCrawlersHealthy is True when no crawler of the config in force stored an
	// error in the last 24 hours, False otherwise (the message names each failing crawler
	// with its newest error; status.crawlers[].errors has the counts).
	ConditionCrawlersHealthy = "CrawlersHealthy"
	// ConditionCrawlersProgressing reports the crawlers' progress (status.crawlers): True when
	// every running crawler with crawler metadata moved within spec.crawler.stuckAfter, False
	// while the operator restarts a stuck crawler pod and when restarts do not help.
	ConditionCrawlersProgressing = "CrawlersProgressing"
	// ConditionOIDCReady, present only when config.yaml has an OIDC auth_provider, is False
	// when the public URL is not HTTPS: Monocle's session cookie is Secure and
	// SameSite=Strict (Monocle 1.11.2, src/Monocle/Api/Server.hs), so logins over plain HTTP
	// fail silently.
	ConditionOIDCReady = "OIDCReady"
	// ConditionUpgraded reports Monocle version upgrades (status.upgrade): True when the API
	// runs the spec's image, False while an upgrade runs (the message gives its phase),
	// when it is blocked, or when the new image is a Monocle downgrade, which is refused.
	ConditionUpgraded = "Upgraded"
	// ConditionBackupReady reports spec.backup: True when the newest snapshot succeeded (or
	// none was due yet), False when the newest attempt failed or the repository cannot be
	// registered (the message says why), and False with reason NotBackedUp when spec.backup
	// is unset.
	ConditionBackupReady = "BackupReady"
	// ConditionRestored reports spec.restore: False while the restore is pending or under
	// way (the API and the crawler are stopped meanwhile) and when it failed, True once it
	// succeeded. Absent without spec.restore.
	ConditionRestored = "Restored"
	// ConditionHibernated reports spec.hibernate (status.hibernation): True once no pod of
	// the Monocle runs, False while it is stopping or waking, or while a restore or an upgrade
	// in progress defers the hibernation. Absent on a Monocle that is awake and not asked to
	// hibernate.
	ConditionHibernated = "Hibernated"
)

// DiskPressurePercent is the share of Elasticsearch's data volume in use above which a
// Monocle's DiskPressure condition is True: Elasticsearch's own high watermark (90% by
// default, Elasticsearch 7.17 "Disk-based shard allocation settings") less a margin in which
// growing the volume still helps.
const DiskPressurePercent = 85

// MonocleList is a list of Monocles.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type MonocleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Monocles.
	Items []Monocle `json:"items"`
}
