// Command monocle-operator runs the Monocle operator: it watches Monocle custom resources and
// keeps the Monocle deployments they describe correct. Several replicas may run; a Lease
// elects the one that writes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection" // leader election metrics
	_ "k8s.io/component-base/metrics/prometheus/restclient"              // client-go request metrics
	_ "k8s.io/component-base/metrics/prometheus/workqueue"               // workqueue metrics
	"k8s.io/klog/v2"

	"github.com/change-metrics/monocle-operator/pkg/controller"
	"github.com/change-metrics/monocle-operator/pkg/controller/rollout"
	clientset "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
	"github.com/change-metrics/monocle-operator/pkg/leader"
	"github.com/change-metrics/monocle-operator/pkg/version"
)

// options are the command-line flags.
type options struct {
	kubeconfig    string
	master        string
	workers       int
	qps           float64
	burst         int
	namespaces    string
	resync        time.Duration
	httpAddr      string
	leaderElect   bool
	leaseNS       string
	leaseName     string
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration
	discovery     time.Duration
	profiling     bool
	readInterval  time.Duration
	readTimeout   time.Duration
	dialAddress   string
	crossNSRefs   bool
	// rollout is the fleet rollout's policy (--rollout-*).
	rollout rollout.Policy
}

// bindFlags registers the operator's own flags on fs, filling o, and returns the --version
// flag. The flag table of docs/installation.md is tested against it (flags_test.go).
func bindFlags(fs *flag.FlagSet, o *options) (showVersion *bool) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Empty means the in-cluster config (or $KUBECONFIG when set).")
	fs.StringVar(&o.master, "master", "", "The API server address, overriding the kubeconfig's.")
	fs.IntVar(&o.workers, "workers", 4, "Number of Monocles synced at once.")
	fs.Float64Var(&o.qps, "kube-api-qps", 200, "Queries per second the operator's client may send to the API server (see docs/benchmarks.md for the choice).")
	fs.IntVar(&o.burst, "kube-api-burst", 400, "Burst of queries above kube-api-qps the client may send.")
	fs.StringVar(&o.namespaces, "namespaces", "", "Comma-separated namespaces to watch. Empty means all namespaces.")
	fs.DurationVar(&o.resync, "resync-period", 10*time.Hour, "How often every Monocle is synced even without a change.")
	fs.StringVar(&o.httpAddr, "http-address", ":8080", "Address serving /metrics, /healthz and /readyz. Empty disables it.")
	fs.BoolVar(&o.leaderElect, "leader-elect", true, "Elect a leader with a Lease so that only one replica writes.")
	fs.StringVar(&o.leaseNS, "leader-election-namespace", "", "Namespace of the leader election Lease. Empty means the pod's namespace ($POD_NAMESPACE or the service account's).")
	fs.StringVar(&o.leaseName, "leader-election-id", "monocle-operator", "Name of the leader election Lease.")
	fs.DurationVar(&o.leaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a lease is valid without renewal; standbys wait this long after a leader dies.")
	fs.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader retries renewing before it gives the lease up and exits; it writes only this long after its last renewal. Shorter than the lease duration.")
	fs.DurationVar(&o.retryPeriod, "leader-election-retry-period", time.Second, "How often candidates try to acquire or renew the lease.")
	fs.DurationVar(&o.discovery, "api-discovery-interval", time.Minute, "How often the operator asks the API server which optional APIs it serves (Gateway API, OpenShift Routes), so that a CRD installed later is used.")
	fs.DurationVar(&o.readInterval, "elasticsearch-read-interval", 30*time.Second, "How often the operator reads each Monocle's Elasticsearch health and disk use (status.elasticsearchHealth, conditions ElasticsearchHealthy and DiskPressure). 0 turns reading off.")
	fs.DurationVar(&o.readTimeout, "elasticsearch-read-timeout", 5*time.Second, "How long one read of an Elasticsearch may take.")
	fs.StringVar(&o.dialAddress, "operand-dial-address", "", "A host:port every connection to an operand (Elasticsearch) goes to instead of its Service: a port-forward when the operator runs outside the cluster, or a test's fake.")
	fs.BoolVar(&o.crossNSRefs, "cross-namespace-references", true, "Let a Monocle's spec.elasticsearch.elasticsearchRef name an ECK Elasticsearch of another namespace where a ReferenceGrant of that namespace grants it. false refuses every such reference.")
	fs.StringVar(&o.rollout.Strategy, "rollout-strategy", rollout.DefaultPolicy.Strategy, "How a change of the workloads' templates that the operator makes of its own accord (a new release's) reaches the Monocles: \"waves\" (a canary, then waves that double up to --rollout-max-wave, each once the one before is Ready for --rollout-soak; a Monocle not Ready again within --rollout-deadline halts the rollout) or \"all-at-once\". A change a Monocle's owner makes is applied at once either way.")
	fs.IntVar(&o.rollout.MaxWave, "rollout-max-wave", rollout.DefaultPolicy.MaxWave, "The largest wave of the fleet rollout, in Monocles.")
	fs.DurationVar(&o.rollout.Soak, "rollout-soak", rollout.DefaultPolicy.Soak, "How long each Monocle of a wave stays Ready after its roll before the next wave starts.")
	fs.DurationVar(&o.rollout.Deadline, "rollout-deadline", rollout.DefaultPolicy.Deadline, "How long a Monocle of a wave has to be Ready again after its roll starts; past it the fleet rollout halts.")
	fs.BoolVar(&o.profiling, "profiling", false, "Serve Go's profiles (net/http/pprof) under /debug/pprof/ on --http-address.")
	return fs.Bool("version", false, "Print the version, commit, Go version and platform on one line and exit.")
}

