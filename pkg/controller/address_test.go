package controller

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

// TestRefusedAddressIsACondition: a Monocle whose external URL names a host that resolves to
// loopback (localhost, from the hosts file) gets ElasticsearchHealthy False
// ElasticsearchAddressRefused, naming the address, Degraded and a Warning event, and its
// reads send nothing to Elasticsearch, even with the administrator's dial address set.
func TestRefusedAddressIsACondition(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, objects := converged(t, withExternal("demo", "http://localhost:9200", "", ""))
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, elastictest.YellowHealth)
	// The API's health, asked through its Service, reaches the fake (the dial address).
	srv.Reply("GET", "/health", 200, `"ok"`)
	f := newFixture(t)
	f.monocles, f.kubeobjects = []*monoclev1alpha1.Monocle{m}, objects
	f.operands = operand.Options{Interval: time.Hour, Timeout: 10 * time.Second, DialAddress: dialAddress(srv)}
	f.newController()

	// The claim of the cluster (ownership.go) is the first request the worker would send; its
	// refusal is the first result. Sync as each end of the worker enqueues the Monocle.
	key := cache.MetaObjectToName(m)
	var status monoclev1alpha1.MonocleStatus
	for range 4 {
		if err := f.controller.syncHandler(ctx, key); err != nil {
			t.Fatal(err)
		}
		for _, w := range writes(f.client.Actions()) {
			if o, ok := w.(interface{ GetObject() runtime.Object }); ok {
				if got, ok := o.GetObject().(*monoclev1alpha1.Monocle); ok {
					status = got.Status
				}
			}
		}
		if c := meta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionElasticsearchHealthy); c != nil && c.Reason == reasons.ElasticsearchAddressRefused {
			break
		}
		item, shutdown := f.controller.queue.Get()
		if shutdown {
			t.Fatal("queue shut down")
		}
		f.controller.queue.Done(item)
	}
	healthy := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionElasticsearchHealthy)
	if healthy.Status != metav1.ConditionFalse || healthy.Reason != reasons.ElasticsearchAddressRefused ||
		!strings.Contains(healthy.Message, "host localhost resolves to ") || !strings.Contains(healthy.Message, "which is loopback") {
		t.Errorf("ElasticsearchHealthy = %+v, want False %s naming localhost's loopback address", healthy, reasons.ElasticsearchAddressRefused)
	}
	if d := condition(t, withConditions(status.Conditions), monoclev1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != reasons.ElasticsearchAddressRefused {
		t.Errorf("Degraded = %+v, want True %s", d, reasons.ElasticsearchAddressRefused)
	}
	if !slices.ContainsFunc(drain(f), func(e string) bool { return strings.HasPrefix(e, "Warning "+reasons.ElasticsearchAddressRefused+" ") }) {
		t.Errorf("no Warning %s event", reasons.ElasticsearchAddressRefused)
	}
	for _, r := range srv.Requests() {
		if r.Path != "/health" {
			t.Errorf("the fake Elasticsearch got %s %s, want nothing", r.Method, r.Path)
		}
	}
}
