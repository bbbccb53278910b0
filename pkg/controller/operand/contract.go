package operand

import (
	"time"

	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// What a sync hands the worker and what it gets back. A sync plans (package day2), the
// worker reads and carries the plan out in the background, and a later sync turns the
// result into the status. The plan and the result are declared in package contract, which
// day2 uses without linking the worker.

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
	// Target is the Elasticsearch the reads go to (resources.NewTarget), at its URL, with
	// its credentials and CA. A read starts at once when it changes, with a client built for
	// it. It holds a password: never log it.
	Target resources.ElasticsearchTarget
}

// The plan and the result, as the worker names them.
type (
	// Plan is the Elasticsearch work a sync asks the next read of a Monocle to do besides
	// reading its health (contract.Plan).
	Plan = contract.Plan
	// ReplicasPlan is the number_of_replicas a read keeps on Monocle's indices
	// (contract.ReplicasPlan).
	ReplicasPlan = contract.ReplicasPlan
	// RestorePlan is one step of a restore of a snapshot (contract.RestorePlan).
	RestorePlan = contract.RestorePlan
	// Result is what the last read of a Monocle's Elasticsearch found and what it did of
	// its plan (contract.Result).
	Result = contract.Result
	// BackupOutcome is what a read did of the backup and restore work of its plan
	// (contract.BackupOutcome).
	BackupOutcome = contract.BackupOutcome
	// RestoreOutcome is what a read did of a restore step (contract.RestoreOutcome).
	RestoreOutcome = contract.RestoreOutcome
)

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
