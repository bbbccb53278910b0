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

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// env is the cluster and operator shared by the tests of this package; its Env is nil under
// -short, when no cluster is started.
var env struct {
	*testkit.Env
	// operatorLog is the log of the operator the suite runs.
	operatorLog string
}

func TestMain(m *testing.M) { testkit.Main(m, "integration", setUp) }

func setUp(m *testing.M) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	e, err := testkit.StartEnv(ctx, testkit.EnvOptions{
		Suite: "integration", InstallCRD: true, BuildOperator: true, OperatorLogs: "operator.log",
		ElasticOptions: testkit.SecuredElastic(),
	})
	if err != nil {
		return 0, err
	}
	env.Env = e
	failed := true
	defer func() {
		if err := e.Close(failed); err != nil {
			fmt.Fprintln(os.Stderr, "integration:", err)
		}
	}()

	env.operatorLog = filepath.Join(e.WorkDir, "operator.log")
	op, err := testkit.Start(testkit.StartOptions{
		Name: "operator", Path: e.OperatorBin, LogPath: env.operatorLog,
		Args: []string{"--kubeconfig", e.Kubeconfig, "--http-address", "127.0.0.1:0",
			"--leader-election-namespace", "default", "--workers", "4", "-v", "2",
			"--api-discovery-interval", "1s", "--elasticsearch-read-interval", "2s", e.Elastic.Flag()},
	})
	if err != nil {
		return 0, err
	}
	defer func() {
		_ = op.Signal(os.Interrupt)
		<-op.Done()
	}()

	code := m.Run()
	failed = code != 0
	if failed && os.Getenv("CI") != "" {
		if b, err := os.ReadFile(env.operatorLog); err == nil {
			fmt.Fprintf(os.Stderr, "--- operator log (tail) ---\n%s\n", testkit.Tail(string(b), 200))
		}
	}
	return code, nil
}
