package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// restoreStage is where in a restore scenario 8 kills the operator.
type restoreStage int

const (
	// killPending: once the status shows phase Pending (API and crawler stopping; the
	// indices not closed yet, or being closed).
	killPending restoreStage = iota
	// killRestoring: once the status shows phase Restoring (the indices closed; the restore
	// being started).
	killRestoring
	// killAccepted: once Elasticsearch (the suite's fake) accepted the restore, which it holds
	// in progress.
	killAccepted
)

func (s restoreStage) String() string {
	return [...]string{"phase Pending seen", "phase Restoring seen", "restore accepted by Elasticsearch"}[s]
}

// restoreForeignIndex is a hidden index that the snapshot holds, as one of another cluster
// can (the backing index of the data stream ilm-history-5, which Elasticsearch 7.17 creates by
// itself), and that the cluster restored into holds open, with restoreLiveDocs documents:
// Elasticsearch refuses a restore that includes it, so a restore restores Monocle's indices
// only and leaves it as it is.
const restoreForeignIndex = ".ds-ilm-history-5-2026.11.01-000001"

// restoreECKRepository is the repository the ECK cluster of scenario 8's last run has
// registered before the Monocle exists (its administrators', spec.backup.repository.existing),
// holding the snapshot.
const restoreECKRepository = "team-backups"

// restoreSnapshotDocs is the document count of monocle.changes.1.demo in the snapshot the
// scenario restores; the index holds restoreLiveDocs before, in a running Monocle.
const (
	restoreSnapshotDocs = 42
	restoreLiveDocs     = 5
)