func main() {
	logConfig := addLoggingFlags(flag.CommandLine)
	var o options
	showVersion := bindFlags(flag.CommandLine, &o)
	flag.Parse()
	info := version.Info()
	if *showVersion {
		fmt.Println(info.String())
		return
	}
	if err := applyLogging(logConfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	klog.InfoS("Version", "version", info.Version, "commit", info.Commit, "goVersion", info.GoVersion, "platform", info.Platform)
	setGCPercent()

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, o); err != nil {
		klog.ErrorS(err, "Operator failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}

func run(ctx context.Context, o options) error {
	logger := klog.FromContext(ctx)
	cfg, err := restConfig(o)
	if err != nil {
		return err
	}
	id, err := identity()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	// The identity in the user agent tells the replicas apart in the API server's audit log.
	cfg.UserAgent = controller.ControllerName + "/" + id
	logger.Info("Starting", "identity", id, "userAgent", cfg.UserAgent)
	// Every client but the Lease's writes only while this replica leads.
	var guard *leader.Guard
	if o.leaderElect {
		guard, cfg, err = leader.Fence(cfg, leader.Lease{Namespace: leaseNamespace(o), Name: o.leaseName, Identity: id, RenewDeadline: o.renewDeadline})
		if err != nil {
			return err
		}
	}
	kubeClient, err := newKubeClients(cfg)
	if err != nil {
		return fmt.Errorf("building the Kubernetes client: %w", err)
	}
	if err := checkServerVersion(kubeClient.discovery); err != nil {
		return err
	}
	monocleClient, err := clientset.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the Monocle client: %w", err)
	}

	controller.RegisterMetrics()
	metadataClient, err := metadata.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the metadata client: %w", err)
	}
	dynamicClient, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the dynamic client: %w", err)
	}
	controllers, starters, err := newControllers(ctx, o, kubeClient, monocleClient, metadataClient, dynamicClient)
	if err != nil {
		return err
	}

	// Caches fill before this replica leads, so a standby takes over with warm caches.
	for _, start := range starters {
		start(ctx.Done())
	}
	var watchdog *leaderelection.HealthzAdaptor
	if o.leaderElect {
		// /healthz fails when this replica leads but has not renewed its lease for a lease
		// duration plus this slack: the kubelet then restarts a leader whose renewals hang.
		watchdog = leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	}
	if o.httpAddr != "" {
		if err := serveHTTP(ctx, o.httpAddr, o.profiling, controllers, watchdog); err != nil {
			return err
		}
	}

	runControllers := func(ctx context.Context) {
		done := make(chan error, len(controllers))
		for _, c := range controllers {
			go func() { done <- c.Run(ctx, o.workers) }()
		}
		for range controllers {
			if err := <-done; err != nil {
				logger.Error(err, "Controller stopped")
			}
		}
	}
	if !o.leaderElect {
		runControllers(ctx)
		return nil
	}
	return runWithLeaderElection(ctx, o, id, guard, watchdog, runControllers)
}

