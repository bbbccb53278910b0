package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// installReferenceGrants installs the Gateway API's ReferenceGrant CRD until the end of the
// test, then removes it, so that each test starts without it.
func installReferenceGrants(t *testing.T) {
	t.Helper()
	path, err := env.InstallReferenceGrants(t.Context())
	// Removed at the end, and waited for: a CRD being deleted cannot be installed again.
	if path != "" {
		t.Cleanup(func() { _, _ = env.Kubectl.Run(context.Background(), "delete", "--timeout=60s", "-f", path) })
	}
	if err != nil {
		t.Fatal(err)
	}
}

// referenceGrantsInstalled reports whether the cluster has the ReferenceGrant CRD.
func referenceGrantsInstalled(t *testing.T) bool {
	_, err := env.Kubectl.Run(t.Context(), "get", "crd", testkit.ReferenceGrantCRDName)
	return err == nil
}

// grantYAML is the ReferenceGrant "monocle" of namespace esNS letting the Monocles of fromNS
// use its ECK Elasticsearch name, as docs/external-elasticsearch.md has it.
func grantYAML(esNS, fromNS, name string) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata:
  name: monocle
  namespace: %s
spec:
  from:
    - group: monocle.monocle.change-metrics.io
      kind: Monocle
      namespace: %s
  to:
    - group: elasticsearch.k8s.elastic.co
      kind: Elasticsearch
      name: %s