// testRestoreCrashes is scenario 8: a restore interrupted by an operator SIGKILL
// and a kube-apiserver restart ends restored once. Each of the env.size.restoreRuns runs
// restores snapshot "nightly" into a new Monocle (even runs) or into a running one (odd runs,
// whose index already holds other documents) of the bundled Elasticsearch; one more run, the
// last, restores it into a new Monocle on an ECK cluster (elasticsearchRef), from the
// repository registered on that cluster beforehand (backup.repository.existing). The suite's
// fake Elasticsearch holds each restore in progress; the
// operator is killed at a seeded stage of the restore (the first run always once Elasticsearch
// accepted it), the API server is killed and started again while no operator runs, a new
// operator starts, and Elasticsearch finishes the restore after a seeded delay. Every run must
// end Ready and Restored with status.restore Succeeded, exactly one restore accepted by
// Elasticsearch, the index holding the snapshot's documents, the hidden index of another
// cluster's data stream that the snapshot also holds left as the cluster had it
// (restoreForeignIndex), the API and the crawler at one replica, and the data PVC's UID
// unchanged; the run on ECK, which has no data PVC, ends with no object of a bundled
// Elasticsearch instead.
func testRestoreCrashes(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "8. operator SIGKILLed and API server restarted mid-restore")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 8))
	// The run on ECK comes last, so the bundled runs draw the seeded values they drew before.
	runs := env.size.restoreRuns + 1
	stages := make([]restoreStage, runs)
	releases := make([]time.Duration, runs)
	for r := range stages {
		stages[r] = killAccepted
		if r > 0 {
			stages[r] = restoreStage(rng.IntN(3))
		}
		releases[r] = time.Duration(rng.IntN(3000)) * time.Millisecond
		t.Logf("run %d: kill at %s, Elasticsearch finishes the restore %s after the new operator starts (seed %d)", r, stages[r], releases[r], env.seed)
	}

	opArgs := []string{"--leader-elect=false", "--elasticsearch-read-interval=2s"}
	op := env.operators.start(t, opArgs...)
	for r, stage := range stages {
		ns := fmt.Sprintf("faults-restore-%d", r)
		const name = "restore"
		eck := r == env.size.restoreRuns
		running := !eck && r%2 == 1
		if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
			sc.Fatal(err)
		}
		m := newMonocle(ns, name)
		m.Spec.Backup = &monoclev1alpha1.BackupSpec{}
		tgt := restoreTarget{cluster: env.Elastic.Cluster(resources.ElasticName(m) + "." + ns + ".svc"), repo: resources.BackupRepositoryName}
		if eck {
			tgt = restoreTarget{cluster: env.Elastic.Cluster(testkit.ECKHost(ns)), repo: restoreECKRepository, eck: true}
			if err := env.RegisterRepository(ctx, testkit.ECKHost(ns), tgt.repo, elastic.Repository{Type: elastic.RepositoryS3, Bucket: tgt.repo}); err != nil {
				sc.Fatal(err)
			}
			m.Spec.Elasticsearch = monoclev1alpha1.ElasticsearchSpec{ElasticsearchRef: &monoclev1alpha1.ElasticsearchReference{Name: "es"}}
			m.Spec.Backup.Repository = monoclev1alpha1.BackupRepository{Existing: tgt.repo}
		}
		tgt.cluster.PutSnapshot(tgt.repo, testkit.FakeSnapshot{Name: "nightly",
			Indices: []string{"monocle.changes.1.demo", "monocle.config", restoreForeignIndex},
			Docs:    map[string]int64{"monocle.changes.1.demo": restoreSnapshotDocs, restoreForeignIndex: restoreSnapshotDocs}})
		if running {
			tgt.cluster.SetIndices("monocle.changes.1.demo", "monocle.config")
			tgt.cluster.SetDocs("monocle.changes.1.demo", restoreLiveDocs)
		}
		tgt.cluster.SetHidden(restoreForeignIndex)
		tgt.cluster.SetDocs(restoreForeignIndex, restoreLiveDocs)
		if eck {
			if err := env.CreateECK(ctx, ns, "Ready", "green"); err != nil {
				sc.Fatal(err)
			}
		}
		if running {
			if _, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Create(ctx, m, metav1.CreateOptions{}); err != nil {
				sc.Fatal(err)
			}
			if _, err := waitConverged(ctx, crashReadyBudget, []string{ns}, nil); err != nil {
				sc.Fatalf("run %d: the Monocle to restore into is not Ready: %v", r, err)
			}
		}
		tgt.cluster.HoldRestores(true)
		restoreSpec := &monoclev1alpha1.RestoreSpec{Snapshot: "nightly"}
		if running {
			if err := editMonocle(ctx, ns, name, func(m *monoclev1alpha1.Monocle) { m.Spec.Restore = restoreSpec }); err != nil {
				sc.Fatal(err)
			}
		} else {
			m.Spec.Restore = restoreSpec
			if _, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Create(ctx, m, metav1.CreateOptions{}); err != nil {
				sc.Fatal(err)
			}
		}
		// A Monocle on ECK has no data PVC whose UID to keep: that run skips this check and
		// checks instead that no object of a bundled Elasticsearch exists (restoredOnce).
		var pvcName, pvcUID string
		if !eck {
			pvcName = resources.ElasticPVCName(m, resources.ElasticDataVolume)
			if err := testkit.Poll(ctx, 100*time.Millisecond, 60*time.Second, "data PVC "+pvcName, func(ctx context.Context) error {
				pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvcName, metav1.GetOptions{})
				if err == nil {
					pvcUID = string(pvc.UID)
				}
				return err
			}); err != nil {
				sc.Fatal(err)
			}
		}

		// The kill, at the run's stage.
		if err := testkit.Poll(ctx, 20*time.Millisecond, 2*time.Minute, stage.String(), func(ctx context.Context) error {
			return restoreReached(ctx, ns, name, tgt, stage)
		}); err != nil {
			sc.Fatalf("run %d: %v%s", r, err, testBedState(ctx))
		}
		if err := op.kill(); err != nil {
			sc.Fatal(err)
		}
		killedAt := describeRestore(ctx, ns, name, tgt)
		if err := env.Cluster.Kill(localcluster.ComponentAPIServer); err != nil {
			sc.Fatal(err)
		}
		time.Sleep(time.Second)
		if err := env.Cluster.StartComponent(ctx, localcluster.ComponentAPIServer); err != nil {
			sc.Fatal(err)
		}
		op = env.operators.start(t, opArgs...)
		restarted := time.Now()
		time.Sleep(releases[r])
		tgt.cluster.HoldRestores(false)

		conv, err := waitConverged(ctx, restartConvergeTimeout, []string{ns}, func(ctx context.Context) error {
			return restoredOnce(ctx, ns, name, tgt, pvcName, pvcUID)
		})
		ok := err == nil
		if err != nil {
			sc.Errorf("run %d: restored and Ready within %s of the restart: %v%s", r, restartConvergeTimeout, err, testBedState(ctx))
		}
		// Whatever else happened, the restore must not have run twice.
		restores := tgt.cluster.Restores(tgt.repo, "nightly")
		if restores != 1 {
			ok = false
			sc.Errorf("run %d: Elasticsearch accepted %d restores of nightly, want 1", r, restores)
		}
		into := "a new Monocle"
		if running {
			into = "a running Monocle"
		}
		if eck {
			into = "a new Monocle on an ECK cluster, its existing repository " + tgt.repo
		}
		converge := conv.last().Sub(restarted)
		sc.note("run %d, %s (into %s): killed at %s (%s), API server restarted; restored once and Ready %s after the new operator started",
			r, ns, into, stage, killedAt, converge.Round(100*time.Millisecond))
		sc.run(ok, max(converge, time.Millisecond))
	}
	checkInvariants(ctx, sc)
	if err := op.stop(); err != nil {
		sc.Error(err)
	}
}

