package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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
