package operand_test

import (
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// enqueued records the keys a Worker enqueues, with their delays.
type enqueued struct {
	key   cache.ObjectName
	after time.Duration
}

// testWorker returns a Worker whose every read goes to srv, and the channel its enqueues
// arrive on.
func testWorker(t *testing.T, srv *elastictest.Server, timeout time.Duration) (operand.Worker, chan enqueued) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	// Each read lists the workspace indices too: none here; and reads the disk watermarks:
	// the defaults, unless the test routes its own after this.
	srv.Reply("GET", "/_cat/indices/monocle.changes.1.*", 200, `[]`)
	srv.Reply("GET", "/_cluster/settings", 200, clusterSettings96)
	out := make(chan enqueued, 16)
	h := operand.New(ctx, operand.Options{Interval: time.Hour, Timeout: timeout, DialAddress: hostOf(t, srv)},
		func(key cache.ObjectName, after time.Duration) { out <- enqueued{key, after} })
	return h, out
}

// hostOf is the host:port of srv.
func hostOf(t *testing.T, srv *elastictest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// waitRead waits for the enqueue that ends a read whose result changed (delay 0), then for
// the one of the next read (after the interval).
func waitRead(t *testing.T, got chan enqueued) {
	t.Helper()
	for _, want := range []time.Duration{0, time.Hour} {
		select {
		case e := <-got:
			if e.after != want || (e.key.Name != "m" && !strings.HasPrefix(e.key.Name, "m-")) {
				t.Fatalf("enqueued %+v, want m or m-<n> after %s", e, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the read never ended")
		}
	}
}

// newMonocle is Monocle name of the default namespace.
func newMonocle(name string) *monoclev1alpha1.Monocle {
	return &monoclev1alpha1.Monocle{
		TypeMeta:   metav1.TypeMeta{APIVersion: monoclev1alpha1.SchemeGroupVersion.String(), Kind: "Monocle"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: "uid-0b6f6a36", Generation: 1},
	}
}

// condition is the condition of type typ of conds; the test fails without one.
func condition(t *testing.T, conds []metav1.Condition, typ string) metav1.Condition {
	t.Helper()
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	t.Fatalf("no %s condition in %+v", typ, conds)
	return metav1.Condition{}
}

// registerMetrics registers the worker's metrics in the registry /metrics serves, once.
var registerMetrics = sync.OnceFunc(func() { legacyregistry.MustRegister(operand.Metrics()...) })

// clusterSettings96 is GET _cluster/settings?include_defaults&flat_settings of Elasticsearch
// 7.17 with the default disk watermarks (85%, 90%, 95%).
const clusterSettings96 = `{"persistent":{},"transient":{},"defaults":{"cluster.routing.allocation.disk.watermark.low":"85%",` +
	`"cluster.routing.allocation.disk.watermark.high":"90%","cluster.routing.allocation.disk.watermark.flood_stage":"95%"}}`

// backupMonocle is Monocle "m" of namespace "ns" with spec.backup on a volume.
func backupMonocle(schedule string) *monoclev1alpha1.Monocle {
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", UID: "uid-m"}}
	m.Spec.Backup = &monoclev1alpha1.BackupSpec{Schedule: schedule}
	return m
}

// fakeElastic starts a testkit.FakeElasticsearch with the Monocle indices of m and returns
// it with a client of m's Elasticsearch.
func fakeElastic(t *testing.T, m *monoclev1alpha1.Monocle) (*testkit.FakeElasticsearch, elastic.Client) {
	t.Helper()
	f := testkit.StartFakeElasticsearch()
	t.Cleanup(f.Close)
	tr := f.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	target := bundledTarget(m)
	client, err := elastic.NewClient(elastic.Config{URL: target.URL, Username: target.Username, Password: target.Password, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	f.SetIndices(m.Namespace, m.Name, "monocle.config", "monocle.changes.1.demo")
	return f, client
}

// bundledTarget is the target of m's bundled node, as the operator's user with a password:
// the fake Elasticsearch asks for both.
func bundledTarget(m *monoclev1alpha1.Monocle) resources.ElasticsearchTarget {
	return resources.BundledTarget(m).WithBundledUsers(map[string][]byte{
		resources.ElasticOperatorUser: []byte("operator-password"), resources.ElasticMonocleUser: []byte("monocle-password")})
}
