package elastic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

// reply is a canned answer of the fake.
type reply struct {
	status int
	body   string
}

// checkErr fails the test unless err matches wantErr: "" wants no error, "404" (three
// digits) wants a *StatusError of that code, anything else is text the error must contain.
func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "":
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	case len(wantErr) == 3 && strings.Trim(wantErr, "0123456789") == "":
		var se *elastic.StatusError
		if !errors.As(err, &se) || strconv.Itoa(se.Code) != wantErr {
			t.Fatalf("error %v, want a *StatusError with code %s", err, wantErr)
		}
	default:
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error %v, want one containing %q", err, wantErr)
		}
	}
}

// serve starts a fake that answers method path with r, and returns it and a client of it.
func serve(t *testing.T, method, path string, r reply) (*elastictest.Server, elastic.Client) {
	t.Helper()
	srv := elastictest.NewServer(t)
	srv.Reply(method, path, r.status, r.body)
	return srv, newClient(t, srv)
}

// callCase is a case of a call: the fake's reply, and the result and the error (as checkErr
// takes it) wanted. want is compared on an error too: a call returns its zero value then.
type callCase[T any] struct {
	reply   reply
	want    T
	wantErr string
}

// testReads runs the cases of a read, each on a fake answering method path with the case's
// reply: read calls the client, which must send the fake one request, and check, unless nil,
// checks that request.
func testReads[T any](t *testing.T, method, path string, tests map[string]callCase[T],
	read func(elastic.Client, context.Context) (T, error), check func(*testing.T, elastictest.Request)) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv, c := serve(t, method, path, tc.reply)
			got, err := read(c, context.Background())
			checkErr(t, err, tc.wantErr)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s %s read %+v, want %+v", method, path, got, tc.want)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			if check != nil {
				check(t, reqs[0])
			}
		})
	}
}

// testWrites is testReads for a call that returns only an error.
func testWrites(t *testing.T, method, path string, tests map[string]callCase[struct{}],
	write func(elastic.Client, context.Context) error, check func(*testing.T, elastictest.Request)) {
	t.Helper()
	testReads(t, method, path, tests, func(c elastic.Client, ctx context.Context) (struct{}, error) {
		return struct{}{}, write(c, ctx)
	}, check)
}

// allocationRow is a row of GET _cat/allocation?format=json&bytes=b from Elasticsearch 7.17
// (cat allocation API: shards, disk.indices, disk.used, disk.avail, disk.total,
// disk.percent, host, ip, node; every cell a string).
const allocationRow = `{"shards":"2","disk.indices":"52428800","disk.used":"8589934592","disk.avail":"2147483648","disk.total":"10737418240","disk.percent":"80","host":"10.244.0.12","ip":"10.244.0.12","node":"monocle-elastic-0"}`

// unassignedRow is the row _cat/allocation adds for unassigned shards.
const unassignedRow = `{"shards":"2","disk.indices":null,"disk.used":null,"disk.avail":null,"disk.total":null,"disk.percent":null,"host":null,"ip":null,"node":"UNASSIGNED"}`

