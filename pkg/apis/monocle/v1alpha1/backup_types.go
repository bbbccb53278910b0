package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
