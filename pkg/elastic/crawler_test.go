package elastic_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

// searchAnswer is an Elasticsearch 7.17 search answer with the composite aggregation
// "entities" (keys crawler, type, value) and its max sub-aggregation last_commit_at (a date
// as epoch milliseconds, value_as_string ISO).
const searchAnswer = `{"took":3,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},
"hits":{"total":{"value":3,"relation":"eq"},"max_score":null,"hits":[]},
"aggregations":{"entities":{"after_key":{"crawler":"gh","type":"project","value":"a/c"},"buckets":[
 {"key":{"crawler":"gerrit","type":"project","value":"zuul"},"doc_count":1,"last_commit_at":{"value":1.7040672E12,"value_as_string":"2024-01-01T00:00:00.000Z"}},
 {"key":{"crawler":"gh","type":"organization","value":"a"},"doc_count":1,"last_commit_at":{"value":1.7324208E12,"value_as_string":"2024-11-24T04:00:00.000Z"}},
 {"key":{"crawler":"gh","type":"project","value":"a/c"},"doc_count":1,"last_commit_at":{"value":1.7323344E12,"value_as_string":"2024-11-23T04:00:00.000Z"}}]}}}`

func TestCrawlersProgress(t *testing.T) {
	nov23, nov24 := time.Date(2024, 11, 23, 4, 0, 0, 0, time.UTC), time.Date(2024, 11, 24, 4, 0, 0, 0, time.UTC)
	testReads(t, "POST", "/monocle.changes.1.demo/_search", map[string]callCase[[]elastic.CrawlerProgress]{
		"two crawlers, sorted by name": {reply: reply{200, searchAnswer}, want: []elastic.CrawlerProgress{
			{Crawler: "gerrit", Entities: []elastic.CrawlerEntity{{Type: "project", Value: "zuul", LastCommitAt: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}}},
			{Crawler: "gh", Entities: []elastic.CrawlerEntity{{Type: "organization", Value: "a", LastCommitAt: nov24}, {Type: "project", Value: "a/c", LastCommitAt: nov23}}},
		}},
		"no crawler metadata yet": {reply: reply{200, `{"hits":{"max_score":null,"hits":[]},"aggregations":{"entities":{"buckets":[]}}}`}, want: []elastic.CrawlerProgress{}},
		"no aggregations":         {reply: reply{200, `{"hits":{"hits":[]}}`}, wantErr: "no aggregations"},
		"a bucket without a date": {reply: reply{200, `{"aggregations":{"entities":{"buckets":[{"key":{"crawler":"gh","type":"project","value":"a"},"doc_count":1,"last_commit_at":{"value":null}}]}}}`},
			wantErr: "without a crawler name or a date"},
		"garbage":       {reply: reply{200, `<html>`}, wantErr: "decoding <index>/_search"},
		"missing index": {reply: reply{404, `{"error":{"type":"index_not_found_exception","reason":"no such index [monocle.changes.1.demo]"},"status":404}`}, wantErr: "404"},
	}, func(c elastic.Client, ctx context.Context) ([]elastic.CrawlerProgress, error) {
		return c.CrawlersProgress(ctx, "monocle.changes.1.demo")
	}, func(t *testing.T, r elastictest.Request) {
		var body struct {
			Size *int `json:"size"`
			Aggs struct {
				Entities struct {
					Composite struct {
						Size    int               `json:"size"`
						After   map[string]string `json:"after"`
						Sources []map[string]any  `json:"sources"`
					} `json:"composite"`
				} `json:"entities"`
			} `json:"aggs"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil || body.Size == nil || *body.Size != 0 {
			t.Fatalf("request body %s: want size 0 (%v)", r.Body, err)
		}
		if c := body.Aggs.Entities.Composite; c.Size != 1000 || c.After != nil || len(c.Sources) != 3 {
			t.Errorf("request body %s: want a composite aggregation of 1000 buckets over 3 sources, without after", r.Body)
		}
	})
}

// TestCrawlersProgressPages: documents beyond one page are read with the after_key of the
// page before, until a page has fewer buckets than asked.
func TestCrawlersProgressPages(t *testing.T) {
	srv := elastictest.NewServer(t)
	elastic.SetCrawlerPageSize(t, 2)
	bucket := func(crawler, value string) string {
		return `{"key":{"crawler":"` + crawler + `","type":"project","value":"` + value + `"},"doc_count":1,"last_commit_at":{"value":1.7040672E12,"value_as_string":"2024-01-01T00:00:00.000Z"}}`
	}
	pages := []string{
		`{"aggregations":{"entities":{"after_key":{"crawler":"gh","type":"project","value":"a"},"buckets":[` + bucket("gerrit", "x") + `,` + bucket("gh", "a") + `]}}}`,
		`{"aggregations":{"entities":{"after_key":{"crawler":"gh","type":"project","value":"c"},"buckets":[` + bucket("gh", "b") + `,` + bucket("gh", "c") + `]}}}`,
		`{"aggregations":{"entities":{"buckets":[]}}}`,
	}
	var n int
	srv.Handle("POST", "/monocle.changes.1.demo/_search", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elastictest.JSON(200, pages[min(n, len(pages)-1)]).ServeHTTP(w, r)
		n++
	}))
	got, err := newClient(t, srv).CrawlersProgress(context.Background(), "monocle.changes.1.demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0].Entities) != 1 || len(got[1].Entities) != 3 || got[1].Entities[2].Value != "c" {
		t.Errorf("CrawlersProgress = %+v, want gerrit with 1 entity and gh with a, b, c", got)
	}
	reqs := srv.RequestsTo("POST", "/monocle.changes.1.demo/_search")
	if len(reqs) != 3 {
		t.Fatalf("%d searches, want 3", len(reqs))
	}
	for i, after := range []string{"", `"after":{"crawler":"gh","type":"project","value":"a"}`, `"after":{"crawler":"gh","type":"project","value":"c"}`} {
		if body := string(reqs[i].Body); (after == "") == strings.Contains(body, `"after"`) || !strings.Contains(body, after) {
			t.Errorf("search %d: body %s, want %s", i, body, after)
		}
	}
}

// errorsAnswer is an Elasticsearch 7.17 search answer with the terms aggregation "crawlers",
// its filter sub-aggregation last_day and its top_hits sub-aggregation last.
const errorsAnswer = `{"took":2,"timed_out":false,"hits":{"total":{"value":13,"relation":"eq"},"max_score":null,"hits":[]},
"aggregations":{"crawlers":{"doc_count_error_upper_bound":0,"sum_other_doc_count":0,"buckets":[
 {"key":"gh","doc_count":12,"last_day":{"doc_count":3},"last":{"hits":{"total":{"value":12,"relation":"eq"},"max_score":null,"hits":[
  {"_index":"monocle.changes.1.demo","_type":"_doc","_id":"x","_score":null,"_source":{"error_data":{"created_at":"2026-11-25T10:00:00Z","message":"Bad credentials","entity_type":"project","entity_value":"change-metrics/monocle"}},"sort":[1795600800000]}]}}},
 {"key":"gerrit","doc_count":1,"last_day":{"doc_count":0},"last":{"hits":{"total":{"value":1,"relation":"eq"},"max_score":null,"hits":[
  {"_index":"monocle.changes.1.demo","_type":"_doc","_id":"y","_score":null,"_source":{"error_data":{"created_at":"2026-11-01T00:00:00Z","message":"timeout","entity_type":"project","entity_value":"zuul"}},"sort":[1793491200000]}]}}}]}}}`

func TestCrawlersErrors(t *testing.T) {
	testReads(t, "POST", "/monocle.changes.1.demo/_search", map[string]callCase[[]elastic.CrawlerErrors]{
		"two crawlers, sorted by name": {reply: reply{200, errorsAnswer}, want: []elastic.CrawlerErrors{
			{Crawler: "gerrit", Total: 1, LastDay: 0, LastTime: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), LastMessage: "timeout", LastEntity: "project zuul"},
			{Crawler: "gh", Total: 12, LastDay: 3, LastTime: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), LastMessage: "Bad credentials", LastEntity: "project change-metrics/monocle"},
		}},
		"no errors":       {reply: reply{200, `{"aggregations":{"crawlers":{"buckets":[]}}}`}, want: []elastic.CrawlerErrors{}},
		"no aggregations": {reply: reply{200, `{"hits":{"hits":[]}}`}, wantErr: "no aggregations"},
		"a bucket without its newest error": {reply: reply{200, `{"aggregations":{"crawlers":{"buckets":[{"key":"gh","doc_count":1,"last_day":{"doc_count":1},"last":{"hits":{"hits":[]}}}]}}}`},
			wantErr: "without a name or a newest error"},
		"a date that is not one": {reply: reply{200, `{"aggregations":{"crawlers":{"buckets":[{"key":"gh","doc_count":1,"last_day":{"doc_count":1},"last":{"hits":{"hits":[{"_source":{"error_data":{"created_at":"yesterday"}}}]}}}]}}}`},
			wantErr: "created_at"},
		"garbage":       {reply: reply{200, `[`}, wantErr: "decoding <index>/_search"},
		"missing index": {reply: reply{404, `{"error":{"type":"index_not_found_exception","reason":"no such index"},"status":404}`}, wantErr: "404"},
	}, func(c elastic.Client, ctx context.Context) ([]elastic.CrawlerErrors, error) {
		return c.CrawlersErrors(ctx, "monocle.changes.1.demo")
	}, func(t *testing.T, r elastictest.Request) {
		if body := string(r.Body); !strings.Contains(body, `"last_day"`) || strings.Contains(body, `"error_data.body"`) {
			t.Errorf("request body %s: want the last_day filter and no error body", body)
		}
	})
}
