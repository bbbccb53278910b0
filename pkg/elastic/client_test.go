package elastic_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

// newClient returns a Client for the fake.
func newClient(t *testing.T, srv *elastictest.Server) elastic.Client {
	t.Helper()
	c, err := elastic.New(srv.URL, srv.Transport())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// healthBody is a GET _cluster/health answer of Elasticsearch 7.17 for one node holding
// Monocle's two indices (Elasticsearch 7.17 reference, Cluster health API).
func healthBody(status string, active, unassigned int, timedOut bool) string {
	to := "false"
	if timedOut {
		to = "true"
	}
	r := strings.NewReplacer("STATUS", status, "TIMEDOUT", to,
		"ACTIVE", strconv.Itoa(active), "UNASSIGNED", strconv.Itoa(unassigned))
	return r.Replace(`{
  "cluster_name" : "elasticsearch",
  "status" : "STATUS",
  "timed_out" : TIMEDOUT,
  "number_of_nodes" : 1,
  "number_of_data_nodes" : 1,
  "active_primary_shards" : ACTIVE,
  "active_shards" : ACTIVE,
  "relocating_shards" : 0,
  "initializing_shards" : 0,
  "unassigned_shards" : UNASSIGNED,
  "delayed_unassigned_shards" : 0,
  "number_of_pending_tasks" : 0,
  "number_of_in_flight_fetch" : 0,
  "task_max_waiting_in_queue_millis" : 0,
  "active_shards_percent_as_number" : 100.0
}`)
}

const htmlBadGateway = `<html>
<head><title>502 Bad Gateway</title></head>
<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body>
</html>`

func TestHealth(t *testing.T) {
	type want struct {
		health     elastic.Health
		code       int    // a *StatusError with this code, when not 0
		errType    string // its Type
		errHas     string // text the error must contain, when not ""
		deadline   bool   // errors.Is(err, context.DeadlineExceeded)
		noResponse bool   // an error that is no *StatusError
	}
	tests := map[string]struct {
		handler http.Handler
		closed  bool
		ctx     time.Duration // a deadline on the call's context, when not 0
		want    want
	}{
		"green": {
			handler: elastictest.JSON(200, healthBody("green", 2, 0, false)),
			want: want{health: elastic.Health{ClusterName: "elasticsearch", Status: elastic.HealthGreen,
				NumberOfNodes: 1, NumberOfDataNodes: 1, ActivePrimaryShards: 2, ActiveShards: 2}},
		},
		"yellow": {
			handler: elastictest.JSON(200, healthBody("yellow", 2, 2, false)),
			want: want{health: elastic.Health{ClusterName: "elasticsearch", Status: elastic.HealthYellow,
				NumberOfNodes: 1, NumberOfDataNodes: 1, ActivePrimaryShards: 2, ActiveShards: 2, UnassignedShards: 2}},
		},
		"red": {
			handler: elastictest.JSON(200, healthBody("red", 1, 1, false)),
			want: want{health: elastic.Health{ClusterName: "elasticsearch", Status: elastic.HealthRed,
				NumberOfNodes: 1, NumberOfDataNodes: 1, ActivePrimaryShards: 1, ActiveShards: 1, UnassignedShards: 1}},
		},
		"slow server hits the caller's deadline": {
			handler: elastictest.Slow(time.Minute, elastictest.JSON(200, healthBody("green", 2, 0, false))),
			ctx:     200 * time.Millisecond,
			want:    want{deadline: true, errHas: "GET _cluster/health"},
		},
		"garbage body": {
			handler: elastictest.JSON(200, `{"status": "gre`),
			want:    want{errHas: "decoding _cluster/health", noResponse: true},
		},
		"empty object is no health": {
			handler: elastictest.JSON(200, `{}`),
			want:    want{errHas: `decoding _cluster/health: status "" is not green, yellow or red`, noResponse: true},
		},
		"unknown status": {
			handler: elastictest.JSON(200, healthBody("purple", 2, 0, false)),
			want:    want{errHas: `status "purple"`, noResponse: true},
		},
		"500 with an Elasticsearch error body": {
			handler: elastictest.Error(500, "null_pointer_exception", "boom"),
			want:    want{code: 500, errType: "null_pointer_exception", errHas: "GET _cluster/health: status 500 null_pointer_exception: boom"},
		},
		"503 master not discovered": {
			handler: elastictest.Error(503, "master_not_discovered_exception", "no master"),
			want:    want{code: 503, errType: "master_not_discovered_exception"},
		},
		"500 with an HTML body": {
			handler: elastictest.Raw(500, "text/html", htmlBadGateway),
			// The page is not quoted: the status code is.
			want: want{code: 500, errHas: "status 500: the server did not answer as Elasticsearch 7.17"},
		},
		"connection refused": {
			closed: true,
			want:   want{errHas: "GET _cluster/health", noResponse: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			if tc.handler != nil {
				srv.Handle("GET", "/_cluster/health", tc.handler)
			}
			c := newClient(t, srv)
			if tc.closed {
				srv.Close()
			}
			ctx := context.Background()
			if tc.ctx != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			start := time.Now()
			got, err := c.Health(ctx)
			elapsed := time.Since(start)

			failing := tc.want.code != 0 || tc.want.errHas != "" || tc.want.deadline || tc.want.noResponse
			if !failing {
				if err != nil {
					t.Fatalf("Health: %v", err)
				}
				if got != tc.want.health {
					t.Fatalf("Health = %+v, want %+v", got, tc.want.health)
				}
				return
			}
			if err == nil {
				t.Fatalf("Health = %+v, want an error", got)
			}
			if got != (elastic.Health{}) {
				t.Errorf("Health returned %+v with its error, want the zero value", got)
			}
			if tc.want.errHas != "" && !strings.Contains(err.Error(), tc.want.errHas) {
				t.Errorf("error %q does not contain %q", err, tc.want.errHas)
			}
			var se *elastic.StatusError
			isStatus := errors.As(err, &se)
			if tc.want.code != 0 {
				if !isStatus {
					t.Fatalf("error %v is no *StatusError", err)
				}
				if se.Code != tc.want.code || se.Type != tc.want.errType {
					t.Errorf("StatusError = %+v, want code %d type %q", se, tc.want.code, tc.want.errType)
				}
			}
			if (tc.want.noResponse || tc.want.deadline) && isStatus {
				t.Errorf("error %v is a *StatusError, want none", err)
			}
			if tc.want.deadline {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("error %v is not context.DeadlineExceeded", err)
				}
				// The server holds the request for a minute; returning within a few
				// seconds shows the deadline, not the server, ended the call.
				if elapsed > 5*time.Second {
					t.Errorf("Health returned after %v, want about %v", elapsed, tc.ctx)
				}
			}
		})
	}
}

