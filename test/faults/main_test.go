// Package faults injects faults into a real local control plane (test/localcluster: etcd,
// kube-apiserver with a Metadata-level audit log, kube-controller-manager, kube-scheduler,
// kwok) running the operator binary, and proves after every scenario that nothing was lost:
// every Monocle converges, every Elasticsearch PVC keeps its UID, every generated key keeps
// its value, no update-idents Job ran twice for one config, the operator never panicked, and
// its writes at rest return to zero (issue 7).
//
// Scenarios, in order: operator crashes during a rollout (SIGKILL at seeded random moments),
// leader churn between two replicas (no two writers, checked in the audit log against the
// lease), API server and etcd restarts mid-reconcile, owned objects deleted or edited by
// another client, conflicting writers, deletions (of a Monocle whose update-idents Job
// runs, and of a namespace full of Monocles), and operator crashes while it adopts what the
// earlier operator made (issue 11).
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

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	clientset "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// defaultSeed seeds every random choice of the suite unless -faults.seed or $FAULTS_SEED
// says otherwise; it is printed so a failure can be replayed.
const defaultSeed = 7

var (
	fullFlag   = flag.Bool("faults.full", false, "Run the full sizes of issue 7 (100 Monocles across 10 namespaces, ...) instead of the short variant; also $FAULTS_FULL=1.")
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
	// quietWindow is how long the operator must not write for "writes at rest".
	quietWindow time.Duration
}

var (
	short = sizes{
		name: "short", crashMonocles: 20, crashNamespaces: 4, crashKills: 10,
		leaderRounds: 4, leaderMonocles: 4, restarts: 1, restartMonocles: 3,
		driftMonocles: 4, driftRounds: 3, conflictMonocles: 3, conflictWindow: 12 * time.Second,
		deletionRuns: 2, namespaceRuns: 1, adoptionRuns: 2, quietWindow: 5 * time.Second,
	}
	full = sizes{
		name: "full", crashMonocles: 100, crashNamespaces: 10, crashKills: 12,
		leaderRounds: 10, leaderMonocles: 8, restarts: 3, restartMonocles: 4,
		driftMonocles: 10, driftRounds: 10, conflictMonocles: 6, conflictWindow: 60 * time.Second,
		deletionRuns: 5, namespaceRuns: 3, adoptionRuns: 5, quietWindow: 10 * time.Second,
	}
)

// env is the cluster, clients and bookkeeping shared by the scenarios.
var env struct {
	root        string
	work        string
	cluster     *localcluster.Cluster
	kubeconfig  string
	cfg         *rest.Config
	kube        kubernetes.Interface
	monocles    clientset.Interface
	meta        metadata.Interface
	operatorBin string
	seed        int64
	size        sizes
	audit       *testkit.AuditLog
	track       *tracker
	operators   *operatorSet
	summary     *summary
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
	root, err := localcluster.FindRepoRoot("")
	if err != nil {
		return 0, err
	}
	env.root = root
	binDir, stagesDir, err := localcluster.EnsureBinaries(ctx, root)
	if err != nil {
		return 0, err
	}
	if env.work, err = os.MkdirTemp("", "monocle-faults-"); err != nil {
		return 0, err
	}
	heldStages, err := writeStages(stagesDir, filepath.Join(env.work, "kwok-stages"))
	if err != nil {
		return 0, err
	}
	begin := time.Now()
	cluster, err := localcluster.Start(ctx, localcluster.Options{BinDir: binDir, StagesDir: heldStages, WorkDir: filepath.Join(env.work, "cluster")})
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		}
	}()
	fmt.Printf("faults: cluster ready in %s, work directory %s\n", time.Since(begin).Round(time.Millisecond), env.work)
	env.cluster = cluster
	env.kubeconfig = cluster.Kubeconfig()
	if env.cfg, err = clientcmd.BuildConfigFromFlags("", env.kubeconfig); err != nil {
		return 0, err
	}
	env.cfg.UserAgent = testUserAgent
	env.cfg.QPS, env.cfg.Burst = 100, 200
	if env.kube, err = kubernetes.NewForConfig(env.cfg); err != nil {
		return 0, err
	}
	if env.monocles, err = clientset.NewForConfig(env.cfg); err != nil {
		return 0, err
	}
	if env.meta, err = metadata.NewForConfig(env.cfg); err != nil {
		return 0, err
	}
	if err := growNode(ctx); err != nil {
		return 0, fmt.Errorf("growing the fake node: %w", err)
	}
	if err := (testkit.Kubectl{Kubeconfig: env.kubeconfig}).InstallCRD(ctx, root); err != nil {
		return 0, err
	}

	env.operatorBin = filepath.Join(env.work, "monocle-operator")
	if err := testkit.BuildOperator(ctx, root, env.operatorBin); err != nil {
		return 0, err
	}
	env.audit = newAuditLog(cluster.AuditLogPath())
	env.operators = newOperatorSet(filepath.Join(env.work, "operators"))
	defer env.operators.stopAll()
	env.summary = &summary{}
	trackCtx, stopTracking := context.WithCancel(context.Background())
	defer stopTracking()
	if env.track, err = startTracker(trackCtx); err != nil {
		return 0, err
	}

	code := m.Run()
	table := env.summary.markdown()
	fmt.Printf("\nfaults summary (%s variant, seed %d):\n\n%s\n", env.size.name, env.seed, table)
	if *reportFlag != "" {
		if err := os.MkdirAll(filepath.Dir(*reportFlag), 0o755); err == nil {
			_ = os.WriteFile(*reportFlag, []byte(table), 0o644)
		}
	}
	if code != 0 || *keepFlag {
		fmt.Fprintf(os.Stderr, "faults: operator logs in %s, cluster logs in %s/logs, audit log %s\n",
			filepath.Join(env.work, "operators"), cluster.WorkDir(), cluster.AuditLogPath())
		// Stop the cluster but keep its files.
		return code, nil
	}
	env.operators.stopAll()
	if err := cluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
	}
	_ = os.RemoveAll(env.work)
	return code, nil
}
