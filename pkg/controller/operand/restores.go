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

// runRestore carries out restore step p against client. The Pending step registers the
// source repository, reads the snapshot's indices and closes those that exist open:
// Elasticsearch restores only over closed indices, and closing is idempotent. The Restoring
// step starts the restore, then reads whether it is done. Elasticsearch refuses to restore
// over an open index, and only a restore reopens the indices the Pending step closed: a
// refusal for that reason means a restore this operator started before, which is then only
// waited for.
func runRestore(ctx context.Context, client elastic.Client, p RestorePlan) RestoreOutcome {
	var out RestoreOutcome
	if err := client.EnsureRepository(ctx, p.RepoName, p.Repo); err != nil {
		out.Err = "registering the repository " + p.RepoName + ": " + err.Error()
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
		case len(snap.Indices) == 0:
			out.Failed = fmt.Sprintf("snapshot %s holds no index", p.Snapshot)
			return out
		}
		existing, err := client.Indices(ctx, "*")
		if err != nil {
			out.Err = err.Error()
			return out
		}
		var open []string
		for _, ix := range existing {
			if ix.Status == "open" && slices.Contains(snap.Indices, ix.Name) {
				open = append(open, ix.Name)
			}
		}
		if len(open) > 0 {
			if err := client.CloseIndices(ctx, open...); err != nil {
				out.Err = err.Error()
				return out
			}
		}
		out.Indices, out.Closed = snap.Indices, true
	case monoclev1alpha1.RestoreRestoring:
		indices := strings.Split(p.Indices, ",")
		err := client.Restore(ctx, p.RepoName, p.Snapshot, indices)
		var se *elastic.StatusError
		switch {
		case err == nil:
		case errors.As(err, &se) && se.Type == "snapshot_restore_exception" && strings.Contains(se.Reason, "open index with same name already exists"):
			// Only this restore reopens the indices the Pending step closed: it was started
			// before, by this operator.
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
