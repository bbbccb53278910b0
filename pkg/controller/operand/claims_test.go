package operand_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// claimer is a worker whose connections go to a fake Elasticsearch requiring basic auth,
// with the channel its enqueues arrive on.
type claimer struct {
	t    *testing.T
	f    *testkit.FakeElasticsearch
	w    operand.Worker
	got  chan enqueued
	user string
}

const claimPassword = "claim-pw"

func newClaimer(t *testing.T) *claimer {
	f := testkit.StartFakeElasticsearch(testkit.WithBasicAuth("elastic", claimPassword))
	t.Cleanup(f.Close)
	got := make(chan enqueued, 16)
	w := operand.New(context.Background(), operand.Options{Interval: time.Hour, Timeout: 5 * time.Second,
		DialAddress: strings.TrimPrefix(f.URL(), "http://")},
		func(key cache.ObjectName, after time.Duration) { got <- enqueued{key, after} })
	return &claimer{t: t, f: f, w: w, got: got}
}

// monocleOf is Monocle name of namespace ns with a UID of its own.
func monocleOf(ns, name string) *monoclev1alpha1.Monocle {
	return &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name)}}
}

// external is the external target of url with the fake's credentials.
func external(url string) resources.ElasticsearchTarget {
	return resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchExternal, URL: url, Username: "elastic", Password: claimPassword}
}

// claim asks for a claim of m's cluster and returns its result once it ended.
func (c *claimer) claim(m *monoclev1alpha1.Monocle, req operand.ClaimRequest) operand.Claim {
	c.t.Helper()
	if _, reading := c.w.Claim(context.Background(), m, req); !reading {
		c.t.Fatal("the worker does not claim")
	}
	for {
		select {
		case e := <-c.got:
			if e.key.Name == m.Name && e.after == time.Hour {
				last, _ := c.w.Claim(context.Background(), m, req)
				// That call enqueues m for the time left of the interval.
				<-c.got
				return last
			}
		case <-time.After(30 * time.Second):
			c.t.Fatal("the claim never ended")
		}
	}
}

// TestClaimRecordsTheFirstOwner: the first Monocle to claim a new cluster is recorded in the
// owner index; another, naming the cluster by another spelling, reads that record and does
// not own it; a claim of the owner again keeps it.
func TestClaimRecordsTheFirstOwner(t *testing.T) {
	c := newClaimer(t)
	a, b := monocleOf("team-a", "m"), monocleOf("team-b", "m")
	if got := c.claim(a, operand.ClaimRequest{Target: external("http://search.example.com:9200")}); !got.Owned || got.Err != "" {
		t.Fatalf("first claim: %+v, want owned", got)
	}
	meta, ok := c.f.Cluster("search.example.com").Meta(elastic.OwnerIndex)
	if !ok || meta["uid"] != string(a.UID) || meta["namespace"] != "team-a" || meta["name"] != "m" {
		t.Errorf("record %v (exists %v), want team-a/m's", meta, ok)
	}
	gone := func(elastic.Owner) bool { return false }
	got := c.claim(b, operand.ClaimRequest{Target: external("http://SEARCH.example.com.:9200"), Adopt: true, OwnerGone: gone})
	if got.Owned || got.Owner.UID != string(a.UID) || got.Err != "" {
		t.Errorf("second claim: %+v, want a's record", got)
	}
	if meta, _ := c.f.Cluster("search.example.com").Meta(elastic.OwnerIndex); meta["uid"] != string(a.UID) {
		t.Errorf("the second claim changed the record: %v", meta)
	}
	if got := c.claim(a, operand.ClaimRequest{Target: external("http://search.example.com:9200"), Adopt: true}); !got.Owned {
		t.Errorf("the owner's claim again: %+v", got)
	}
}

