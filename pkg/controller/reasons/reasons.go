// Package reasons holds every reason the controller sets on a Monocle condition or records on
// an event, grouped by the condition or event it belongs to; the condition types are API, in
// pkg/apis/monocle/v1alpha1. Reasons are CamelCase and stable (alerts and scripts match on
// them), each constant is named after its value, and the tables of docs/status.md list every
// one of them (reasons_test.go checks both). The package imports nothing: every other package
// of the controller may use it.
package reasons

// Reasons of the Ready condition. When a Degraded reason also keeps the Monocle from being
// Ready, Ready takes that reason instead of Starting or ComponentsNotReady.
const (
	// AllComponentsReady: Elasticsearch, the API and the crawler have their ready pods
	// (True).
	AllComponentsReady = "AllComponentsReady"
	// Starting: the Monocle has not been Ready yet and a component lacks ready pods; the
	// message names it (False). Becoming Ready from it records no Ready event: the Created
	// event already tells the start.
	Starting = "Starting"
	// ComponentsNotReady: a component of a Monocle that has been Ready lacks ready pods;
	// the message names it (False).
	ComponentsNotReady = "ComponentsNotReady"
)

// Reasons of the Progressing condition.
const (
	// RollingOut: a workload rolls out a new spec; the message names it (True).
	RollingOut = "RollingOut"
	// RolloutComplete: every workload runs the desired spec (False).
	RolloutComplete = "RolloutComplete"
)

// Reasons of the Degraded condition. Besides these, Degraded is True with the reason of any
// other condition that is False for a cause the user must fix (Blocking, classes.go), each
// also recorded as a Warning event when its condition turns to it.
const (
	// AsExpected: the operator converges every owned object (False).
	AsExpected = "AsExpected"
	// NameConflict: an object with a name the Monocle needs exists and is not controlled
	// by it; the operator leaves it unchanged (Degraded True, Ready False). Also a Warning event
	// per conflicting object.
	NameConflict = "NameConflict"
	// FieldContested: another writer sets back fields the operator owns in an object, or a
	// mutating admission webhook changes them in the operator's writes; the operator leaves
	// the object as it is for a growing back-off (Degraded True; the message names the
	// objects, fields and field managers). Also a Warning event when the contest starts and
	// each time it grows.
	FieldContested = "FieldContested"
	// SyncFailed: a sync step failed; the message carries the error (Degraded True).
	// Also a Warning event.
	SyncFailed = "SyncFailed"
)

// Reasons of the ConfigValid condition.
const (
	// ConfigAccepted: the config of status.configSource is one Monocle accepts (True).
	ConfigAccepted = "ConfigAccepted"
	// InvalidConfig: the config of status.configSource is refused; the last valid one
	// keeps running (False). Blocking: also Degraded and a Warning event.
	InvalidConfig = "InvalidConfig"
	// ConfigMapUnavailable: spec.config is unset and the ConfigMap "<name>-api" cannot
	// be read or created (Unknown).
	ConfigMapUnavailable = "ConfigMapUnavailable"
)

// Reasons of the SecretsReady condition.
const (
	// SecretsPresent: the referenced Secret exists and every variable the config needs
	// (crawler tokens, an OIDC client secret, crawlers_api_key variables) is provided, non-empty
	// (True).
	SecretsPresent = "SecretsPresent"
	// SecretNotFound: the Secret named by spec.secretRef, by spec.proxy.credentialsSecretRef
	// or by a field of the Elasticsearch of elasticsearchRef or external does not exist
	// (False).
	// Blocking: also Degraded and a Warning event.
	SecretNotFound = "SecretNotFound"
	// SecretKeyMissing: a Secret with the credentials or the CA of the Elasticsearch of
	// elasticsearchRef or external, or with the proxy's credentials
	// (spec.proxy.credentialsSecretRef), lacks its key (or it is empty); the message names the
	// Secret and the key, and the API and crawler wait (False). Blocking: also Degraded and
	// a Warning event. A missing such Secret is SecretNotFound.
	SecretKeyMissing = "SecretKeyMissing"
	// TokenMissing: a variable the config needs is missing or empty in both Secrets; the
	// component that reads it is held back, the message says which (False). Blocking: also
	// Degraded and a Warning event.
	TokenMissing = "TokenMissing"
	// ConfigMapNotFound: the ConfigMap spec.trustedCA names does not exist; the API and
	// crawler are not started or rolled (False). Blocking: also Degraded and a Warning event.
	ConfigMapNotFound = "ConfigMapNotFound"
	// ConfigMapKeyMissing: the ConfigMap spec.trustedCA names lacks its key, or the key holds
	// no PEM certificate; the API and crawler are not started or rolled (False). Blocking:
	// also Degraded and a Warning event.
	ConfigMapKeyMissing = "ConfigMapKeyMissing"
)

