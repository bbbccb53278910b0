package day2

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Monocle version upgrades, done the way Monocle's authors do them. `monocle api`
// migrates the index before it listens, without a lock (Monocle 1.11.2, src/Main.hs and
// ensureConfigIndex in src/Monocle/Backend/Index.hs), and the 1.11 crawler sends fields an
// older API does not know: two API versions must never run over one index, and the new
// crawler must not start before the new API. So when the API's image changes (a config or
// Secret change keeps the zero-downtime rolling update):
//
//   - BackingUp: with spec.backup, an on-demand snapshot pre-upgrade-<8 hex of the new
//     image> is taken and waited for; a failed one blocks the upgrade (Blocked) unless the
//     annotation UpgradeWithoutBackupAnnotation says to go on;
//   - StoppingCrawler: the crawler, still on its old image, is scaled to zero;
//   - ReplacingAPI: once the crawler has no pod, the API gets the new image with the
//     Recreate strategy: its old pods are gone before a new one starts;
//   - StartingCrawler: once the new API is rolled out and ready, the crawler gets its new
//     image and starts;
//   - Succeeded.
//
// As for restores, the workloads are built from the phase the status holds, and a phase's
// end is only written to the status: an operator killed at any point resumes at the phase
// the status says, and the API and crawler images it builds never skip one.

// upgradeSnapshotPrefix starts the name of the snapshot taken before an upgrade.
const upgradeSnapshotPrefix = "pre-upgrade-"

// upgradeSnapshotName is the snapshot taken before upgrading the API to image.
func upgradeSnapshotName(image string) string {
	sum := sha256.Sum256([]byte(image))
	return upgradeSnapshotPrefix + hex.EncodeToString(sum[:4])
}

// configIndexVersion is the version of the config index Monocle version v writes: 4 from
// 1.9.0, 5 from 1.10.0, 7 from 1.11.0 (src/Monocle/Backend/Index.hs, upgradeConfigV*);
// 3 for any older 1.x. ok is false for a version it cannot tell.
func configIndexVersion(v [3]int) (int, bool) {
	if v[0] != 1 {
		return 0, false
	}
	switch {
	case v[1] >= 11:
		return 7, true
	case v[1] == 10:
		return 5, true
	case v[1] == 9:
		return 4, true
	default:
		return 3, true
	}
}

// monocleDowngrade reports whether going from image from to image to would run a Monocle
// that writes an older config index than the one from has written: such a Monocle does not
// read the index back (its upgradeConfigV* steps only go up).
func monocleDowngrade(from, to string) bool {
	f, okF := resources.ImageVersion(from)
	t, okT := resources.ImageVersion(to)
	if !okF || !okT {
		return false
	}
	fi, okF := configIndexVersion(f)
	ti, okT := configIndexVersion(t)
	return okF && okT && ti < fi
}

// UpgradeStep is what the upgrade of m asks of a sync: the images and replicas to build the
// API and the crawler with, the snapshot to take, and the status and condition to report.
type UpgradeStep struct {
	// APIImage and CrawlerImage override the spec's images ("" keeps them); APIRecreate
	// replaces the API's pods rather than rolling them; StopCrawler scales the crawler to 0.
	APIImage, CrawlerImage   string
	APIRecreate, StopCrawler bool
	// Snapshot is the pre-upgrade snapshot to take (contract.Plan.Take), or "".
	Snapshot string
	// Status is status.upgrade after this sync; Condition the Upgraded condition.
	Status    *monoclev1alpha1.UpgradeStatus
	Condition metav1.Condition
}

