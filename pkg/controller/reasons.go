package controller

// Every reason the controller sets on a Monocle condition or records on an event lives in this
// file, grouped by the condition or event it belongs to; the condition types are API, in
// pkg/apis/monocle/v1alpha1. Reasons are CamelCase and stable (alerts and scripts match on
// them), each constant is named Reason followed by its value, and the README's Status section
// lists every one of them (reasons_test.go checks both).

// Reasons of the Ready condition. When a Degraded reason also keeps the Monocle from being
// Ready, Ready takes that reason instead of ReasonStarting or ReasonComponentsNotReady.
const (
	// ReasonAllComponentsReady: Elasticsearch, the API and the crawler have their ready pods
	// (True).
	ReasonAllComponentsReady = "AllComponentsReady"
	// ReasonStarting: the Monocle has not been Ready yet and a component lacks ready pods; the
	// message names it (False). Becoming Ready from it records no Ready event: the Created
	// event already tells the start.
	ReasonStarting = "Starting"
	// ReasonComponentsNotReady: a component of a Monocle that has been Ready lacks ready pods;
	// the message names it (False).
	ReasonComponentsNotReady = "ComponentsNotReady"
)

// Reasons of the Progressing condition.
const (
	// ReasonRollingOut: a workload rolls out a new spec; the message names it (True).
	ReasonRollingOut = "RollingOut"
	// ReasonRolloutComplete: every workload runs the desired spec (False).
	ReasonRolloutComplete = "RolloutComplete"
)

// Reasons of the Degraded condition. Besides these, Degraded is True with the reason of any
// other condition that is False for a cause the user must fix (see blocking in status.go):
// ReasonInvalidConfig, ReasonSecretNotFound, ReasonTokenMissing, ReasonStorageChangeRefused,
// ReasonElasticsearchVersionUnsupported, ReasonElasticsearchDowngrade, ReasonHeapAboveLimit.
// Each of those is also recorded as a Warning event when its condition turns to it.
const (
	// ReasonAsExpected: the operator converges every owned object (False).
	ReasonAsExpected = "AsExpected"
	// ReasonNameConflict: an object with a name the Monocle needs exists and is not controlled
	// by it; the operator leaves it unchanged (Degraded True, Ready False). Also a Warning event
	// per conflicting object.
	ReasonNameConflict = "NameConflict"
	// ReasonSyncFailed: a sync step failed; the message carries the error (Degraded True).
	// Also a Warning event.
	ReasonSyncFailed = "SyncFailed"
)

// Reasons of the ConfigValid condition.
const (
	// ReasonConfigAccepted: the config of status.configSource is one Monocle accepts (True).
	ReasonConfigAccepted = "ConfigAccepted"
	// ReasonInvalidConfig: the config of status.configSource is refused; the last valid one
	// keeps running (False). Blocking: also Degraded and a Warning event.
	ReasonInvalidConfig = "InvalidConfig"
	// ReasonConfigMapUnavailable: spec.config is unset and the ConfigMap "<name>-api" cannot
	// be read or created (Unknown).
	ReasonConfigMapUnavailable = "ConfigMapUnavailable"
)

// Reasons of the SecretsReady condition.
const (
	// ReasonSecretsPresent: the referenced Secret exists and every variable the config needs
	// (crawler tokens, an OIDC client secret, crawlers_api_key variables) is provided, non-empty
	// (True).
	ReasonSecretsPresent = "SecretsPresent"
	// ReasonSecretNotFound: the Secret named by spec.secretRef does not exist (False).
	// Blocking: also Degraded and a Warning event.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonTokenMissing: a variable the config needs is missing or empty in both Secrets; the
	// component that reads it is held back, the message says which (False). Blocking: also
	// Degraded and a Warning event.
	ReasonTokenMissing = "TokenMissing"
)

// Reasons of the IdentsUpdated condition and of update-idents events.
const (
	// ReasonUpToDate: no config change has needed an update-idents run yet (True).
	ReasonUpToDate = "UpToDate"
	// ReasonUpdateIdentsPending: the update-idents Job is to run (False).
	ReasonUpdateIdentsPending = "UpdateIdentsPending"
	// ReasonUpdateIdentsRunning: the update-idents Job runs (False).
	ReasonUpdateIdentsRunning = "UpdateIdentsRunning"
	// ReasonUpdateIdentsSucceeded: the last update-idents Job succeeded (True). Also a Normal
	// event when it finishes.
	ReasonUpdateIdentsSucceeded = "UpdateIdentsSucceeded"
	// ReasonUpdateIdentsFailed: the last update-idents Job failed and is not retried (False).
	// Also a Warning event when it finishes.
	ReasonUpdateIdentsFailed = "UpdateIdentsFailed"
)

