package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

	// Rollout reports the last roll of the workloads to the operator's templates and where
	// the Monocle stands in the fleet rollout (docs/fleet-rollouts.md).
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`
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
