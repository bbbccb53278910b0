// Package integration tests the operator against a real local control plane (see
// test/localcluster): a real kube-apiserver with admission and Pod Security, the real
// Deployment/StatefulSet controllers and garbage collector, and kwok playing the node. The
// operator runs as its own binary, and the tests act through kubectl and the manifests in
// deploy/, as a user would. Containers never start under kwok, so probes and Monocle's own
// behaviour are not exercised here.
package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	clientset "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// env is the cluster and operator shared by the tests of this package.
var env struct {
	repoRoot    string
	cluster     *localcluster.Cluster
	kubeconfig  string
	kubectl     testkit.Kubectl
	kube        kubernetes.Interface
	monocles    clientset.Interface
	operatorLog string
}

func TestMain(m *testing.M) { testkit.Main(m, "integration", setUp) }

func setUp(m *testing.M) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	root, err := localcluster.FindRepoRoot("")
	if err != nil {
		return 0, err
	}
	env.repoRoot = root
	binDir, stagesDir, err := localcluster.EnsureBinaries(ctx, root)
	if err != nil {
		return 0, err
	}
	work, err := os.MkdirTemp("", "monocle-integration-")
	if err != nil {
		return 0, err
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{BinDir: binDir, StagesDir: stagesDir, WorkDir: filepath.Join(work, "cluster")})
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		}
	}()
	env.cluster = cluster
	env.kubeconfig = cluster.Kubeconfig()
	env.kubectl = testkit.Kubectl{Kubeconfig: env.kubeconfig}
	cfg, err := clientcmd.BuildConfigFromFlags("", env.kubeconfig)
	if err != nil {
		return 0, err
	}
	if env.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return 0, err
	}
	if env.monocles, err = clientset.NewForConfig(cfg); err != nil {
		return 0, err
	}

	if err := env.kubectl.InstallCRD(ctx, root); err != nil {
		return 0, err
	}

	operator := filepath.Join(work, "monocle-operator")
	if err := testkit.BuildOperator(ctx, root, operator); err != nil {
		return 0, err
	}
	env.operatorLog = filepath.Join(work, "operator.log")
	op, err := testkit.Start(testkit.StartOptions{
		Name: "operator", Path: operator, LogPath: env.operatorLog,
		Args: []string{"--kubeconfig", env.kubeconfig, "--http-address", "127.0.0.1:0",
			"--leader-election-namespace", "default", "--workers", "4", "-v", "2"},
	})
	if err != nil {
		return 0, err
	}
	defer func() {
		_ = op.Signal(os.Interrupt)
		<-op.Done()
	}()

	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "operator log: %s; cluster logs: %s/logs\n", env.operatorLog, cluster.WorkDir())
		if os.Getenv("CI") != "" {
			if b, err := os.ReadFile(env.operatorLog); err == nil {
				fmt.Fprintf(os.Stderr, "--- operator log (tail) ---\n%s\n", testkit.Tail(string(b), 200))
			}
		}
	} else {
		_ = os.RemoveAll(work)
	}
	return code, nil
}

// kubectl runs kubectl against the test cluster and returns its combined output.
func kubectl(args ...string) (string, error) {
	return env.kubectl.Run(context.Background(), args...)
}

// kubectlStdin runs kubectl with stdin.
func kubectlStdin(stdin string, args ...string) (string, error) {
	return env.kubectl.RunStdin(context.Background(), stdin, args...)
}

// mustKubectl runs kubectl and fails the test on error.
func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	return env.kubectl.Must(t, args...)
}
