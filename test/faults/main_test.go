// Package faults injects faults into a real local control plane (test/localcluster: etcd,
// kube-apiserver with a Metadata-level audit log, kube-controller-manager, kube-scheduler,
// kwok) running the operator binary, and proves after every scenario that nothing was lost:
// every Monocle converges, every Elasticsearch PVC keeps its UID, every generated key keeps
// its value, no update-idents Job ran twice for one config, the operator never panicked, and
// its writes at rest return to zero.
//
// Scenarios, in order: operator crashes during a rollout (SIGKILL at seeded random moments),
// leader churn between two replicas (no two writers, checked in the audit log against the
// lease), API server and etcd restarts mid-reconcile, owned objects deleted or edited by
// another client, conflicting writers, deletions (of a Monocle whose update-idents Job
// runs, and of a namespace full of Monocles), operator crashes while it adopts what the
// earlier operator made, while it restores, while it upgrades, while it hibernates and
// wakes Monocles, and while it switches nodes to security; the operator's rolling update
// from the previous release; and the leader SIGKILLed while the new release rolls its
// templates out in waves, and while that rollout is halted by a failed canary.
//
//	go test ./test/faults/                          # short variant (CI), a few minutes
//	go test -v -timeout 60m ./test/faults/ -args -faults.full   # make test-faults
//	FAULTS_SEED=42 go test ./test/faults/           # replay another seed
//
// Containers never start under kwok: Ready means kwok reported the pods ready.
package faults

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// defaultSeed seeds every random choice of the suite unless -faults.seed or $FAULTS_SEED
// says otherwise; it is printed so a failure can be replayed.
const defaultSeed = 7

var (
	fullFlag   = flag.Bool("faults.full", false, "Run the full sizes (100 Monocles across 10 namespaces, ...) instead of the short variant; also $FAULTS_FULL=1.")
	seedFlag   = flag.Int64("faults.seed", 0, "Seed of the random fault schedule; 0 means $FAULTS_SEED or the default seed.")
	reportFlag = flag.String("faults.report", "", "Also write the summary table (markdown) to this file.")
	keepFlag   = flag.Bool("faults.keep", false, "Keep the work directory (cluster and operator logs) even when every test passes.")
)

// testUserAgent is the user agent of the suite's own clients; the audit reader tells it
// apart from the operator's ("monocle-operator/<identity>").
const testUserAgent = "monocle-faults"

// sizes are the knobs the short and full variants set differently.
type sizes struct {
	name string
	// crashMonocles are created across crashNamespaces while the operator is killed
	// crashKills times.
	crashMonocles, crashNamespaces, crashKills int
	// leaderRounds is how many leaders are killed; leaderMonocles exist at the start.
	leaderRounds, leaderMonocles int
	// restarts is how many times the API server and etcd are each restarted;
	// restartMonocles are created per restart.
	restarts, restartMonocles int
	// driftMonocles get driftRounds rounds of random edits and deletions.
	driftMonocles, driftRounds int
	// conflictMonocles fight with writers for conflictWindow.
	conflictMonocles int
	conflictWindow   time.Duration
	// deletionRuns deletes a Monocle with a running Job; namespaceRuns deletes a namespace.
	deletionRuns, namespaceRuns int
	// adoptionRuns adopt earlier-operator Monocles while the operator is killed.
	adoptionRuns int
	// restoreRuns restore a snapshot into a bundled Elasticsearch while the operator is
	// killed and the API server restarted; one more run, the last, restores into a Monocle
	// on an ECK cluster.
	restoreRuns int
	// upgradeRuns upgrade a Monocle while the operator is killed.
	upgradeRuns int
	// hibernationMonocles are hibernated and woken at once while the operator is killed.
	hibernationMonocles int
	// securityMonocles have their nodes switched to security while the operator is killed.
	securityMonocles int
	// rollingMonocles are led by the previous release, then by this one across a rolling
	// update of the operator.
	rollingMonocles int
	// fleetMonocles are rolled from the previous release in waves while the leader is
	// SIGKILLed; haltMonocles wait behind a failed canary while it is.
	fleetMonocles, haltMonocles int
	// quietWindow is how long the operator must not write for "writes at rest".
	quietWindow time.Duration
}