// Reasons of the IdentsUpdated condition and of update-idents events.
const (
	// UpToDate: no config change has needed an update-idents run yet (True).
	UpToDate = "UpToDate"
	// UpdateIdentsPending: the update-idents Job is to run (False).
	UpdateIdentsPending = "UpdateIdentsPending"
	// UpdateIdentsRunning: the update-idents Job runs (False).
	UpdateIdentsRunning = "UpdateIdentsRunning"
	// UpdateIdentsSucceeded: the last update-idents Job succeeded (True). Also a Normal
	// event when it finishes.
	UpdateIdentsSucceeded = "UpdateIdentsSucceeded"
	// UpdateIdentsFailed: the last update-idents Job failed and is not retried (False).
	// Also a Warning event when it finishes.
	UpdateIdentsFailed = "UpdateIdentsFailed"
)

// Reasons of maintenance request events (spec.maintenance; status.maintenance has each
// request's phase).
const (
	// MaintenanceSucceeded: a maintenance request's Job succeeded (Normal event).
	MaintenanceSucceeded = "MaintenanceSucceeded"
	// MaintenanceFailed: a maintenance request failed or was refused (an unknown
	// workspace or crawler, a date Monocle does not read); it is not retried (Warning event).
	MaintenanceFailed = "MaintenanceFailed"
	// UpdateSinceMovedEarlier: a crawler's update_since moved earlier, and the operator
	// made a SetCrawlerCommitDate request to the new date (Normal event).
	UpdateSinceMovedEarlier = "UpdateSinceMovedEarlier"
)

// Reasons of the StorageReady condition and of storage events.
const (
	// AsRequested: the Elasticsearch volume has the requested size (True).
	AsRequested = "AsRequested"
	// Resizing: the volume is being expanded to the requested size (False).
	Resizing = "Resizing"
	// StorageChangeRefused: a shrink, a StorageClass change or an expansion the class
	// does not allow was refused; the volume is kept as it is (False). Blocking: also
	// Degraded and a Warning event.
	StorageChangeRefused = "StorageChangeRefused"
	// VolumeExpansionRequested: the operator requested a larger size from the PVC
	// (Normal event).
	VolumeExpansionRequested = "VolumeExpansionRequested"
)

// Reasons of the RolloutHeld condition and of the fleet rollout's events
// (controller/rolloutphase.go, docs/fleet-rollouts.md).
const (
	// WaitingForWave: the operator's new templates would restart the Monocle's pods, and it
	// waits for its wave of the fleet rollout; its workloads run what they ran (True).
	WaitingForWave = "WaitingForWave"
	// RolloutHalted: the fleet rollout is halted by a Monocle that was not Ready again within
	// the deadline; this one waits, untouched, for a resume (True).
	RolloutHalted = "RolloutHalted"
	// RolloutFailed: this Monocle was not Ready again within the deadline of its wave; the
	// operator leaves its workloads as they are, for undo (True). Also a Warning event when
	// the roll fails.
	RolloutFailed = "RolloutFailed"
	// RolloutStarted: an event, when a wave of the fleet rollout reaches the Monocle.
	RolloutStarted = "RolloutStarted"
	// RolloutSucceeded: an event, when the Monocle has been Ready for the soak time after
	// its wave's roll.
	RolloutSucceeded = "RolloutSucceeded"
	// RolloutResumed: an event, when the rollout-resume annotation resumes a failed roll.
	RolloutResumed = "RolloutResumed"
)

