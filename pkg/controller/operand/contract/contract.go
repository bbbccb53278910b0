// Package contract is what a sync hands the operand worker (package operand) and what the
// worker gives back: the plan of the Elasticsearch work due and the result of a read, with
// the rules both sides read them by. The planners of package day2 make the plans and read
// the results with it alone, so that what links them (the kubectl plugin) does not link the
// worker. It does no I/O.
package contract

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

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
// plan, as the worker's Observe (package operand) returns it.
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

// ScheduledSnapshotPrefix starts the names of the snapshots a schedule takes: only those
// expire (Plan.Keep).
const ScheduledSnapshotPrefix = "scheduled-"

// CrawlerKey identifies the crawler named crawler of a workspace in Result.Crawlers and
// Result.CrawlerErrors: "<workspace>/<crawler>".
func CrawlerKey(workspace, crawler string) string { return workspace + "/" + crawler }

// Mebibytes is n bytes as a quantity of whole MiB, rounded up, so that the status changes
// with the data by MiB, not by byte.
func Mebibytes(n int64) *resource.Quantity {
	const mib = 1 << 20
	return resource.NewQuantity((n+mib-1)/mib*mib, resource.BinarySI)
}

// ReplicasFit reports whether replicas replicas of each shard can all be assigned in a
// cluster of dataNodes data nodes: Elasticsearch never puts two copies of one shard on one
// node (elastic/elasticsearch v7.17 SameShardAllocationDecider), so a primary and its
// replicas need replicas+1 data nodes; the copies beyond stay unassigned and the cluster
// yellow. The bundled Elasticsearch is a single node: 0 only.
func ReplicasFit(replicas int32, dataNodes int) bool {
	return replicas >= 0 && int(replicas) <= dataNodes-1
}

// LastSuccessful is the successful snapshot of snaps that ended last, or nil.
func LastSuccessful(snaps []elastic.Snapshot) *elastic.Snapshot {
	var last *elastic.Snapshot
	for i := range snaps {
		s := &snaps[i]
		if s.State == elastic.SnapshotSuccess && (last == nil || !s.End.Before(last.End)) {
			last = s
		}
	}
	return last
}