var (
	short = sizes{
		name: "short", crashMonocles: 20, crashNamespaces: 4, crashKills: 10,
		leaderRounds: 4, leaderMonocles: 4, restarts: 1, restartMonocles: 3,
		driftMonocles: 4, driftRounds: 3, conflictMonocles: 3, conflictWindow: 12 * time.Second,
		deletionRuns: 2, namespaceRuns: 1, adoptionRuns: 2, restoreRuns: 2, upgradeRuns: 2, hibernationMonocles: 2,
		securityMonocles: 2, rollingMonocles: 2, fleetMonocles: 6, haltMonocles: 3, quietWindow: 5 * time.Second,
	}
	full = sizes{
		name: "full", crashMonocles: 100, crashNamespaces: 10, crashKills: 12,
		leaderRounds: 10, leaderMonocles: 8, restarts: 3, restartMonocles: 4,
		driftMonocles: 10, driftRounds: 10, conflictMonocles: 6, conflictWindow: 60 * time.Second,
		deletionRuns: 5, namespaceRuns: 3, adoptionRuns: 5, restoreRuns: 4, upgradeRuns: 3, hibernationMonocles: 5,
		securityMonocles: 3, rollingMonocles: 4, fleetMonocles: 10, haltMonocles: 5, quietWindow: 10 * time.Second,
	}
)

// env is the cluster, clients and bookkeeping shared by the scenarios; its Env is nil under
// -short, when no cluster is started.
var env struct {
	*testkit.Env
	seed      int64
	size      sizes
	audit     *testkit.AuditLog
	track     *tracker
	operators *operatorSet
	summary   *summary
}

func TestMain(m *testing.M) { testkit.Main(m, "faults", setUp) }

func setUp(m *testing.M) (int, error) {
	// client-go's reflectors log every broken watch; the outages are on purpose.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	env.size = short
	if *fullFlag || os.Getenv("FAULTS_FULL") == "1" {
		env.size = full
	}
	env.seed = defaultSeed
	if s := os.Getenv("FAULTS_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("FAULTS_SEED: %w", err)
		}
		env.seed = v
	}
	if *seedFlag != 0 {
		env.seed = *seedFlag
	}
	fmt.Printf("faults: %s variant, seed %d (replay with FAULTS_SEED=%d)\n", env.size.name, env.seed, env.seed)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	e, err := testkit.StartEnv(ctx, testkit.EnvOptions{
		Suite: "faults",
		PrepareStages: func(cached, work string) (string, error) {
			return writeStages(cached, filepath.Join(work, "kwok-stages"))
		},
		QPS: 100, Burst: 200, UserAgent: testUserAgent,
		InstallCRD: true, BuildOperator: true, OperatorLogs: "operators", Keep: *keepFlag,
		// Scenario 8 restores into a Monocle on an ECK cluster too, secured as ECK secures
		// its clusters; bundled Elasticsearches are served without security all the same.
		ElasticOptions: testkit.SecuredElastic(),
	})
	if err != nil {
		return 0, err
	}
	env.Env = e
	fmt.Printf("faults: cluster ready in %s, work directory %s\n", e.ClusterStartup.Round(time.Millisecond), e.WorkDir)
	failed := true
	defer func() {
		if err := e.Close(failed); err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
		}
	}()
	if err := growNode(ctx); err != nil {
		return 0, fmt.Errorf("growing the fake node: %w", err)
	}
	// Installed before any operator starts, whose discovery then finds ECK's API at once.
	if _, err := e.InstallECK(ctx); err != nil {
		return 0, fmt.Errorf("installing ECK's CRD: %w", err)
	}
	env.audit = newAuditLog(e.Cluster.AuditLogPath())
	env.operators = newOperatorSet(filepath.Join(e.WorkDir, "operators"))
	defer env.operators.stopAll()
	env.summary = &summary{}
	trackCtx, stopTracking := context.WithCancel(context.Background())
	defer stopTracking()
	if env.track, err = startTracker(trackCtx); err != nil {
		return 0, err
	}

	code := m.Run()
	failed = code != 0
	table := env.summary.markdown()
	fmt.Printf("\nfaults summary (%s variant, seed %d):\n\n%s\n", env.size.name, env.seed, table)
	if *reportFlag != "" {
		if err := os.MkdirAll(filepath.Dir(*reportFlag), 0o755); err == nil {
			_ = os.WriteFile(*reportFlag, []byte(table), 0o644)
		}
	}
	return code, nil
}