// Reasons of the Paused condition.
const (
	// Paused: the Monocle carries the paused annotation; the operator leaves its objects
	// alone (True).
	Paused = "Paused"
	// NotPaused: the operator reconciles the Monocle (False).
	NotPaused = "NotPaused"
)

// Reasons of the SpecAccepted condition.
const (
	// SpecAccepted: the operator accepts every part of the spec (True).
	SpecAccepted = "SpecAccepted"
	// ElasticsearchVersionUnsupported: elasticsearch.image is of a major version
	// Monocle does not support; the StatefulSet is left as it is (False). Blocking: also
	// Degraded and a Warning event.
	ElasticsearchVersionUnsupported = "ElasticsearchVersionUnsupported"
	// ElasticsearchDowngrade: elasticsearch.image is older than the running one; the
	// StatefulSet is left as it is (False). Blocking: also Degraded and a Warning event.
	ElasticsearchDowngrade = "ElasticsearchDowngrade"
	// HeapAboveLimit: elasticsearch.javaOpts sets a heap above 75% of the memory limit;
	// the message gives both; the StatefulSet is left as it is (False). Blocking: also
	// Degraded and a Warning event.
	HeapAboveLimit = "HeapAboveLimit"
	// IndexReplicasTooHigh: elasticsearch.indexReplicas asks for more replicas than the
	// cluster's data nodes can hold (data nodes - 1); the indices keep their replicas
	// (False). Blocking: also Degraded and a Warning event.
	IndexReplicasTooHigh = "IndexReplicasTooHigh"
)

// Reasons of the Exposed condition.
const (
	// Exposed: every exposure spec.ingress, spec.httpRoute and spec.route ask for exists;
	// the message gives the URL and the objects (True).
	Exposed = "Exposed"
	// NotExposed: no exposure is asked for; the message says how to reach the web UI
	// (False).
	NotExposed = "NotExposed"
	// APINotServed: an exposure needs an API the cluster does not serve (the Gateway
	// API, OpenShift Routes); the message names it, and the rest of the Monocle runs (False).
	// Also a Warning event.
	APINotServed = "APINotServed"
	// ExposureFailed: writing an exposure object failed; the message carries the error
	// (False; Degraded says SyncFailed).
	ExposureFailed = "ExposureFailed"
)

// Reasons of the Monitored condition (see monitoring.go); APINotServed when the cluster lacks
// the PodMonitor API.
const (
	// Monitored: the PodMonitor spec.monitoring asks for exists (True).
	Monitored = "Monitored"
	// NotMonitored: spec.monitoring is unset (False).
	NotMonitored = "NotMonitored"
	// MonitoringFailed: writing the PodMonitor failed (False); the message gives the
	// error.
	MonitoringFailed = "MonitoringFailed"
)

// Reasons of the Adopted condition and event.
const (
	// AdoptedEarlierOperator: the Monocle's Elasticsearch runs in the StatefulSet the
	// earlier operator made (Adopted condition, True).
	AdoptedEarlierOperator = "AdoptedEarlierOperator"
	// Adopted: the operator adopted the objects the earlier operator made (Normal event).
	Adopted = "Adopted"
)