// Reasons of maintenance request events (spec.maintenance; status.maintenance has each
// request's phase).
const (
	// ReasonMaintenanceSucceeded: a maintenance request's Job succeeded (Normal event).
	ReasonMaintenanceSucceeded = "MaintenanceSucceeded"
	// ReasonMaintenanceFailed: a maintenance request failed or was refused (an unknown
	// workspace or crawler, a date Monocle does not read); it is not retried (Warning event).
	ReasonMaintenanceFailed = "MaintenanceFailed"
	// ReasonUpdateSinceMovedEarlier: a crawler's update_since moved earlier, and the operator
	// made a SetCrawlerCommitDate request to the new date (Normal event).
	ReasonUpdateSinceMovedEarlier = "UpdateSinceMovedEarlier"
)

// Reasons of the StorageReady condition and of storage events.
const (
	// ReasonAsRequested: the Elasticsearch volume has the requested size (True).
	ReasonAsRequested = "AsRequested"
	// ReasonResizing: the volume is being expanded to the requested size (False).
	ReasonResizing = "Resizing"
	// ReasonStorageChangeRefused: a shrink, a StorageClass change or an expansion the class
	// does not allow was refused; the volume is kept as it is (False). Blocking: also
	// Degraded and a Warning event.
	ReasonStorageChangeRefused = "StorageChangeRefused"
	// ReasonVolumeExpansionRequested: the operator requested a larger size from the PVC
	// (Normal event).
	ReasonVolumeExpansionRequested = "VolumeExpansionRequested"
)

// Reasons of the Paused condition.
const (
	// ReasonPaused: the Monocle carries the paused annotation; the operator leaves its objects
	// alone (True).
	ReasonPaused = "Paused"
	// ReasonNotPaused: the operator reconciles the Monocle (False).
	ReasonNotPaused = "NotPaused"
)

// Reasons of the SpecAccepted condition.
const (
	// ReasonSpecAccepted: the operator accepts every part of the spec (True).
	ReasonSpecAccepted = "SpecAccepted"
	// ReasonElasticsearchVersionUnsupported: elasticsearch.image is of a major version
	// Monocle does not support; the StatefulSet is left as it is (False). Blocking: also
	// Degraded and a Warning event.
	ReasonElasticsearchVersionUnsupported = "ElasticsearchVersionUnsupported"
	// ReasonElasticsearchDowngrade: elasticsearch.image is older than the running one; the
	// StatefulSet is left as it is (False). Blocking: also Degraded and a Warning event.
	ReasonElasticsearchDowngrade = "ElasticsearchDowngrade"
	// ReasonHeapAboveLimit: elasticsearch.javaOpts sets a heap above 75% of the memory limit;
	// the message gives both; the StatefulSet is left as it is (False). Blocking: also
	// Degraded and a Warning event.
	ReasonHeapAboveLimit = "HeapAboveLimit"
)

// Reasons of the Exposed condition.
const (
	// ReasonExposed: every exposure spec.ingress, spec.httpRoute and spec.route ask for exists;
	// the message gives the URL and the objects (True).
	ReasonExposed = "Exposed"
	// ReasonNotExposed: no exposure is asked for; the message says how to reach the web UI
	// (False).
	ReasonNotExposed = "NotExposed"
	// ReasonAPINotServed: an exposure needs an API the cluster does not serve (the Gateway
	// API, OpenShift Routes); the message names it, and the rest of the Monocle runs (False).
	// Also a Warning event.
	ReasonAPINotServed = "APINotServed"
	// ReasonExposureFailed: writing an exposure object failed; the message carries the error
	// (False; Degraded says SyncFailed).
	ReasonExposureFailed = "ExposureFailed"
)

// Reasons of the Monitored condition (see monitoring.go); APINotServed when the cluster lacks
// the PodMonitor API.
const (
	// ReasonMonitored: the PodMonitor spec.monitoring asks for exists (True).
	ReasonMonitored = "Monitored"
	// ReasonNotMonitored: spec.monitoring is unset (False).
	ReasonNotMonitored = "NotMonitored"
	// ReasonMonitoringFailed: writing the PodMonitor failed (False); the message gives the
	// error.
	ReasonMonitoringFailed = "MonitoringFailed"
)

