package controller

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// reposConfig is githubConfig after its crawler moved from the whole organization to one
// repository.
const reposConfig = "workspaces:\n  - name: demo\n    crawlers:\n      - name: gh\n        update_since: \"2024-01-01\"\n        provider:\n          github_organization: change-metrics\n          github_repositories: [monocle]\n          github_token: MY_GITHUB_TOKEN\n"

// TestProgressIgnoresDroppedEntities: a GitHub crawler that crawled its whole organization and
// now crawls one repository. Monocle keeps the metadata documents of the organization and of
// the repositories the organization crawl found, whose dates no longer move; the documents of
// the repository the config names are fresh. The crawler reads as progressing: no restart.
// (Before, the oldest date of all the crawler's documents was its progress: stuck at the
// dropped repository's date, the crawler was restarted.)
func TestProgressIgnoresDroppedEntities(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	tokens := newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "t"})
	m := newMonocle("demo")
	m.Spec.Config = reposConfig
	m.Spec.SecretRef = &monoclev1alpha1.SecretReference{Name: "tokens"}
	m, objects := converged(t, m, tokens)
	now := time.Now().UTC().Truncate(time.Second)
	stale, fresh := now.Add(-30*24*time.Hour), now.Add(-time.Hour)
	// The last read, 7 hours ago (more than the default stuckAfter), found the stale date.
	m.Status.Crawlers = []monoclev1alpha1.CrawlerStatus{{Workspace: "demo", Name: "gh", UpdateSince: "2024-01-01",
		CrawledUntil: &metav1.Time{Time: stale}, Entities: 3, LastProgressTime: &metav1.Time{Time: now.Add(-7 * time.Hour)}}}

	es := testkit.StartFakeElasticsearch()
	t.Cleanup(es.Close)
	es.SetIndices(m.Namespace, m.Name, "monocle.config", "monocle.changes.1.demo")
	es.SetCrawlerMetadata(m.Namespace, m.Name, "monocle.changes.1.demo",
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "organization", Value: "change-metrics", LastCommitAt: stale},
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "change-metrics/dropped", LastCommitAt: stale},
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "change-metrics/monocle", LastCommitAt: fresh},
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "taskdata", Value: "change-metrics/monocle", LastCommitAt: fresh})
	f := newFixture(t)
	f.monocles, f.kubeobjects, f.userSecrets = []*monoclev1alpha1.Monocle{m}, objects, []*corev1.Secret{tokens}
	c := f.newController()
	tr := es.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	c.ReadOperands(ctx, operand.Options{Interval: time.Hour, Timeout: 10 * time.Second, Transport: tr})

	// The first sync starts the read; the read's end enqueues the Monocle for the next.
	key := cache.MetaObjectToName(m)
	if err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	item, shutdown := c.queue.Get()
	if shutdown || item != key {
		t.Fatalf("queue gave %v (shutdown %v), want %v", item, shutdown, key)
	}
	c.queue.Done(item)
	if err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	var status *monoclev1alpha1.MonocleStatus
	for _, a := range writes(f.client.Actions()) {
		switch o := a.(interface{ GetObject() runtime.Object }).GetObject().(type) {
		case *monoclev1alpha1.Monocle:
			status = &o.Status
		case *appsv1.Deployment:
			t.Errorf("the sync wrote Deployment %s (a crawler restart?)", o.Name)
		}
	}
	if status == nil {
		t.Fatalf("no status written: %v", describe(writes(f.client.Actions())))
	}
	if cr := status.Crawlers; len(cr) != 1 || cr[0].CrawledUntil == nil || !cr[0].CrawledUntil.Time.Equal(fresh) || cr[0].Entities != 2 {
		t.Errorf("status.crawlers = %+v, want crawledUntil %s over the 2 documents of change-metrics/monocle", cr, fresh)
	}
	if p := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionCrawlersProgressing); p.Status != metav1.ConditionTrue || p.Reason != reasons.CrawlersProgressing {
		t.Errorf("CrawlersProgressing = %+v, want True", p)
	}
	if status.CrawlerRestarts != nil {
		t.Errorf("status.crawlerRestarts = %+v, want none", status.CrawlerRestarts)
	}
}
