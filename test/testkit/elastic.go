package testkit

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// ElasticAnswer is what FakeElasticsearch answers one Elasticsearch: the bodies of GET
// _cluster/health and GET _cat/allocation (Elasticsearch 7.17 shapes), or Status for both.
type ElasticAnswer struct {
	// Health and Allocation are JSON bodies, sent with status 200 unless Status is set.
	Health, Allocation string
	// Status, when not 0, is the HTTP status of both answers.
	Status int
	// APIStatus, when not 0, is the HTTP status the Monocle API's GET /health gets (the
	// operator asks it through "<name>-api.<namespace>.svc:8080", which reaches the fake
	// too); 200 otherwise.
	APIStatus int
}

// Answers of Elasticsearch 7.17 (Cluster health API; cat allocation API, format=json,
// bytes=b): a single node, yellow as any single node whose indices ask for a replica, or red,
// and a 10 GiB volume 40% or 90% full.
const (
	ElasticYellow = `{"cluster_name":"docker-cluster","status":"yellow","timed_out":false,"number_of_nodes":1,"number_of_data_nodes":1,"active_primary_shards":3,"active_shards":3,"relocating_shards":0,"initializing_shards":0,"unassigned_shards":3,"delayed_unassigned_shards":0,"number_of_pending_tasks":0,"number_of_in_flight_fetch":0,"task_max_waiting_in_queue_millis":0,"active_shards_percent_as_number":50.0}`
	ElasticRed    = `{"cluster_name":"docker-cluster","status":"red","timed_out":false,"number_of_nodes":1,"number_of_data_nodes":1,"active_primary_shards":2,"active_shards":2,"relocating_shards":0,"initializing_shards":0,"unassigned_shards":2,"delayed_unassigned_shards":0,"number_of_pending_tasks":0,"number_of_in_flight_fetch":0,"task_max_waiting_in_queue_millis":0,"active_shards_percent_as_number":50.0}`
	Allocation40  = `[{"shards":"3","disk.indices":"10485760","disk.used":"4294967296","disk.avail":"6442450944","disk.total":"10737418240","disk.percent":"40","host":"127.0.0.1","ip":"127.0.0.1","node":"m-elastic-0"}]`
	Allocation90  = `[{"shards":"3","disk.indices":"10485760","disk.used":"9663676416","disk.avail":"1073741824","disk.total":"10737418240","disk.percent":"90","host":"127.0.0.1","ip":"127.0.0.1","node":"m-elastic-0"}]`
)

// FakeElasticsearch stands for every Monocle's Elasticsearch in a test cluster, where kwok
// runs no container: the operator, given FakeElasticsearch.Flag, sends its requests here, and
// the fake answers each by the Host of the request ("<name>-elastic.<namespace>.svc:9200").
// GET _cluster/health and GET _cat/allocation answer ElasticYellow and Allocation40 unless a
// test sets another answer for a namespace (Answer). The snapshot, restore and index calls of
// package elastic work on a state the fake keeps per Elasticsearch, that is per namespace and
// Monocle name (see elastic_state.go: SetIndices, Snapshots, Restores and the other methods),
// or per host for any other cluster (Cluster).
// It listens on loopback only.
type FakeElasticsearch struct {
	server *httptest.Server
	// mu guards answers and states.
	mu sync.Mutex
	// answers are by namespace.
	answers map[string]ElasticAnswer
	// states are by Elasticsearch; created on first use.
	states map[esKey]*esState
	// security is what the options set (elastic_secure.go).
	security fakeSecurity
	// received counts the requests by host (Received).
	received map[string]int
	// bundledPasswords are the passwords of the operator's user the bundled hosts last
	// accepted, by Elasticsearch (BundledPassword).
	bundledPasswords map[esKey]string
	// unsecured are the bundled nodes served without security (ServeBundledWithoutSecurity).
	unsecured map[esKey]bool
}

