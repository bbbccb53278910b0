package day2

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestCrawlerConfig: progress is judged against the config in force only once the crawler
// Deployment has rolled it out.
func TestCrawlerConfig(t *testing.T) {
	cfg := &monocleconfig.Config{}
	withHash := func(hash string, rolledOut bool) *appsv1.Deployment {
		d := deploymentOf(newMonocleImage, 1)
		if hash != "" {
			d.Spec.Template.Annotations = map[string]string{resources.ConfigHashAnnotation: hash}
		}
		if !rolledOut {
			d.Generation++
		}
		return d
	}
	stopped := withHash("new", true)
	stopped.Spec.Replicas = new(int32)
	stopped.Status.Replicas, stopped.Status.UpdatedReplicas, stopped.Status.ReadyReplicas = 0, 0, 0
	for name, tc := range map[string]struct {
		crawler *appsv1.Deployment
		want    *monocleconfig.Config
	}{
		"no crawler Deployment":                {nil, cfg},
		"runs the config in force":             {withHash("new", true), cfg},
		"rolls the config in force out":        {withHash("new", false), nil},
		"runs an earlier config":               {withHash("old", true), nil},
		"reloads its config by itself":         {withHash("", true), cfg},
		"stopped, with the config in force":    {stopped, cfg},
		"reloads by itself, rolling something": {withHash("", false), nil},
	} {
		if got := CrawlerConfig(tc.crawler, cfg, "new"); got != tc.want {
			t.Errorf("%s: CrawlerConfig = %v, want %v", name, got, tc.want)
		}
	}
}

// TestWithProgressCountsConfigEntities: the progress of a crawler is the oldest date of the
// documents its config makes it commit; without the config the crawler runs, or without
// the crawler in it, the status keeps its progress (and takes the new errors); a config whose
// entities have no document yet gives no progress.
func TestWithProgressCountsConfigEntities(t *testing.T) {
	cfg, err := monocleconfig.Parse("workspaces:\n  - name: demo\n    crawlers:\n" +
		"      - {name: gh, update_since: \"2024-01-01\", provider: {github_organization: o, github_repositories: [a, b]}}\n" +
		"      - {name: bz, update_since: \"2024-01-01\", provider: {bugzilla_url: \"https://bz\", bugzilla_products: [P]}}\n")
	if err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2026, 11, d, 4, 0, 0, 0, time.UTC) }
	read := map[string]elastic.CrawlerProgress{
		"demo/gh": {Crawler: "gh", Entities: []elastic.CrawlerEntity{
			{Type: "organization", Value: "o", LastCommitAt: day(1)},
			{Type: "project", Value: "o/a", LastCommitAt: day(20)},
			{Type: "project", Value: "o/b", LastCommitAt: day(21)},
			{Type: "project", Value: "o/old", LastCommitAt: day(2)},
			{Type: "taskdata", Value: "o/a", LastCommitAt: day(19)},
		}},
		"demo/bz": {Crawler: "bz", Entities: []elastic.CrawlerEntity{{Type: "taskdata", Value: "Dropped", LastCommitAt: day(3)}}},
	}
	errs := map[string]elastic.CrawlerErrors{"demo/gh": {Crawler: "gh", Total: 1, LastDay: 1, LastTime: day(21), LastMessage: "boom"}}
	m := newMonocle("demo")
	m.Status.Crawlers = []monoclev1alpha1.CrawlerStatus{
		{Workspace: "demo", Name: "gh", CrawledUntil: StatusTime(day(1)), Entities: 5},
		{Workspace: "demo", Name: "bz", CrawledUntil: StatusTime(day(3)), Entities: 1},
	}
	crawlers := []monoclev1alpha1.CrawlerStatus{{Workspace: "demo", Name: "gh"}, {Workspace: "demo", Name: "bz"}, {Workspace: "demo", Name: "gone"}}
	check := func(what string, got []monoclev1alpha1.CrawlerStatus, until []*metav1.Time, entities []int32) {
		t.Helper()
		for i, c := range got {
			if !c.CrawledUntil.Equal(until[i]) || c.Entities != entities[i] {
				t.Errorf("%s: %s crawledUntil %v, %d entities; want %v, %d", what, c.Name, c.CrawledUntil, c.Entities, until[i], entities[i])
			}
		}
		if e := got[0].Errors; e == nil || e.LastMessage != "boom" {
			t.Errorf("%s: gh errors %+v, want the read's", what, e)
		}
	}
	check("config in force", WithProgress(m, crawlers, read, errs, cfg),
		[]*metav1.Time{StatusTime(day(19)), nil, nil}, []int32{3, 0, 0})
	check("crawler on an earlier config", WithProgress(m, crawlers, read, errs, nil),
		[]*metav1.Time{StatusTime(day(1)), StatusTime(day(3)), nil}, []int32{5, 1, 0})
}
