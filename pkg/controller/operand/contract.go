package operand

import (
	"time"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// What a sync hands the worker and what it gets back. A sync plans (package day2), the
// worker reads and carries the plan out in the background, and a later sync turns the
// result into the status.

// Inputs is what a sync asks of the next read of a Monocle, besides Elasticsearch's health
// and disk use.
type Inputs struct {
	// ElasticReady says whether Elasticsearch has a ready pod: no read runs until it has.
	ElasticReady bool
	// APIReady says whether the API has a ready pod, whose /health the read then asks for
	// through the API Service.
	APIReady bool
	// Plan is the Elasticsearch work due besides reading.
	Plan Plan
	// Workspaces are the workspaces with crawlers of the config in force, whose crawler
	// progress and errors the read reads.
	Workspaces []string
	// Target is the Elasticsearch the reads go to, with its credentials and CA. Its zero
	// value, like any of Kind Bundled, is the Monocle's bundled node, read through its
	// Service (ElasticURL). A read starts at once when it changes, with a client built for
	// it. It holds a password: never log it.
	Target resources.ElasticsearchTarget
}

// Plan is the Elasticsearch work a sync asks the next read of a Monocle to do besides
// reading its health. It is comparable: a read starts at once when the plan changes.
type Plan struct {
	// Repo is the Monocle's own snapshot repository, registered as
	// resources.BackupRepositoryName; its Type is "" when spec.backup is unset, and then no
	// snapshot is taken, listed or expired, or when the repository is Existing.
	Repo elastic.Repository
	// Existing is the name of a repository registered by someone else
	// (spec.backup.repository.existing), which snapshots go into instead: the read checks that
	// it is registered, and never registers or changes it.
	Existing string
	// Take is the snapshot to start, or "".
	Take string
	// Keep is how many scheduled snapshots (ScheduledSnapshotPrefix) to keep.
	Keep int
	// Restore is the restore step due, if any.
	Restore RestorePlan
	// DeleteIndex is the index of a removed workspace to delete, or "".
	DeleteIndex string
	// KeepBlocks leaves a flood-stage read-only block the read finds as it is
	// (AutoPilotBlockClearing); otherwise a block that outlived the full disk is cleared.
	KeepBlocks bool
	// Replicas is the number_of_replicas to keep on Monocle's indices.
	Replicas ReplicasPlan
}

// BackupRepository is the name of the repository p's snapshots go into: Existing, or
// resources.BackupRepositoryName for the Monocle's own; "" without spec.backup.
func (p Plan) BackupRepository() string {
	switch {
	case p.Existing != "":
		return p.Existing
	case p.Repo.Type != "":
		return resources.BackupRepositoryName
	}
	return ""
}

// ReplicasPlan is the number_of_replicas a read keeps on Monocle's indices
// (spec.elasticsearch.indexReplicas).
type ReplicasPlan struct {
	// Keep is set when spec.elasticsearch.indexReplicas is: the read then reads
	// index.number_of_replicas of Monocle's indices (Result.Replicas) and sets it to N on
	// all of them when one differs and the data nodes the read found hold N replicas
	// (ReplicasFit).
	Keep bool
	N    int32
}

// RestorePlan is one step of a restore of a snapshot.
type RestorePlan struct {
	// Phase is the persisted phase the step moves on from: RestorePending (read the
	// snapshot's indices and close the open ones) or RestoreRestoring (start the restore,
	// then wait for it). "" means no step.
	Phase monoclev1alpha1.RestorePhase
	// RepoName and Repo are the repository to restore from, registered under that name; Repo's
	// Type is "" for a repository registered by someone else, which is checked, never
	// registered.
	RepoName string
	Repo     elastic.Repository
	// Snapshot is the name of the snapshot to restore.
	Snapshot string
	// Indices is the comma-joined index list of a Restoring step (a string, so that the
	// plan stays comparable).
	Indices string
}

// Result is what the last read of a Monocle's Elasticsearch found and what it did of its
// plan, as Worker.Observe returns it.
type Result struct {
	// Pending is true while the first read since Elasticsearch became ready is under way.
	Pending bool
	// APIPending is true while the first read that asks the API for its /health is under
	// way: a read starts as soon as the API has a ready pod and no read has asked it yet.
	APIPending bool
	// Done is when the last read ended; zero before the first.
	Done time.Time
	// Health is what the last read that succeeded found of the cluster health and disk use
	// (nil before one); Err says why the last read failed ("" when it did not).
	Health *monoclev1alpha1.ElasticsearchHealth
	Err    string
	// AddressRefused is set when the last read failed because the cluster's host is, or
	// resolves to, an address the operator does not connect to (elastic.ErrAddressRefused):
	// nothing was sent, and Err says which address.
	AddressRefused bool
	// HealthTime is when the read that found Health started: what it found is no older.
	HealthTime time.Time
	// Backup is what the last read with backup or restore work did of it (nil before one).
	Backup *BackupOutcome
	// Crawlers is the crawler progress the last read found, by CrawlerKey, and
	// CrawlerErrors their errors; nil before a read that had workspaces to read.
	Crawlers      map[string]elastic.CrawlerProgress
	CrawlerErrors map[string]elastic.CrawlerErrors
	// APIRead is set once a read has asked the Monocle API for its /health; APIErr says why
	// that failed ("" when it answered 200).
	APIRead bool
	APIErr  string
	// Indices are the workspace indices the last read listed (nil before one, or when the
	// listing failed), after the deletion of Deleted, the index of a removed workspace it
	// deleted (or found gone).
	Indices []elastic.Index
	Deleted string
	// DataNodes is number_of_data_nodes of the cluster health the last read that succeeded
	// found; 0 before one.
	DataNodes int
	// Replicas is index.number_of_replicas of each Monocle index, by name, as the last read
	// whose plan kept them (ReplicasPlan.Keep) left them; nil before one, without Keep, or when
	// they could not be read. ReplicasErr says why reading or setting them failed.
	Replicas    map[string]int
	ReplicasErr string
}

// BackupOutcome is what a read did of the backup and restore work of its plan.
type BackupOutcome struct {
	// Plan is the plan the read carried out.
	Plan Plan
	// RepoErr says why the own repository could not be registered, or why the existing one
	// could not be checked; RepoMissing is set when the existing one is not registered in the
	// cluster. Nothing was taken or listed then.
	RepoErr     string
	RepoMissing bool
	// Taken is true when Plan.Take was started or already existed; TakeErr says why not, or
	// why the repository could not be listed.
	Taken   bool
	TakeErr string
	// Listed is true when Snapshots lists the repository's readable snapshots (oldest
	// first, after retention) and Unreadable, sorted, the names of those whose metadata
	// Elasticsearch could not read (elastic.Client.Snapshots); retention leaves those alone.
	Listed     bool
	Snapshots  []elastic.Snapshot
	Unreadable []string
	// Sizes are the sizes in bytes of the successful snapshots read so far, by name.
	Sizes map[string]int64
	// Restore is what the restore step did.
	Restore RestoreOutcome
}

// RestoreOutcome is what a read did of a restore step.
type RestoreOutcome struct {
	// Indices are the snapshot's, all closed or missing (Pending step).
	Indices []string
	// Closed is true when the Pending step ended: the indices are closed or missing.
	Closed bool
	// Done is true when the restore's indices are recovered (Restoring step).
	Done bool
	// Failed says why the restore cannot be done (the phase becomes Failed); Err why the
	// step could not end this time (it is tried again).
	Failed, Err string
}

// ClaimRequest is what a sync asks of the claim of a Monocle's cluster of elasticsearchRef or
// external: recording the Monocle, with its own credentials, as the owner of the cluster's
// Monocle indices in elastic.OwnerIndex, before the API and crawler start and before any
// other request of the operator's to that cluster. Monocle's index names are fixed, so one
// cluster serves one Monocle.
type ClaimRequest struct {
	// Target is the cluster, with the Monocle's credentials and CA. A claim starts at once
	// when its kind or URL changes, and the last claim's result then no longer counts; a
	// change of the credentials or CA alone keeps it. It holds a password: never log it.
	Target resources.ElasticsearchTarget
	// Adopt lets the claim take a cluster that holds Monocle indices (elastic.IsMonocleIndex)
	// but no owner record, as a cluster used under an operator that kept none; without it such
	// a cluster is left unclaimed (Claim.Unrecorded). A cluster without Monocle indices is
	// claimed either way.
	Adopt bool
	// OwnerGone reports whether a recorded owner no longer exists, which the claim then
	// replaces; nil means none is. It runs in the claim's goroutine: it must be safe for
	// concurrent use (an informer's lister is).
	OwnerGone func(elastic.Owner) bool
}

// Claim is what the claims of a Monocle's cluster found, as Worker.Claim returns it. Every
// claim reads the record again, after the interval, so that a Monocle whose record was
// replaced learns it.
type Claim struct {
	// Pending is true while the first claim of the target is under way.
	Pending bool
	// Done is when the last claim ended; zero before the first.
	Done time.Time
	// Owned is true when the last claim that did not fail found the Monocle the owner: it
	// recorded it, or read its UID in the record.
	Owned bool
	// Owner is the owner the last claim that did not fail read in the record, when another
	// Monocle's.
	Owner elastic.Owner
	// Unrecorded is set when the last claim that did not fail found Monocle indices and no
	// record, and had no Adopt.
	Unrecorded bool
	// Err says why the last claim failed ("" when it did not); the fields above are then
	// those of the claim before.
	Err string
	// AddressRefused is set when the last claim failed because the cluster's host is, or
	// resolves to, an address the operator does not connect to (elastic.ErrAddressRefused).
	AddressRefused bool
}