func TestDiskUsage(t *testing.T) {
	node0 := elastic.Disk{Node: "monocle-elastic-0", IndicesBytes: 52428800, UsedBytes: 8589934592,
		AvailableBytes: 2147483648, TotalBytes: 10737418240}
	testReads(t, "GET", "/_cat/allocation", map[string]callCase[elastic.Disk]{
		"one node":                  {reply: reply{200, "[" + allocationRow + "]"}, want: node0},
		"unassigned shards skipped": {reply: reply{200, "[" + unassignedRow + "," + allocationRow + "]"}, want: node0},
		"fullest of two nodes": {
			reply: reply{200, "[" + allocationRow + "," + strings.NewReplacer(
				`"disk.used":"8589934592"`, `"disk.used":"10200547328"`,
				`"disk.avail":"2147483648"`, `"disk.avail":"536870912"`,
				"monocle-elastic-0", "monocle-elastic-1").Replace(allocationRow) + "]"},
			want: elastic.Disk{Node: "monocle-elastic-1", IndicesBytes: 52428800, UsedBytes: 10200547328,
				AvailableBytes: 536870912, TotalBytes: 10737418240},
		},
		"only unassigned": {reply: reply{200, "[" + unassignedRow + "]"}, wantErr: "decoding _cat/allocation: no data node"},
		"empty list":      {reply: reply{200, "[]"}, wantErr: "decoding _cat/allocation: no data node"},
		"garbage":         {reply: reply{200, "<html>"}, wantErr: "decoding _cat/allocation"},
		"object":          {reply: reply{200, `{"disk.total":"1"}`}, wantErr: "decoding _cat/allocation"},
		"human sizes":     {reply: reply{200, strings.Replace("["+allocationRow+"]", `"10737418240"`, `"10gb"`, 1)}, wantErr: `disk.total "10gb" is not a whole number`},
		"error status":    {reply: reply{500, `{"error":{"root_cause":[],"type":"exception","reason":"x"},"status":500}`}, wantErr: "500"},
	}, elastic.Client.DiskUsage, checkBytesAsJSON)
}

// checkBytesAsJSON checks that a _cat request asks for JSON with sizes in bytes.
func checkBytesAsJSON(t *testing.T, r elastictest.Request) {
	t.Helper()
	if q := r.Query; q.Get("format") != "json" || q.Get("bytes") != "b" {
		t.Errorf("query %v, want format=json and bytes=b", q)
	}
}

func TestDiskPercentUsed(t *testing.T) {
	if got := (elastic.Disk{UsedBytes: 80, TotalBytes: 100}).PercentUsed(); got != 80 {
		t.Errorf("PercentUsed = %v, want 80", got)
	}
	if got := (elastic.Disk{UsedBytes: 80}).PercentUsed(); got != 0 {
		t.Errorf("PercentUsed without a total = %v, want 0", got)
	}
}

// clusterSettings is GET _cluster/settings?include_defaults=true&flat_settings=true from
// Elasticsearch 7.17, trimmed to the disk settings of its "defaults".
func clusterSettings(persistent, transient, low, high, flood string) string {
	return `{"persistent":{` + persistent + `},"transient":{` + transient + `},"defaults":{
  "cluster.routing.allocation.disk.threshold_enabled":"true",
  "cluster.routing.allocation.disk.watermark.enable_for_single_data_node":"false",
  "cluster.routing.allocation.disk.watermark.flood_stage":"` + flood + `",
  "cluster.routing.allocation.disk.watermark.flood_stage.frozen":"95%",
  "cluster.routing.allocation.disk.watermark.flood_stage.frozen.max_headroom":"20GB",
  "cluster.routing.allocation.disk.watermark.high":"` + high + `",
  "cluster.routing.allocation.disk.watermark.low":"` + low + `"}}`
}

