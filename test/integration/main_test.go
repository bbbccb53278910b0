// Package integration tests the operator against a real local control plane (see
// test/localcluster): a real kube-apiserver with admission and Pod Security, the real
// Deployment/StatefulSet controllers and garbage collector, and kwok playing the node. The
// operator runs as its own binary, and the tests act through kubectl and the manifests in
// deploy/, as a user would. The operator runs as its ServiceAccount under the RBAC that
// deploy/ ships (testkit.Env.InstallOperatorRBAC, OperatorKubeconfig), and the suite fails if
// the API server refused it anything; the tests play the admin where an admin acts
// (namespaces, CRDs, fixtures) and a tenant with only "edit" in its namespace where a Monocle
// author acts (testkit.Tenant). Containers never start under kwok, so probes and Monocle's own
// behaviour are not exercised here.
package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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

	if err := e.InstallOperatorRBAC(ctx); err != nil {
		return 0, err
	}
	// Valid for longer than the longest run of the suite (go test's -timeout 50m).
	kubeconfig, err := e.OperatorKubeconfig(ctx, 2*time.Hour)
	if err != nil {
		return 0, err
	}
	refused := startRefusalWatch(e)
	defer refused.stop()
	env.operatorLog = filepath.Join(e.WorkDir, "operator.log")
	op, err := testkit.Start(testkit.StartOptions{
		Name: "operator", Path: e.OperatorBin, LogPath: env.operatorLog,
		Args: []string{"--kubeconfig", kubeconfig, "--http-address", "127.0.0.1:0",
			"--leader-election-namespace", testkit.OperatorNamespace, "--workers", "4", "-v", "2",
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
	if forbidden, err := refused.events(); err != nil {
		fmt.Fprintln(os.Stderr, "integration: reading the audit log for refused operator requests:", err)
		code = 1
	} else if len(forbidden) > 0 {
		fmt.Fprintf(os.Stderr, "integration: the authorizer refused the operator %d requests: deploy/02-rbac.yaml lacks their verbs:\n", len(forbidden))
		counts := map[string]int{}
		var requests []string
		for _, e := range forbidden {
			r := e.Verb + " " + e.ResourcePath() + " " + e.ObjectRef.Namespace + "/" + e.ObjectRef.Name
			if counts[r] == 0 {
				requests = append(requests, r)
			}
			counts[r]++
		}
		for _, r := range requests {
			fmt.Fprintf(os.Stderr, "  %s (%d times)\n", r, counts[r])
		}
		code = 1
	}
	failed = code != 0
	if failed && os.Getenv("CI") != "" {
		if b, err := os.ReadFile(env.operatorLog); err == nil {
			fmt.Fprintf(os.Stderr, "--- operator log (tail) ---\n%s\n", testkit.Tail(string(b), 200))
		}
	}
	return code, nil
}

// refusalWatch follows the audit log of the suite's cluster for the operator's requests the
// authorizer refused (403 Forbidden, testkit.AuditEvent.DeniedByAuthorizer): under the RBAC deploy/
// ships, each is a verb deploy/02-rbac.yaml lacks. It reads the log every few seconds, since the API server
// rotates it at 100 MB, which a whole run of the suite may write.
type refusalWatch struct {
	log  *testkit.AuditLog
	done chan struct{}
	wg   sync.WaitGroup
}

func startRefusalWatch(e *testkit.Env) *refusalWatch {
	r := &refusalWatch{
		log: testkit.NewAuditLog(e.Cluster.AuditLogPath(), testkit.AuditLogOptions{
			UserAgents: []string{testkit.OperatorUserAgent},
			Keep:       testkit.AuditEvent.DeniedByAuthorizer,
		}),
		done: make(chan struct{}),
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-r.done:
				return
			case <-tick.C:
				// An error here is Refresh's again when events reads the log.
				_ = r.log.Refresh()
			}
		}
	}()
	return r
}

// events reads the log to its end and returns the refused requests of the operator so far.
func (r *refusalWatch) events() ([]testkit.AuditEvent, error) {
	return r.log.Between(time.Time{}, time.Time{}, nil)
}

func (r *refusalWatch) stop() {
	close(r.done)
	r.wg.Wait()
	_ = r.log.Close()
}