// StartFakeElasticsearch starts a FakeElasticsearch, plain HTTP without authentication
// unless options say otherwise (WithBasicAuth, WithTLS); Close stops it.
func StartFakeElasticsearch(options ...FakeElasticOption) *FakeElasticsearch {
	f := &FakeElasticsearch{answers: map[string]ElasticAnswer{}, states: map[esKey]*esState{}, received: map[string]int{}, bundledPasswords: map[esKey]string{}, unsecured: map[esKey]bool{}}
	for _, o := range options {
		o(&f.security)
	}
	f.server = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	if f.security.tls {
		if err := f.security.newCA(); err != nil {
			panic("fake Elasticsearch CA: " + err.Error())
		}
		f.server.Listener = newSniffListener(f.server.Listener,
			&tls.Config{GetCertificate: f.security.certificate, MinVersion: tls.VersionTLS12})
	}
	f.server.Start()
	return f
}

// Flag is the operator flag that sends every read of an Elasticsearch to the fake.
func (f *FakeElasticsearch) Flag() string {
	return "--operand-dial-address=" + strings.TrimPrefix(f.server.URL, "http://")
}

// Close stops the fake.
func (f *FakeElasticsearch) Close() { f.server.Close() }

// Received is the number of requests the fake received for host (the host of their Host
// header, without the port, in any case), e.g. "search.example.com".
func (f *FakeElasticsearch) Received(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.received[strings.ToLower(host)]
}

// Answer makes the fake answer a for the Elasticsearch of every Monocle in namespace.
func (f *FakeElasticsearch) Answer(namespace string, a ElasticAnswer) {
	f.mu.Lock()
	f.answers[namespace] = a
	f.mu.Unlock()
}

func (f *FakeElasticsearch) serve(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	// <name>-elastic.<namespace>.svc
	parts := strings.Split(host, ".")
	namespace := ""
	if len(parts) == 3 && parts[2] == "svc" {
		namespace = parts[1]
	}
	f.mu.Lock()
	a, ok := f.answers[namespace]
	f.received[strings.ToLower(host)]++
	f.mu.Unlock()
	if !ok {
		a = ElasticAnswer{Health: ElasticYellow, Allocation: Allocation40}
	}
	// Elasticsearch 7.14 and later mark their answers; the official client checks it.
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	w.Header().Set("Content-Type", "application/json")
	status := http.StatusOK
	if a.Status != 0 {
		status = a.Status
	}
	api := r.URL.Path == "/health" && len(parts) == 3 && strings.HasSuffix(parts[0], "-api")
	if key := keyOf(r.Host); !api && !key.bundled() && f.security.guard(w, r, key.host) {
		return
	} else if !api && key.bundled() && f.guardBundled(w, r, key) {
		return
	}
	if api {
		// The Monocle API's health (Monocle 1.11.2 answers 200 once it serves).
		w.Header().Del("X-Elastic-Product")
		w.WriteHeader(cmp.Or(a.APIStatus, http.StatusOK))
		_, _ = w.Write([]byte(`"api is running"`))
		return
	}
	switch r.URL.Path {
	case "/_cluster/health":
		w.WriteHeader(status)
		_, _ = w.Write([]byte(a.Health))
	case "/_cat/allocation":
		w.WriteHeader(status)
		_, _ = w.Write([]byte(a.Allocation))
	default:
		if f.serveState(w, r) {
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"type":"fake","reason":"the fake does not answer this request"},"status":404}`))
	}
}

// Transport is an HTTP transport that sends every request to the fake, whatever its host, as
// the operator's are with Flag: a client of package elastic given it and the URL
// http://<monocle>-elastic.<namespace>.svc:9200 talks to that Monocle's fake Elasticsearch.
// With WithTLS it trusts the fake's CA (CAPEM), so that https://<any host>:9200 reaches the
// fake too.
func (f *FakeElasticsearch) Transport() *http.Transport {
	addr := f.server.Listener.Addr().String()
	t := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	if f.security.tls {
		roots := x509.NewCertPool()
		roots.AddCert(f.security.ca)
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return t
}