func TestWatermarks(t *testing.T) {
	pct := func(raw string, p float64) elastic.Watermark { return elastic.Watermark{Raw: raw, UsedPercent: p} }
	testReads(t, "GET", "/_cluster/settings", map[string]callCase[elastic.Watermarks]{
		"defaults": {
			reply: reply{200, clusterSettings("", "", "85%", "90%", "95%")},
			want:  elastic.Watermarks{Low: pct("85%", 85), High: pct("90%", 90), FloodStage: pct("95%", 95)},
		},
		"ratios": {
			reply: reply{200, clusterSettings("", "", "0.85", "0.9", "0.95")},
			want:  elastic.Watermarks{Low: pct("0.85", 85), High: pct("0.9", 90), FloodStage: pct("0.95", 95)},
		},
		"byte values": {
			reply: reply{200, clusterSettings("", "", "2gb", "1gb", "500mb")},
			want: elastic.Watermarks{
				Low:        elastic.Watermark{Raw: "2gb", IsBytes: true, FreeBytes: 2 << 30},
				High:       elastic.Watermark{Raw: "1gb", IsBytes: true, FreeBytes: 1 << 30},
				FloodStage: elastic.Watermark{Raw: "500mb", IsBytes: true, FreeBytes: 500 << 20},
			},
		},
		"persistent over default, transient over persistent": {
			reply: reply{200, clusterSettings(
				`"cluster.routing.allocation.disk.watermark.low":"70%","cluster.routing.allocation.disk.watermark.high":"80%"`,
				`"cluster.routing.allocation.disk.watermark.high":"75%"`,
				"85%", "90%", "95%")},
			want: elastic.Watermarks{Low: pct("70%", 70), High: pct("75%", 75), FloodStage: pct("95%", 95)},
		},
		"unparsable": {
			reply:   reply{200, clusterSettings("", "", "85%", "lots", "95%")},
			wantErr: "decoding _cluster/settings: cluster.routing.allocation.disk.watermark.high",
		},
		"missing": {
			reply:   reply{200, `{"persistent":{},"transient":{}}`},
			wantErr: "decoding _cluster/settings: no cluster.routing.allocation.disk.watermark.low",
		},
		"not a string": {
			reply:   reply{200, `{"defaults":{"cluster.routing.allocation.disk.watermark.low":85}}`},
			wantErr: "not a string",
		},
		"garbage":      {reply: reply{200, `{"defaults":`}, wantErr: "decoding _cluster/settings"},
		"error status": {reply: reply{503, `{"error":{"type":"master_not_discovered_exception","reason":"x"},"status":503}`}, wantErr: "503"},
	}, elastic.Client.Watermarks, func(t *testing.T, r elastictest.Request) {
		if q := r.Query; q.Get("include_defaults") != "true" || q.Get("flat_settings") != "true" {
			t.Errorf("query %v, want include_defaults=true and flat_settings=true", q)
		}
	})
}

func TestReadOnlyIndices(t *testing.T) {
	testReads(t, "GET", "/_all/_settings/index.blocks.read_only_allow_delete", map[string]callCase[[]string]{
		"two blocked, one not": {
			reply: reply{200, `{
  "monocle.config":{"settings":{"index.blocks.read_only_allow_delete":"true"}},
  "monocle.changes.1.zuul":{"settings":{"index.blocks.read_only_allow_delete":"false"}},
  "monocle.changes.1.demo":{"settings":{"index.blocks.read_only_allow_delete":"true"}}}`},
			want: []string{"monocle.changes.1.demo", "monocle.config"},
		},
		"none":         {reply: reply{200, `{}`}, want: nil},
		"not a bool":   {reply: reply{200, `{"a":{"settings":{"index.blocks.read_only_allow_delete":"maybe"}}}`}, wantErr: "decoding _all/_settings"},
		"garbage":      {reply: reply{200, `[]`}, wantErr: "decoding _all/_settings"},
		"null":         {reply: reply{200, `null`}, wantErr: "decoding _all/_settings"},
		"error status": {reply: reply{500, `{"error":{"type":"exception","reason":"x"},"status":500}`}, wantErr: "500"},
		// A flood-stage block on a data stream's hidden backing index, listed with
		// expand_wildcards=all only (GetSettingsResponse.toXContent leaves out the indices
		// without the setting).
		"hidden index": {
			reply: reply{200, `{".ds-ilm-history-5-2021.12.16-000001":{"settings":{"index.blocks.read_only_allow_delete":"true"}}}`},
			want:  []string{".ds-ilm-history-5-2021.12.16-000001"},
		},
	}, elastic.Client.ReadOnlyIndices, func(t *testing.T, r elastictest.Request) {
		// _all alone is the visible open indices (RestGetSettingsAction: strictExpandOpen).
		if q := r.Query; q.Get("flat_settings") != "true" || q.Get("expand_wildcards") != "all" {
			t.Errorf("query %v, want flat_settings=true and expand_wildcards=all", q)
		}
	})
}