// restoreTarget is the Elasticsearch a run of scenario 8 restores into, and the repository
// of its snapshot.
type restoreTarget struct {
	cluster testkit.FakeCluster
	repo    string
	// eck: the Monocle references the ECK Elasticsearch "es" of its namespace.
	eck bool
}

// restoreReached returns nil once the restore of Monocle ns/name into tgt has reached stage.
func restoreReached(ctx context.Context, ns, name string, tgt restoreTarget, stage restoreStage) error {
	if stage == killAccepted {
		if n := tgt.cluster.Restores(tgt.repo, "nightly"); n == 0 {
			return fmt.Errorf("no restore accepted yet")
		}
		return nil
	}
	m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	want := monoclev1alpha1.RestorePending
	if stage == killRestoring {
		want = monoclev1alpha1.RestoreRestoring
	}
	if st := m.Status.Restore; st == nil || st.Phase != want {
		return fmt.Errorf("status.restore is %+v, want phase %s", st, want)
	}
	return nil
}

// describeRestore says where the restore of Monocle ns/name into tgt stands, for the notes.
func describeRestore(ctx context.Context, ns, name string, tgt restoreTarget) string {
	phase := "no status.restore"
	if m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{}); err == nil && m.Status.Restore != nil {
		phase = "phase " + string(m.Status.Restore.Phase)
	}
	closed := 0
	for _, ix := range tgt.cluster.Indices() {
		if !ix.Open {
			closed++
		}
	}
	return fmt.Sprintf("%s, %d indices closed, %d restores accepted", phase, closed,
		tgt.cluster.Restores(tgt.repo, "nightly"))
}

// restoredOnce returns nil once Monocle ns/name is restored into tgt as a restore must end:
// status.restore Succeeded for nightly and the Restored condition True, the index with the
// snapshot's documents and open, the snapshot's foreign hidden index not restored over the
// cluster's own, the API and the crawler at one replica, and the data PVC with its UID; on
// ECK, which has no data PVC (pvcName and pvcUID are ignored), no object of a bundled
// Elasticsearch at all.
func restoredOnce(ctx context.Context, ns, name string, tgt restoreTarget, pvcName, pvcUID string) error {
	m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if st := m.Status.Restore; st == nil || st.Snapshot != "nightly" || st.Phase != monoclev1alpha1.RestoreSucceeded {
		return fmt.Errorf("status.restore is %+v", st)
	}
	if c := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionRestored); c == nil || c.Status != metav1.ConditionTrue || c.Reason != reasons.Restored {
		return fmt.Errorf("condition Restored is %+v", c)
	}
	for _, ix := range tgt.cluster.Indices() {
		if ix.Name == "monocle.changes.1.demo" && (!ix.Open || ix.Docs != restoreSnapshotDocs) {
			return fmt.Errorf("index %s: open %v, %d documents; want the snapshot's %d", ix.Name, ix.Open, ix.Docs, restoreSnapshotDocs)
		}
		if ix.Name == restoreForeignIndex && (!ix.Open || ix.Docs != restoreLiveDocs) {
			return fmt.Errorf("index %s: open %v, %d documents; want it untouched, open with %d", ix.Name, ix.Open, ix.Docs, restoreLiveDocs)
		}
	}
	for _, d := range []string{resources.APIName(m), resources.CrawlerName(m)} {
		dep, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n := ptr.Deref(dep.Spec.Replicas, 1); n != 1 {
			return fmt.Errorf("Deployment %s has %d replicas", d, n)
		}
	}
	if tgt.eck {
		if found, err := env.BundledObjects(ctx, ns, name); err != nil || len(found) != 0 {
			return fmt.Errorf("objects of a bundled Elasticsearch on ECK: %v %v", found, err)
		}
		return nil
	}
	if tgt.eck {
		// No data PVC to keep: none of a bundled Elasticsearch may exist.
		if found, err := env.BundledObjects(ctx, ns, name); err != nil || len(found) != 0 {
			return fmt.Errorf("objects of a bundled Elasticsearch on ECK: %v %v", found, err)
		}
		return nil
	}
	pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvcName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("data PVC %s: %w", pvcName, err)
	}
	if string(pvc.UID) != pvcUID {
		return fmt.Errorf("data PVC %s has UID %s, was %s", pvcName, pvc.UID, pvcUID)
	}
	return nil
}
