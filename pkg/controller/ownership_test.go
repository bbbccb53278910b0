package controller

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// The cluster's owner record decides which Monocle uses a cluster of external or
// elasticsearchRef (ownership.go); the claims themselves are tested in package operand.

// externalAt is Monocle name of namespace ns on the external cluster url, created at the hour
// h of a day, with a UID of its own.
func externalAt(ns, name, url string, h int) *monoclev1alpha1.Monocle {
	m := withExternal(name, url, "", "")
	m.Namespace, m.UID = ns, types.UID("uid-"+ns+"-"+name)
	m.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC))
	return m
}

// claimingFixture is a fixture of monocles whose controller reads their Elasticsearch in the
// fake Elasticsearch es.
func claimingFixture(t *testing.T, es *testkit.FakeElasticsearch, monocles ...*monoclev1alpha1.Monocle) *Controller {
	f := newFixture(t)
	f.monocles = monocles
	f.operands = operand.Options{Interval: time.Hour, Timeout: 10 * time.Second, DialAddress: strings.TrimPrefix(es.URL(), "http://")}
	return f.newController()
}

// resolveClaimed runs the resolve phase of m on c until its claim has ended, and returns the
// state of the last run: the first run starts the claim, whose end enqueues m.
func resolveClaimed(t *testing.T, c *Controller, m *monoclev1alpha1.Monocle) *syncState {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	for range 5 {
		ctx, st := newSyncState(ctx, m.DeepCopy(), time.Now())
		st.cluster = c.resolveElasticsearch(ctx, st)
		if len(st.errs) > 0 {
			t.Fatalf("resolve failed: %v", st.errs)
		}
		cond := st.condition(monoclev1alpha1.ConditionElasticsearchHealthy)
		if cond == nil || cond.Reason != reasons.ElasticsearchUnclaimed || strings.Contains(cond.Message, "failed") {
			return st
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				item, shutdown := c.queue.Get()
				c.queue.Done(item)
				if shutdown || item == cache.MetaObjectToName(m) {
					return
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the claim never ended")
		}
	}
	t.Fatal("the claim never settled")
	return nil
}

// TestClaimAcrossNamespaces: two Monocles of two namespaces name one external cluster with
// two spellings. The first to claim it, though created later, owns it and its target is
// ready; the other is refused from the cluster's record with a message that names nothing of
// the owner's namespace, and its target waits; the record names the owner.
func TestClaimAcrossNamespaces(t *testing.T) {
	es := testkit.StartFakeElasticsearch()
	t.Cleanup(es.Close)
	owner := externalAt("team-a", "alpha", "http://search.example.com:9200", 2)
	other := externalAt("team-b", "m", "http://SEARCH.example.com.:9200/", 1)
	c := claimingFixture(t, es, owner, other)

	st := resolveClaimed(t, c, owner)
	if cond := st.condition(monoclev1alpha1.ConditionElasticsearchHealthy); cond != nil || !st.cluster.ready {
		t.Fatalf("owner: ElasticsearchHealthy %+v, targetReady %v; want none, ready", cond, st.cluster.ready)
	}
	meta, ok := es.Cluster("search.example.com").Meta(elastic.OwnerIndex)
	if !ok || meta["uid"] != string(owner.UID) || meta["namespace"] != "team-a" || meta["name"] != "alpha" {
		t.Errorf("record %v (exists %v), want team-a/alpha's", meta, ok)
	}

	st = resolveClaimed(t, c, other)
	cond := st.condition(monoclev1alpha1.ConditionElasticsearchHealthy)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != reasons.ElasticsearchInUse ||
		!strings.Contains(cond.Message, "belong to another Monocle") || !strings.Contains(cond.Message, elastic.OwnerIndex) {
		t.Fatalf("other: ElasticsearchHealthy %+v, want False ElasticsearchInUse from the record", cond)
	}
	for _, leak := range []string{"team-a", "alpha", string(owner.UID)} {
		if strings.Contains(cond.Message, leak) {
			t.Errorf("the refusal names %q of the other namespace: %s", leak, cond.Message)
		}
	}
	if st.cluster.ready {
		t.Error("the refused Monocle's target is ready")
	}
	if meta, _ := es.Cluster("search.example.com").Meta(elastic.OwnerIndex); meta["uid"] != string(owner.UID) {
		t.Errorf("the refused claim changed the record: %v", meta)
	}
}

// TestClaimTakesOverFromADeletedOwner: a record naming a Monocle the controller no longer
// has (deleted) is taken over; one naming a Monocle it has is not, and one of a namespace it
// does not watch neither.
func TestClaimTakesOverFromADeletedOwner(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record map[string]string
		// watch is the namespace the controller watches, "" for all.
		watch string
		owned bool
	}{
		{name: "deleted owner", record: map[string]string{"uid": "uid-gone", "namespace": "team-a", "name": "alpha"}, owned: true},
		{name: "live owner", record: map[string]string{"uid": "uid-team-a-alpha", "namespace": "team-a", "name": "alpha"}},
		{name: "owner of an unwatched namespace", record: map[string]string{"uid": "uid-gone", "namespace": "team-a", "name": "alpha"}, watch: "team-b"},
		{name: "record without an owner", record: map[string]string{}, owned: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := testkit.StartFakeElasticsearch()
			t.Cleanup(es.Close)
			es.Cluster("search.example.com").SetMeta(elastic.OwnerIndex, tc.record)
			live := externalAt("team-a", "alpha", "http://other.example.com:9200", 1)
			m := externalAt("team-b", "m", "http://search.example.com:9200", 2)
			c := claimingFixture(t, es, m, live)
			c.watchNamespace = tc.watch
			st := resolveClaimed(t, c, m)
			if st.cluster.ready != tc.owned {
				t.Errorf("targetReady %v, want %v; ElasticsearchHealthy %+v", st.cluster.ready, tc.owned,
					st.condition(monoclev1alpha1.ConditionElasticsearchHealthy))
			}
			meta, _ := es.Cluster("search.example.com").Meta(elastic.OwnerIndex)
			if tc.owned != (meta["uid"] == string(m.UID)) {
				t.Errorf("record %v after the claim", meta)
			}
		})
	}
}