// Reasons of the ElasticsearchHealthy and DiskPressure conditions, and of their Warning
// events (see day2/health.go).
const (
	// Green: Elasticsearch reports green (ElasticsearchHealthy, True).
	Green = "Green"
	// Yellow: Elasticsearch reports yellow; every document can be read and written
	// (ElasticsearchHealthy, True).
	Yellow = "Yellow"
	// Red: Elasticsearch reports red (ElasticsearchHealthy, False; a Warning event when
	// it turns red).
	Red = "Red"
	// ElasticsearchNotReady: Elasticsearch has no ready pod to read, or the ECK
	// Elasticsearch of elasticsearchRef is not in phase Ready (both conditions, Unknown).
	ElasticsearchNotReady = "ElasticsearchNotReady"
	// ElasticsearchNotFound: the ECK Elasticsearch of elasticsearchRef does not exist, or
	// the cluster does not serve ECK's API; the API and crawler wait (ElasticsearchHealthy,
	// False). Blocking: also Degraded and a Warning event.
	ElasticsearchNotFound = "ElasticsearchNotFound"
	// ElasticsearchInUse: the cluster's Monocle indices belong to another Monocle: its owner
	// record (index monocle-operator.owner of the cluster) names another, or a Monocle of the
	// same namespace created earlier uses the same cluster (Monocle's index names are fixed);
	// this one's API and crawler do not start (ElasticsearchHealthy, False). Blocking: also
	// Degraded and a Warning event.
	ElasticsearchInUse = "ElasticsearchInUse"
	// ElasticsearchUnclaimed: the operator has not yet recorded the Monocle as the owner of
	// its cluster's Monocle indices: the claim is under way, or failed (the message gives the
	// error); the API and crawler wait (ElasticsearchHealthy, Unknown).
	ElasticsearchUnclaimed = "ElasticsearchUnclaimed"
	// ReferenceNotGranted: elasticsearchRef names an Elasticsearch of another namespace,
	// and no ReferenceGrant there grants the Monocle's namespace its use, or the cluster
	// does not serve the ReferenceGrant API; nothing of that namespace is read, the API and
	// crawler wait (ElasticsearchHealthy, False). Blocking: also Degraded and a Warning
	// event.
	ReferenceNotGranted = "ReferenceNotGranted"
	// CrossNamespaceReferencesDisabled: elasticsearchRef names an Elasticsearch of another
	// namespace, and the operator runs with --cross-namespace-references=false
	// (ElasticsearchHealthy, False). Blocking: also Degraded and a Warning event.
	CrossNamespaceReferencesDisabled = "CrossNamespaceReferencesDisabled"
	// CredentialsRequired: elasticsearchRef names an Elasticsearch of another namespace
	// without credentialsSecretRef; the elastic superuser is never used across namespaces
	// (ElasticsearchHealthy, False). Blocking: also Degraded and a Warning event.
	CredentialsRequired = "CredentialsRequired"
	// ElasticsearchUnreachable: the operator could not read Elasticsearch (both
	// conditions, Unknown); the message gives the error.
	ElasticsearchUnreachable = "ElasticsearchUnreachable"
	// ElasticsearchAddressRefused: the cluster's host is, or resolves to, a loopback,
	// link-local or unspecified address, which the operator does not connect to; nothing
	// was sent (ElasticsearchHealthy, False; DiskPressure stays ElasticsearchUnreachable).
	// Blocking: also Degraded and a Warning event.
	ElasticsearchAddressRefused = "ElasticsearchAddressRefused"
	// VolumeAlmostFull: the data volume is more than DiskPressurePercent full
	// (DiskPressure, True; a Warning event when it becomes so).
	VolumeAlmostFull = "VolumeAlmostFull"
	// IndicesReadOnly: Elasticsearch made indices read-only at its flood-stage
	// watermark (DiskPressure, True; a Warning event when it happens).
	IndicesReadOnly = "IndicesReadOnly"
	// VolumeHasRoom: the data volume is at most DiskPressurePercent full (DiskPressure,
	// False).
	VolumeHasRoom = "VolumeHasRoom"
	// StorageGrowing: spec.storageGrowth grows the data volume by a step (DiskPressure,
	// True, until it has grown; a Normal event per step).
	StorageGrowing = "StorageGrowing"
	// StorageGrown: the data volume reached the size of the last step (a Normal event).
	StorageGrown = "StorageGrown"
	// StorageGrowthAtMaximum: the volume is full and at storageGrowth.maxSize (a
	// Warning event; DiskPressure's message says so).
	StorageGrowthAtMaximum = "StorageGrowthAtMaximum"
	// StorageGrowthRefused: the volume is full and its StorageClass does not allow
	// volume expansion (a Warning event; DiskPressure's message says so).
	StorageGrowthRefused = "StorageGrowthRefused"
	// APIRestarted: the read-only block was lifted and the API, not ready, was
	// restarted (a Warning event).
	APIRestarted = "APIRestarted"
)

