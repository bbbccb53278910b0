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
	"testing"
	"time"

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
var auditPolicy = localcluster.AuditPolicyWith(`- level: Request
  verbs: ["create", "update", "patch"]
  namespaces: ["` + operatorNamespace + `"]
  resources:
  - group: "coordination.k8s.io"
    resources: ["leases"]
`)

// env is the cluster and the operator binary shared by the tests of this package; nil under
// -short, when no cluster is started. Its Kubectl runs as the cluster admin, in the
// repository's root.
var env *testkit.Env

func TestMain(m *testing.M) { testkit.Main(m, "e2e", setUp) }

func setUp(m *testing.M) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	e, err := testkit.StartEnv(ctx, testkit.EnvOptions{
		Suite: "e2e", AuditPolicy: auditPolicy, StartTimeout: 2 * time.Minute,
		BuildOperator: true, OperatorLogs: "operator-*.log", ElasticOptions: testkit.SecuredElastic(),
	})
	if err != nil {
		return 0, err
	}
	env = e
	code := m.Run()
	if err := e.Close(code != 0); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
	}
	return code, nil
}
