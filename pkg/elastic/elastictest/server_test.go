package elastictest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

// recordingTB keeps the errors reported to it instead of failing the test.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestServer(t *testing.T) {
	tb := &recordingTB{TB: t}
	srv := elastictest.NewServer(tb)
	srv.Reply("GET", "/_cluster/health", 200, `{"status":"green"}`)
	srv.ReplyError("GET", "/_snapshot/backups/nope", 404, "snapshot_missing_exception", "[backups:nope] is missing")

	res, err := http.Get(srv.URL + "/_cluster/health?timeout=1ms")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != `{"status":"green"}` {
		t.Errorf("canned answer: %d %s", res.StatusCode, body)
	}
	if got := res.Header.Get("X-Elastic-Product"); got != "Elasticsearch" {
		t.Errorf("X-Elastic-Product = %q, want Elasticsearch", got)
	}

	res, err = http.Get(srv.URL + "/_snapshot/backups/nope")
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Error struct {
			RootCause []struct{ Type, Reason string } `json:"root_cause"`
			Type      string                          `json:"type"`
			Reason    string                          `json:"reason"`
		} `json:"error"`
		Status int `json:"status"`
	}
	err = json.NewDecoder(res.Body).Decode(&e)
	res.Body.Close()
	if err != nil || res.StatusCode != 404 || e.Status != 404 || e.Error.Type != "snapshot_missing_exception" ||
		e.Error.Reason != "[backups:nope] is missing" || len(e.Error.RootCause) != 1 {
		t.Errorf("error answer: %d %+v (%v)", res.StatusCode, e, err)
	}

	res, err = http.Post(srv.URL+"/_unknown", "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 400 {
		t.Errorf("unrouted request: status %d, want 400", res.StatusCode)
	}
	if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], "unexpected request POST /_unknown") {
		t.Errorf("errors reported %q, want one about POST /_unknown", tb.errs)
	}

	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests logged, want 3", len(reqs))
	}
	if reqs[0].Method != "GET" || reqs[0].Path != "/_cluster/health" || reqs[0].Query.Get("timeout") != "1ms" {
		t.Errorf("first request %+v", reqs[0])
	}
	if string(reqs[2].Body) != `{"a":1}` {
		t.Errorf("logged body %q", reqs[2].Body)
	}
	if got := srv.RequestsTo("GET", "/_snapshot/backups/nope"); len(got) != 1 {
		t.Errorf("RequestsTo found %d, want 1", len(got))
	}
}
