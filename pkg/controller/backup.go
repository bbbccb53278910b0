package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Backups (issue 13). The operator takes the snapshots itself, as CloudNativePG does, with
// Elasticsearch's snapshot API: a sync decides what is due from the spec and the status
// (backupPlan), the background read of the Monocle's Elasticsearch (health.go) carries it
// out with the read's timeout, and a later sync writes what it found into the status. A
// snapshot's name comes from what asked for it (the schedule's slot, the annotation's
// value), so a process that dies after Elasticsearch accepted a snapshot and before the
// status said so asks again, meets "already exists", and counts it as taken: no snapshot is
// taken twice.

// backupPlan is the Elasticsearch work a sync asks the next read of a Monocle to do besides
// reading its health. It is comparable: a read starts at once when the plan changes.
type backupPlan struct {
	// repo is the Monocle's own repository (resources.BackupRepositoryName); Type "" when
	// spec.backup is unset.
	repo elastic.Repository
	// take is the snapshot to start, or "".
	take string
	// keep is how many scheduled snapshots to keep.
	keep int
	// restore is the restore step due, if any.
	restore restorePlan
	// deleteIndex is the index of a removed workspace to delete (indices.go), or "".
	deleteIndex string
	// keepBlocks leaves a flood-stage read-only block the read finds as it is
	// (AutoPilotBlockClearing).
	keepBlocks bool
}

// restorePlan is one step of a restore (restore.go).
type restorePlan struct {
	// phase is the persisted phase the step moves on from: Pending (read the snapshot's
	// indices and close the open ones) or Restoring (start the restore, then wait for it).
	// "" means no step.
	phase    monoclev1alpha1.RestorePhase
	repoName string
	repo     elastic.Repository
	snapshot string
	// indices is the comma-joined index list of a Restoring step (comparable).
	indices string
}

// backupOutcome is what a read did of its plan.
type backupOutcome struct {
	plan backupPlan
	// repoErr says why the own repository could not be registered.
	repoErr string
	// taken is true when plan.take was started or already existed; takeErr says why not.
	taken   bool
	takeErr string
	// listed is true when snapshots lists the repository (after retention).
	listed    bool
	snapshots []elastic.Snapshot
	// sizes are the sizes of the successful snapshots read so far, by name.
	sizes map[string]int64
	// restore is what the restore step did.
	restore restoreOutcome
}

// scheduledPrefix and manualPrefix start the names of the snapshots the schedule and the
// annotation take.
const (
	scheduledPrefix = "scheduled-"
	manualPrefix    = "manual-"
)

// DefaultBackupKeep is how many scheduled snapshots are kept when spec.backup.keep is unset.
const DefaultBackupKeep = 7

// cronParser parses spec.backup.schedule as Kubernetes CronJobs do (five fields or a
// descriptor such as @daily; robfig/cron v3, the parser of the CronJob controller).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ownRepository is the snapshot repository of spec.backup, as registered in Elasticsearch.
func ownRepository(m *monoclev1alpha1.Monocle) elastic.Repository {
	if m.Spec.Backup == nil {
		return elastic.Repository{}
	}
	return repositoryOf(m, &m.Spec.Backup.Repository, resources.BackupMountPath, resources.BackupS3Client, false)
}

// repositoryOf is the Elasticsearch repository of r: an fs one at location, or an s3 one
// whose credentials are those of client.
func repositoryOf(m *monoclev1alpha1.Monocle, r *monoclev1alpha1.BackupRepository, location, client string, readOnly bool) elastic.Repository {
	if s3 := r.S3; s3 != nil {
		repo := elastic.Repository{Type: elastic.RepositoryS3, Bucket: s3.Bucket, BasePath: resources.S3BasePath(m, s3),
			Endpoint: s3.Endpoint, Protocol: s3.Protocol, PathStyleAccess: s3.PathStyleAccess, ReadOnly: readOnly}
		if client != resources.BackupS3Client {
			repo.Client = client
		}
		return repo
	}
	return elastic.Repository{Type: elastic.RepositoryFS, Location: location, ReadOnly: readOnly}
}

// describeRepository is status.backup.repository for m.
func describeRepository(m *monoclev1alpha1.Monocle) string {
	if s3 := m.Spec.Backup.Repository.S3; s3 != nil {
		return "s3 " + s3.Bucket + "/" + resources.S3BasePath(m, s3)
	}
	return "volume " + resources.BackupClaimName(m)
}

// manualSnapshotName is the snapshot the annotation value v asks for.
func manualSnapshotName(v string) string {
	sum := sha256.Sum256([]byte(v))
	return manualPrefix + hex.EncodeToString(sum[:4])
}