func TestClearReadOnly(t *testing.T) {
	tests := map[string]struct {
		indices  []string
		path     string
		reply    reply
		wantErr  string
		wantSent bool
	}{
		"two indices": {
			indices: []string{"monocle.config", "monocle.changes.1.demo"},
			path:    "/monocle.config,monocle.changes.1.demo/_settings",
			reply:   reply{200, `{"acknowledged":true}`}, wantSent: true,
		},
		"not acknowledged": {
			indices: []string{"monocle.config"}, path: "/monocle.config/_settings",
			reply: reply{200, `{"acknowledged":false}`}, wantErr: "not acknowledged", wantSent: true,
		},
		"garbage": {
			indices: []string{"monocle.config"}, path: "/monocle.config/_settings",
			reply: reply{200, `ok`}, wantErr: "decoding <indices>/_settings", wantSent: true,
		},
		"missing index": {
			indices: []string{"gone"}, path: "/gone/_settings",
			reply:   reply{404, `{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [gone]"}],"type":"index_not_found_exception","reason":"no such index [gone]"},"status":404}`},
			wantErr: "404", wantSent: true,
		},
		"no indices is no call": {},
		"bad name":              {indices: []string{"a/b"}, wantErr: "not allowed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			if tc.path != "" {
				srv.Reply("PUT", tc.path, tc.reply.status, tc.reply.body)
			}
			err := newClient(t, srv).ClearReadOnly(context.Background(), tc.indices...)
			checkErr(t, err, tc.wantErr)
			reqs := srv.Requests()
			if !tc.wantSent {
				if len(reqs) != 0 {
					t.Fatalf("sent %d requests, want none", len(reqs))
				}
				return
			}
			var body map[string]any
			if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
				t.Fatalf("PUT body %q: %v", reqs[0].Body, err)
			}
			v, ok := body["index.blocks.read_only_allow_delete"]
			if len(body) != 1 || !ok || v != nil {
				t.Errorf("PUT body %s, want {\"index.blocks.read_only_allow_delete\":null}", reqs[0].Body)
			}
		})
	}
}

// catIndices is GET _cat/indices/monocle.*?format=json&bytes=b from Elasticsearch 7.17 (cat
// indices API); a closed index has no counts.
const catIndices = `[
 {"health":"green","status":"open","index":"monocle.config","uuid":"Xq1pD0nYT4O6ZbYkq4oC2g","pri":"1","rep":"0","docs.count":"1","docs.deleted":"0","store.size":"5120","pri.store.size":"5120"},
 {"health":"green","status":"open","index":"monocle.changes.1.demo","uuid":"v2oQY1i5Q0y3k7n0d2cY8w","pri":"1","rep":"0","docs.count":"1234","docs.deleted":"7","store.size":"3145728","pri.store.size":"3145728"},
 {"health":"green","status":"close","index":"monocle.changes.1.old","uuid":"c4Y9m2nRS1Kp0b3dJ8fW5q","pri":"1","rep":"0","docs.count":null,"docs.deleted":null,"store.size":null,"pri.store.size":null}
]`

func TestIndices(t *testing.T) {
	tests := map[string]struct {
		pattern string
		reply   reply
		want    []elastic.Index
		wantErr string
	}{
		"monocle indices, sorted": {
			pattern: "monocle.*", reply: reply{200, catIndices},
			want: []elastic.Index{
				{Name: "monocle.changes.1.demo", Health: elastic.HealthGreen, Status: "open", DocsCount: 1234, StoreSizeBytes: 3145728},
				{Name: "monocle.changes.1.old", Health: elastic.HealthGreen, Status: "close"},
				{Name: "monocle.config", Health: elastic.HealthGreen, Status: "open", DocsCount: 1, StoreSizeBytes: 5120},
			},
		},
		"nothing matches": {pattern: "monocle.*", reply: reply{200, `[]`}, want: []elastic.Index{}},
		"missing index": {
			pattern: "monocle.config",
			reply:   reply{404, `{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [monocle.config]"}],"type":"index_not_found_exception","reason":"no such index [monocle.config]"},"status":404}`},
			wantErr: "404",
		},
		"garbage":     {pattern: "monocle.*", reply: reply{200, `{"index":"x"}`}, wantErr: "decoding _cat/indices"},
		"no name":     {pattern: "monocle.*", reply: reply{200, `[{"health":"green"}]`}, wantErr: "no index name"},
		"bad count":   {pattern: "monocle.*", reply: reply{200, `[{"index":"a","docs.count":"1k"}]`}, wantErr: `docs.count "1k"`},
		"bad pattern": {pattern: "a?b", wantErr: "not allowed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			if tc.reply.status != 0 {
				srv.Reply("GET", "/_cat/indices/"+tc.pattern, tc.reply.status, tc.reply.body)
			}
			got, err := newClient(t, srv).Indices(context.Background(), tc.pattern)
			checkErr(t, err, tc.wantErr)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Indices = %+v, want %+v", got, tc.want)
			}
			if tc.reply.status != 0 {
				checkBytesAsJSON(t, srv.Requests()[0])
				if q := srv.Requests()[0].Query; q.Get("expand_wildcards") != "all" {
					t.Errorf("query %v, want expand_wildcards=all (hidden indices listed)", q)
				}
			}
		})
	}
}

