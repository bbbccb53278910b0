package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestStuckCrawler: a crawler whose crawledUntil does not move for crawler.stuckAfter gets
// its pod restarted, up to crawler.maxRestarts times in a row, after which the operator
// stops and says so; progress makes CrawlersProgressing True again.
func TestStuckCrawler(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "stuck"
	startDay2(t, ns)
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 4, 0, 0, 0, time.UTC)
	env.Elastic.SetCrawlerMetadata(ns, "m", "monocle.changes.1.demo",
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "change-metrics/monocle", LastCommitAt: at})
	waitCondition(t, ns, "m", "CrawlersProgressing", metav1.ConditionTrue, "CrawlersProgressing")

	// The operator reads every 2s in this suite: a stuckAfter of 3s sees the crawler stuck
	// after two reads without progress.
	patchMonocle(t, ns, `{"spec":{"crawler":{"stuckAfter":"3s","maxRestarts":1}}}`)
	restarted := waitCondition(t, ns, "m", "CrawlersProgressing", metav1.ConditionFalse, "CrawlerRestarted")
	if !strings.Contains(restarted.Message, "demo/gh") {
		t.Errorf("CrawlersProgressing message %q does not name the crawler", restarted.Message)
	}
	waitEvent(t, ns, "CrawlerRestarted", "demo/gh")
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "the restart on the crawler's pod template", func() error {
		d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-crawler", metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := getMonocle(t, ns, "m").Status.CrawlerRestarts
		if st == nil || st.Total != 1 || st.LastTime == nil {
			return fmt.Errorf("status.crawlerRestarts = %+v", st)
		}
		if got := d.Spec.Template.Annotations[resources.CrawlerRestartedAtAnnotation]; got != st.LastTime.UTC().Format(time.RFC3339) {
			return fmt.Errorf("pod template annotation %q, status %s", got, st.LastTime)
		}
		return nil
	})
	// One restart did not help: the operator stops.
	stuck := waitCondition(t, ns, "m", "CrawlersProgressing", metav1.ConditionFalse, "CrawlerStuck")
	if !strings.Contains(stuck.Message, "did not help") {
		t.Errorf("CrawlersProgressing message %q", stuck.Message)
	}
	if st := getMonocle(t, ns, "m").Status.CrawlerRestarts; st.Total != 1 {
		t.Errorf("%d restarts, want 1 (maxRestarts)", st.Total)
	}

	// Progress.
	env.Elastic.SetCrawlerMetadata(ns, "m", "monocle.changes.1.demo",
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "change-metrics/monocle", LastCommitAt: at.Add(time.Hour)})
	waitCondition(t, ns, "m", "CrawlersProgressing", metav1.ConditionTrue, "CrawlersProgressing")
	patchMonocle(t, ns, `{"spec":{"crawler":{"stuckAfter":"0s"}}}`)
	waitCondition(t, ns, "m", "CrawlersProgressing", metav1.ConditionTrue, "StuckCheckOff")
}

// oidcMonocle is day2Monocle with a config whose auth_provider is OIDC, its client secret in
// the Secret "tokens".
var oidcMonocle = day2Monocle[:strings.Index(day2Monocle, "  config: |")] + `  config: |
    auth:
      enforce_auth: true
      auth_provider:
        oidc_provider_name: keycloak
        oidc_issuer_url: https://sso.example.com/realms/x
        oidc_client_id: monocle
    workspaces:
      - name: demo
        crawlers: []
`

