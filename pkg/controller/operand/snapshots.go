package operand

import (
	"context"
	"errors"
	"strings"

	"k8s.io/klog/v2"

	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// Snapshots. The operator takes them itself with Elasticsearch's snapshot API, in the
// Monocle's own repository (resources.BackupRepositoryName), or in one registered by someone
// else (spec.backup.repository.existing), which it never registers or changes. A snapshot's name comes from
// what asked for it (a schedule's slot, an annotation's value), so a process that dies after
// Elasticsearch accepted a snapshot and before the status said so asks again, meets "already
// exists" (or "already in-progress" while it runs), and counts it as taken: no snapshot is
// taken twice.
//
// A snapshot whose metadata Elasticsearch cannot read (a damaged or missing snap-<uuid>.dat)
// is listed apart (BackupOutcome.Unreadable): retention neither deletes it, since the
// failure may be passing (an object store that did not answer) and the snapshot good, nor
// counts it among the kept ones, since nothing says it succeeded or when.

// runSnapshots carries out the snapshot work of p against client: it registers the own
// repository, or checks that the existing one is registered (useRepository), starts p.Take,
// lists the repository, deletes the readable scheduled snapshots beyond p.Keep and reads the
// size of the newest successful snapshot (once per snapshot: sizes carries the earlier ones).
func runSnapshots(ctx context.Context, client elastic.Client, p Plan, sizes map[string]int64) BackupOutcome {
	out := BackupOutcome{Plan: p, Sizes: map[string]int64{}}
	repo := p.BackupRepository()
	if repo == "" {
		return out
	}
	if err := useRepository(ctx, client, repo, p.Repo); err != nil {
		out.RepoErr, out.RepoMissing = err.Error(), p.Repo.Type == "" && elastic.IsNotFound(err)
		return out
	}
	if p.Take != "" {
		err := takeSnapshot(ctx, client, repo, p.Take)
		out.Taken = err == nil
		if err != nil {
			out.TakeErr = err.Error()
		}
	}
	snaps, unreadable, err := client.Snapshots(ctx, repo)
	if err != nil {
		out.TakeErr = strings.TrimPrefix(out.TakeErr+"; ", "; ") + err.Error()
		return out
	}
	if len(unreadable) > 0 {
		// BackupReady names them; the log at every read would only repeat it.
		klog.FromContext(ctx).V(2).Info("Elasticsearch cannot read some snapshots of the repository; retention leaves them alone",
			"snapshots", unreadable)
	}
	for _, s := range expiredSnapshots(snaps, p.Keep) {
		if err := client.DeleteSnapshot(ctx, repo, s.Name); err != nil {
			klog.FromContext(ctx).V(2).Info("Deleting an expired snapshot failed", "snapshot", s.Name, "err", err)
			continue
		}
		snaps = without(snaps, s.Name)
	}
	out.Listed, out.Snapshots, out.Unreadable = true, snaps, unreadable
	if last := contract.LastSuccessful(snaps); last != nil {
		if n, ok := sizes[last.Name]; ok {
			out.Sizes[last.Name] = n
		} else if n, err := client.SnapshotSize(ctx, repo, last.Name); err == nil {
			out.Sizes[last.Name] = n
		}
	}
	return out
}

// useRepository makes repository name usable: it registers repo under name, or, when repo's
// Type is "" (a repository registered by someone else, spec's existing), checks that name is
// registered, an error that elastic.IsNotFound matches when it is not, and never registers or
// changes it.
func useRepository(ctx context.Context, client elastic.Client, name string, repo elastic.Repository) error {
	if repo.Type == "" {
		return client.CheckRepository(ctx, name)
	}
	return client.EnsureRepository(ctx, name, repo)
}

// takeSnapshot starts snapshot name of the Monocle indices (monocle*, elastic.IsMonocleIndex:
// not the owner record, which belongs to the cluster, not to its data) in repository repo; one
// that already exists, or is still being taken, counts as taken: the name is this Monocle's
// own.
func takeSnapshot(ctx context.Context, client elastic.Client, repo, name string) error {
	indices, err := client.Indices(ctx, monoclePattern)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(indices))
	for _, ix := range indices {
		if elastic.IsMonocleIndex(ix.Name) {
			names = append(names, ix.Name)
		}
	}
	if len(names) == 0 {
		return errors.New("Elasticsearch has no Monocle index yet (monocle*): the API creates them when it starts")
	}
	err = client.CreateSnapshot(ctx, repo, name, names)
	if elastic.IsSnapshotNameTaken(err) {
		return nil
	}
	return err
}

// expiredSnapshots are the scheduled snapshots of snaps (oldest first) older than the keep
// newest successful ones; running ones are never expired.
func expiredSnapshots(snaps []elastic.Snapshot, keep int) []elastic.Snapshot {
	kept := 0
	var out []elastic.Snapshot
	for i := len(snaps) - 1; i >= 0; i-- {
		s := snaps[i]
		if !strings.HasPrefix(s.Name, contract.ScheduledSnapshotPrefix) || s.State == elastic.SnapshotInProgress {
			continue
		}
		if kept >= keep {
			out = append(out, s)
			continue
		}
		if s.State == elastic.SnapshotSuccess {
			kept++
		}
	}
	return out
}

func without(snaps []elastic.Snapshot, name string) []elastic.Snapshot {
	out := snaps[:0:0]
	for _, s := range snaps {
		if s.Name != name {
			out = append(out, s)
		}
	}
	return out
}
