package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	clientset "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
	"github.com/change-metrics/monocle-operator/test/localcluster"
)

// EnvOptions says what StartEnv sets up: what the suites' set-ups differ on. The zero value
// of each field but Suite keeps localcluster's and client-go's defaults and skips the
// optional steps.
type EnvOptions struct {
	// Suite names the suite in errors and in Close's message, and the work directory, a new
	// "monocle-<Suite>-<random>" in os.TempDir, unless WorkDir is set. Required.
	Suite string
	// WorkDir is the work directory to use instead of a new temporary one; it is created if
	// needed, and Close removes it as it would a temporary one.
	WorkDir string
	// AuditPolicy is the API server's audit policy (YAML); empty means
	// localcluster.DefaultAuditPolicy.
	AuditPolicy string
	// PrepareStages, when set, gets the kwok stages directory of the control-plane cache
	// (never to be written) and the work directory, and returns the kwok stages directory the
	// cluster uses instead, typically written below the work directory.
	PrepareStages func(cachedStagesDir, workDir string) (string, error)
	// StartTimeout bounds each wait of localcluster.Start (its Options.Timeout); zero means
	// its default, 60 s.
	StartTimeout time.Duration
	// QPS, Burst and UserAgent are set on Env.Config, and so on every client of the Env; zero
	// values keep client-go's defaults (5 QPS, a burst of 10, client-go's user agent).
	QPS       float32
	Burst     int
	UserAgent string
	// InstallCRD applies deploy/01-crd.yaml and waits until the CRD is Established.
	InstallCRD bool
	// BuildOperator builds ./cmd/monocle-operator into Env.OperatorBin, in the work directory.
	BuildOperator bool
	// OperatorLogs is where the suite writes the logs of its operator processes (a file, a
	// directory or a glob), relative to the work directory, for Close's message; empty means
	// the work directory.
	OperatorLogs string
	// Keep keeps the work directory on Close even when the suite passed.
	Keep bool
	// ElasticOptions are the options of Env.Elastic (WithBasicAuth, WithTLS), which secure
	// the clusters a Monocle references rather than runs; a bundled Elasticsearch is served
	// without security whatever they are.
	ElasticOptions []FakeElasticOption
}

// Env is a running local control plane (test/localcluster) with clients for it: what a
// suite's TestMain starts once and its tests share. StartEnv starts it; Close stops it.
//
// The work directory holds the cluster's files in cluster/ (kubeconfig, logs/<component>.log,
// audit.log) and the operator binary, monocle-operator, when EnvOptions.BuildOperator is set;
// the suite may write its own files there too (its operators' logs).
type Env struct {
	// Root is the repository's root directory (localcluster.FindRepoRoot).
	Root string
	// WorkDir is the work directory: EnvOptions.WorkDir, or a new temporary one.
	WorkDir string
	// BinDir holds the control-plane binaries (localcluster.EnsureBinaries).
	BinDir string
	// StagesDir holds the kwok Stage files the cluster runs with: the cache's, or what
	// EnvOptions.PrepareStages returned.
	StagesDir string
	// OperatorBin is the operator binary built from the working tree, or "" unless
	// EnvOptions.BuildOperator is set.
	OperatorBin string
	// Cluster is the running control plane, in WorkDir/cluster.
	Cluster *localcluster.Cluster
	// ClusterStartup is how long localcluster.Start took to make Cluster ready.
	ClusterStartup time.Duration
	// Kubeconfig is the path of the cluster's admin kubeconfig.
	Kubeconfig string
	// Config is the admin client configuration read from Kubeconfig, with EnvOptions' QPS,
	// Burst and UserAgent; copy it (rest.CopyConfig) to change it for one client.
	Config *rest.Config
	// Kube is the Kubernetes clientset of Config.
	Kube kubernetes.Interface
	// Monocles is the Monocle clientset of Config.
	Monocles clientset.Interface
	// Meta is the metadata-only client of Config (k8s.io/client-go/metadata).
	Meta metadata.Interface
	// Kubectl runs kubectl as the cluster admin, in Root: relative paths in its arguments
	// (deploy/, deploy/samples/...) are the repository's.
	Kubectl Kubectl
	// Elastic stands for every Monocle's Elasticsearch, which kwok does not run: give the
	// suite's operators Elastic.Flag() so that they read it rather than ask the machine's
	// resolver for the Services' names.
	Elastic *FakeElasticsearch

	opts EnvOptions
	out  io.Writer // Close's message
}

