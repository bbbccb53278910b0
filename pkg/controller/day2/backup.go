package day2

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Backups. The operator takes the snapshots itself, as CloudNativePG does, with
// Elasticsearch's snapshot API: a sync decides what is due from the spec and the status
// (PlanBackup), the operand worker carries it out in the background, and a later sync
// writes what it found into the status (BackupStatus). A snapshot's name comes from what
// asked for it (the schedule's slot, the annotation's value), so that no snapshot is taken
// twice (see package operand).

// manualPrefix starts the names of the snapshots the annotation takes; the schedule's start
// with contract.ScheduledSnapshotPrefix.
const manualPrefix = "manual-"

// DefaultBackupKeep is how many scheduled snapshots are kept when spec.backup.keep is unset.
const DefaultBackupKeep = 7

// cronParser parses spec.backup.schedule as Kubernetes CronJobs do (five fields or a
// descriptor such as @daily; robfig/cron v3, the parser of the CronJob controller).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ownRepository is the snapshot repository of spec.backup, as registered in Elasticsearch;
// its Type is "" without spec.backup, or for an existing repository, which the operator
// never registers.
func ownRepository(m *monoclev1alpha1.Monocle) elastic.Repository {
	if m.Spec.Backup == nil || m.Spec.Backup.Repository.Existing != "" {
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

// backupRepositoryName is the name of the repository m's snapshots go into: the existing
// one, or the operator's own.
func backupRepositoryName(m *monoclev1alpha1.Monocle) string {
	if m.Spec.Backup != nil && m.Spec.Backup.Repository.Existing != "" {
		return m.Spec.Backup.Repository.Existing
	}
	return resources.BackupRepositoryName
}

// describeRepository is status.backup.repository for m.
func describeRepository(m *monoclev1alpha1.Monocle) string {
	if name := m.Spec.Backup.Repository.Existing; name != "" {
		return "existing " + name
	}
	if s3 := m.Spec.Backup.Repository.S3; s3 != nil {
		return "s3 " + s3.Bucket + "/" + resources.S3BasePath(m, s3)
	}
	return "volume " + resources.BackupClaimName(m)
}

// ManualSnapshotName is the snapshot the annotation value v asks for.
func ManualSnapshotName(v string) string {
	sum := sha256.Sum256([]byte(v))
	return manualPrefix + hex.EncodeToString(sum[:4])
}

// scheduledSnapshotName is the snapshot of the schedule's slot t.
func scheduledSnapshotName(t time.Time) string {
	return contract.ScheduledSnapshotPrefix + t.UTC().Format("20060102-1504")
}

// PlanBackup returns what is due of m's backups at now: the snapshot the annotation asks for
// when its value is not the last one served, else the scheduled one when the slot in
// status.backup.nextScheduled has come.
func PlanBackup(m *monoclev1alpha1.Monocle, now time.Time) contract.Plan {
	if m.Spec.Backup == nil {
		return contract.Plan{}
	}
	p := contract.Plan{Repo: ownRepository(m), Existing: m.Spec.Backup.Repository.Existing,
		Keep: int(ptr.Deref(m.Spec.Backup.Keep, DefaultBackupKeep))}
	st := m.Status.Backup
	if st == nil {
		st = &monoclev1alpha1.BackupStatus{}
	}
	if v, ok := m.Annotations[monoclev1alpha1.BackupAnnotation]; ok && v != "" && v != st.LastRequest {
		p.Take = ManualSnapshotName(v)
		return p
	}
	if st.Schedule == m.Spec.Backup.Schedule && st.NextScheduled != nil && !now.Before(st.NextScheduled.Time) {
		p.Take = scheduledSnapshotName(st.NextScheduled.Time)
	}
	return p
}

// BackupResult is the status of m's backups and its BackupReady condition.
type BackupResult struct {
	// Status is status.backup, nil without spec.backup.
	Status *monoclev1alpha1.BackupStatus
	// Condition is the BackupReady condition.
	Condition metav1.Condition
}

// BackupStatus returns m's backup status at now, from the status m has and what the last
// read found (out; nil when this process has not read m's Elasticsearch since the plan
// asked for work: the status then keeps what it had). Snapshots Elasticsearch cannot read
// (out.Unreadable) count in status.backup.snapshots and are named at the end of the
// condition's message, whatever its reason.
func BackupStatus(m *monoclev1alpha1.Monocle, out *contract.BackupOutcome, now time.Time) BackupResult {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionBackupReady}
	if m.Spec.Backup == nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.NotBackedUp
		cond.Message = "spec.backup is unset: the Elasticsearch index is not backed up"
		return BackupResult{Condition: cond}
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
		st.Schedule, st.NextScheduled = spec, StatusTime(sched.Next(now))
	}

	if out != nil {
		p := out.Plan
		if out.Taken && p.Take != "" {
			if v := m.Annotations[monoclev1alpha1.BackupAnnotation]; v != "" && ManualSnapshotName(v) == p.Take {
				st.LastRequest = v
			}
			if sched != nil && st.NextScheduled != nil && scheduledSnapshotName(st.NextScheduled.Time) == p.Take {
				st.NextScheduled = StatusTime(sched.Next(now))
			}
		}
		if out.Listed {
			st.Snapshots = int32(len(out.Snapshots) + len(out.Unreadable))
			st.Running = ""
			var running []string
			for _, s := range out.Snapshots {
				if s.State == elastic.SnapshotInProgress {
					running = append(running, s.Name)
				}
			}
			st.Running = strings.Join(running, ",")
			if last := contract.LastSuccessful(out.Snapshots); last != nil {
				ls := &monoclev1alpha1.SnapshotStatus{Name: last.Name, Time: StatusTime(last.End)}
				if n, ok := out.Sizes[last.Name]; ok {
					ls.Size = resource.NewQuantity(n, resource.BinarySI)
				} else if st.LastSuccessful != nil && st.LastSuccessful.Name == last.Name {
					ls.Size = st.LastSuccessful.Size
				}
				st.LastSuccessful = ls
			}
			if f := lastFailed(out.Snapshots, contract.LastSuccessful(out.Snapshots)); f != nil {
				st.LastFailure = &monoclev1alpha1.SnapshotStatus{Name: f.Name, Time: StatusTime(f.End), Reason: Truncate(failureReason(*f))}
			} else if st.LastFailure != nil && st.LastSuccessful != nil && st.LastFailure.Time != nil &&
				!st.LastFailure.Time.After(st.LastSuccessful.Time.Time) {
				st.LastFailure = nil
			}
		}
		if why := firstNonEmpty(out.RepoErr, out.TakeErr); why != "" {
			why = Truncate(why)
			if st.LastFailure == nil || st.LastFailure.Name != p.Take || st.LastFailure.Reason != why {
				st.LastFailure = &monoclev1alpha1.SnapshotStatus{Name: p.Take, Time: StatusTime(now), Reason: why}
			}
		}
	}

	switch {
	case schedErr != nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.InvalidSchedule
		cond.Message = Truncate(fmt.Sprintf("spec.backup.schedule %q is not a cron schedule (minute hour day-of-month month day-of-week, or @daily...): %v; only on-demand snapshots are taken",
			m.Spec.Backup.Schedule, schedErr))
	case out != nil && out.RepoMissing:
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.BackupRepositoryMissing
		cond.Message = Truncate(fmt.Sprintf("The snapshot repository %s of backup.repository.existing is not registered in the cluster (GET _snapshot/%s: %s): register it there; the operator never registers or changes it",
			out.Plan.Existing, out.Plan.Existing, out.RepoErr))
	case out != nil && out.RepoErr != "":
		verb := "register"
		if out.Plan.Existing != "" {
			verb = "check"
		}
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.RepositoryFailed
		cond.Message = Truncate("Cannot " + verb + " the snapshot repository (" + st.Repository + "): " + out.RepoErr)
	case failing(st, out):
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.BackupFailed
		name := st.LastFailure.Name
		if name == "" {
			name = "the last backup"
		}
		cond.Message = Truncate(fmt.Sprintf("Snapshot %s failed: %s", name, st.LastFailure.Reason))
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
	if out != nil && out.Listed && len(out.Unreadable) > 0 {
		cond.Message = Truncate(fmt.Sprintf("%s. Elasticsearch cannot read %d snapshots of the repository (%s): they are left out of the listing and never deleted by keep; GET _snapshot/%s/<name> gives the error",
			cond.Message, len(out.Unreadable), strings.Join(out.Unreadable, ", "), backupRepositoryName(m)))
	}
	return BackupResult{Status: st, Condition: cond}
}

// failing reports whether the newest backup attempt of st failed: from the snapshots a read
// listed (out), by their end times to the millisecond; else from the status, where times
// are kept to the second and a failure in the second of the last success counts as failing.
func failing(st *monoclev1alpha1.BackupStatus, out *contract.BackupOutcome) bool {
	if st.LastFailure == nil {
		return false
	}
	if st.LastSuccessful == nil || st.LastFailure.Time == nil || st.LastSuccessful.Time == nil {
		return true
	}
	if out != nil && out.Listed && out.RepoErr == "" && out.TakeErr == "" {
		if last := contract.LastSuccessful(out.Snapshots); last != nil && last.Name == st.LastSuccessful.Name {
			for _, s := range out.Snapshots {
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