// templateImage is the image of the first container of d's pod template, or "".
func templateImage(d *appsv1.Deployment) string {
	if d == nil || len(d.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// PlanUpgrade returns the upgrade step of m at now, given its API and crawler Deployments as
// the cache has them and what the last read of Elasticsearch found of the snapshots (nil
// before one). A Monocle being restored is not upgraded: its API and crawler are stopped
// anyway, and start on the spec's images.
//
// An upgrade is a change of the spec's API image from the one the status says the API runs
// (status.api.image, as the previous sync saw it): an image someone else wrote into the
// Deployment is drift, put back at once, not an upgrade. The AutoPilotUpgradePhases part of
// AutoPilotOffAnnotation rolls a new image at once instead; an upgrade under way finishes.
func PlanUpgrade(m *monoclev1alpha1.Monocle, api, crawler *appsv1.Deployment, snapshots *contract.BackupOutcome, restoring bool, now time.Time) UpgradeStep {
	want := resources.APIImage(m)
	step := UpgradeStep{Status: m.Status.Upgrade.DeepCopy()}
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionUpgraded, Status: metav1.ConditionTrue, Reason: reasons.UpToDate,
		Message: "The API runs " + want}
	st := step.Status
	active := st != nil && st.To == want && st.Phase != monoclev1alpha1.UpgradeSucceeded
	liveAPI, liveCrawler := templateImage(api), templateImage(crawler)
	running := m.Status.API.Image

	if !active {
		switch {
		case restoring || running == "" || running == want || api == nil || AutoPilotIsOff(m, monoclev1alpha1.AutoPilotUpgradePhases):
			if st != nil && st.Phase == monoclev1alpha1.UpgradeSucceeded && st.To == want {
				cond.Reason, cond.Message = reasons.UpgradeSucceeded, fmt.Sprintf("Upgraded from %s to %s", st.From, st.To)
			}
			step.Condition = cond
			return step
		case monocleDowngrade(running, want):
			cond.Status, cond.Reason = metav1.ConditionFalse, reasons.MonocleDowngrade
			cond.Message = fmt.Sprintf("%s is a Monocle downgrade from the running %s: it writes an older config index than the one in Elasticsearch, which it cannot read back (Monocle 1.11.2, upgradeConfigV*); the API and the crawler keep running %s",
				want, running, running)
			step.APIImage, step.CrawlerImage, step.Condition = running, liveCrawler, cond
			return step
		}
		// A new upgrade: the status records it; the workloads stay as they are until it
		// holds it.
		phase := monoclev1alpha1.UpgradeStoppingCrawler
		if m.Spec.Backup != nil {
			phase = monoclev1alpha1.UpgradeBackingUp
		}
		step.Status = &monoclev1alpha1.UpgradeStatus{From: running, To: want, Phase: phase, StartTime: StatusTime(now)}
		if phase == monoclev1alpha1.UpgradeBackingUp {
			step.Status.Snapshot = upgradeSnapshotName(want)
		}
		step.APIImage, step.CrawlerImage = running, liveCrawler
		step.Condition = UpgradingCondition(step.Status)
		return step
	}

	// An upgrade under way, at the phase the status holds.
	next := st.DeepCopy()
	switch st.Phase {
	case monoclev1alpha1.UpgradeBackingUp, monoclev1alpha1.UpgradeBlocked:
		step.APIImage, step.CrawlerImage = st.From, liveCrawler
		goOn := m.Annotations[monoclev1alpha1.UpgradeWithoutBackupAnnotation] == "true"
		switch state, reason := snapshotState(snapshots, st.Snapshot); {
		case m.Spec.Backup == nil || st.Snapshot == "" || state == elastic.SnapshotSuccess:
			next.Phase, next.Message = monoclev1alpha1.UpgradeStoppingCrawler, ""
		case goOn && st.Phase == monoclev1alpha1.UpgradeBlocked:
			next.Phase, next.Message = monoclev1alpha1.UpgradeStoppingCrawler,
				"going on without a snapshot, as "+monoclev1alpha1.UpgradeWithoutBackupAnnotation+" says"
		case state == elastic.SnapshotFailed || state == elastic.SnapshotPartial || state == elastic.SnapshotIncompatible:
			next.Phase = monoclev1alpha1.UpgradeBlocked
			next.Message = Truncate(fmt.Sprintf("the snapshot %s taken before the upgrade is %s: %s; fix the backup, or set the annotation %s=true to upgrade without it",
				st.Snapshot, state, reason, monoclev1alpha1.UpgradeWithoutBackupAnnotation))
		default:
			// Not taken yet, or running.
			step.Snapshot = st.Snapshot
		}
	case monoclev1alpha1.UpgradeStoppingCrawler:
		step.APIImage, step.CrawlerImage, step.StopCrawler = st.From, liveCrawler, true
		if WorkloadsStopped(crawler) {
			next.Phase = monoclev1alpha1.UpgradeReplacingAPI
		}
	case monoclev1alpha1.UpgradeReplacingAPI:
		step.CrawlerImage, step.StopCrawler, step.APIRecreate = liveCrawler, true, true
		if liveAPI == want && DeploymentRolledOut(api) && api.Status.ReadyReplicas >= ptr.Deref(api.Spec.Replicas, 1) {
			next.Phase = monoclev1alpha1.UpgradeStartingCrawler
		}
	case monoclev1alpha1.UpgradeStartingCrawler:
		if crawler == nil || liveCrawler == resources.CrawlerImage(m) {
			next.Phase, next.CompletionTime = monoclev1alpha1.UpgradeSucceeded, StatusTime(now)
		}
	}
	step.Status = next
	step.Condition = UpgradingCondition(next)
	if next.Phase == monoclev1alpha1.UpgradeSucceeded {
		cond.Reason, cond.Message = reasons.UpgradeSucceeded, fmt.Sprintf("Upgraded from %s to %s", next.From, next.To)
		step.Condition = cond
	}
	return step
}

// snapshotState is the state of snapshot name in what the last read listed, "" when it is
// not there (or nothing was read), with the reason of a failed one.
func snapshotState(out *contract.BackupOutcome, name string) (elastic.SnapshotState, string) {
	if out == nil || !out.Listed {
		return "", ""
	}
	for _, s := range out.Snapshots {
		if s.Name == name {
			return s.State, failureReason(s)
		}
	}
	return "", ""
}

// UpgradeStopsMonocle reports whether upgrade st is in a phase where the crawler or the API
// is down on purpose: the Monocle is not Ready meanwhile.
func UpgradeStopsMonocle(st *monoclev1alpha1.UpgradeStatus) bool {
	if st == nil {
		return false
	}
	switch st.Phase {
	case monoclev1alpha1.UpgradeStoppingCrawler, monoclev1alpha1.UpgradeReplacingAPI, monoclev1alpha1.UpgradeStartingCrawler:
		return true
	}
	return false
}

// UpgradingCondition is the Upgraded condition of an upgrade under way.
func UpgradingCondition(st *monoclev1alpha1.UpgradeStatus) metav1.Condition {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionUpgraded, Status: metav1.ConditionFalse, Reason: reasons.Upgrading}
	what := map[monoclev1alpha1.UpgradePhase]string{
		monoclev1alpha1.UpgradeBackingUp:       "taking the snapshot " + st.Snapshot + " first",
		monoclev1alpha1.UpgradeStoppingCrawler: "stopping the crawler",
		monoclev1alpha1.UpgradeReplacingAPI:    "replacing the API, one version at a time (it migrates the index before it serves)",
		monoclev1alpha1.UpgradeStartingCrawler: "starting the new crawler",
	}[st.Phase]
	cond.Message = fmt.Sprintf("Upgrading from %s to %s: %s", st.From, st.To, what)
	if st.Phase == monoclev1alpha1.UpgradeBlocked {
		cond.Reason = reasons.UpgradeBlocked
		cond.Message = Truncate(fmt.Sprintf("The upgrade from %s to %s is stopped: %s", st.From, st.To, st.Message))
	}
	return cond
}
