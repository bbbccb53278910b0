package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestElasticsearchHealth: the operator reads each Monocle's Elasticsearch (here the suite's
// fake, which kwok's pods cannot be) once its pod is ready, and reports it: the health and disk
// use in the status and in kubectl get -o wide, the ElasticsearchHealthy and DiskPressure
// conditions, a Warning event when Elasticsearch turns red and when its volume becomes almost
// full; an Elasticsearch that answers garbage or an error status is reported, not fatal: the
// Monocle stays Ready. With the health it reads how far each crawler has crawled
// (status.crawlers[].crawledUntil).
func TestElasticsearchHealth(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "health"
	startDay2(t, ns)

	// The fake answers yellow and 40% by default, as a single node with replicas would.
	waitCondition(t, ns, "m", "ElasticsearchHealthy", metav1.ConditionTrue, "Yellow")
	waitCondition(t, ns, "m", "APIHealthy", metav1.ConditionTrue, "APIAnswers")
	waitCondition(t, ns, "m", "DiskPressure", metav1.ConditionFalse, "VolumeHasRoom")
	h := getMonocle(t, ns, "m").Status.ElasticsearchHealth
	if h == nil || h.Status != "yellow" || ptr.Deref(h.DiskUsedPercent, -1) != 40 || h.DiskSize.String() != "10Gi" || h.IndicesSize.String() != "10Mi" {
		t.Fatalf("status.elasticsearchHealth = %+v, want yellow, 40%%, 10Gi, 10Mi", h)
	}
	wide := env.Kubectl.Must(t, "get", "monocle", "-n", ns, "m", "-o", "wide")
	if !strings.Contains(wide, "yellow") || !strings.Contains(wide, "40") {
		t.Errorf("kubectl get -o wide does not show the health and disk use:\n%s", wide)
	}

	// Red, and a volume almost full: both conditions and both events.
	env.Elastic.Answer(ns, testkit.ElasticAnswer{Health: testkit.ElasticRed, Allocation: testkit.Allocation90})
	waitCondition(t, ns, "m", "ElasticsearchHealthy", metav1.ConditionFalse, "Red")
	disk := waitCondition(t, ns, "m", "DiskPressure", metav1.ConditionTrue, "VolumeAlmostFull")
	if !strings.Contains(disk.Message, "90% full") || !strings.Contains(disk.Message, "storageSize") {
		t.Errorf("DiskPressure message %q does not say how full the volume is and what to do", disk.Message)
	}
	for _, reason := range []string{"Red", "VolumeAlmostFull"} {
		testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "a "+reason+" event", func() error {
			if events := env.Kubectl.Must(t, "get", "events", "-n", ns, "--field-selector", "reason="+reason); !strings.Contains(events, "Warning") {
				return fmt.Errorf("no Warning %s event:\n%s", reason, events)
			}
			return nil
		})
	}

	// An answer that is not Elasticsearch's, then an error status: Unknown, with the error.
	env.Elastic.Answer(ns, testkit.ElasticAnswer{Health: "<html>a proxy</html>", Allocation: testkit.Allocation40})
	healthy := waitCondition(t, ns, "m", "ElasticsearchHealthy", metav1.ConditionUnknown, "ElasticsearchUnreachable")
	if !strings.Contains(healthy.Message, "decoding _cluster/health") {
		t.Errorf("ElasticsearchHealthy message %q does not give the error", healthy.Message)
	}
	env.Elastic.Answer(ns, testkit.ElasticAnswer{Status: 500, Health: `{"error":{"type":"exception","reason":"boom"},"status":500}`})
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "the 500 reported", func() error {
		if c := waitCondition(t, ns, "m", "ElasticsearchHealthy", metav1.ConditionUnknown, "ElasticsearchUnreachable"); !strings.Contains(c.Message, "boom") {
			return fmt.Errorf("message %q", c.Message)
		}
		return nil
	})
	waitCondition(t, ns, "m", "Ready", metav1.ConditionTrue, "AllComponentsReady")

	// The API failing its health check through the Service: reported, Ready stays.
	env.Elastic.Answer(ns, testkit.ElasticAnswer{Health: testkit.ElasticYellow, Allocation: testkit.Allocation40, APIStatus: 502})
	if c := waitCondition(t, ns, "m", "APIHealthy", metav1.ConditionFalse, "APIUnreachable"); !strings.Contains(c.Message, "502") {
		t.Errorf("APIHealthy message %q does not give the status", c.Message)
	}

	// Green again.
	env.Elastic.Answer(ns, testkit.ElasticAnswer{Health: strings.Replace(testkit.ElasticYellow, `"yellow"`, `"green"`, 1), Allocation: testkit.Allocation40})
	waitCondition(t, ns, "m", "ElasticsearchHealthy", metav1.ConditionTrue, "Green")
	waitCondition(t, ns, "m", "DiskPressure", metav1.ConditionFalse, "VolumeHasRoom")

	// Crawler progress: the oldest last_commit_at of the crawler's entities.
	oldest := time.Date(2026, 11, 20, 4, 0, 0, 0, time.UTC)
	env.Elastic.SetCrawlerMetadata(ns, "m", "monocle.changes.1.demo",
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "organization", Value: "change-metrics", LastCommitAt: oldest.Add(48 * time.Hour)},
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "project", Value: "change-metrics/monocle", LastCommitAt: oldest})
	waitCrawledUntil(t, ns, oldest, 2)

	// Crawler errors: CrawlersHealthy names the failing crawler, and kubectl get -o wide
	// shows it.
	waitCondition(t, ns, "m", "CrawlersHealthy", metav1.ConditionTrue, "NoCrawlerErrors")
	env.Elastic.SetCrawlerErrors(ns, "m", "monocle.changes.1.demo", testkit.FakeCrawlerError{Crawler: "gh", EntityType: "organization",
		EntityValue: "change-metrics", Message: "Bad credentials", CreatedAt: time.Now().Add(-time.Minute)})
	failing := waitCondition(t, ns, "m", "CrawlersHealthy", metav1.ConditionFalse, "CrawlerErrors")
	if !strings.Contains(failing.Message, "demo/gh") || !strings.Contains(failing.Message, "Bad credentials") {
		t.Errorf("CrawlersHealthy message %q does not name the crawler and its error", failing.Message)
	}
	if wide := env.Kubectl.Must(t, "get", "monocle", "-n", ns, "m", "-o", "wide"); !strings.Contains(wide, "Bad credentials") {
		t.Errorf("kubectl get -o wide does not show the failing crawler:\n%s", wide)
	}
	if e := getMonocle(t, ns, "m").Status.Crawlers[0].Errors; e == nil || e.LastDay != 1 || e.LastEntity != "organization change-metrics" {
		t.Errorf("status.crawlers[0].errors = %+v", e)
	}
}

// waitCrawledUntil waits until status.crawlers of Monocle m of ns has its one crawler crawled
// until until, over entities entities.
func waitCrawledUntil(t *testing.T, ns string, until time.Time, entities int32) {
	t.Helper()
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "status.crawlers with the crawler's progress", func() error {
		crawlers := getMonocle(t, ns, "m").Status.Crawlers
		if len(crawlers) != 1 || crawlers[0].CrawledUntil == nil || !crawlers[0].CrawledUntil.Time.Equal(until) || crawlers[0].Entities != entities {
			return fmt.Errorf("status.crawlers = %+v", crawlers)
		}
		return nil
	})
}