// scheduledSnapshotName is the snapshot of the schedule's slot t.
func scheduledSnapshotName(t time.Time) string {
	return scheduledPrefix + t.UTC().Format("20060102-1504")
}

// planBackup returns what is due of m's backups at now: the snapshot the annotation asks for
// when its value is not the last one served, else the scheduled one when the slot in
// status.backup.nextScheduled has come.
func planBackup(m *monoclev1alpha1.Monocle, now time.Time) backupPlan {
	if m.Spec.Backup == nil {
		return backupPlan{}
	}
	p := backupPlan{repo: ownRepository(m), keep: int(ptr.Deref(m.Spec.Backup.Keep, DefaultBackupKeep))}
	st := m.Status.Backup
	if st == nil {
		st = &monoclev1alpha1.BackupStatus{}
	}
	if v, ok := m.Annotations[monoclev1alpha1.BackupAnnotation]; ok && v != "" && v != st.LastRequest {
		p.take = manualSnapshotName(v)
		return p
	}
	if st.Schedule == m.Spec.Backup.Schedule && st.NextScheduled != nil && !now.Before(st.NextScheduled.Time) {
		p.take = scheduledSnapshotName(st.NextScheduled.Time)
	}
	return p
}

// runBackup carries out p against client: it registers the repository, starts p.take, deletes
// the scheduled snapshots beyond p.keep, lists the repository and reads the size of the
// newest successful snapshot (once per snapshot: sizes carries the earlier ones).
func runBackup(ctx context.Context, client elastic.Client, p backupPlan, sizes map[string]int64) backupOutcome {
	out := backupOutcome{plan: p, sizes: map[string]int64{}}
	if p.repo.Type == "" {
		return out
	}
	if err := client.EnsureRepository(ctx, resources.BackupRepositoryName, p.repo); err != nil {
		out.repoErr = err.Error()
		return out
	}
	if p.take != "" {
		err := takeSnapshot(ctx, client, p.take)
		out.taken = err == nil
		if err != nil {
			out.takeErr = err.Error()
		}
	}
	snaps, err := client.Snapshots(ctx, resources.BackupRepositoryName)
	if err != nil {
		out.takeErr = strings.TrimPrefix(out.takeErr+"; ", "; ") + err.Error()
		return out
	}
	for _, s := range expiredSnapshots(snaps, p.keep) {
		if err := client.DeleteSnapshot(ctx, resources.BackupRepositoryName, s.Name); err != nil {
			klog.FromContext(ctx).V(2).Info("Deleting an expired snapshot failed", "snapshot", s.Name, "err", err)
			continue
		}
		snaps = without(snaps, s.Name)
	}
	out.listed, out.snapshots = true, snaps
	if last := lastSuccessful(snaps); last != nil {
		if n, ok := sizes[last.Name]; ok {
			out.sizes[last.Name] = n
		} else if n, err := client.SnapshotSize(ctx, resources.BackupRepositoryName, last.Name); err == nil {
			out.sizes[last.Name] = n
		}
	}
	return out
}