func TestCloseIndices(t *testing.T) {
	srv := elastictest.NewServer(t)
	srv.Reply("POST", "/monocle.config,monocle.changes.1.demo/_close", 200,
		`{"acknowledged":true,"shards_acknowledged":true,"indices":{"monocle.config":{"closed":true},"monocle.changes.1.demo":{"closed":true}}}`)
	srv.ReplyError("POST", "/gone/_close", 404, "index_not_found_exception", "no such index [gone]")
	c := newClient(t, srv)
	if err := c.CloseIndices(context.Background(), "monocle.config", "monocle.changes.1.demo"); err != nil {
		t.Errorf("CloseIndices: %v", err)
	}
	if err := c.CloseIndices(context.Background(), "gone"); !elastic.IsNotFound(err) {
		t.Errorf("CloseIndices of a missing index: %v, want ErrNotFound", err)
	}
	if err := c.CloseIndices(context.Background()); err == nil {
		t.Error("CloseIndices without indices succeeded, want an error")
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("sent %d requests, want 2", n)
	}
}

// catRows are rows of GET _cat/indices (Elasticsearch 7.17, format=json, bytes=b) of the
// two indices of a restore, each open or closed as status says.
func catRows(config, demo string) string {
	row := `{"health":"yellow","status":"%s","index":"%s","uuid":"u","pri":"1","rep":"1","docs.count":"0","docs.deleted":"0","store.size":"208","pri.store.size":"208"}`
	return "[" + fmt.Sprintf(row, config, "monocle.config") + "," + fmt.Sprintf(row, demo, "monocle.changes.1.demo") + "]"
}

// shardRows are rows of GET _cat/shards?format=json&h=index,shard,prirep,state (Elasticsearch
// 7.17 cat shards API; every cell a string) of the two indices of a restore: each a primary
// in the given state and a replica a single node leaves UNASSIGNED.
func shardRows(config, demo string) string {
	row := `{"index":"%s","shard":"0","prirep":"%s","state":"%s"}`
	return "[" + strings.Join([]string{
		fmt.Sprintf(row, "monocle.config", "p", config), fmt.Sprintf(row, "monocle.config", "r", "UNASSIGNED"),
		fmt.Sprintf(row, "monocle.changes.1.demo", "p", demo), fmt.Sprintf(row, "monocle.changes.1.demo", "r", "UNASSIGNED"),
	}, ",") + "]"
}

