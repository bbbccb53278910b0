package operand_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestCrawlerProgress reads the crawler metadata of two workspaces from the fake
// Elasticsearch, one of which has no index yet, and puts it in status.crawlers; before a
// read, and after a failed one, the status keeps what it had.
func TestCrawlerProgress(t *testing.T) {
	m := backupMonocle("")
	f, client := fakeElastic(t, m)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 4, 0, 0, 0, time.UTC) }
	f.SetCrawlerMetadata("ns", "m", "monocle.changes.1.demo",
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "a/b", LastCommitAt: day(24)},
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "a/c", LastCommitAt: day(20)})
	crawlers := []monoclev1alpha1.CrawlerStatus{
		{Workspace: "demo", Name: "gh"}, {Workspace: "demo", Name: "gitlab"}, {Workspace: "new", Name: "gerrit"},
	}
	if got := day2.CrawlerWorkspaces(crawlers); len(got) != 2 || got[0] != "demo" || got[1] != "new" {
		t.Fatalf("workspaces = %v", got)
	}

	long := strings.Repeat("é", 300)
	f.SetCrawlerErrors("ns", "m", "monocle.changes.1.demo",
		testkit.FakeCrawlerError{Crawler: "gitlab", EntityType: "project", EntityValue: "x/y", Message: "old", CreatedAt: time.Now().Add(-72 * time.Hour)},
		testkit.FakeCrawlerError{Crawler: "gh", EntityType: "project", EntityValue: "a/b", Message: long, CreatedAt: time.Now().Add(-time.Hour)})
	read, errs := operand.ReadCrawlers(context.Background(), klog.Background(), client, day2.CrawlerWorkspaces(crawlers))
	if read == nil || errs == nil {
		t.Fatal("the read failed")
	}
	cfg := &monocleconfig.Config{Workspaces: []monocleconfig.Workspace{
		{Name: "demo", Crawlers: []monocleconfig.Crawler{
			{Name: "gh", Provider: monocleconfig.ProviderGitHub, Entities: monocleconfig.Entities{Organization: "a"}},
			{Name: "gitlab", Provider: monocleconfig.ProviderGitLab, Entities: monocleconfig.Entities{Organization: "x"}},
		}},
		{Name: "new", Crawlers: []monocleconfig.Crawler{{Name: "gerrit", Provider: monocleconfig.ProviderGerrit}}},
	}}
	got := day2.WithProgress(m, crawlers, read, errs, cfg)
	if c := got[0]; c.CrawledUntil == nil || !c.CrawledUntil.Time.Equal(day(20)) || c.Entities != 2 {
		t.Errorf("gh: crawledUntil %v, %d entities; want the oldest date %s of 2", c.CrawledUntil, c.Entities, day(20))
	}
	if got[1].CrawledUntil != nil || got[2].CrawledUntil != nil {
		t.Errorf("crawlers without metadata (or index) have progress: %+v", got[1:])
	}
	if e := got[0].Errors; e == nil || e.LastDay != 1 || e.Total != 1 || e.LastEntity != "project a/b" || len(e.LastMessage) > day2.MaxErrorMessage+len("…") || !utf8.ValidString(e.LastMessage) {
		t.Errorf("gh errors: %+v", got[0].Errors)
	}
	if e := got[1].Errors; e == nil || e.LastDay != 0 || e.Total != 1 {
		t.Errorf("gitlab errors: %+v", got[1].Errors)
	}
	cond := day2.CrawlersHealthyCondition(got)
	if cond.Status != metav1.ConditionFalse || cond.Reason != reasons.CrawlerErrors || !strings.Contains(cond.Message, "demo/gh: 1 errors") || strings.Contains(cond.Message, "demo/gitlab") {
		t.Errorf("CrawlersHealthy = %+v: want gh named, and not gitlab, whose error is 3 days old", cond)
	}
	if c := day2.CrawlersHealthyCondition(crawlers); c.Status != metav1.ConditionTrue {
		t.Errorf("no errors: %+v", c)
	}

	// No read yet, or a failed one: the status's values stay.
	m.Status.Crawlers = got
	kept := day2.WithProgress(m, []monoclev1alpha1.CrawlerStatus{{Workspace: "demo", Name: "gh"}}, nil, nil, cfg)
	if kept[0].CrawledUntil == nil || !kept[0].CrawledUntil.Equal(&metav1.Time{Time: day(20)}) || kept[0].Entities != 2 {
		t.Errorf("no read: crawledUntil %v, %d entities; want the status's", kept[0].CrawledUntil, kept[0].Entities)
	}
	bad, err := elastic.New("http://127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if r, _ := operand.ReadCrawlers(ctx, klog.Background(), bad, []string{"demo"}); r != nil {
		t.Errorf("an unreachable Elasticsearch gave progress %v, want nil", r)
	}
}

// TestReadsCompareCrawlerProgress: a read that finds crawler progress after an earlier one
// did compares the two (the comparison once panicked on time.Time's unexported fields,
// crashing the operator at the second read of any Monocle with crawler metadata).
func TestReadsCompareCrawlerProgress(t *testing.T) {
	m := backupMonocle("")
	m.Spec.Backup = nil
	f, _ := fakeElastic(t, m)
	f.SetCrawlerMetadata("ns", "m", "monocle.changes.1.demo",
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "a/b", LastCommitAt: time.Date(2026, 11, 20, 4, 0, 0, 0, time.UTC)})
	enqueued := make(chan struct{}, 16)
	w := operand.New(context.Background(), operand.Options{Interval: time.Hour, Timeout: 5 * time.Second, Transport: f.Transport()},
		func(cache.ObjectName, time.Duration) { enqueued <- struct{}{} })
	operand.SetLast(w, m, operand.Result{})
	for i := range 2 {
		operand.ReadNow(w, m, operand.Inputs{Target: bundledTarget(m), Workspaces: []string{"demo"}})
		if p, ok := operand.Last(w, m).Crawlers[contract.CrawlerKey("demo", "gh")]; !ok || len(p.Entities) != 1 {
			t.Fatalf("read %d: crawlers %v", i, operand.Last(w, m).Crawlers)
		}
	}
}
