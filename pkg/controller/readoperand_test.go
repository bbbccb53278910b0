package controller

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// The syncs of a controller that reads its Monocles' Elasticsearch (Options.Operands); the
// reads themselves are tested in package operand.

// withConditions is a Monocle whose status has conds, for condition.
func withConditions(conds []metav1.Condition) *monoclev1alpha1.Monocle {
	return &monoclev1alpha1.Monocle{Status: monoclev1alpha1.MonocleStatus{Conditions: conds}}
}

// readingFixture is a fixture of a converged Monocle, its Elasticsearch ready, whose controller
// reads Elasticsearch every interval from a fake that answers yellow and 80% full.
func readingFixture(t *testing.T, interval time.Duration) (*fixture, *monoclev1alpha1.Monocle, *elastictest.Server) {
	t.Helper()
	m, objects := converged(t, newMonocle("demo"))
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, elastictest.YellowHealth)
	srv.Reply("GET", "/_cat/allocation", 200, elastictest.Allocation80)
	// The API's health, asked through its Service, reaches the same fake (DialAddress).
	srv.Reply("GET", "/health", 200, `"ok"`)
	srv.Reply("GET", "/_cat/indices/monocle.changes.1.*", 200, `[]`)
	srv.Reply("GET", "/_cluster/settings", 200, `{"persistent":{},"transient":{},"defaults":{"cluster.routing.allocation.disk.watermark.low":"85%",`+
		`"cluster.routing.allocation.disk.watermark.high":"90%","cluster.routing.allocation.disk.watermark.flood_stage":"95%"}}`)
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	f.operands = operand.Options{Interval: interval, Timeout: 10 * time.Second, DialAddress: dialAddress(srv)}
	f.newController()
	return f, m, srv
}

// syncThroughFirstRead syncs the Monocle key of a readingFixture twice: the first sync starts
// the first read of Elasticsearch and writes nothing, the read's end adds the key to the
// queue at once, and the second sync writes the status alone, which it returns.
func syncThroughFirstRead(ctx context.Context, t *testing.T, f *fixture, key cache.ObjectName) *monoclev1alpha1.Monocle {
	t.Helper()
	c := f.controller
	if err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if w := writes(f.client.Actions()); len(w) != 0 {
		t.Fatalf("the sync that started the first read wrote %v", describe(w))
	}
	item, shutdown := c.queue.Get()
	if shutdown || item != key {
		t.Fatalf("queue gave %v (shutdown %v), want %v", item, shutdown, key)
	}
	c.queue.Done(item)
	if err := c.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	w := writes(f.client.Actions())
	if len(w) != 1 {
		t.Fatalf("writes after the read: %v, want one status update", describe(w))
	}
	return w[0].(interface{ GetObject() runtime.Object }).GetObject().(*monoclev1alpha1.Monocle)
}

// TestFirstReadHoldsTheStatusWrite: the sync that starts the first read of a ready
// Elasticsearch writes no status; the read's end enqueues the Monocle, whose next sync writes
// the status with the health in it.
func TestFirstReadHoldsTheStatusWrite(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, m, _ := readingFixture(t, time.Hour)
	status := syncThroughFirstRead(ctx, t, f, cache.MetaObjectToName(m)).Status
	if status.ElasticsearchHealth == nil || status.ElasticsearchHealth.Status != "yellow" {
		t.Errorf("status.elasticsearchHealth = %+v, want yellow", status.ElasticsearchHealth)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionElasticsearchHealthy); c.Status != metav1.ConditionTrue || c.Reason != reasons.Yellow {
		t.Errorf("ElasticsearchHealthy = %+v", c)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v", c)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionAPIHealthy); c.Status != metav1.ConditionTrue || c.Reason != reasons.APIAnswers {
		t.Errorf("APIHealthy = %+v", c)
	}
}

// TestFirstAPIReadHoldsTheStatusWrite: a Monocle whose Elasticsearch health is in the
// status and whose API has just become ready: the sync that starts the first read asking the
// API writes no status, and the next one writes Ready with the API's health in one write.
func TestFirstAPIReadHoldsTheStatusWrite(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, m, srv := readingFixture(t, time.Hour)
	unready := make([]runtime.Object, 0, len(f.kubeobjects))
	for _, o := range f.kubeobjects {
		if d, ok := o.(*appsv1.Deployment); ok && d.Name == "demo-api" {
			d = d.DeepCopy()
			d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
			o = d
		}
		unready = append(unready, o)
	}
	g := newFixture(t)
	g.monocles, g.kubeobjects = []*monoclev1alpha1.Monocle{m}, unready
	g.operands = operand.Options{Interval: time.Hour, Timeout: 10 * time.Second, DialAddress: dialAddress(srv)}
	g.newController()
	read := syncThroughFirstRead(ctx, t, g, cache.MetaObjectToName(m))
	if c := condition(t, withConditions(read.Status.Conditions), monoclev1alpha1.ConditionAPIHealthy); c.Reason != reasons.APINotReady {
		t.Fatalf("APIHealthy with the API not ready = %+v", c)
	}

	// The API is ready now: a new operator process, whose read of Elasticsearch finds the
	// health the status already has.
	h := newFixture(t)
	h.monocles, h.kubeobjects = []*monoclev1alpha1.Monocle{read}, f.kubeobjects
	h.operands = operand.Options{Interval: time.Hour, Timeout: 10 * time.Second, DialAddress: dialAddress(srv)}
	h.newController()
	status := syncThroughFirstRead(ctx, t, h, cache.MetaObjectToName(m)).Status
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionAPIHealthy); c.Status != metav1.ConditionTrue || c.Reason != reasons.APIAnswers {
		t.Errorf("APIHealthy = %+v", c)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v", c)
	}
}