// TestClaimTakesOverAGoneOwner: a record whose owner OwnerGone says is gone is replaced by
// the claimant, who then owns the cluster; OwnerGone is asked about the recorded owner.
func TestClaimTakesOverAGoneOwner(t *testing.T) {
	c := newClaimer(t)
	c.f.Cluster("search.example.com").SetMeta(elastic.OwnerIndex, map[string]string{"uid": "deleted", "namespace": "team-a", "name": "m"})
	b := monocleOf("team-b", "m")
	var asked elastic.Owner
	got := c.claim(b, operand.ClaimRequest{Target: external("http://search.example.com:9200"),
		OwnerGone: func(o elastic.Owner) bool { asked = o; return o.UID == "deleted" }})
	if !got.Owned || got.Err != "" {
		t.Errorf("claim: %+v, want owned", got)
	}
	if asked != (elastic.Owner{UID: "deleted", Namespace: "team-a", Name: "m"}) {
		t.Errorf("OwnerGone asked about %+v", asked)
	}
	if meta, _ := c.f.Cluster("search.example.com").Meta(elastic.OwnerIndex); meta["uid"] != string(b.UID) || meta["namespace"] != "team-b" {
		t.Errorf("record %v, want team-b/m's", meta)
	}
}

// TestClaimOfAnUnrecordedCluster: a cluster that holds Monocle indices and no record is left
// unclaimed without Adopt, nothing written, and claimed with it; the owner index alone does
// not count as Monocle's.
func TestClaimOfAnUnrecordedCluster(t *testing.T) {
	c := newClaimer(t)
	cluster := c.f.Cluster("search.example.com")
	cluster.SetIndices("monocle.config", "monocle.changes.1.demo")
	m := monocleOf("team-a", "m")
	got := c.claim(m, operand.ClaimRequest{Target: external("http://search.example.com:9200")})
	if got.Owned || !got.Unrecorded || got.Err != "" {
		t.Errorf("claim without Adopt: %+v, want unrecorded", got)
	}
	if _, ok := cluster.Meta(elastic.OwnerIndex); ok {
		t.Error("a claim without Adopt created the record")
	}
	got = c.claim(m, operand.ClaimRequest{Target: external("http://search.example.com:9200"), Adopt: true})
	if !got.Owned || got.Unrecorded {
		t.Errorf("claim with Adopt: %+v, want owned", got)
	}
	other := c.f.Cluster("other.example.com")
	other.SetIndices("logs")
	if got := c.claim(monocleOf("team-b", "m"), operand.ClaimRequest{Target: external("http://other.example.com:9200")}); !got.Owned {
		t.Errorf("a cluster without Monocle indices: %+v, want owned", got)
	}
}

// TestClaimFailures: wrong credentials fail the claim with the cluster's refusal, quoting no
// password, and leave the last verdict as it was; another cluster starts afresh.
func TestClaimFailures(t *testing.T) {
	c := newClaimer(t)
	m := monocleOf("team-a", "m")
	wrong := external("http://search.example.com:9200")
	wrong.Password = "nope-pw"
	got := c.claim(m, operand.ClaimRequest{Target: wrong})
	if got.Owned || !strings.Contains(got.Err, "401") || strings.Contains(got.Err, "nope-pw") {
		t.Errorf("claim with a wrong password: %+v", got)
	}
	if _, ok := c.f.Cluster("search.example.com").Meta(elastic.OwnerIndex); ok {
		t.Error("a refused claim recorded an owner")
	}
	if got := c.claim(m, operand.ClaimRequest{Target: external("http://search.example.com:9200")}); !got.Owned || got.Err != "" {
		t.Fatalf("claim: %+v", got)
	}
	// New credentials that fail: the cluster is still owned, the error said.
	if got := c.claim(m, operand.ClaimRequest{Target: wrong}); !got.Owned || got.Err == "" {
		t.Errorf("a failed claim after an owned one: %+v, want owned with the error", got)
	}
	// Another cluster: nothing of the last one's verdict.
	if got := c.claim(m, operand.ClaimRequest{Target: external("http://other.example.com:9200")}); !got.Owned || got.Err != "" {
		t.Errorf("claim of another cluster: %+v", got)
	}
	moved := external("http://unknown.example.com:9200")
	moved.Password = "nope-pw"
	if got := c.claim(m, operand.ClaimRequest{Target: moved}); got.Owned || got.Err == "" {
		t.Errorf("a failed claim of a third cluster: %+v, want not owned", got)
	}
}

// TestOffClaimsNothing: a worker that does not read claims nothing.
func TestOffClaimsNothing(t *testing.T) {
	if got, reading := operand.Off().Claim(context.Background(), monocleOf("a", "m"), operand.ClaimRequest{}); reading || got != (operand.Claim{}) {
		t.Errorf("Off().Claim = %+v, %v", got, reading)
	}
}