`, esNS, fromNS, name)
}

// grantMonocles applies, as the cluster's admin (the owner of esNS), grantYAML.
func grantMonocles(t *testing.T, esNS, fromNS, name string) {
	t.Helper()
	if out, err := env.Kubectl.RunStdin(t.Context(), grantYAML(esNS, fromNS, name), "apply", "-f", "-"); err != nil {
		t.Fatalf("applying the ReferenceGrant: %v: %s", err, out)
	}
}

// clusterUserSecret is the Secret of a Monocle's own user of a referenced cluster
// (createClusterUser).
const clusterUserSecret = "es-user"

// createClusterUser creates, acting as k, the basic-auth Secret clusterUserSecret of ns with
// the user of the fake's secured clusters (testkit.ClusterUser, the one user it knows).
func createClusterUser(t *testing.T, k testkit.Kubectl, ns string) {
	t.Helper()
	k.Must(t, "create", "secret", "generic", clusterUserSecret, "-n", ns, "--type=kubernetes.io/basic-auth",
		"--from-literal=username="+testkit.ClusterUser, "--from-literal=password="+testkit.ClusterPassword)
}

// operatorSecretReads returns the Secrets of namespace ns whose data the operator read
// (get) after since, as the audit log has them ("name"); the metadata informer's list and
// watch, across namespaces, are not reads of a Secret's data.
func operatorSecretReads(t *testing.T, since time.Time, ns string) []string {
	t.Helper()
	events, err := testkit.ReadAuditLog(env.Cluster.AuditLogPath(), func(e testkit.AuditEvent) bool {
		return e.Completed.After(since) && e.FromOperator() && e.Verb == "get" &&
			e.ObjectRef.Resource == "secrets" && e.ObjectRef.Namespace == ns
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range events {
		out = append(out, e.ObjectRef.Name)
	}
	return out
}

// expectRefused waits until Monocle m of ns is refused its reference with reason and a
// message with words, then checks that nothing of the cluster is in its status (no phase,
// health or reads), that it runs no pod and that its namespace has no proxy Secret.
func expectRefused(t *testing.T, ns, reason string, words ...string) {
	t.Helper()
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, reason+" saying "+strings.Join(words, ", "), func() error {
		m := getMonocle(t, ns, "m")
		c := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionElasticsearchHealthy)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reason {
			return fmt.Errorf("condition is %+v", c)
		}
		for _, w := range words {
			if !strings.Contains(c.Message, w) {
				return fmt.Errorf("the message does not say %q: %s", w, c.Message)
			}
		}
		if cl := m.Status.ElasticsearchCluster; cl == nil || cl.Phase != "" || cl.Health != "" || cl.DataNodes != nil {
			return fmt.Errorf("status.elasticsearchCluster = %+v, want no phase, health or data nodes", cl)
		}
		if m.Status.ElasticsearchHealth != nil {
			return fmt.Errorf("status.elasticsearchHealth = %+v", m.Status.ElasticsearchHealth)
		}
		if _, err := env.Kube.CoreV1().Secrets(ns).Get(t.Context(), "m-elastic-proxy", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the proxy Secret is there (%v)", err)
		}
		return nil
	})
}

// TestReferenceGrant: a tenant with edit in its namespace creates a Monocle referencing an
// ECK Elasticsearch of another namespace, with its own credentials. While the cluster does
// not serve ReferenceGrants, and then while no grant of that namespace names the tenant's
// namespace and the Elasticsearch, the reference is refused with a condition that says how
// to grant it, the status shows nothing of the cluster, no pod runs, no proxy Secret is
// written and the operator reads no Secret of that namespace; the tenant cannot grant it
// itself. Once the namespace's owner grants it (a grant to another Elasticsearch, then
// changed to this one), the Monocle becomes Ready through the proxy with its own credentials
// and the cluster's CA, the only Secret read there; once the grant is deleted, the
// reference is refused again and the proxy Secret deleted.
func TestReferenceGrant(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := t.Context()
	start := time.Now()
	ns, esNS := "refgrant-tenant", "refgrant-cluster"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	testkit.MustCreateNamespace(t, env.Kube, esNS)
	installECK(t)
	env.Elastic.Answer(esNS, testkit.ElasticAnswer{Health: greenOf3, Allocation: testkit.Allocation40})
	createECK(t, esNS, "Ready", "green")
	tenant := tenant(t, ns)
	createClusterUser(t, tenant, ns)
	applyMonocleAs(t, tenant, ns, "m",
		"{elasticsearchRef: {name: es, namespace: "+esNS+", credentialsSecretRef: {name: "+clusterUserSecret+"}}}")
	howTo := []string{"namespace " + esNS, "ReferenceGrant (gateway.networking.k8s.io/v1beta1)",
		"namespace: " + ns + "}", "kind: Elasticsearch, name: es}"}

	if referenceGrantsInstalled(t) {
		t.Logf("the ReferenceGrant CRD is installed already: the Monocle starts with it")
	} else {
		expectRefused(t, ns, reasons.ReferenceNotGranted, append([]string{"does not serve the ReferenceGrant API"}, howTo...)...)
		expectNoPods(t, ns)
	}
	installReferenceGrants(t)
	expectRefused(t, ns, reasons.ReferenceNotGranted, append([]string{"no ReferenceGrant there grants Monocles of namespace " + ns}, howTo...)...)
	expectNoPods(t, ns)

	if out, err := tenant.RunStdin(ctx, grantYAML(esNS, ns, "es"), "apply", "-f", "-"); err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("the tenant granted itself the reference: %v: %s", err, out)
	}
	// A grant to another Elasticsearch grants nothing.
	grantMonocles(t, esNS, ns, "other")
	time.Sleep(3 * time.Second)
	expectRefused(t, ns, reasons.ReferenceNotGranted, howTo...)
	if reads := operatorSecretReads(t, start, esNS); len(reads) > 0 {
		t.Errorf("the operator read Secrets of %s before the grant: %q", esNS, reads)
	}

	// Changed to this Elasticsearch: granted.
	granted := time.Now()
	grantMonocles(t, esNS, ns, "es")
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	waitCluster(t, ns, "m", "the granted cluster in the status", func(c *monoclev1alpha1.ElasticsearchClusterStatus) error {
		if c.Phase != "Ready" || c.Health != "green" {
			return fmt.Errorf("status.elasticsearchCluster = %+v", c)
		}
		return nil
	})
	expectProxy(t, ns, "m", testkit.ClusterUser, testkit.ClusterPassword, env.Elastic.CAPEM())
	expectNoPassword(t, ns, testkit.ClusterUser, testkit.ClusterPassword)
	for _, name := range operatorSecretReads(t, granted, esNS) {
		if name != "es-es-http-certs-public" {
			t.Errorf("the operator read Secret %s of %s; across namespaces only the cluster's public CA", name, esNS)
		}
	}

	// Revoked: refused again, the proxy Secret deleted.
	env.Kubectl.Must(t, "delete", "-n", esNS, "referencegrants.gateway.networking.k8s.io/monocle")
	expectRefused(t, ns, reasons.ReferenceNotGranted, howTo...)
	if r := apimeta.FindStatusCondition(getMonocle(t, ns, "m").Status.Conditions, monoclev1alpha1.ConditionDegraded); r == nil ||
		r.Status != metav1.ConditionTrue || r.Reason != reasons.ReferenceNotGranted {
		t.Errorf("Degraded = %+v, want True ReferenceNotGranted", r)
	}
}