// takeSnapshot starts snapshot name of the Monocle indices (monocle.*); one that already
// exists counts as taken.
func takeSnapshot(ctx context.Context, client elastic.Client, name string) error {
	indices, err := client.Indices(ctx, "monocle*")
	if err != nil {
		return err
	}
	if len(indices) == 0 {
		return errors.New("Elasticsearch has no Monocle index yet (monocle*): the API creates them when it starts")
	}
	names := make([]string, 0, len(indices))
	for _, ix := range indices {
		names = append(names, ix.Name)
	}
	err = client.CreateSnapshot(ctx, resources.BackupRepositoryName, name, names)
	var se *elastic.StatusError
	if errors.As(err, &se) && se.Type == "invalid_snapshot_name_exception" && strings.Contains(se.Reason, "already exists") {
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
		if !strings.HasPrefix(s.Name, scheduledPrefix) || s.State == elastic.SnapshotInProgress {
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

// lastSuccessful is the successful snapshot of snaps that ended last.
func lastSuccessful(snaps []elastic.Snapshot) *elastic.Snapshot {
	var last *elastic.Snapshot
	for i := range snaps {
		s := &snaps[i]
		if s.State == elastic.SnapshotSuccess && (last == nil || !s.End.Before(last.End)) {
			last = s
		}
	}
	return last
}

// backupResult is the status of m's backups and its BackupReady condition.
type backupResult struct {
	status    *monoclev1alpha1.BackupStatus
	condition metav1.Condition
}

// backupStatus returns m's backup status at now, from the status m has and what the last
// read found (out; nil when this process has not read m's Elasticsearch since the plan
// asked for work: the status then keeps what it had).
func backupStatus(m *monoclev1alpha1.Monocle, out *backupOutcome, now time.Time) backupResult {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionBackupReady}
	if m.Spec.Backup == nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.NotBackedUp
		cond.Message = "spec.backup is unset: the Elasticsearch index is not backed up"
		return backupResult{condition: cond}
	}
	st := &monoclev1alpha1.BackupStatus{}
	if m.Status.Backup != nil {
		st = m.Status.Backup.DeepCopy()
	}
	st.Repository = describeRepository(m)

	var schedErr error
	var sched cron.Schedule
	if spec := m.Spec.Backup.Schedule; spec == "" {
		st.Schedule, st.NextScheduled = "", nil
	} else if sched, schedErr = cronParser.Parse(spec); schedErr != nil {
		st.Schedule, st.NextScheduled = "", nil
	} else if st.Schedule != spec || st.NextScheduled == nil {
		st.Schedule, st.NextScheduled = spec, statusTime(sched.Next(now))
	}

	if out != nil {
		p := out.plan
		if out.taken && p.take != "" {
			if v := m.Annotations[monoclev1alpha1.BackupAnnotation]; v != "" && manualSnapshotName(v) == p.take {
				st.LastRequest = v
			}
			if sched != nil && st.NextScheduled != nil && scheduledSnapshotName(st.NextScheduled.Time) == p.take {
				st.NextScheduled = statusTime(sched.Next(now))
			}
		}
		if out.listed {
			st.Snapshots = int32(len(out.snapshots))
			st.Running = ""
			var running []string
			for _, s := range out.snapshots {
				if s.State == elastic.SnapshotInProgress {
					running = append(running, s.Name)
				}
			}
			st.Running = strings.Join(running, ",")
			if last := lastSuccessful(out.snapshots); last != nil {
				ls := &monoclev1alpha1.SnapshotStatus{Name: last.Name, Time: statusTime(last.End)}
				if n, ok := out.sizes[last.Name]; ok {
					ls.Size = resource.NewQuantity(n, resource.BinarySI)
				} else if st.LastSuccessful != nil && st.LastSuccessful.Name == last.Name {
					ls.Size = st.LastSuccessful.Size
				}
				st.LastSuccessful = ls
			}
			if f := lastFailed(out.snapshots, lastSuccessful(out.snapshots)); f != nil {
				st.LastFailure = &monoclev1alpha1.SnapshotStatus{Name: f.Name, Time: statusTime(f.End), Reason: truncate(failureReason(*f))}
			} else if st.LastFailure != nil && st.LastSuccessful != nil && st.LastFailure.Time != nil &&
				!st.LastFailure.Time.After(st.LastSuccessful.Time.Time) {
				st.LastFailure = nil
			}
		}
		if why := firstNonEmpty(out.repoErr, out.takeErr); why != "" {
			why = truncate(why)
			if st.LastFailure == nil || st.LastFailure.Name != p.take || st.LastFailure.Reason != why {
				st.LastFailure = &monoclev1alpha1.SnapshotStatus{Name: p.take, Time: statusTime(now), Reason: why}
			}
		}
	}

	switch {
	case schedErr != nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.InvalidSchedule
		cond.Message = truncate(fmt.Sprintf("spec.backup.schedule %q is not a cron schedule (minute hour day-of-month month day-of-week, or @daily...): %v; only on-demand snapshots are taken",
			m.Spec.Backup.Schedule, schedErr))
	case out != nil && out.repoErr != "":
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.RepositoryFailed
		cond.Message = truncate("Cannot register the snapshot repository (" + st.Repository + "): " + out.repoErr)
	case failing(st, out):
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.BackupFailed
		name := st.LastFailure.Name
		if name == "" {
			name = "the last backup"
		}
		cond.Message = truncate(fmt.Sprintf("Snapshot %s failed: %s", name, st.LastFailure.Reason))
	case st.LastSuccessful != nil:
		cond.Status, cond.Reason = metav1.ConditionTrue, reasons.BackupSucceeded
		cond.Message = fmt.Sprintf("Snapshot %s succeeded at %s", st.LastSuccessful.Name, st.LastSuccessful.Time.UTC().Format(time.RFC3339))
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, reasons.NoBackupYet
		cond.Message = "No snapshot was taken yet"
		if st.NextScheduled != nil {
			cond.Message += "; the next is due at " + st.NextScheduled.UTC().Format(time.RFC3339)
		}
	}
	return backupResult{status: st, condition: cond}
}

// failing reports whether the newest backup attempt of st failed: from the snapshots a read
// listed (out), by their end times to the millisecond; else from the status, where times
// are kept to the second and a failure in the second of the last success counts as failing.
func failing(st *monoclev1alpha1.BackupStatus, out *backupOutcome) bool {
	if st.LastFailure == nil {
		return false
	}
	if st.LastSuccessful == nil || st.LastFailure.Time == nil || st.LastSuccessful.Time == nil {
		return true
	}
	if out != nil && out.listed && out.repoErr == "" && out.takeErr == "" {
		if last := lastSuccessful(out.snapshots); last != nil && last.Name == st.LastSuccessful.Name {
			for _, s := range out.snapshots {
				if s.Name == st.LastFailure.Name {
					return !s.End.Before(last.End)
				}
			}
		}
	}
	return !st.LastFailure.Time.Before(st.LastSuccessful.Time)
}

// lastFailed is the newest FAILED or PARTIAL snapshot of snaps that ended no earlier than
// success (nil: none succeeded).
func lastFailed(snaps []elastic.Snapshot, success *elastic.Snapshot) *elastic.Snapshot {
	var last *elastic.Snapshot
	for i := range snaps {
		s := &snaps[i]
		if s.State != elastic.SnapshotFailed && s.State != elastic.SnapshotPartial {
			continue
		}
		if success != nil && s.End.Before(success.End) {
			continue
		}
		if last == nil || !s.End.Before(last.End) {
			last = s
		}
	}
	return last
}

func failureReason(s elastic.Snapshot) string {
	if s.Reason != "" {
		return fmt.Sprintf("%s: %s (%d of %d shards failed)", s.State, s.Reason, s.ShardsFailed, s.ShardsTotal)
	}
	return fmt.Sprintf("%s (%d of %d shards failed)", s.State, s.ShardsFailed, s.ShardsTotal)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// recordBackupTransition emits the events of a backup status change: BackupSucceeded when a
// new snapshot succeeded, BackupFailed when a new failure appeared.
func (c *Controller) recordBackupTransition(m *monoclev1alpha1.Monocle, was, is *monoclev1alpha1.BackupStatus) {
	if is == nil {
		return
	}
	if ls := is.LastSuccessful; ls != nil && (was == nil || was.LastSuccessful == nil || was.LastSuccessful.Name != ls.Name) {
		size := ""
		if ls.Size != nil {
			size = " (" + ls.Size.String() + ")"
		}
		c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.BackupSucceeded, "Snapshot %s succeeded%s", ls.Name, size)
	}
	if f := is.LastFailure; f != nil && (was == nil || was.LastFailure == nil || was.LastFailure.Name != f.Name || was.LastFailure.Reason != f.Reason) {
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.BackupFailed, "Snapshot %s failed: %s", f.Name, f.Reason)
	}
}