// runWithLeaderElection runs fn while this process holds the Lease, until ctx ends. On a
// clean shutdown fn is stopped first and the lease released after it has returned
// (ReleaseOnCancel), so a rolling update hands over in about a retry period and the next
// leader's writes never interleave with this one's. A leader that fails to renew its lease
// stops fn at once and returns an error, so that the process exits.
func runWithLeaderElection(ctx context.Context, o options, id string, guard *leader.Guard, watchdog *leaderelection.HealthzAdaptor, fn func(context.Context)) error {
	logger := klog.FromContext(ctx)
	ns := leaseNamespace(o)

	// client-go releases the lease as soon as the context of the election ends, whether or
	// not OnStartedLeading has returned. So the election gets a context of its own, ended by
	// a shutdown only while this replica does not lead, and otherwise once fn has returned.
	electionCtx, endElection := context.WithCancel(context.WithoutCancel(ctx))
	defer endElection()
	var mu sync.Mutex
	leading := false
	stopAfterShutdown := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !leading {
			endElection()
		}
	})
	defer stopAfterShutdown()

	var lost error
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            guard,
		ReleaseOnCancel: true,
		LeaseDuration:   o.leaseDuration,
		RenewDeadline:   o.renewDeadline,
		RetryPeriod:     o.retryPeriod,
		Name:            o.leaseName,
		WatchDog:        watchdog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaderCtx context.Context) {
				defer endElection()
				mu.Lock()
				if ctx.Err() != nil {
					mu.Unlock()
					return
				}
				leading = true
				mu.Unlock()
				logger.Info("Started leading", "identity", id, "lease", klog.KRef(ns, o.leaseName))
				// leaderCtx ends when the lease is lost; ctx when the process is asked to stop.
				workCtx, stop := context.WithCancel(leaderCtx)
				defer stop()
				defer context.AfterFunc(ctx, stop)()
				fn(workCtx)
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					lost = fmt.Errorf("leader election lost: lease %s/%s was not renewed in time", ns, o.leaseName)
					return
				}
				logger.Info("Stopped leading", "identity", id)
			},
			OnNewLeader: func(current string) {
				if current != id {
					logger.Info("Another replica leads", "leader", current)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("invalid leader election flags: %w", err)
	}
	if watchdog != nil {
		watchdog.SetLeaderElection(le)
	}
	le.Run(electionCtx)
	return lost
}

// identity names this process in the leader election Lease and in its user agent: the host
// name (the pod's name in a cluster) and a random UUID, unique even when two replicas share
// a host, as they do out of cluster.
func identity() (string, error) {
	hostname, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("reading the hostname for the leader identity: %w", err)
	}
	return hostname + "_" + string(uuid.NewUUID()), nil
}

// restConfig loads the client configuration from --kubeconfig, $KUBECONFIG or the pod's
// service account, in that order.
func restConfig(o options) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.kubeconfig != "" {
		rules.ExplicitPath = o.kubeconfig
	}
	if o.kubeconfig == "" && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{ClusterInfo: clientcmdapi.Cluster{Server: o.master}}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the client configuration: %w", err)
	}
	return cfg, nil
}

// leaseNamespace is the namespace of the leader election Lease: --leader-election-namespace,
// else podNamespace.
func leaseNamespace(o options) string {
	if o.leaseNS != "" {
		return o.leaseNS
	}
	return podNamespace()
}

// podNamespace is the namespace the operator runs in (inClusterNamespace), else "default"
// (out of cluster).
func podNamespace() string {
	if ns := inClusterNamespace(); ns != "" {
		return ns
	}
	return "default"
}

// inClusterNamespace is the namespace of the operator's pod: $POD_NAMESPACE, else the service
// account's; "" out of cluster.
func inClusterNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ""
}

// splitNamespaces turns the --namespaces value into a list; "" (all namespaces) when empty.
func splitNamespaces(s string) []string {
	var out []string
	for _, ns := range strings.Split(s, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// serveHTTP serves /metrics, /healthz (the process runs and, as a leader, renews its
// lease: watchdog, nil without leader election) and /readyz (every informer cache has
// synced), and with profiling Go's profiles under /debug/pprof/, until ctx ends.
func serveHTTP(ctx context.Context, addr string, profiling bool, controllers []*controller.Controller, watchdog *leaderelection.HealthzAdaptor) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if watchdog != nil {
			if err := watchdog.Check(r); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		for _, c := range controllers {
			if !c.HasSynced() {
				http.Error(w, "informer caches not synced", http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = w.Write([]byte("ok"))
	})
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdownCtx)
	}()
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.ErrorS(err, "HTTP server stopped")
		}
	}()
	klog.InfoS("Serving metrics and health", "address", listener.Addr().String())
	return nil
}

// defaultGCPercent is the garbage collector's target when GOGC is not set: a collection when
// the heap has grown by half of the live heap, not by all of it (Go's default, 100). The
// operator's CPU is small (about 3.5 s per 100 new Monocles, test/bench) and its memory is
// what a cluster admin budgets (its RSS with hundreds of Monocles: docs/benchmarks.md).
const defaultGCPercent = 50

// setGCPercent applies defaultGCPercent unless the GOGC environment variable sets one.
func setGCPercent() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
