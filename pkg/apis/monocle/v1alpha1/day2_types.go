package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

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

// UpgradeWithoutBackupAnnotation on a Monocle whose upgrade is Blocked by a failed
// pre-upgrade snapshot, set to "true", lets the upgrade go on without it.
const UpgradeWithoutBackupAnnotation = "monocle.change-metrics.io/upgrade-without-backup"

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