// Reasons of the Adopted condition and event.
const (
	// ReasonAdoptedEarlierOperator: the Monocle's Elasticsearch runs in the StatefulSet the
	// earlier operator made (Adopted condition, True).
	ReasonAdoptedEarlierOperator = "AdoptedEarlierOperator"
	// ReasonAdopted: the operator adopted the objects the earlier operator made (Normal event).
	ReasonAdopted = "Adopted"
)

// Reasons of the ElasticsearchHealthy and DiskPressure conditions, and of their Warning
// events (see health.go).
const (
	// ReasonGreen: Elasticsearch reports green (ElasticsearchHealthy, True).
	ReasonGreen = "Green"
	// ReasonYellow: Elasticsearch reports yellow; every document can be read and written
	// (ElasticsearchHealthy, True).
	ReasonYellow = "Yellow"
	// ReasonRed: Elasticsearch reports red (ElasticsearchHealthy, False; a Warning event when
	// it turns red).
	ReasonRed = "Red"
	// ReasonElasticsearchNotReady: Elasticsearch has no ready pod to read (both conditions,
	// Unknown).
	ReasonElasticsearchNotReady = "ElasticsearchNotReady"
	// ReasonElasticsearchUnreachable: the operator could not read Elasticsearch (both
	// conditions, Unknown); the message gives the error.
	ReasonElasticsearchUnreachable = "ElasticsearchUnreachable"
	// ReasonVolumeAlmostFull: the data volume is more than DiskPressurePercent full
	// (DiskPressure, True; a Warning event when it becomes so).
	ReasonVolumeAlmostFull = "VolumeAlmostFull"
	// ReasonIndicesReadOnly: Elasticsearch made indices read-only at its flood-stage
	// watermark (DiskPressure, True; a Warning event when it happens).
	ReasonIndicesReadOnly = "IndicesReadOnly"
	// ReasonVolumeHasRoom: the data volume is at most DiskPressurePercent full (DiskPressure,
	// False).
	ReasonVolumeHasRoom = "VolumeHasRoom"
	// ReasonStorageGrowing: spec.storageGrowth grows the data volume by a step (DiskPressure,
	// True, until it has grown; a Normal event per step).
	ReasonStorageGrowing = "StorageGrowing"
	// ReasonStorageGrown: the data volume reached the size of the last step (a Normal event).
	ReasonStorageGrown = "StorageGrown"
	// ReasonStorageGrowthAtMaximum: the volume is full and at storageGrowth.maxSize (a
	// Warning event; DiskPressure's message says so).
	ReasonStorageGrowthAtMaximum = "StorageGrowthAtMaximum"
	// ReasonStorageGrowthRefused: the volume is full and its StorageClass does not allow
	// volume expansion (a Warning event; DiskPressure's message says so).
	ReasonStorageGrowthRefused = "StorageGrowthRefused"
	// ReasonAPIRestarted: the read-only block was lifted and the API, not ready, was
	// restarted (a Warning event).
	ReasonAPIRestarted = "APIRestarted"
)

// Reasons of the Upgraded condition and of upgrade events (upgrade.go); UpToDate (True) is
// the reason of a Monocle that was never upgraded.
const (
	// ReasonUpgrading: an upgrade runs (False; a Normal event per phase).
	ReasonUpgrading = "Upgrading"
	// ReasonUpgradeBlocked: the snapshot taken before the upgrade failed (False; a Warning
	// event).
	ReasonUpgradeBlocked = "UpgradeBlocked"
	// ReasonUpgradeSucceeded: the last upgrade succeeded (True; a Normal event).
	ReasonUpgradeSucceeded = "UpgradeSucceeded"
	// ReasonMonocleDowngrade: the new image would write an older config index than the
	// running one has; refused (False).
	ReasonMonocleDowngrade = "MonocleDowngrade"
)

// Reasons of index deletion events (indices.go).
const (
	// ReasonIndexDeleted: the index of a removed workspace was deleted, as the annotation
	// asked (Normal).
	ReasonIndexDeleted = "IndexDeleted"
	// ReasonIndexDeletionRefused: the annotation named a workspace config.yaml has, or no
	// workspace name (Warning).
	ReasonIndexDeletionRefused = "IndexDeletionRefused"
)

// Reasons of the CrawlersHealthy condition (crawlers.go).
const (
	// ReasonNoCrawlerErrors: no crawler stored an error in the last 24 hours (True).
	ReasonNoCrawlerErrors = "NoCrawlerErrors"
	// ReasonCrawlerErrors: a crawler stored errors in the last 24 hours (False); the message
	// names each with its newest error.
	ReasonCrawlerErrors = "CrawlerErrors"
)

