// Package e2e tests the production install on a real local control plane (see
// test/localcluster): deploy/ is applied exactly as shipped, with kubectl, on an empty
// cluster. The operator Deployment's pods are fake under kwok, so the tests run the operator
// binary as out-of-cluster processes, with the arguments of the shipped Deployment and
// authenticated as its ServiceAccount (a token from the TokenRequest API): the shipped RBAC
// is what the API server checks. The API server's audit log tells the replicas apart by user
// agent ("monocle-operator/<identity>") and records each leader election Lease write with
// its holder, so the tests can check that one replica at a time writes.
//
// Containers never start under kwok: the Deployment's probes, image and security context are
// validated (admission, Pod Security "restricted") but not exercised.
//
// With -short the tests that need the cluster are skipped and no cluster is started; the
// manifest checks in manifests_test.go still run.
package e2e

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

// Names from deploy/.
const (
	operatorNamespace = "monocle-operator"
	operatorName      = "monocle-operator" // ServiceAccount, Deployment, Lease, ClusterRole
	crdName           = testkit.CRDName
	serviceAccount    = "system:serviceaccount:" + operatorNamespace + ":" + operatorName
)

// auditPolicy is localcluster's default policy plus the request bodies of writes to Leases in
// the operator's namespace: their spec.holderIdentity dates each change of leader, and an
// empty one marks a release.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
- RequestReceived
rules:
- level: None
  verbs: ["get", "list", "watch"]
  resources:
  - group: ""
    resources: ["events"]
  - group: "events.k8s.io"
    resources: ["events"]
  - group: "coordination.k8s.io"
    resources: ["leases"]
- level: Request
  verbs: ["create", "update", "patch"]
  namespaces: ["` + operatorNamespace + `"]
  resources:
  - group: "coordination.k8s.io"
    resources: ["leases"]
- level: Metadata
`

// env is the cluster and operator binary shared by the tests of this package.
var env struct {
	repoRoot   string
	workDir    string
	cluster    *localcluster.Cluster
	kubeconfig string
	kubectl    testkit.Kubectl // as the cluster admin, in the repository's root
	kube       kubernetes.Interface
	monocles   clientset.Interface
	operator   string // path of the operator binary built from this tree
}

func TestMain(m *testing.M) { testkit.Main(m, "e2e", setUp) }

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
	if env.workDir, err = os.MkdirTemp("", "monocle-e2e-"); err != nil {
		return 0, err
	}
	env.operator = filepath.Join(env.workDir, "monocle-operator")
	if err := testkit.BuildOperator(ctx, root, env.operator); err != nil {
		return 0, err
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{
		BinDir: binDir, StagesDir: stagesDir, WorkDir: filepath.Join(env.workDir, "cluster"),
		AuditPolicy: auditPolicy, Timeout: 2 * time.Minute,
	})
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
	env.kubectl = testkit.Kubectl{Kubeconfig: env.kubeconfig, Dir: root}
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

	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e work directory kept: %s (operator logs, cluster logs in cluster/logs, audit log)\n", env.workDir)
	} else {
		_ = os.RemoveAll(env.workDir)
	}
	return code, nil
}

// kubectl runs kubectl as the cluster admin and returns its combined output.
func kubectl(args ...string) (string, error) {
	return env.kubectl.Run(context.Background(), args...)
}

// kubectlStdin runs kubectl as the cluster admin with stdin.
func kubectlStdin(stdin string, args ...string) (string, error) {
	return env.kubectl.RunStdin(context.Background(), stdin, args...)
}

// mustKubectl runs kubectl as the cluster admin and fails the test on error.
func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	return env.kubectl.Must(t, args...)
}