// ensureBackupClaim creates the PersistentVolumeClaim "<name>-backup" of a volume repository
// when the operator names it (no claimName) and it is missing, and grows it with
// spec.backup.repository.volume.storageSize; it never shrinks or deletes it.
func (c *Controller) ensureBackupClaim(ctx context.Context, m *monoclev1alpha1.Monocle) error {
	if !resources.BackupVolumeWanted(m) || (m.Spec.Backup.Repository.Volume != nil && m.Spec.Backup.Repository.Volume.ClaimName != "") {
		return nil
	}
	want := resources.NewBackupClaim(m)
	pvc, err := c.pvcs.Get(m.Namespace, want.Name)
	if apierrors.IsNotFound(err) {
		_, err = c.kubeclientset.CoreV1().PersistentVolumeClaims(m.Namespace).Create(ctx, want, metav1.CreateOptions{FieldManager: ControllerName})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("creating PVC %s of the snapshot repository: %w", want.Name, err)
		}
		owned.NoteCreated(ctx, c.recorder, m, "PersistentVolumeClaim", want.Name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading PVC %s from the cache: %w", want.Name, err)
	}
	size := want.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.Cmp(pvc.Spec.Resources.Requests[corev1.ResourceStorage]) <= 0 {
		return nil
	}
	grown := pvc.DeepCopy()
	grown.Spec.Resources.Requests[corev1.ResourceStorage] = size
	if _, err := c.kubeclientset.CoreV1().PersistentVolumeClaims(m.Namespace).Update(ctx, grown, metav1.UpdateOptions{FieldManager: ControllerName}); err != nil {
		return fmt.Errorf("expanding PVC %s of the snapshot repository to %s: %w", want.Name, size.String(), err)
	}
	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.VolumeExpansionRequested, "Requested %s for PVC %s", size.String(), want.Name)
	return nil
}

// statusTime is t as the status keeps it: metav1.Time is serialized to the second
// (RFC 3339), so a finer time would differ from its own copy read back, and every sync
// would write the status again.
func statusTime(t time.Time) *metav1.Time {
	return &metav1.Time{Time: t.UTC().Truncate(time.Second)}
}