// Reasons of the CrawlersProgressing condition and of crawler restart events (stuck.go).
const (
	// ReasonCrawlersProgressing: every running crawler made progress within
	// spec.crawler.stuckAfter (True).
	ReasonCrawlersProgressing = "CrawlersProgressing"
	// ReasonStuckCheckOff: spec.crawler.stuckAfter is 0s (True).
	ReasonStuckCheckOff = "StuckCheckOff"
	// ReasonCrawlerRestarted: a crawler made no progress; the operator restarted the
	// crawler pod and waits for progress (False; a Warning event per restart).
	ReasonCrawlerRestarted = "CrawlerRestarted"
	// ReasonCrawlerStuck: spec.crawler.maxRestarts restarts in a row did not help; the
	// operator stops restarting (False).
	ReasonCrawlerStuck = "CrawlerStuck"
)

// Reasons of the OIDCReady condition (oidc.go), present only with an OIDC auth_provider.
const (
	// ReasonOIDCOverHTTPS: the public URL is HTTPS (True).
	ReasonOIDCOverHTTPS = "OIDCOverHTTPS"
	// ReasonOIDCNeedsHTTPS: the public URL is plain HTTP, where Monocle's Secure session
	// cookie never comes back: logins fail (False; a Warning event).
	ReasonOIDCNeedsHTTPS = "OIDCNeedsHTTPS"
)

// Reasons of the APIHealthy condition (health.go).
const (
	// ReasonAPIAnswers: the API answered GET /health through its Service (True).
	ReasonAPIAnswers = "APIAnswers"
	// ReasonAPIUnreachable: the API did not answer its health check through its Service
	// (False); the message gives the error.
	ReasonAPIUnreachable = "APIUnreachable"
	// ReasonAPINotReady: the API has no ready pod, or was not asked yet (Unknown).
	ReasonAPINotReady = "APINotReady"
)

// Reasons of the BackupReady condition and of backup events (backup.go).
const (
	// ReasonNotBackedUp: spec.backup is unset (BackupReady, False).
	ReasonNotBackedUp = "NotBackedUp"
	// ReasonInvalidSchedule: spec.backup.schedule does not parse (BackupReady, False).
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonRepositoryFailed: the snapshot repository cannot be registered (BackupReady,
	// False); the message gives Elasticsearch's error.
	ReasonRepositoryFailed = "RepositoryFailed"
	// ReasonBackupFailed: the newest snapshot failed or could not be started (BackupReady,
	// False; a Warning event per new failure).
	ReasonBackupFailed = "BackupFailed"
	// ReasonBackupSucceeded: the newest snapshot succeeded (BackupReady, True; a Normal event
	// per new snapshot).
	ReasonBackupSucceeded = "BackupSucceeded"
	// ReasonNoBackupYet: no snapshot was taken yet and none failed (BackupReady, True).
	ReasonNoBackupYet = "NoBackupYet"
)

// Reasons of the Restored condition and of restore events (restore.go); the Ready condition
// takes them too while the restore keeps the API and the crawler stopped.
const (
	// ReasonRestorePending: the API and the crawler are stopping, or the indices are being
	// closed (Restored, False).
	ReasonRestorePending = "RestorePending"
	// ReasonRestoring: Elasticsearch restores the snapshot (Restored, False).
	ReasonRestoring = "Restoring"
	// ReasonRestored: the snapshot was restored (Restored, True).
	ReasonRestored = "Restored"
	// ReasonRestoreFailed: the restore failed; the API and the crawler stay stopped
	// (Restored, False; a Warning event).
	ReasonRestoreFailed = "RestoreFailed"
)

// Reasons of events about owned objects and Ready transitions.
const (
	// ReasonCreated: the operator created owned objects, an update-idents Job included
	// (Normal). One event per sync lists every object the sync created.
	ReasonCreated = "Created"
	// ReasonUpdated: the operator updated an owned object that differed from the desired state
	// (Normal).
	ReasonUpdated = "Updated"
	// ReasonDeleted: the operator deleted an owned object it no longer needs (Normal).
	ReasonDeleted = "Deleted"
	// ReasonKeyGenerated: a generated key was missing from both Secrets and was generated anew
	// (Warning).
	ReasonKeyGenerated = "KeyGenerated"
	// ReasonReady: the Monocle became Ready again, or after a problem kept it from being
	// Ready; not when it first starts (Normal).
	ReasonReady = "Ready"
	// ReasonNotReady: the Monocle stopped being Ready; the message starts with the Ready
	// reason (Warning).
	ReasonNotReady = "NotReady"
)