// Reasons of the Upgraded condition and of upgrade events (day2/upgrade.go); UpToDate (True) is
// the reason of a Monocle that was never upgraded.
const (
	// Upgrading: an upgrade runs (False; a Normal event per phase).
	Upgrading = "Upgrading"
	// UpgradeBlocked: the snapshot taken before the upgrade failed (False; a Warning
	// event).
	UpgradeBlocked = "UpgradeBlocked"
	// UpgradeSucceeded: the last upgrade succeeded (True; a Normal event).
	UpgradeSucceeded = "UpgradeSucceeded"
	// MonocleDowngrade: the new image would write an older config index than the
	// running one has; refused (False).
	MonocleDowngrade = "MonocleDowngrade"
)

// Reasons of index deletion events (day2/indices.go).
const (
	// IndexDeleted: the index of a removed workspace was deleted, as the annotation
	// asked (Normal).
	IndexDeleted = "IndexDeleted"
	// IndexDeletionRefused: the annotation named a workspace config.yaml has, or no
	// workspace name (Warning).
	IndexDeletionRefused = "IndexDeletionRefused"
)

// Reasons of the CrawlersHealthy condition (day2/crawlers.go).
const (
	// NoCrawlerErrors: no crawler stored an error in the last 24 hours (True).
	NoCrawlerErrors = "NoCrawlerErrors"
	// CrawlerErrors: a crawler stored errors in the last 24 hours (False); the message
	// names each with its newest error.
	CrawlerErrors = "CrawlerErrors"
)

// Reasons of the CrawlersProgressing condition and of crawler restart events (day2/stuck.go).
const (
	// CrawlersProgressing: every running crawler made progress within
	// spec.crawler.stuckAfter (True).
	CrawlersProgressing = "CrawlersProgressing"
	// StuckCheckOff: spec.crawler.stuckAfter is 0s (True).
	StuckCheckOff = "StuckCheckOff"
	// CrawlerRestarted: a crawler made no progress; the operator restarted the
	// crawler pod and waits for progress (False; a Warning event per restart).
	CrawlerRestarted = "CrawlerRestarted"
	// CrawlerStuck: spec.crawler.maxRestarts restarts in a row did not help; the
	// operator stops restarting (False).
	CrawlerStuck = "CrawlerStuck"
)

// Reasons of the OIDCReady condition (day2/oidc.go), present only with an OIDC auth_provider.
const (
	// OIDCOverHTTPS: the public URL is HTTPS (True).
	OIDCOverHTTPS = "OIDCOverHTTPS"
	// OIDCNeedsHTTPS: the public URL is plain HTTP, where Monocle's Secure session
	// cookie never comes back: logins fail (False; a Warning event).
	OIDCNeedsHTTPS = "OIDCNeedsHTTPS"
)

// Reasons of the APIHealthy condition (day2/health.go).
const (
	// APIAnswers: the API answered GET /health through its Service (True).
	APIAnswers = "APIAnswers"
	// APIUnreachable: the API did not answer its health check through its Service
	// (False); the message gives the error.
	APIUnreachable = "APIUnreachable"
	// APINotReady: the API has no ready pod, or was not asked yet (Unknown).
	APINotReady = "APINotReady"
)

