package testkit

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// secureClient returns a client of package elastic for url, with user and password when user
// is set, its requests sent to f whatever their host.
func secureClient(t *testing.T, f *FakeElasticsearch, url, user, password string) elastic.Client {
	t.Helper()
	tr := f.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	c, err := elastic.NewClient(elastic.Config{URL: url, Username: user, Password: password, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFakeDefaultIsPlainWithoutAuth(t *testing.T) {
	f := startFake(t)
	if f.CAPEM() != nil || !strings.HasPrefix(f.URL(), "http://127.0.0.1:") {
		t.Fatalf("CAPEM %q, URL %s; want none and http://127.0.0.1:<port>", f.CAPEM(), f.URL())
	}
	for _, url := range []string{"http://es-es-http.ns.svc:9200", f.URL()} {
		if _, err := secureClient(t, f, url, "", "").Health(t.Context()); err != nil {
			t.Errorf("%s: %v", url, err)
		}
	}
	// A bundled node runs with security on: the operator's user and a password.
	if _, err := secureClient(t, f, "http://m-elastic.ns.svc:9200", "", "").Health(t.Context()); !errors.Is(err, elastic.ErrUnauthorized) {
		t.Errorf("a bundled node without credentials: %v, want 401", err)
	}
	if got := f.BundledPassword("ns", "m"); got != "" {
		t.Errorf("a refused request recorded password %q", got)
	}
	if _, err := secureClient(t, f, "http://m-elastic.ns.svc:9200", resources.ElasticOperatorUser, bundledPassword).Health(t.Context()); err != nil {
		t.Errorf("a bundled node as the operator: %v", err)
	}
	if got := f.BundledPassword("ns", "m"); got != bundledPassword {
		t.Errorf("recorded password %q, want %q", got, bundledPassword)
	}
}

// TestFakeBundledWithoutSecurity: a bundled node served without security answers without
// credentials until SecureBundled, and only that node.
func TestFakeBundledWithoutSecurity(t *testing.T) {
	f := startFake(t)
	f.ServeBundledWithoutSecurity("ns", "m")
	if _, err := secureClient(t, f, "http://m-elastic.ns.svc:9200", "", "").Health(t.Context()); err != nil {
		t.Errorf("the unsecured node without credentials: %v", err)
	}
	if _, err := secureClient(t, f, "http://other-elastic.ns.svc:9200", "", "").Health(t.Context()); !errors.Is(err, elastic.ErrUnauthorized) {
		t.Errorf("another bundled node without credentials: %v, want 401", err)
	}
	f.SecureBundled("ns", "m")
	if _, err := secureClient(t, f, "http://m-elastic.ns.svc:9200", "", "").Health(t.Context()); !errors.Is(err, elastic.ErrUnauthorized) {
		t.Errorf("the node secured again, without credentials: %v, want 401", err)
	}
}

func TestFakeBasicAuth(t *testing.T) {
	f := startFake(t, WithBasicAuth("elastic", "changeme"))
	const eck = "http://es-es-http.ns.svc:9200"
	for name, tc := range map[string]struct {
		url, user, password string
		reason              string // of the 401; "" for none
	}{
		"no credentials":             {url: eck, reason: "missing authentication credentials for REST request [/_cluster/health]"},
		"wrong password":             {url: eck, user: "elastic", password: "nope", reason: "unable to authenticate user [elastic] for REST request [/_cluster/health]"},
		"another user":               {url: eck, user: "monocle", password: "changeme", reason: "unable to authenticate user [monocle] for REST request [/_cluster/health]"},
		"right credentials":          {url: eck, user: "elastic", password: "changeme"},
		"by the fake's URL":          {url: f.URL(), reason: "missing authentication credentials for REST request [/_cluster/health]"},
		"a bundled, no auth":         {url: "http://m-elastic.ns.svc:9200", reason: "missing authentication credentials for REST request [/_cluster/health]"},
		"a bundled, as the operator": {url: "http://m-elastic.ns.svc:9200", user: resources.ElasticOperatorUser, password: bundledPassword},
	} {
		_, err := secureClient(t, f, tc.url, tc.user, tc.password).Health(t.Context())
		var se *elastic.StatusError
		switch {
		case tc.reason == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.reason == "":
		case !errors.As(err, &se) || !errors.Is(err, elastic.ErrUnauthorized) || se.Type != "security_exception" || se.Reason != tc.reason:
			t.Errorf("%s: error %v, want a 401 security_exception %q", name, err, tc.reason)
		}
	}
	// The challenge is a header of the answer too, and the Monocle API's /health is no
	// Elasticsearch's.
	for url, want := range map[string]int{"http://es-es-http.ns.svc:9200/_cluster/health": 401, "http://m-api.ns.svc:8080/health": 200} {
		res := get(t, f.Transport(), url)
		if res.StatusCode != want {
			t.Errorf("GET %s: status %d, want %d", url, res.StatusCode, want)
		}
		if got := res.Header.Get("WWW-Authenticate"); (want == 401) != (got == `Basic realm="security" charset="UTF-8"`) {
			t.Errorf("GET %s: WWW-Authenticate %q", url, got)
		}
	}
}

// get sends GET url through tr and returns the answer, its body closed.
func get(t *testing.T, tr http.RoundTripper, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestFakeTLS(t *testing.T) {
	f := startFake(t, WithTLS(), WithBasicAuth("elastic", "changeme"))
	if !strings.HasPrefix(f.URL(), "https://127.0.0.1:") || !strings.Contains(string(f.CAPEM()), "BEGIN CERTIFICATE") {
		t.Fatalf("URL %s, CAPEM %q; want https://127.0.0.1:<port> and a PEM certificate", f.URL(), f.CAPEM())
	}
	// Over TLS, by a Service's name or the fake's address, with the credentials: served.
	for _, url := range []string{"https://es-es-http.ns.svc:9200", "https://es-es-http.other.svc:9200"} {
		if _, err := secureClient(t, f, url, "elastic", "changeme").Health(t.Context()); err != nil {
			t.Errorf("%s: %v", url, err)
		}
	}
	// A plain transport: the fake listens on 127.0.0.1, which elastic.NewTransport refuses.
	trusting, err := elastic.TrustCA(&http.Transport{}, f.CAPEM())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(trusting.CloseIdleConnections)
	byAddress, err := elastic.NewClient(elastic.Config{URL: f.URL(), Username: "elastic", Password: "changeme", Transport: trusting})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := byAddress.Health(t.Context()); err != nil {
		t.Errorf("%s: %v", f.URL(), err)
	}
	// Without the CA: the certificate is refused.
	untrusting, err := elastic.New(f.URL(), &http.Transport{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := untrusting.Health(t.Context()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the CA: %v, want a certificate error", err)
	}
	// Plain HTTP to a secured cluster: the connection is closed unanswered. A bundled
	// Elasticsearch is served in plain HTTP, to the operator's user.
	if _, err := secureClient(t, f, "http://es-es-http.ns.svc:9200", "elastic", "changeme").Health(t.Context()); err == nil ||
		errors.As(err, new(*elastic.StatusError)) {
		t.Errorf("plain HTTP to a TLS cluster: %v, want the connection closed", err)
	}
	if _, err := secureClient(t, f, "http://m-elastic.ns.svc:9200", resources.ElasticOperatorUser, bundledPassword).Health(t.Context()); err != nil {
		t.Errorf("a bundled Elasticsearch in plain HTTP: %v", err)
	}
	// The state of the fake is there over TLS too.
	f.SetIndices("ns", "m", "monocle.config")
	if got, err := secureClient(t, f, "https://m-elastic.ns.svc:9200", resources.ElasticOperatorUser, bundledPassword).Indices(context.Background(), "monocle*"); err != nil || len(got) != 1 {
		t.Errorf("indices over TLS: %v, %v; want monocle.config", got, err)
	}
}

// TestFakeClusterByHost: each host other than a bundled Elasticsearch's has a state of its
// own, which Cluster seeds and reads; Cluster of a bundled Elasticsearch's Service is the
// state the (namespace, monocle) methods use.
func TestFakeClusterByHost(t *testing.T) {
	f := startFake(t, WithTLS(), WithBasicAuth("elastic", "changeme"))
	eck, other := f.Cluster("ES-es-http.ns.svc:9200"), f.Cluster("search.example.com")
	eck.SetIndices("monocle.config", "monocle.changes.1.demo")
	other.SetIndices("monocle.config")
	for url, want := range map[string]int{"https://es-es-http.ns.svc:9200": 2, "https://search.example.com:9243": 1, "https://x-es-http.ns.svc:9200": 0} {
		got, err := secureClient(t, f, url, "elastic", "changeme").Indices(t.Context(), "monocle*")
		if err != nil || len(got) != want {
			t.Errorf("%s: indices %v, %v; want %d", url, got, err, want)
		}
	}
	if n := len(eck.Indices()); n != 2 {
		t.Errorf("Cluster(eck).Indices: %d, want 2", n)
	}
	f.SetIndices("ns", "m", "monocle.config")
	if got := f.Cluster("m-elastic.ns.svc").Indices(); len(got) != 1 || got[0].Name != "monocle.config" {
		t.Errorf("Cluster of the bundled Service: %v, want SetIndices' monocle.config", got)
	}
	if err := secureClient(t, f, "https://es-es-http.ns.svc:9200", "elastic", "changeme").EnsureRepository(t.Context(), "backups",
		elastic.Repository{Type: elastic.RepositoryS3, Bucket: "b"}); err != nil {
		t.Fatal(err)
	}
	if typ, settings, ok := eck.Repository("backups"); !ok || typ != "s3" || settings["bucket"] != "b" {
		t.Errorf("Cluster(eck).Repository = %v %s %v", ok, typ, settings)
	}
	if _, _, ok := other.Repository("backups"); ok {
		t.Error("a repository of one cluster shows in another")
	}
}

// TestFakeServePlainHTTP: with WithTLS, a host ServePlainHTTP names is served in plain HTTP
// too, still with basic auth; another is not.
func TestFakeServePlainHTTP(t *testing.T) {
	f := startFake(t, WithTLS(), WithBasicAuth("elastic", "changeme"))
	f.ServePlainHTTP("search.example.com:9200")
	if _, err := secureClient(t, f, "http://search.example.com:9200", "elastic", "changeme").Health(t.Context()); err != nil {
		t.Errorf("plain HTTP to a host served so: %v", err)
	}
	if _, err := secureClient(t, f, "http://search.example.com:9200", "", "").Health(t.Context()); !errors.Is(err, elastic.ErrUnauthorized) {
		t.Errorf("plain HTTP without credentials: %v, want a 401", err)
	}
	if _, err := secureClient(t, f, "http://es-es-http.ns.svc:9200", "elastic", "changeme").Health(t.Context()); err == nil ||
		errors.As(err, new(*elastic.StatusError)) {
		t.Errorf("plain HTTP to another host: %v, want the connection closed", err)
	}
}

// TestFakeServeWithoutSecurity: with WithTLS and WithBasicAuth, a host ServeWithoutSecurity
// names is served in plain HTTP without credentials; another still needs both.
func TestFakeServeWithoutSecurity(t *testing.T) {
	f := startFake(t, WithTLS(), WithBasicAuth("elastic", "changeme"))
	f.ServeWithoutSecurity("open.example.com:9200")
	if _, err := secureClient(t, f, "http://open.example.com:9200", "", "").Health(t.Context()); err != nil {
		t.Errorf("plain HTTP without credentials to a host served so: %v", err)
	}
	f.ServePlainHTTP("search.example.com")
	if _, err := secureClient(t, f, "http://search.example.com:9200", "", "").Health(t.Context()); !errors.Is(err, elastic.ErrUnauthorized) {
		t.Errorf("plain HTTP without credentials to another host: %v, want a 401", err)
	}
	if _, err := secureClient(t, f, "http://es-es-http.ns.svc:9200", "", "").Health(t.Context()); err == nil ||
		errors.As(err, new(*elastic.StatusError)) {
		t.Errorf("plain HTTP to a host with TLS: %v, want the connection closed", err)
	}
}

// TestFakeClusterRestoreHeld: a cluster by host holds the restores it accepts while
// HoldRestores holds them, as a bundled Elasticsearch does, and only its own: the bundled
// Elasticsearch of the same namespace restores at once. SetDocs and SetHidden seed that
// cluster's indices.
func TestFakeClusterRestoreHeld(t *testing.T) {
	f := startFake(t, WithTLS(), WithBasicAuth("elastic", "changeme"))
	ctx := t.Context()
	eck := f.Cluster("es-es-http.ns.svc")
	eck.SetHidden(".ds-ilm-history-5-2026.11.01-000001")
	eck.SetDocs(".ds-ilm-history-5-2026.11.01-000001", 5)
	snap := FakeSnapshot{Name: "nightly", Indices: []string{"monocle.changes.1.demo"}, Docs: map[string]int64{"monocle.changes.1.demo": 42}}
	eck.PutSnapshot("team-backups", snap)
	f.PutSnapshot("ns", "m", "team-backups", snap)
	c := secureClient(t, f, "https://es-es-http.ns.svc:9200", "elastic", "changeme")
	bundled := secureClient(t, f, "http://m-elastic.ns.svc:9200", resources.ElasticOperatorUser, bundledPassword)
	for _, cl := range []elastic.Client{c, bundled} {
		if err := cl.EnsureRepository(ctx, "team-backups", elastic.Repository{Type: elastic.RepositoryS3, Bucket: "b"}); err != nil {
			t.Fatal(err)
		}
	}
	indices := []string{"monocle.changes.1.demo"}

	eck.HoldRestores(true)
	for _, cl := range []elastic.Client{c, bundled} {
		if err := cl.Restore(ctx, "team-backups", "nightly", indices); err != nil {
			t.Fatal(err)
		}
	}
	if done, err := c.RestoreDone(ctx, indices); err != nil || done {
		t.Errorf("the cluster's RestoreDone while held = %v, %v; want false", done, err)
	}
	if done, err := bundled.RestoreDone(ctx, indices); err != nil || !done {
		t.Errorf("the bundled RestoreDone while the cluster's are held = %v, %v; want true", done, err)
	}
	eck.HoldRestores(false)
	if done, err := c.RestoreDone(ctx, indices); err != nil || !done {
		t.Errorf("the cluster's RestoreDone once released = %v, %v; want true", done, err)
	}
	if n := eck.Restores("team-backups", "nightly"); n != 1 {
		t.Errorf("the cluster's Restores = %d, want 1", n)
	}
	got := map[string]FakeIndex{}
	for _, ix := range eck.Indices() {
		got[ix.Name] = ix
	}
	if ix := got["monocle.changes.1.demo"]; !ix.Open || ix.Docs != 42 {
		t.Errorf("restored index on the cluster = %+v, want open with 42 documents", ix)
	}
	if ix := got[".ds-ilm-history-5-2026.11.01-000001"]; !ix.Open || !ix.Hidden || ix.Docs != 5 {
		t.Errorf("seeded hidden index on the cluster = %+v, want hidden, open with 5 documents", ix)
	}
}