// TestOIDCNeedsHTTPS: an OIDC auth_provider behind a plain-HTTP public URL is reported
// (OIDCReady False, a Warning event); an https publicURL clears it.
func TestOIDCNeedsHTTPS(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "oidc"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	env.Kubectl.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=MONOCLE_OIDC_KEYCLOAK_CLIENT_SECRET=s3cret")
	if out, err := env.Kubectl.RunStdin(context.Background(), oidcMonocle, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	c := waitCondition(t, ns, "m", "OIDCReady", metav1.ConditionFalse, "OIDCNeedsHTTPS")
	if !strings.Contains(c.Message, "http://localhost:8090") {
		t.Errorf("OIDCReady message %q does not give the URL", c.Message)
	}
	waitEvent(t, ns, "OIDCNeedsHTTPS", "SameSite=Strict")
	patchMonocle(t, ns, `{"spec":{"publicURL":"https://monocle.example.com"}}`)
	waitCondition(t, ns, "m", "OIDCReady", metav1.ConditionTrue, "OIDCOverHTTPS")
}

// TestRemovedWorkspaceIndex: the index of a workspace the config no longer has is listed in
// the status and deleted only when the annotation names its workspace; a workspace the
// config has is refused.
func TestRemovedWorkspaceIndex(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "removed-workspace"
	startDay2(t, ns)
	env.Elastic.SetIndices(ns, "m", "monocle.config", "monocle.changes.1.demo", "monocle.changes.1.old")
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "status.unusedIndices", func() error {
		u := getMonocle(t, ns, "m").Status.UnusedIndices
		if len(u) != 1 || u[0].Workspace != "old" || u[0].Index != "monocle.changes.1.old" {
			return fmt.Errorf("status.unusedIndices = %+v", u)
		}
		return nil
	})

	env.Kubectl.Must(t, "annotate", "-n", ns, "monocle/m", "monocle.change-metrics.io/delete-index=demo")
	waitEvent(t, ns, "IndexDeletionRefused", "in config.yaml")
	env.Kubectl.Must(t, "annotate", "-n", ns, "monocle/m", "monocle.change-metrics.io/delete-index=old", "--overwrite")
	waitEvent(t, ns, "IndexDeleted", "monocle.changes.1.old")
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "the index gone and the status empty", func() error {
		st := getMonocle(t, ns, "m").Status
		if len(st.UnusedIndices) != 0 || st.IndexDeletion == nil || st.IndexDeletion.Index != "monocle.changes.1.old" {
			return fmt.Errorf("unusedIndices %+v, indexDeletion %+v", st.UnusedIndices, st.IndexDeletion)
		}
		return nil
	})
	for _, ix := range env.Elastic.Indices(ns, "m") {
		if ix.Name == "monocle.changes.1.demo" || ix.Name == "monocle.config" {
			continue
		}
		t.Errorf("index %s left", ix.Name)
	}
	if n := len(env.Elastic.Indices(ns, "m")); n != 2 {
		t.Errorf("%d indices left, want demo's and the config index", n)
	}
}

// TestElasticsearchFirst: the API Deployment is created only once Elasticsearch has a ready
// pod, and a config change while that pod is not ready rolls the crawler, not the API, until
// it is ready again.
func TestElasticsearchFirst(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "elastic-first"
	ctx := context.Background()
	testkit.MustCreateNamespace(t, env.Kube, ns)
	// A quota of no storage refuses the Elasticsearch volume, so its pod cannot start.
	env.Kubectl.Must(t, "create", "quota", "no-storage", "-n", ns, "--hard=requests.storage=0")
	env.Kubectl.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	if out, err := env.Kubectl.RunStdin(ctx, day2Monocle, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "the crawler created and the API waiting", func() error {
		if _, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-crawler", metav1.GetOptions{}); err != nil {
			return err
		}
		ready := apimeta.FindStatusCondition(getMonocle(t, ns, "m").Status.Conditions, "Ready")
		if ready == nil || !strings.Contains(ready.Message, "api (waits for a ready Elasticsearch pod)") {
			return fmt.Errorf("Ready is %+v", ready)
		}
		return nil
	})
	if _, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-api", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the API Deployment exists before Elasticsearch has a pod (get: %v)", err)
	}
	env.Kubectl.Must(t, "delete", "quota", "no-storage", "-n", ns)
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	pod, err := env.Kube.CoreV1().Pods(ns).Get(ctx, "m-elastic-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	api, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && api.CreationTimestamp.Before(&c.LastTransitionTime) {
			t.Errorf("the API Deployment was created at %s, before the Elasticsearch pod was ready at %s", api.CreationTimestamp, c.LastTransitionTime)
		}
	}

	// The Elasticsearch pod stops being ready (kwok's stages make a pod ready once only).
	setPodReady(t, ns, "m-elastic-0", false)
	waitCondition(t, ns, "m", "Ready", metav1.ConditionFalse, "ComponentsNotReady")
	crawler, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-crawler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patchMonocle(t, ns, `{"spec":{"config":"workspaces:\n  - name: demo\n    crawlers: []\n"}}`)
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "the crawler rolled and the API waiting", func() error {
		d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-crawler", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Generation == crawler.Generation {
			return fmt.Errorf("crawler generation still %d", d.Generation)
		}
		progressing := apimeta.FindStatusCondition(getMonocle(t, ns, "m").Status.Conditions, "Progressing")
		if progressing == nil || !strings.Contains(progressing.Message, "api (waits for a ready Elasticsearch pod)") {
			return fmt.Errorf("Progressing is %+v", progressing)
		}
		return nil
	})
	if d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-api", metav1.GetOptions{}); err != nil || d.Generation != api.Generation {
		t.Fatalf("the API Deployment changed while Elasticsearch had no ready pod (get: %v)", err)
	}
	setPodReady(t, ns, "m-elastic-0", true)
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "the API rolled", func() error {
		d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-api", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Spec.Template.Annotations[resources.ConfigHashAnnotation] == api.Spec.Template.Annotations[resources.ConfigHashAnnotation] {
			return fmt.Errorf("the API's pods still run config %s", api.Spec.Template.Annotations[resources.ConfigHashAnnotation])
		}
		return nil
	})
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
}