func TestDefaultDeadlineAppliesWithoutOne(t *testing.T) {
	srv := elastictest.NewServer(t)
	srv.Handle("GET", "/_cluster/health", elastictest.Slow(10*time.Second, elastictest.JSON(200, healthBody("green", 2, 0, false))))
	// http.DefaultTransport has no response-header timeout of its own: only the client's
	// default deadline can end the call before the server answers.
	c, err := elastic.New(srv.URL, http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	elastic.SetTimeout(c, 100*time.Millisecond)
	_, err = c.Health(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Health without a deadline on a hanging server: %v, want context.DeadlineExceeded", err)
	}
}

func TestCallerDeadlineIsKept(t *testing.T) {
	// A caller's deadline longer than the client's default is not shortened.
	srv := elastictest.NewServer(t)
	srv.Handle("GET", "/_cluster/health", elastictest.Slow(300*time.Millisecond, elastictest.JSON(200, healthBody("green", 2, 0, false))))
	c := newClient(t, srv)
	elastic.SetTimeout(c, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Health(ctx); err != nil {
		t.Fatalf("Health with a 30s deadline on a server answering in 300ms: %v", err)
	}
}

func TestNotElasticsearch(t *testing.T) {
	// A 2xx answer without X-Elastic-Product: Elasticsearch is refused, as the official
	// client does for 7.14 and later servers.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(healthBody("green", 2, 0, false)))
	}))
	defer srv.Close()
	c, err := elastic.New(srv.URL, srv.Client().Transport)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := c.Health(context.Background()); err == nil {
		t.Fatalf("Health from a server that is not Elasticsearch = %+v, want an error", h)
	}
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "monocle-elastic:9200", "ftp://monocle-elastic:9200", "http://", "http://[::1"} {
		if _, err := elastic.New(u, nil); err == nil {
			t.Errorf("New(%q) succeeded, want an error", u)
		}
	}
	if _, err := elastic.New("http://monocle-elastic:9200", nil); err != nil {
		t.Errorf("New(http://monocle-elastic:9200): %v", err)
	}
}