// TestAPIHealthReported: an API that answers its health check through the Service with an
// error status is reported in APIHealthy, with the status, and the Monocle stays Ready.
func TestAPIHealthReported(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, m, srv := readingFixture(t, time.Hour)
	srv.Reply("GET", "/health", 503, `"starting"`)
	status := syncThroughFirstRead(ctx, t, f, cache.MetaObjectToName(m)).Status
	if got := srv.RequestsTo("GET", "/health"); len(got) != 1 {
		t.Fatalf("%d health requests to the API, want 1", len(got))
	}
	api := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionAPIHealthy)
	if api.Status != metav1.ConditionFalse || api.Reason != reasons.APIUnreachable || !strings.Contains(api.Message, "503") || !strings.Contains(api.Message, "demo-api") {
		t.Errorf("APIHealthy = %+v", api)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v", c)
	}
}

// TestElasticsearchIsReadEveryInterval: each read brings the Monocle back after the interval,
// whose sync reads again; a change of Elasticsearch's answer reaches the status.
func TestElasticsearchIsReadEveryInterval(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f, m, srv := readingFixture(t, 300*time.Millisecond)
	c := f.controller
	go func() {
		for c.processNextWorkItem(ctx) {
		}
	}()
	defer c.queue.ShutDown()
	key := cache.ObjectName{Namespace: m.Namespace, Name: m.Name}
	c.queue.Add(key)
	testkitEventually(t, func() bool { return len(srv.RequestsTo("GET", "/_cluster/health")) >= 1 })
	// A shorter delay for the same key (the resync after a status change) replaces the one
	// the read asked for in the queue; reads go on all the same.
	c.queue.AddAfter(key, 10*time.Millisecond)
	testkitEventually(t, func() bool { return len(srv.RequestsTo("GET", "/_cluster/health")) >= 3 })
	srv.Reply("GET", "/_cluster/health", 200, elastictest.RedHealth)
	testkitEventually(t, func() bool {
		for _, a := range writes(f.client.Actions()) {
			s := a.(interface{ GetObject() runtime.Object }).GetObject().(*monoclev1alpha1.Monocle).Status
			if s.ElasticsearchHealth != nil && s.ElasticsearchHealth.Status == "red" {
				return true
			}
		}
		return false
	})
}

// testkitEventually polls cond every 10 ms for up to 30 s.
func testkitEventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("not true after 30 s")
}