// setPodReady sets the Ready and ContainersReady conditions of a pod's status, as a kubelet
// whose readiness probe starts or stops passing does.
func setPodReady(t *testing.T, ns, pod string, ready bool) {
	t.Helper()
	status := "False"
	if ready {
		status = "True"
	}
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":%q},{"type":"ContainersReady","status":%q}]}}`, status, status)
	env.Kubectl.Must(t, "patch", "pod", "-n", ns, pod, "--subresource=status", "-p", patch)
}

// TestStorageGrowth: with storageGrowth, a volume Elasticsearch reports 90% full grows by a
// step, the next step waits until the PVC has grown, growth stops at maxSize with a Warning,
// and the status and DiskPressure tell each step.
func TestStorageGrowth(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "storage-growth"
	allowVolumeExpansion(t)
	startDay2(t, ns)

	env.Elastic.Answer(ns, testkit.ElasticAnswer{Health: testkit.ElasticYellow, Allocation: testkit.Allocation90})
	waitCondition(t, ns, "m", "DiskPressure", metav1.ConditionTrue, "VolumeAlmostFull")
	// Without storageGrowth the volume stays as it is.
	time.Sleep(3 * time.Second)
	waitElasticPVCRequests(t, ns, "1Gi")

	patchMonocle(t, ns, `{"spec":{"storageGrowth":{"maxSize":"3Gi","step":"1Gi"}}}`)
	waitElasticPVCRequests(t, ns, "2Gi")
	growing := waitCondition(t, ns, "m", "DiskPressure", metav1.ConditionTrue, "StorageGrowing")
	if !strings.Contains(growing.Message, "from 1Gi to 2Gi") {
		t.Errorf("DiskPressure message %q does not give the sizes", growing.Message)
	}
	waitEvent(t, ns, "StorageGrowing", "from 1Gi to 2Gi")
	// The disk stays 90% full while the PVC expands: no second step.
	time.Sleep(3 * time.Second)
	waitElasticPVCRequests(t, ns, "2Gi")
	if st := getMonocle(t, ns, "m").Status.StorageGrowth; st == nil || st.Steps != 1 || st.ExpandedTime != nil {
		t.Fatalf("while expanding: status.storageGrowth = %+v, want step 1 under way", st)
	}

	resizeElasticPVC(t, ns, "2Gi")
	waitEvent(t, ns, "StorageGrown", "2Gi")
	// Still 90% full after the growth (the fake says so): the next step, to maxSize.
	waitElasticPVCRequests(t, ns, "3Gi")
	resizeElasticPVC(t, ns, "3Gi")
	waitEvent(t, ns, "StorageGrowthAtMaximum", "maxSize 3Gi")
	st := getMonocle(t, ns, "m").Status.StorageGrowth
	if st == nil || st.Steps != 2 || st.Size.String() != "3Gi" || !strings.Contains(st.Message, "maxSize 3Gi") {
		t.Fatalf("at maxSize: status.storageGrowth = %+v", st)
	}
	waitCondition(t, ns, "m", "StorageReady", metav1.ConditionTrue, "AsRequested")

	// Room again: no complaint left, and the grown size stays.
	env.Elastic.Answer(ns, testkit.ElasticAnswer{Health: testkit.ElasticYellow, Allocation: testkit.Allocation40})
	waitCondition(t, ns, "m", "DiskPressure", metav1.ConditionFalse, "VolumeHasRoom")
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "the refusal gone from status.storageGrowth", func() error {
		if st := getMonocle(t, ns, "m").Status.StorageGrowth; st == nil || st.Message != "" || st.Size.String() != "3Gi" {
			return fmt.Errorf("status.storageGrowth = %+v", st)
		}
		return nil
	})
	waitElasticPVCRequests(t, ns, "3Gi")
}