func TestRestoreDone(t *testing.T) {
	const (
		indicesPath = "/_cat/indices/monocle.config,monocle.changes.1.demo"
		shardsPath  = "/_cat/shards/monocle.config,monocle.changes.1.demo"
		healthPath  = "/_cluster/health/monocle.config,monocle.changes.1.demo"
	)
	open := reply{200, catRows("open", "open")}
	missing := reply{404, `{"error":{"root_cause":[{"type":"index_not_found_exception","reason":"no such index [monocle.changes.1.demo]"}],"type":"index_not_found_exception","reason":"no such index [monocle.changes.1.demo]"},"status":404}`}
	tests := map[string]struct {
		indices, shards reply
		// health, when set, is what GET _cluster/health/<indices> would answer: RestoreDone
		// does not ask it, as it cannot tell.
		health  string
		want    bool
		wantErr string
	}{
		"primaries started":    {indices: open, shards: reply{200, shardRows("STARTED", "STARTED")}, want: true},
		"primary relocating":   {indices: open, shards: reply{200, shardRows("STARTED", "RELOCATING")}, want: true},
		"primary initializing": {indices: open, shards: reply{200, shardRows("STARTED", "INITIALIZING")}},
		// Elasticsearch 7.x reports a primary being restored as yellow, not red, also before
		// it starts initializing (ClusterShardHealth.getInactivePrimaryHealth).
		"yellow, a primary unassigned": {indices: open, shards: reply{200, shardRows("STARTED", "UNASSIGNED")},
			health: healthBody("yellow", 1, 3, false)},
		"an index without primary row": {indices: open, shards: reply{200, `[{"index":"monocle.config","shard":"0","prirep":"p","state":"STARTED"}]`}},
		"an index closed":              {indices: reply{200, catRows("open", "close")}},
		"an index missing":             {indices: missing},
		"shards missing an index":      {indices: open, shards: missing},
		"shards garbage":               {indices: open, shards: reply{200, `{"state":"STARTED"}`}, wantErr: "decoding _cat/shards"},
		"shards row without index":     {indices: open, shards: reply{200, `[{"prirep":"p","state":"STARTED"}]`}, wantErr: "no index name"},
		"shards error status":          {indices: open, shards: reply{500, `{"error":{"type":"exception","reason":"x"},"status":500}`}, wantErr: "500"},
		"indices error status":         {indices: reply{500, `{"error":{"type":"exception","reason":"x"},"status":500}`}, wantErr: "500"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := elastictest.NewServer(t)
			srv.Reply("GET", indicesPath, tc.indices.status, tc.indices.body)
			if tc.shards.status != 0 {
				srv.Reply("GET", shardsPath, tc.shards.status, tc.shards.body)
			}
			if tc.health != "" {
				srv.Reply("GET", healthPath, 200, tc.health)
			}
			got, err := newClient(t, srv).RestoreDone(context.Background(), []string{"monocle.config", "monocle.changes.1.demo"})
			checkErr(t, err, tc.wantErr)
			if got != tc.want {
				t.Errorf("RestoreDone = %v, want %v", got, tc.want)
			}
			if r := srv.RequestsTo("GET", indicesPath); len(r) != 1 || r[0].Query.Get("expand_wildcards") != "all" {
				t.Errorf("requests to %s: %+v, want one with expand_wildcards=all", indicesPath, r)
			}
			shards := srv.RequestsTo("GET", shardsPath)
			if want := tc.shards.status != 0; (len(shards) == 1) != want || len(shards) > 1 {
				t.Errorf("%d requests to %s, want one only when every index is open", len(shards), shardsPath)
			}
			for _, r := range shards {
				if q := r.Query; q.Get("format") != "json" || q.Get("h") != "index,shard,prirep,state" {
					t.Errorf("_cat/shards query %v, want format=json and h=index,shard,prirep,state", q)
				}
			}
		})
	}
}

func TestDeleteIndex(t *testing.T) {
	testWrites(t, "DELETE", "/monocle.changes.1.old", map[string]callCase[struct{}]{
		"deleted":          {reply: reply{200, `{"acknowledged":true}`}},
		"already gone":     {reply: reply{404, `{"error":{"type":"index_not_found_exception","reason":"no such index [monocle.changes.1.old]"},"status":404}`}},
		"not acknowledged": {reply: reply{200, `{"acknowledged":false}`}, wantErr: "not acknowledged"},
		"error status":     {reply: reply{500, `{"error":{"type":"exception","reason":"x"},"status":500}`}, wantErr: "500"},
	}, func(c elastic.Client, ctx context.Context) error {
		return c.DeleteIndex(ctx, "monocle.changes.1.old")
	}, nil)
	srv := elastictest.NewServer(t)
	for _, bad := range []string{"monocle.*", "_all", ""} {
		if err := newClient(t, srv).DeleteIndex(context.Background(), bad); err == nil {
			t.Errorf("DeleteIndex(%q) sent a request", bad)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests for names that are not indices", n)
	}
}
