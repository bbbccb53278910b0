package elastic_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

func TestBasicAuthOnEveryRequest(t *testing.T) {
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, healthBody("green", 2, 0, false))
	c, err := elastic.NewClient(elastic.Config{URL: srv.URL, Username: "monocle", Password: password, Transport: srv.Transport()})
	if err != nil {
		t.Fatal(err)
	}
	anonymous := newClient(t, srv)
	for _, c := range []elastic.Client{c, c, anonymous} {
		if _, err := c.Health(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("monocle:"+password))
	reqs := srv.Requests()
	for i, r := range reqs[:2] {
		if got := r.Header.Get("Authorization"); got != want {
			t.Errorf("request %d: Authorization %q, want %q", i, got, want)
		}
	}
	if got := reqs[2].Header.Get("Authorization"); got != "" {
		t.Errorf("a client without credentials sent Authorization %q", got)
	}
}

func TestUnauthorizedIsAClearError(t *testing.T) {
	// The 7.17 answer to wrong credentials: the fixture's shape, another reason.
	f := elastictest.MustFixture("security-unauthorized")
	body := strings.ReplaceAll(f.Body, "missing authentication credentials for REST request",
		"unable to authenticate user [monocle] for REST request")
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", f.Status, body)
	c, err := elastic.NewClient(elastic.Config{URL: srv.URL, Username: "monocle", Password: password, Transport: srv.Transport()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Health(context.Background())
	if !errors.Is(err, elastic.ErrUnauthorized) || elastic.IsNotFound(err) {
		t.Fatalf("error %v, want one matching ErrUnauthorized only", err)
	}
	const want = "GET _cluster/health: status 401 security_exception: unable to authenticate user [monocle] for REST request [/_cluster/health]"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestNewClientRefusesCredentialsItCannotKeepSecret(t *testing.T) {
	for name, cfg := range map[string]elastic.Config{
		"credentials in the URL":    {URL: "http://elastic:" + password + "@es-http:9200"},
		"a URL that does not parse": {URL: "http://elastic:" + password + "@[::1"},
		"a user without password":   {URL: "http://es-http:9200", Username: "elastic"},
	} {
		_, err := elastic.NewClient(cfg)
		if err == nil {
			t.Errorf("%s: NewClient succeeded, want an error", name)
			continue
		}
		if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error quotes the password: %v", name, err)
		}
	}
}

func TestNoErrorQuotesThePassword(t *testing.T) {
	srv := elastictest.NewServer(t)
	srv.Close()
	c, err := elastic.NewClient(elastic.Config{URL: srv.URL, Username: "monocle", Password: password, Transport: srv.Transport()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Health(context.Background())
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %v, want one without the password", err)
	}
}

func TestTLSTrustsTheGivenCAOnly(t *testing.T) {
	srv := elastictest.NewTLSServer(t)
	srv.Reply("GET", "/_cluster/health", 200, healthBody("green", 2, 0, false))
	trusting, err := elastic.TrustCA(&http.Transport{}, srv.CA)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(trusting.CloseIdleConnections)
	c, err := elastic.NewClient(elastic.Config{URL: srv.URL, Username: "monocle", Password: password, Transport: trusting})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := c.Health(context.Background()); err != nil || h.Status != elastic.HealthGreen {
		t.Fatalf("Health over TLS = %+v, %v; want green", h, err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); !strings.HasPrefix(got, "Basic ") {
		t.Errorf("Authorization %q over TLS, want Basic credentials", got)
	}
	// The system's roots do not hold the test CA: the handshake fails, no request is sent.
	roots, err := elastic.NewTransportWithCA(nil)
	if err != nil {
		t.Fatal(err)
	}
	if roots.TLSClientConfig != nil {
		t.Errorf("NewTransportWithCA(nil) has a TLS config of its own, want the system's roots")
	}
	untrusting, err := elastic.New(srv.URL, &http.Transport{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := untrusting.Health(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Health without the CA: %v, want a certificate error", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the fake got %d requests, want 1 (the trusting client's)", n)
	}
}

func TestTrustCARefusesAPEMWithoutCertificate(t *testing.T) {
	if _, err := elastic.NewTransportWithCA([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")); err == nil {
		t.Error("NewTransportWithCA of no certificate succeeded, want an error")
	}
	base := elastic.NewTransport()
	tr, err := elastic.TrustCA(base, elastictest.NewTLSServer(t).CA)
	if err != nil {
		t.Fatal(err)
	}
	if tr == base || base.TLSClientConfig != nil || tr.TLSClientConfig.RootCAs == nil {
		t.Error("TrustCA changed its argument or left the copy without the CA")
	}
}

// password is the password of the tests' credentials, which no error may quote.
const password = "s3cret:pass word"