func TestInjectedTransportCarriesRequests(t *testing.T) {
	srv := elastictest.NewServer(t)
	srv.Reply("GET", "/_cluster/health", 200, healthBody("green", 2, 0, false))
	rt := &countingTransport{next: http.DefaultTransport}
	c, err := elastic.New(srv.URL, rt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rt.n != 1 {
		t.Errorf("transport carried %d requests, want 1", rt.n)
	}
}

type countingTransport struct {
	next http.RoundTripper
	n    int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return c.next.RoundTrip(r)
}

func TestStatusErrorShapes(t *testing.T) {
	// Elasticsearch's own error type and reason are kept; the body of any other answer is
	// not quoted, only its status code given.
	const secret = "instance-metadata-token-AKIA0123456789"
	bare := func(status int, contentType, body string) http.Handler {
		// An answer without X-Elastic-Product, as a server that is not Elasticsearch sends.
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Del("X-Elastic-Product")
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		})
	}
	tests := map[string]struct {
		handler  http.Handler
		wantType string
		wantText string
		// foreign is set when the answer is not Elasticsearch's.
		foreign bool
	}{
		"object error": {
			handler:  elastictest.Error(404, "index_not_found_exception", "no such index [x]"),
			wantType: "index_not_found_exception", wantText: "no such index [x]",
		},
		"string error": {
			handler:  elastictest.JSON(405, `{"error":"Incorrect HTTP method for uri [/_cluster/health] and method [DELETE], allowed: [GET]","status":405}`),
			wantText: "Incorrect HTTP method",
		},
		"401 without the product header": {
			// Elasticsearch answers unauthenticated requests without X-Elastic-Product.
			handler:  bare(401, "application/json", elastictest.MustFixture("security-unauthorized").Body),
			wantType: "security_exception", wantText: "missing authentication credentials",
		},
		"empty body": {
			handler: elastictest.Raw(502, "text/plain", ""),
			foreign: true,
		},
		"text with the product header": {
			handler: elastictest.Raw(500, "text/plain", secret+strings.Repeat("x", 5000)),
			foreign: true,
		},
		"HTML page of another server": {
			handler: bare(403, "text/html", "<html><body>"+secret+"</body></html>"),
			foreign: true,
		},
		"Elasticsearch's shape without the product header": {
			handler: bare(404, "application/json", `{"error":{"type":"x","reason":"`+secret+`"},"status":404}`),
			foreign: true,
		},
		"JSON of another server": {
			handler: elastictest.JSON(500, `{"token":"`+secret+`"}`),
			foreign: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			srv.Handle("GET", "/_cluster/health", tc.handler)
			_, err := newClient(t, srv).Health(context.Background())
			var se *elastic.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is no *StatusError", err)
			}
			if se.Type != tc.wantType {
				t.Errorf("Type = %q, want %q", se.Type, tc.wantType)
			}
			if tc.wantText != "" && !strings.Contains(se.Reason, tc.wantText) {
				t.Errorf("Reason = %q, want %q in it", se.Reason, tc.wantText)
			}
			if se.NotElasticsearch != tc.foreign {
				t.Errorf("NotElasticsearch = %v, want %v", se.NotElasticsearch, tc.foreign)
			}
			if tc.foreign {
				want := "GET _cluster/health: status " + strconv.Itoa(se.Code) + ": the server did not answer as Elasticsearch 7.17"
				if !strings.HasPrefix(err.Error(), want) || se.Reason != "" {
					t.Errorf("error %q (Reason %q), want it to start %q and no reason", err, se.Reason, want)
				}
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "<html>") {
				t.Errorf("error %q quotes the body of an answer that is not Elasticsearch's", err)
			}
			if got := elastic.IsNotFound(err); got != (se.Code == 404) {
				t.Errorf("IsNotFound = %v for code %d", got, se.Code)
			}
		})
	}
}