// TestClaimOfAClusterWithoutRecord: a cluster with Monocle indices and no owner record (used
// under an operator that kept none) goes to the Monocle created first on it, whichever
// claims first; a cluster without Monocle indices to the first claimant.
func TestClaimOfAClusterWithoutRecord(t *testing.T) {
	es := testkit.StartFakeElasticsearch()
	t.Cleanup(es.Close)
	es.Cluster("search.example.com").SetIndices("monocle.config", "monocle.changes.1.demo")
	first := externalAt("team-a", "alpha", "http://search.example.com:9200", 1)
	later := externalAt("team-b", "m", "http://search.example.com:9200", 2)
	c := claimingFixture(t, es, first, later)
	st := resolveClaimed(t, c, later)
	cond := st.condition(monoclev1alpha1.ConditionElasticsearchHealthy)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != reasons.ElasticsearchInUse ||
		!strings.Contains(cond.Message, "no record of their owner") || strings.Contains(cond.Message, "team-a") {
		t.Errorf("the later Monocle: ElasticsearchHealthy %+v, want False ElasticsearchInUse, unrecorded", cond)
	}
	if _, ok := es.Cluster("search.example.com").Meta(elastic.OwnerIndex); ok {
		t.Error("the later Monocle's claim wrote a record")
	}
	if st := resolveClaimed(t, c, first); !st.cluster.ready {
		t.Errorf("the first Monocle: ElasticsearchHealthy %+v, want ready", st.condition(monoclev1alpha1.ConditionElasticsearchHealthy))
	}
	if meta, _ := es.Cluster("search.example.com").Meta(elastic.OwnerIndex); meta["uid"] != string(first.UID) {
		t.Errorf("record %v, want the first Monocle's", meta)
	}
}

// TestSameNamespaceEarlierWinsBeforeAnyClaim: of two Monocles of one namespace naming one
// cluster, the later one waits naming the other, and claims nothing.
func TestSameNamespaceEarlierWinsBeforeAnyClaim(t *testing.T) {
	es := testkit.StartFakeElasticsearch()
	t.Cleanup(es.Close)
	first := externalAt("team-a", "first", "http://search.example.com:9200", 1)
	later := externalAt("team-a", "later", "http://SEARCH.example.com:9200/", 2)
	c := claimingFixture(t, es, later, first)
	st := resolveClaimed(t, c, later)
	if cond := st.condition(monoclev1alpha1.ConditionElasticsearchHealthy); cond == nil || cond.Reason != reasons.ElasticsearchInUse ||
		!strings.Contains(cond.Message, "Monocle first of this namespace") || st.cluster.ready {
		t.Errorf("later: ElasticsearchHealthy %+v, targetReady %v", cond, st.cluster.ready)
	}
	if _, ok := es.Cluster("search.example.com").Meta(elastic.OwnerIndex); ok {
		t.Error("the later Monocle claimed the cluster")
	}
}

// TestClaimFailureWaits: a cluster that refuses the claim keeps the Monocle waiting, Unknown
// ElasticsearchUnclaimed with the refusal, and no read starts.
func TestClaimFailureWaits(t *testing.T) {
	es := testkit.StartFakeElasticsearch(testkit.WithBasicAuth("elastic", "pw"))
	t.Cleanup(es.Close)
	m := externalAt("team-a", "m", "http://search.example.com:9200", 1)
	c := claimingFixture(t, es, m)
	st := resolveClaimed(t, c, m)
	cond := st.condition(monoclev1alpha1.ConditionElasticsearchHealthy)
	if cond == nil || cond.Status != metav1.ConditionUnknown || cond.Reason != reasons.ElasticsearchUnclaimed ||
		!strings.Contains(cond.Message, "401") || st.cluster.ready {
		t.Errorf("ElasticsearchHealthy %+v, targetReady %v; want Unknown ElasticsearchUnclaimed with the 401", cond, st.cluster.ready)
	}
}

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
