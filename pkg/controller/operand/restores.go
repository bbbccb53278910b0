package operand

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// runRestore carries out restore step p against client. A restore restores Monocle's indices
// only (elastic.IsMonocleIndex), by their names, whatever else the snapshot holds (never the
// owner record, elastic.OwnerIndex, of the cluster the snapshot was taken in, which would
// give this cluster's Monocle indices to that cluster's owner): a snapshot
// of another cluster can hold data streams and hidden indices (.ds-ilm-history-*, .kibana*)
// that are none of the Monocle's business, and any of them open in this cluster would make
// Elasticsearch refuse the whole restore.
//
// The Pending step registers the source repository (or checks that one registered by
// someone else is there: a missing one is an error, tried again, not a failed restore), reads the snapshot's Monocle indices
// (none is a Failed restore) and closes those that exist open, hidden ones included:
// Elasticsearch restores only over closed indices, and closing is idempotent. The Restoring
// step starts the restore, then reads whether it is done. Elasticsearch refuses to restore
// over an open index, and only a restore reopens the indices the Pending step left closed or
// missing: a refusal that names one of them means a restore this operator started before,
// which is then only waited for. A refusal naming another index is an error with
// Elasticsearch's reason.
func runRestore(ctx context.Context, client elastic.Client, p RestorePlan) RestoreOutcome {
	var out RestoreOutcome
	if err := useRepository(ctx, client, p.RepoName, p.Repo); err != nil {
		verb := "registering"
		if p.Repo.Type == "" {
			verb = "checking"
		}
		out.Err = verb + " the repository " + p.RepoName + ": " + err.Error()
		return out
	}
	switch p.Phase {
	case monoclev1alpha1.RestorePending:
		snap, err := client.Snapshot(ctx, p.RepoName, p.Snapshot)
		switch {
		case elastic.IsNotFound(err):
			out.Failed = fmt.Sprintf("snapshot %s is not in repository %s: %v", p.Snapshot, p.RepoName, err)
			return out
		case err != nil:
			out.Err = err.Error()
			return out
		case snap.State != elastic.SnapshotSuccess && snap.State != elastic.SnapshotPartial:
			out.Failed = fmt.Sprintf("snapshot %s is %s, not SUCCESS", p.Snapshot, snap.State)
			return out
		}
		indices := monocleIndices(snap.Indices)
		if len(indices) == 0 {
			out.Failed = fmt.Sprintf("snapshot %s holds no Monocle index (%s or %s<workspace>); it holds [%s]",
				p.Snapshot, elastic.ConfigIndex, elastic.WorkspaceIndexPrefix, strings.Join(snap.Indices, ", "))
			return out
		}
		existing, err := client.Indices(ctx, monoclePattern)
		if err != nil {
			out.Err = err.Error()
			return out
		}
		var open []string
		for _, ix := range existing {
			if ix.Status == "open" && slices.Contains(indices, ix.Name) {
				open = append(open, ix.Name)
			}
		}
		if len(open) > 0 {
			if err := client.CloseIndices(ctx, open...); err != nil {
				out.Err = err.Error()
				return out
			}
		}
		out.Indices, out.Closed = indices, true
	case monoclev1alpha1.RestoreRestoring:
		// A list written before restores were limited to Monocle's indices may hold others.
		indices := monocleIndices(strings.Split(p.Indices, ","))
		if len(indices) == 0 {
			out.Failed = fmt.Sprintf("no Monocle index to restore from snapshot %s (indices %q)", p.Snapshot, p.Indices)
			return out
		}
		err := client.Restore(ctx, p.RepoName, p.Snapshot, indices)
		var se *elastic.StatusError
		switch {
		case err == nil:
		case refusedForOurs(err, indices):
			// Only this restore reopens the indices the Pending step left closed or missing: it
			// was started before, by this operator.
		case elastic.IsNotFound(err):
			out.Failed = err.Error()
			return out
		case errors.As(err, &se) && se.Code >= 400 && se.Code < 500:
			out.Failed = err.Error()
			return out
		default:
			out.Err = err.Error()
			return out
		}
		done, err := client.RestoreDone(ctx, indices)
		if err != nil {
			out.Err = err.Error()
			return out
		}
		out.Done = done
	}
	return out
}

// monocleIndices returns the names of list that are Monocle's indices, in order.
func monocleIndices(list []string) []string {
	var out []string
	for _, n := range list {
		if elastic.IsMonocleIndex(n) {
			out = append(out, n)
		}
	}
	return out
}

// refusedForOurs reports whether err is Elasticsearch's refusal to restore over an open index
// that is one of indices.
func refusedForOurs(err error, indices []string) bool {
	index, ok := elastic.RefusedOpenIndex(err)
	return ok && slices.Contains(indices, index)
}
