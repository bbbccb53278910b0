package integration

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestTenantsRaceForOneCluster: two tenants, each with only edit in its namespace, create at
// once a Monocle on one external cluster, naming it by two spellings (capitals, the trailing
// dot of a fully qualified name, a trailing slash), each with credentials for it. The cluster
// records one of them as the owner, which becomes Ready; the other is refused from that
// record with a message that names nothing of the owner's namespace, and starts no pod. Once
// the owner is deleted, the other takes the cluster over.
func TestTenantsRaceForOneCluster(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	const host = "race.example.com"
	env.Elastic.ServePlainHTTP(host)
	urls := map[string]string{"race-a": "http://" + host + ":9200", "race-b": "http://RACE.example.com.:9200/"}
	tenants := map[string]testkit.Kubectl{}
	for ns := range urls {
		testkit.MustCreateNamespace(t, env.Kube, ns)
		tenant := tenant(t, ns)
		tenants[ns] = tenant
		tenant.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
		tenant.Must(t, "create", "secret", "generic", "es-credentials", "-n", ns, "--type=kubernetes.io/basic-auth",
			"--from-literal=username="+testkit.ClusterUser, "--from-literal=password="+testkit.ClusterPassword)
	}
	var wg sync.WaitGroup
	for ns, url := range urls {
		manifest := strings.Replace(day2Monocle, "spec:\n",
			"spec:\n  elasticsearch: {external: {url: '"+url+"', credentialsSecretRef: {name: es-credentials}}}\n", 1)
		wg.Go(func() {
			if out, err := tenants[ns].RunStdin(t.Context(), manifest, "apply", "-n", ns, "-f", "-"); err != nil {
				t.Errorf("%s: %v: %s", ns, err, out)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// One owns the cluster, the other is refused from the record.
	var owner, refused string
	testkit.Eventually(t, 200*time.Millisecond, 90*time.Second, "one Monocle owns the cluster, the other is refused", func() error {
		owner, refused = "", ""
		for ns := range urls {
			c := apimeta.FindStatusCondition(getMonocle(t, ns, "m").Status.Conditions, monoclev1alpha1.ConditionElasticsearchHealthy)
			switch {
			case c == nil:
				return fmt.Errorf("%s has no ElasticsearchHealthy yet", ns)
			case c.Status == metav1.ConditionTrue:
				owner = ns
			case c.Status == metav1.ConditionFalse && c.Reason == reasons.ElasticsearchInUse:
				refused = ns
			default:
				return fmt.Errorf("%s: ElasticsearchHealthy %s %s: %s", ns, c.Status, c.Reason, c.Message)
			}
		}
		if owner == "" || refused == "" {
			return fmt.Errorf("owner %q, refused %q", owner, refused)
		}
		return nil
	})
	meta, ok := env.Elastic.Cluster(host).Meta(elastic.OwnerIndex)
	if !ok || meta["namespace"] != owner || meta["name"] != "m" || meta["uid"] != string(getMonocle(t, owner, "m").UID) {
		t.Errorf("the cluster's record %v (exists %v), want %s/m's", meta, ok, owner)
	}
	c := apimeta.FindStatusCondition(getMonocle(t, refused, "m").Status.Conditions, monoclev1alpha1.ConditionElasticsearchHealthy)
	if !strings.Contains(c.Message, elastic.OwnerIndex) || strings.Contains(c.Message, owner) || strings.Contains(c.Message, meta["uid"]) {
		t.Errorf("the refusal %q: want the record's index, nothing of %s", c.Message, owner)
	}
	env.Kubectl.Must(t, "wait", "-n", owner, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	expectNoPods(t, refused)

	// The owner goes; the other takes the cluster over at its next claim.
	tenants[owner].Must(t, "delete", "-n", owner, "monocle/m", "--wait=true")
	waitCondition(t, refused, "m", monoclev1alpha1.ConditionElasticsearchHealthy, metav1.ConditionTrue, reasons.Yellow)
	if meta, _ := env.Elastic.Cluster(host).Meta(elastic.OwnerIndex); meta["namespace"] != refused {
		t.Errorf("after the owner's deletion the record is %v, want %s's", meta, refused)
	}
	env.Kubectl.Must(t, "wait", "-n", refused, "--for=condition=Ready", "--timeout=120s", "monocle/m")
}
