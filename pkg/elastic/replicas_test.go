package elastic_test

import (
	"context"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

func TestIndexReplicas(t *testing.T) {
	testReads(t, "GET", "/monocle*/_settings/index.number_of_replicas", map[string]callCase[map[string]int]{
		"a closed index among them": {
			reply: reply{200, `{"monocle.config":{"settings":{"index.number_of_replicas":"0"}},` +
				`"monocle.changes.1.demo":{"settings":{"index.number_of_replicas":"2"}}}`},
			want: map[string]int{"monocle.config": 0, "monocle.changes.1.demo": 2},
		},
		"a number rather than a string": {
			reply: reply{200, `{"monocle.config":{"settings":{"index.number_of_replicas":1}}}`},
			want:  map[string]int{"monocle.config": 1},
		},
		"none":             {reply: reply{200, `{}`}, want: map[string]int{}},
		"without the key":  {reply: reply{200, `{"monocle.config":{"settings":{}}}`}, wantErr: "has no index.number_of_replicas"},
		"not a number":     {reply: reply{200, `{"monocle.config":{"settings":{"index.number_of_replicas":"many"}}}`}, wantErr: "decoding <pattern>/_settings"},
		"negative":         {reply: reply{200, `{"monocle.config":{"settings":{"index.number_of_replicas":"-1"}}}`}, wantErr: "decoding <pattern>/_settings"},
		"not an object":    {reply: reply{200, `[]`}, wantErr: "decoding <pattern>/_settings"},
		"null":             {reply: reply{200, `null`}, wantErr: "not an object of indices"},
		"an error status":  {reply: reply{500, `{"error":{"type":"exception","reason":"x"},"status":500}`}, wantErr: "500"},
		"a missing target": {reply: reply{404, `{"error":{"type":"index_not_found_exception","reason":"no such index"},"status":404}`}, wantErr: "404"},
	}, func(c elastic.Client, ctx context.Context) (map[string]int, error) {
		return c.IndexReplicas(ctx, "monocle*")
	}, func(t *testing.T, r elastictest.Request) {
		// Without expand_wildcards a wildcard skips closed and hidden indices.
		if q := r.Query; q.Get("flat_settings") != "true" || q.Get("expand_wildcards") != "all" || len(q) != 2 {
			t.Errorf("query %v, want flat_settings=true and expand_wildcards=all", q)
		}
	})
}

func TestSetIndexReplicas(t *testing.T) {
	testWrites(t, "PUT", "/monocle*/_settings", map[string]callCase[struct{}]{
		"acknowledged":     {reply: reply{200, `{"acknowledged":true}`}},
		"not acknowledged": {reply: reply{200, `{"acknowledged":false}`}, wantErr: "not acknowledged"},
		"blocked": {reply: reply{429, `{"error":{"type":"cluster_block_exception","reason":"index [monocle.config] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block];"},"status":429}`},
			wantErr: "429"},
	}, func(c elastic.Client, ctx context.Context) error {
		return c.SetIndexReplicas(ctx, "monocle*", 2)
	}, func(t *testing.T, r elastictest.Request) {
		if q := r.Query; q.Get("expand_wildcards") != "all" || len(q) != 1 {
			t.Errorf("query %v, want expand_wildcards=all", q)
		}
		if string(r.Body) != `{"index":{"number_of_replicas":2}}` {
			t.Errorf("body %s, want {\"index\":{\"number_of_replicas\":2}}", r.Body)
		}
	})
}

// TestReplicasRefuseBadInput: a pattern that cannot go in a URL path, or a negative count,
// is refused before any request.
func TestReplicasRefuseBadInput(t *testing.T) {
	srv := elastictest.NewServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	if _, err := c.IndexReplicas(ctx, "a/b"); err == nil {
		t.Error("IndexReplicas(a/b): no error")
	}
	if _, err := c.IndexReplicas(ctx, ""); err == nil {
		t.Error("IndexReplicas(\"\"): no error")
	}
	if err := c.SetIndexReplicas(ctx, "monocle*", -1); err == nil {
		t.Error("SetIndexReplicas(-1): no error")
	}
	if err := c.SetIndexReplicas(ctx, "a?b", 1); err == nil {
		t.Error("SetIndexReplicas(a?b): no error")
	}
	if err := c.CheckRepository(ctx, "_all"); err == nil {
		t.Error("CheckRepository(_all): no error")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

func TestCheckRepository(t *testing.T) {
	testWrites(t, "GET", "/_snapshot/backups", map[string]callCase[struct{}]{
		"registered": {reply: reply{200, `{"backups":{"type":"s3","settings":{"bucket":"b"}}}`}},
		"missing": {reply: reply{404, `{"error":{"type":"repository_missing_exception","reason":"[backups] missing"},"status":404}`},
			wantErr: "404"},
		"another in the answer": {reply: reply{200, `{"other":{"type":"fs","settings":{"location":"x"}}}`}, wantErr: "no repository backups"},
	}, func(c elastic.Client, ctx context.Context) error {
		return c.CheckRepository(ctx, "backups")
	}, nil)
}
