package operand_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestReadsGoToTheTarget reads a Monocle's Elasticsearch of elasticsearchRef, a fake
// requiring basic auth over TLS with a CA of its own: the read succeeds with the target's
// credentials and CA, and a changed target starts a read at once, with a client built for
// it, whose error names the refusal and quotes no password.
func TestReadsGoToTheTarget(t *testing.T) {
	const password = "s3cret-pw"
	f := testkit.StartFakeElasticsearch(testkit.WithTLS(), testkit.WithBasicAuth("elastic", password))
	t.Cleanup(f.Close)
	f.SetIndices("ns", "m", "monocle.config")
	got := make(chan enqueued, 16)
	w := operand.New(context.Background(), operand.Options{Interval: time.Hour, Timeout: 5 * time.Second,
		DialAddress: strings.TrimPrefix(f.URL(), "https://")},
		func(key cache.ObjectName, after time.Duration) { got <- enqueued{key, after} })
	m := backupMonocle("")
	m.Spec.Backup = nil
	eck := resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchECK, URL: "https://es-es-http.ns.svc:9200",
		Username: "elastic", Password: password, CA: f.CAPEM()}
	wrong, noCA := eck, eck
	wrong.Password = "nope"
	noCA.CA = nil
	for i, tc := range []struct {
		target resources.ElasticsearchTarget
		err    string // what the read's error has; "" for none
	}{
		{eck, ""},
		{wrong, "GET _cluster/health: status 401 security_exception: unable to authenticate user [elastic] for REST request [/_cluster/health]"},
		{noCA, "certificate signed by unknown authority"},
		{eck, ""},
	} {
		if _, reading := w.Observe(context.Background(), m, operand.Inputs{ElasticReady: true, Target: tc.target}); !reading {
			t.Fatal("the worker does not read")
		}
		waitRead(t, got)
		last := operand.Last(w, m)
		switch {
		case tc.err == "" && (last.Err != "" || last.Health == nil || last.Health.Status != "yellow"):
			t.Errorf("read %d: error %q, health %+v; want the fake's yellow", i, last.Err, last.Health)
		case !strings.Contains(last.Err, tc.err):
			t.Errorf("read %d: error %q, want one with %q", i, last.Err, tc.err)
		case strings.Contains(last.Err, password):
			t.Errorf("read %d: the error quotes the password: %q", i, last.Err)
		}
	}
	// The same target again: no read before the interval.
	w.Observe(context.Background(), m, operand.Inputs{ElasticReady: true, Target: eck})
	if e := <-got; e.after <= 0 {
		t.Errorf("the same target enqueued after %s, want the time left of the interval", e.after)
	}
}

// TestBundledTargetReadsTheService: the bundled target is read at its Service by a name that
// resolves from the operator's namespace; the fake's auth spares it.
func TestBundledTargetReadsTheService(t *testing.T) {
	f := testkit.StartFakeElasticsearch(testkit.WithBasicAuth("elastic", "changeme"))
	t.Cleanup(f.Close)
	m := backupMonocle("")
	m.Spec.Backup = nil
	target := bundledTarget(m)
	if want := "http://" + m.Name + "-elastic." + m.Namespace + ".svc:9200"; target.URL != want {
		t.Errorf("bundled target at %q, want %q", target.URL, want)
	}
	w := operand.New(context.Background(), operand.Options{Interval: time.Hour, Timeout: 5 * time.Second,
		Transport: f.Transport()}, func(cache.ObjectName, time.Duration) {})
	operand.SetLast(w, m, operand.Result{})
	operand.ReadNow(w, m, operand.Inputs{Target: target})
	if last := operand.Last(w, m); last.Err != "" || last.Health == nil {
		t.Errorf("error %q, health %+v; want the bundled node's", last.Err, last.Health)
	}
}

// TestRefusedAddressSendsNothing: a target whose host is, or resolves to, a loopback or
// link-local address is refused before anything is sent, with or without a dial address
// (the administrator's, here the fake's own on 127.0.0.1), and the result says so.
func TestRefusedAddressSendsNothing(t *testing.T) {
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, elastictest.YellowHealth)
	srv.Reply("GET", "/_cat/allocation", 200, elastictest.Allocation80)
	srv.Reply("GET", "/_all/_settings/index.blocks.read_only_allow_delete", 200, `{}`)
	srv.Reply("GET", "/_cat/indices/monocle.changes.1.*", 200, `[]`)
	srv.Reply("GET", "/_cluster/settings", 200, clusterSettings96)
	_, port, _ := strings.Cut(hostOf(t, srv), ":")
	m := backupMonocle("")
	m.Spec.Backup = nil
	external := func(url string) resources.ElasticsearchTarget {
		return resources.ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchExternal, URL: url}
	}
	for name, o := range map[string]operand.Options{
		"the operator's transport": {},
		"with a dial address":      {DialAddress: hostOf(t, srv)},
	} {
		o.Interval, o.Timeout = time.Hour, 5*time.Second
		for _, target := range []resources.ElasticsearchTarget{
			external("http://localhost:" + port), external("http://127.0.0.1:" + port), external("http://169.254.169.254:80"),
			external("http://[::ffff:127.0.0.1]:" + port),
			// The bundled node's Service and an ECK cluster's are checked as well.
			{Kind: monoclev1alpha1.ElasticsearchECK, URL: "http://localhost:" + port},
		} {
			w := operand.New(context.Background(), o, func(cache.ObjectName, time.Duration) {})
			operand.SetLast(w, m, operand.Result{})
			operand.ReadNow(w, m, operand.Inputs{ElasticReady: true, Target: target})
			last := operand.Last(w, m)
			if !last.AddressRefused || !strings.Contains(last.Err, "the operator does not connect to loopback, link-local or unspecified addresses") {
				t.Errorf("%s, %s: refused %v, error %q; want the address refused", name, target.URL, last.AddressRefused, last.Err)
			}
		}
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Errorf("the fake got %d requests, want none", len(reqs))
	}
	// A name outside the hosts file goes to the dial address (not looked up in DNS): read.
	w := operand.New(context.Background(), operand.Options{Interval: time.Hour, Timeout: 5 * time.Second, DialAddress: hostOf(t, srv)},
		func(cache.ObjectName, time.Duration) {})
	operand.SetLast(w, m, operand.Result{})
	operand.ReadNow(w, m, operand.Inputs{ElasticReady: true, Target: external("http://es-es-http.ns.svc:9200")})
	if last := operand.Last(w, m); last.AddressRefused || last.Err != "" || last.Health == nil {
		t.Errorf("a host that does not resolve, through the dial address: refused %v, error %q, health %+v; want it read",
			last.AddressRefused, last.Err, last.Health)
	}
}
