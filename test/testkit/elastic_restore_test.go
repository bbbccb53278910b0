package testkit

import (
	"maps"
	"reflect"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// dsIndex is a backing index of the data stream ilm-history-5: a hidden index.
const dsIndex = ".ds-ilm-history-5-2021.12.16-000001"

// catNames returns the index column of the _cat rows of body.
func catNames(t *testing.T, body any) []string {
	t.Helper()
	rows, ok := body.([]any)
	if !ok {
		t.Fatalf("not a list: %v", body)
	}
	var out []string
	for _, r := range rows {
		out = append(out, r.(map[string]any)["index"].(string))
	}
	return out
}

func TestFakeElasticHiddenIndices(t *testing.T) {
	f := startFake(t)
	c, _ := fakeClient(t, f, "ns", "m")
	f.SetIndices("ns", "m", "monocle.config")
	f.SetHidden("ns", "m", dsIndex)
	for path, want := range map[string][]string{
		"/_cat/indices/*?format=json":                                {"monocle.config"},
		"/_cat/indices?format=json":                                  {"monocle.config"},
		"/_cat/indices/*?format=json&expand_wildcards=open":          {"monocle.config"},
		"/_cat/indices/*?format=json&expand_wildcards=all":           {dsIndex, "monocle.config"},
		"/_cat/indices/*?format=json&expand_wildcards=open,hidden":   {dsIndex, "monocle.config"},
		"/_cat/indices/*?format=json&expand_wildcards=closed,hidden": nil,
		"/_cat/indices/.ds-*?format=json":                            {dsIndex},
		"/_cat/indices/" + dsIndex + "?format=json":                  {dsIndex},
	} {
		code, body := rawGet(t, f, "ns", "m", path)
		if got := catNames(t, body); code != 200 || !reflect.DeepEqual(got, want) {
			t.Errorf("GET %s = %d %v, want 200 %v", path, code, got, want)
		}
	}
	rows, err := c.Indices(t.Context(), "*")
	if err != nil || len(rows) != 2 || rows[0].Name != dsIndex || rows[0].Status != "open" {
		t.Errorf("Indices(*) = %+v, %v; want the hidden index listed too", rows, err)
	}
	if ix := f.Indices("ns", "m"); len(ix) != 2 || !ix[0].Hidden || ix[1].Hidden {
		t.Errorf("Indices = %+v, want %s hidden", ix, dsIndex)
	}
	// A concrete name closes a hidden index.
	if err := c.CloseIndices(t.Context(), dsIndex); err != nil || f.Indices("ns", "m")[0].Open {
		t.Errorf("closing %s: %v, open %v", dsIndex, err, f.Indices("ns", "m")[0].Open)
	}
}

func TestFakeElasticRestoreProgress(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, _ := fakeClient(t, f, "ns", "m")
	f.SetIndices("ns", "m", "monocle.config")
	// One replica, which the single node leaves unassigned whatever the primary does.
	f.SetReplicas("ns", "m", "monocle.config", 1)
	f.SetHidden("ns", "m", dsIndex)
	if err := c.EnsureRepository(ctx, "r", fsRepo); err != nil {
		t.Fatal(err)
	}
	f.PutSnapshot("ns", "m", "r", FakeSnapshot{Name: "theirs", UUID: "pReOiBzOR0q8y_lGXJcdng", Indices: []string{dsIndex, "monocle.config"}})
	if err := c.CloseIndices(ctx, "monocle.config"); err != nil {
		t.Fatal(err)
	}

	// The whole restore is refused for the open hidden index, with Elasticsearch's reason.
	err := c.Restore(ctx, "r", "theirs", []string{dsIndex, "monocle.config"})
	se := wantStatus(t, "restoring over an open hidden index", err, 500, "snapshot_restore_exception")
	const reason = "[r:theirs/pReOiBzOR0q8y_lGXJcdng] cannot restore index [" + dsIndex + "] because an open index with same name " +
		"already exists in the cluster. Either close or delete the existing index or restore the index under a different name by " +
		"providing a rename pattern and replacement name"
	if se.Reason != reason {
		t.Errorf("reason %q,\nwant   %q", se.Reason, reason)
	}
	if ix, ok := elastic.RefusedOpenIndex(err); !ok || ix != dsIndex {
		t.Errorf("RefusedOpenIndex = %q, %v", ix, ok)
	}
	if n := f.Restores("ns", "m", "r", "theirs"); n != 0 {
		t.Errorf("%d restores accepted after a refusal", n)
	}
	if done, err := c.RestoreDone(ctx, []string{"monocle.config"}); err != nil || done {
		t.Errorf("RestoreDone of a closed index = %v, %v; want false", done, err)
	}
	if code, body := rawGet(t, f, "ns", "m", "/_cat/shards/monocle.config?format=json"); code != 400 ||
		body.(map[string]any)["error"].(map[string]any)["type"] != "index_closed_exception" {
		t.Errorf("_cat/shards of a closed index = %d %v, want 400 index_closed_exception", code, body)
	}
	if code, _ := rawGet(t, f, "ns", "m", "/_cat/shards/gone?format=json"); code != 404 {
		t.Errorf("_cat/shards of a missing index = %d, want 404", code)
	}

	// Held, the restored primary initializes: not done.
	f.HoldRestores("ns", "m", true)
	if err := c.Restore(ctx, "r", "theirs", []string{"monocle.config"}); err != nil {
		t.Fatal(err)
	}
	shardsPath := "/_cat/shards/monocle.config?format=json&h=index,shard,prirep,state"
	code, body := rawGet(t, f, "ns", "m", shardsPath)
	want := []any{
		map[string]any{"index": "monocle.config", "shard": "0", "prirep": "p", "state": "INITIALIZING"},
		map[string]any{"index": "monocle.config", "shard": "0", "prirep": "r", "state": "UNASSIGNED"},
	}
	if code != 200 || !reflect.DeepEqual(body, want) {
		t.Errorf("GET %s while held = %d %v, want %v", shardsPath, code, body, want)
	}
	if done, err := c.RestoreDone(ctx, []string{"monocle.config"}); err != nil || done {
		t.Errorf("RestoreDone while held = %v, %v; want false", done, err)
	}

	f.HoldRestores("ns", "m", false)
	_, body = rawGet(t, f, "ns", "m", shardsPath)
	if rows, _ := body.([]any); len(rows) != 2 || rows[0].(map[string]any)["state"] != "STARTED" {
		t.Errorf("GET %s once released = %v, want the primary STARTED", shardsPath, body)
	}
	if done, err := c.RestoreDone(ctx, []string{"monocle.config"}); err != nil || !done {
		t.Errorf("RestoreDone once released = %v, %v; want true", done, err)
	}
}

// TestFakeElasticReplicas: the fake keeps index.number_of_replicas per index, 0 as Monocle
// creates them; a PUT sets it on the indices its pattern reaches (open ones by default,
// closed and hidden ones with expand_wildcards=all), flat or nested; a pattern that reaches
// none is 404.
func TestFakeElasticReplicas(t *testing.T) {
	f := startFake(t)
	ctx := t.Context()
	c, _ := fakeClient(t, f, "ns", "m")
	f.SetIndices("ns", "m", "monocle.config", "monocle.changes.1.demo", "monocle.changes.1.old")
	f.SetHidden("ns", "m", "monocle.changes.1.hidden")
	if err := c.CloseIndices(ctx, "monocle.changes.1.old"); err != nil {
		t.Fatal(err)
	}
	read := func() map[string]int {
		t.Helper()
		got, err := c.IndexReplicas(ctx, "monocle*")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	all := func(n int) map[string]int {
		return map[string]int{"monocle.config": n, "monocle.changes.1.demo": n, "monocle.changes.1.old": n, "monocle.changes.1.hidden": n}
	}
	if got := read(); !maps.Equal(got, all(0)) {
		t.Errorf("replicas = %v, want 0 on every index, closed and hidden ones included", got)
	}

	// Without expand_wildcards, the open visible indices only.
	if code, body := rawRequest(t, f, "ns", "m", "PUT", "/monocle*/_settings", `{"index.number_of_replicas":"1"}`); code != 200 {
		t.Fatalf("PUT flat = %d %v", code, body)
	}
	want := map[string]int{"monocle.config": 1, "monocle.changes.1.demo": 1, "monocle.changes.1.old": 0, "monocle.changes.1.hidden": 0}
	if got := read(); !maps.Equal(got, want) {
		t.Errorf("replicas after a PUT without expand_wildcards = %v, want %v", got, want)
	}

	if err := c.SetIndexReplicas(ctx, "monocle*", 2); err != nil {
		t.Fatal(err)
	}
	if got := read(); !maps.Equal(got, all(2)) {
		t.Errorf("replicas after SetIndexReplicas = %v, want 2 on every index", got)
	}
	for _, ix := range f.Indices("ns", "m") {
		if ix.Replicas != 2 {
			t.Errorf("Indices: %s has %d replicas, want 2", ix.Name, ix.Replicas)
		}
	}
	// Two replicas on the single node: two unassigned rows and a yellow index.
	code, body := rawGet(t, f, "ns", "m", "/_cat/shards/monocle.config?format=json&h=prirep,state")
	if rows, _ := body.([]any); code != 200 || len(rows) != 3 {
		t.Errorf("_cat/shards = %d %v, want a primary and two replicas", code, body)
	}
	rows, err := c.Indices(ctx, "monocle.config")
	if err != nil || len(rows) != 1 || rows[0].Health != "yellow" {
		t.Errorf("Indices(monocle.config) = %+v, %v; want yellow", rows, err)
	}

	for name, put := range map[string]struct {
		path, body string
		code       int
	}{
		"no index matches":  {"/other*/_settings?expand_wildcards=all", `{"index":{"number_of_replicas":1}}`, 404},
		"a negative number": {"/monocle*/_settings?expand_wildcards=all", `{"index":{"number_of_replicas":-1}}`, 400},
		"not JSON":          {"/monocle*/_settings", `replicas`, 400},
	} {
		if code, body := rawRequest(t, f, "ns", "m", "PUT", put.path, put.body); code != put.code {
			t.Errorf("%s: PUT %s = %d %v, want %d", name, put.path, code, body, put.code)
		}
	}
	if got := read(); !maps.Equal(got, all(2)) {
		t.Errorf("replicas after refused PUTs = %v, want 2 on every index", got)
	}
	// A pattern that matches nothing reads as none.
	if got, err := c.IndexReplicas(ctx, "other*"); err != nil || len(got) != 0 {
		t.Errorf("IndexReplicas(other*) = %v, %v; want none", got, err)
	}
}
