package testkit

import (
	"maps"
	"testing"
)

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