// Reasons of the BackupReady condition and of backup events (day2/backup.go).
const (
	// NotBackedUp: spec.backup is unset (BackupReady, False).
	NotBackedUp = "NotBackedUp"
	// InvalidSchedule: spec.backup.schedule does not parse (BackupReady, False).
	InvalidSchedule = "InvalidSchedule"
	// RepositoryFailed: the snapshot repository cannot be registered, or the existing one
	// cannot be checked (BackupReady, False); the message gives Elasticsearch's error.
	RepositoryFailed = "RepositoryFailed"
	// BackupRepositoryMissing: the repository backup.repository.existing names is not
	// registered in the cluster; the operator never registers it (BackupReady, False).
	BackupRepositoryMissing = "BackupRepositoryMissing"
	// BackupFailed: the newest snapshot failed or could not be started (BackupReady,
	// False; a Warning event per new failure).
	BackupFailed = "BackupFailed"
	// BackupSucceeded: the newest snapshot succeeded (BackupReady, True; a Normal event
	// per new snapshot).
	BackupSucceeded = "BackupSucceeded"
	// NoBackupYet: no snapshot was taken yet and none failed (BackupReady, True).
	NoBackupYet = "NoBackupYet"
)

// Reasons of the Restored condition and of restore events (day2/restore.go); the Ready condition
// takes them too while the restore keeps the API and the crawler stopped.
const (
	// RestorePending: the API and the crawler are stopping, or the indices are being
	// closed (Restored, False).
	RestorePending = "RestorePending"
	// Restoring: Elasticsearch restores the snapshot (Restored, False).
	Restoring = "Restoring"
	// Restored: the snapshot was restored (Restored, True).
	Restored = "Restored"
	// RestoreFailed: the restore failed; the API and the crawler stay stopped
	// (Restored, False; a Warning event).
	RestoreFailed = "RestoreFailed"
)

// Reasons of the Hibernated condition and of hibernation events (day2/hibernation.go). The
// Ready condition takes Hibernating, Hibernated and Waking too while status.hibernation is
// set; none of them makes the Monocle Degraded, and Ready turning False with one of them
// records a Normal event with that reason instead of NotReady.
const (
	// Hibernating: spec.hibernate stops the Monocle, the crawler first, then the API, then
	// the bundled Elasticsearch, each once the one before has no pod; the message says what
	// it waits for (Hibernated False; Ready False).
	Hibernating = "Hibernating"
	// Hibernated: no pod of the Monocle runs; volumes, keys, Secrets and config are kept
	// (Hibernated True; Ready False).
	Hibernated = "Hibernated"
	// Waking: spec.hibernate was removed and the Monocle starts again, Elasticsearch first,
	// then the API, then the crawler (Hibernated False; Ready False).
	Waking = "Waking"
	// HibernationDeferred: spec.hibernate is not acted on while a restore or an upgrade is
	// in progress; the message names it, and the Monocle hibernates once it ends
	// (Hibernated False; a Normal event).
	HibernationDeferred = "HibernationDeferred"
	// WaitingForWake: an image change (Upgraded False) or a restore (Restored False) asked
	// for while the Monocle hibernates or wakes waits until it is awake.
	WaitingForWake = "WaitingForWake"
)

// Reasons of events about owned objects and Ready transitions.
const (
	// Created: the operator created owned objects, an update-idents Job included
	// (Normal). One event per sync lists every object the sync created.
	Created = "Created"
	// Updated: the operator updated an owned object that differed from the desired state
	// (Normal).
	Updated = "Updated"
	// Deleted: the operator deleted an owned object it no longer needs (Normal).
	Deleted = "Deleted"
	// KeyGenerated: a generated key was missing from both Secrets and was generated anew
	// (Warning).
	KeyGenerated = "KeyGenerated"
	// ElasticPasswordRejected: a password of the bundled Elasticsearch's users Secret was too
	// short or too long for the file realm, and was generated anew (Warning).
	ElasticPasswordRejected = "ElasticPasswordRejected"
	// Ready: the Monocle became Ready again, or after a problem kept it from being
	// Ready; not when it first starts (Normal).
	Ready = "Ready"
	// NotReady: the Monocle stopped being Ready; the message starts with the Ready
	// reason (Warning).
	NotReady = "NotReady"
)