// TestRestartKeepsEarlierHealth: an operator that has not read a Monocle's Elasticsearch yet
// (it just started, and every read slot is taken) keeps the health an earlier read left in
// the status, and writes nothing: "not read yet" is no news. Before, every Monocle's status
// flapped to ElasticsearchUnreachable and back at each start (seen as failed status writes
// in the fault suite's API server outage).
func TestRestartKeepsEarlierHealth(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, m, _ := readingFixture(t, time.Hour)
	key := cache.MetaObjectToName(m)
	read := syncThroughFirstRead(ctx, t, f, key)

	// A new operator process: the Monocle as the first one left it, no read yet, and no slot:
	// the only one is held by the read of another Monocle, whose Elasticsearch hangs.
	hanging := elastictest.NewServer(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	hanging.Handle("GET", "/_cluster/health", http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	g := newFixture(t)
	g.monocles = []*monoclev1alpha1.Monocle{read}
	g.kubeobjects = f.kubeobjects
	g.operands = operand.Options{Interval: time.Hour, Timeout: time.Minute, MaxReads: 1, DialAddress: dialAddress(hanging)}
	restarted := g.newController()
	restarted.operand.Observe(ctx, newMonocle("other"), operand.Inputs{ElasticReady: true})
	if err := restarted.syncHandler(ctx, key); err != nil {
		t.Fatal(err)
	}
	if w := writes(g.client.Actions()); len(w) != 0 {
		status := w[0].(interface{ GetObject() runtime.Object }).GetObject().(*monoclev1alpha1.Monocle).Status
		t.Errorf("a restarted operator wrote the status before reading Elasticsearch: ElasticsearchHealthy %+v",
			condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionElasticsearchHealthy))
	}
}

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
	tr := es.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	f.operands = operand.Options{Interval: time.Hour, Timeout: 10 * time.Second, Transport: tr}
	f.newController()

	status := syncThroughFirstRead(ctx, t, f, cache.MetaObjectToName(m)).Status
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

// TestIndexReplicasRefusedOnTheBundledNode: the bundled Elasticsearch is one data node, so
// indexReplicas 1 is refused (SpecAccepted, Degraded) before any read, while the rest is made
// as usual; 0 is accepted. The status names the bundled cluster.
func TestIndexReplicasRefusedOnTheBundledNode(t *testing.T) {
	for replicas, refused := range map[int32]bool{0: false, 1: true} {
		m := newMonocle("demo")
		m.Spec.Elasticsearch.IndexReplicas = ptr.To(replicas)
		f := newFixture(t)
		f.monocles = []*monoclev1alpha1.Monocle{m}
		kubeWrites, status := f.runStatus()
		if written[*appsv1.StatefulSet](kubeWrites, "demo-elastic") == nil {
			t.Errorf("%d: no StatefulSet: %v", replicas, describe(kubeWrites))
		}
		if refused {
			expectRefused(t, status, reasons.IndexReplicasTooHigh, "indexReplicas is 1 but the cluster has 1 data nodes")
		} else if c := condition(t, status, monoclev1alpha1.ConditionSpecAccepted); c.Status != metav1.ConditionTrue {
			t.Errorf("%d: SpecAccepted = %+v", replicas, c)
		}
		if c := status.Status.ElasticsearchCluster; c == nil || c.Kind != monoclev1alpha1.ElasticsearchBundled || c.URL != "http://demo-elastic.default.svc:9200" {
			t.Errorf("%d: status.elasticsearchCluster = %+v, want Bundled at http://demo-elastic.default.svc:9200", replicas, c)
		}
	}
}

// TestIndexReplicasKept: the read finds an index of Monocle's with another number of
// replicas than indexReplicas, sets it on all of them, and the status reports the cluster's
// data nodes and the replicas.
func TestIndexReplicasKept(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f, m, srv := readingFixture(t, time.Hour)
	m.Spec.Elasticsearch.IndexReplicas = ptr.To[int32](0)
	srv.Reply("GET", "/monocle*/_settings/index.number_of_replicas", 200,
		`{"monocle.config":{"settings":{"index.number_of_replicas":"1"}},"monocle.changes.1.demo":{"settings":{"index.number_of_replicas":"0"}}}`)
	srv.Reply("PUT", "/monocle*/_settings", 200, `{"acknowledged":true}`)
	status := syncThroughFirstRead(ctx, t, f, cache.MetaObjectToName(m)).Status
	puts := srv.RequestsTo("PUT", "/monocle*/_settings")
	if len(puts) != 1 || string(puts[0].Body) != `{"index":{"number_of_replicas":0}}` || puts[0].Query.Get("expand_wildcards") != "all" {
		t.Fatalf("PUT requests %+v, want one setting 0 on every Monocle index", puts)
	}
	c := status.ElasticsearchCluster
	if c == nil || !ptr.Equal(c.DataNodes, ptr.To[int32](1)) || !ptr.Equal(c.IndexReplicas, ptr.To[int32](0)) {
		t.Errorf("status.elasticsearchCluster = %+v, want 1 data node and 0 replicas", c)
	}
	if c := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionSpecAccepted); c.Status != metav1.ConditionTrue {
		t.Errorf("SpecAccepted = %+v", c)
	}
}

// TestIndexReplicasOnAClusterByURL: on a cluster of one's own, the data nodes an earlier read
// found (status.elasticsearchCluster) decide: 3 replicas on 3 data nodes are refused, on 4
// accepted, and nothing is refused before a read found them.
func TestIndexReplicasOnAClusterByURL(t *testing.T) {
	for name, tc := range map[string]struct {
		nodes   *int32
		refused bool
	}{
		"3 data nodes": {nodes: ptr.To[int32](3), refused: true},
		"4 data nodes": {nodes: ptr.To[int32](4)},
		"not read yet": {},
	} {
		t.Run(name, func(t *testing.T) {
			m := withExternal("demo", "http://es.example.com:9200", "", "")
			m.Spec.Elasticsearch.IndexReplicas = ptr.To[int32](3)
			m.Status.ElasticsearchCluster = &monoclev1alpha1.ElasticsearchClusterStatus{Kind: monoclev1alpha1.ElasticsearchExternal,
				URL: "http://es.example.com:9200", DataNodes: tc.nodes}
			f := newFixture(t)
			f.monocles = []*monoclev1alpha1.Monocle{m}
			_, status := f.runStatus()
			if tc.refused {
				expectRefused(t, status, reasons.IndexReplicasTooHigh, "indexReplicas is 3 but the cluster has 3 data nodes")
			} else if c := condition(t, status, monoclev1alpha1.ConditionSpecAccepted); c.Status != metav1.ConditionTrue {
				t.Errorf("SpecAccepted = %+v", c)
			}
			if c := status.Status.ElasticsearchCluster; c == nil || c.Kind != monoclev1alpha1.ElasticsearchExternal || !ptr.Equal(c.DataNodes, tc.nodes) {
				t.Errorf("status.elasticsearchCluster = %+v, want External with the data nodes kept", c)
			}
		})
	}
}