// StartEnv finds the repository root, builds or reuses the control-plane binaries
// (localcluster.EnsureBinaries), makes the work directory, runs EnvOptions.PrepareStages,
// builds the operator, starts the cluster, makes the clients and installs the CRD, skipping
// the optional steps opts does not ask for. ctx bounds the set-up only.
//
// Its errors say which step failed: "<suite> environment: <step>: <cause>". Once the work
// directory exists, a failure stops whatever StartEnv started and keeps the directory (the
// cluster's logs), and the error ends with "(work directory <dir> kept)".
func StartEnv(ctx context.Context, opts EnvOptions) (_ *Env, err error) {
	if opts.Suite == "" {
		return nil, errors.New("testkit: EnvOptions.Suite is required")
	}
	fail := func(step string, err error) error {
		return fmt.Errorf("%s environment: %s: %w", opts.Suite, step, err)
	}
	e := &Env{opts: opts, out: os.Stderr}
	if e.Root, err = localcluster.FindRepoRoot(""); err != nil {
		return nil, fail("finding the repository", err)
	}
	if e.BinDir, e.StagesDir, err = localcluster.EnsureBinaries(ctx, e.Root); err != nil {
		return nil, fail("control-plane binaries", err)
	}
	if e.WorkDir, err = makeWorkDir(opts); err != nil {
		return nil, fail("work directory", err)
	}
	defer func() {
		if err != nil {
			if stopErr := e.Stop(); stopErr != nil {
				err = fmt.Errorf("%w (and %v)", err, stopErr)
			}
			err = fmt.Errorf("%w (work directory %s kept)", err, e.WorkDir)
		}
	}()
	if opts.PrepareStages != nil {
		if e.StagesDir, err = opts.PrepareStages(e.StagesDir, e.WorkDir); err != nil {
			return nil, fail("kwok stages", err)
		}
	}
	if opts.BuildOperator {
		e.OperatorBin = filepath.Join(e.WorkDir, "monocle-operator")
		if err := BuildOperator(ctx, e.Root, e.OperatorBin); err != nil {
			return nil, fail("operator", err)
		}
	}
	begin := time.Now()
	e.Cluster, err = localcluster.Start(ctx, localcluster.Options{
		BinDir: e.BinDir, StagesDir: e.StagesDir, WorkDir: filepath.Join(e.WorkDir, "cluster"),
		AuditPolicy: opts.AuditPolicy, Timeout: opts.StartTimeout,
	})
	if err != nil {
		return nil, fail("starting the cluster", err)
	}
	e.ClusterStartup = time.Since(begin)
	if err := e.connect(e.Cluster.Kubeconfig()); err != nil {
		return nil, fail("clients", err)
	}
	// The API server must be the version the suite asked for (MONOCLE_KUBERNETES).
	served, err := e.Kube.Discovery().ServerVersion()
	if err != nil {
		return nil, fail("the API server's version", err)
	}
	if want := localcluster.RunningVersion(); served.GitVersion != want {
		return nil, fail("the API server's version", fmt.Errorf("%s, want %s", served.GitVersion, want))
	}
	fmt.Fprintf(e.out, "%s: Kubernetes %s\n", opts.Suite, served.GitVersion)
	if opts.InstallCRD {
		if err := e.Kubectl.InstallCRD(ctx, e.Root); err != nil {
			return nil, fail("CRD", err)
		}
	}
	e.Elastic = StartFakeElasticsearch(opts.ElasticOptions...)
	return e, nil
}

// makeWorkDir creates opts.WorkDir, or a new "monocle-<Suite>-*" in os.TempDir, and returns
// its path.
func makeWorkDir(opts EnvOptions) (string, error) {
	if opts.WorkDir == "" {
		return os.MkdirTemp("", "monocle-"+opts.Suite+"-")
	}
	return opts.WorkDir, os.MkdirAll(opts.WorkDir, 0o755)
}

// connect sets Kubeconfig, Config (with the options' client settings), the clients and
// Kubectl from the kubeconfig file at path. It makes no request.
func (e *Env) connect(path string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return err
	}
	if e.opts.QPS != 0 {
		cfg.QPS = e.opts.QPS
	}
	if e.opts.Burst != 0 {
		cfg.Burst = e.opts.Burst
	}
	if e.opts.UserAgent != "" {
		cfg.UserAgent = e.opts.UserAgent
	}
	e.Kubeconfig, e.Config = path, cfg
	if e.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if e.Monocles, err = clientset.NewForConfig(cfg); err != nil {
		return err
	}
	if e.Meta, err = metadata.NewForConfig(cfg); err != nil {
		return err
	}
	e.Kubectl = Kubectl{Kubeconfig: path, Dir: e.Root}
	return nil
}

// Stop stops the cluster and keeps the work directory; stop the suite's operators first.
// It may be called more than once. Its error is "stopping the cluster: <cause>".
func (e *Env) Stop() error {
	if e.Elastic != nil {
		e.Elastic.Close()
	}
	if e.Cluster == nil {
		return nil
	}
	if err := e.Cluster.Stop(); err != nil {
		return fmt.Errorf("stopping the cluster: %w", err)
	}
	return nil
}

// Close stops the cluster (Stop) and then removes the work directory, unless failed or
// EnvOptions.Keep is set: then it keeps the directory and prints, on stderr, where the
// operator logs, the cluster's logs and its audit log are. Stop the suite's operators
// first. Its error joins Stop's and that of removing the directory.
func (e *Env) Close(failed bool) error {
	err := e.Stop()
	if failed || e.opts.Keep {
		fmt.Fprintln(e.out, e.keptMessage())
		return err
	}
	if rmErr := os.RemoveAll(e.WorkDir); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("removing the work directory: %w", rmErr))
	}
	return err
}

// keptMessage says where the logs of a kept work directory are.
func (e *Env) keptMessage() string {
	clusterDir := filepath.Join(e.WorkDir, "cluster")
	audit := filepath.Join(clusterDir, "audit.log")
	if e.Cluster != nil {
		clusterDir, audit = e.Cluster.WorkDir(), e.Cluster.AuditLogPath()
	}
	return fmt.Sprintf("%s: work directory %s kept: operator logs %s, cluster logs %s, audit log %s",
		e.opts.Suite, e.WorkDir, filepath.Join(e.WorkDir, e.opts.OperatorLogs), filepath.Join(clusterDir, "logs"), audit)
}
