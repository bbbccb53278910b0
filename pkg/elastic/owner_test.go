package elastic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

var owner = elastic.Owner{UID: "u-1", Namespace: "team-a", Name: "monocle"}

// TestCreateOwner: one PUT of the owner index, with one shard, no replica and the owner in the
// mapping's _meta; an existing index is IsAlreadyExists and nothing else is.
func TestCreateOwner(t *testing.T) {
	testWrites(t, "PUT", "/"+elastic.OwnerIndex, map[string]callCase[struct{}]{
		"created":          {reply: reply{200, `{"acknowledged":true,"shards_acknowledged":true,"index":"monocle-operator.owner"}`}},
		"not acknowledged": {reply: reply{200, `{"acknowledged":false,"shards_acknowledged":false,"index":"monocle-operator.owner"}`}, wantErr: "not acknowledged"},
		"exists": {reply: reply{400, `{"error":{"type":"resource_already_exists_exception","reason":"index [monocle-operator.owner/x] already exists"},"status":400}`},
			wantErr: "400"},
		"forbidden": {reply: reply{403, `{"error":{"type":"security_exception","reason":"action [indices:admin/create] is unauthorized"},"status":403}`},
			wantErr: "403"},
	}, func(c elastic.Client, ctx context.Context) error {
		err := c.CreateOwner(ctx, owner)
		if want := err != nil && strings.Contains(err.Error(), "resource_already_exists_exception"); elastic.IsAlreadyExists(err) != want {
			t.Errorf("IsAlreadyExists(%v) = %v", err, !want)
		}
		return err
	}, func(t *testing.T, r elastictest.Request) {
		want := `{"settings":{"number_of_replicas":0,"number_of_shards":1},"mappings":{"_meta":{"uid":"u-1","namespace":"team-a","name":"monocle"}}}`
		if string(r.Body) != want || len(r.Query) != 0 {
			t.Errorf("body %s query %v, want %s and no query", r.Body, r.Query, want)
		}
	})
}

// TestOwner: the owner is read from the _meta of the index's mapping; a missing index is
// ErrNotFound, an index without _meta the zero Owner, and fields of another type are left
// out.
func TestOwner(t *testing.T) {
	testReads(t, "GET", "/"+elastic.OwnerIndex+"/_mapping", map[string]callCase[elastic.Owner]{
		"recorded": {reply: reply{200, `{"monocle-operator.owner":{"mappings":{"_meta":{"uid":"u-1","namespace":"team-a","name":"monocle"}}}}`},
			want: owner},
		"no _meta":        {reply: reply{200, `{"monocle-operator.owner":{"mappings":{}}}`}, want: elastic.Owner{}},
		"a number as uid": {reply: reply{200, `{"monocle-operator.owner":{"mappings":{"_meta":{"uid":7,"name":"monocle"}}}}`}, want: elastic.Owner{Name: "monocle"}},
		"another index":   {reply: reply{200, `{"other":{"mappings":{}}}`}, wantErr: "no mapping of monocle-operator.owner"},
		"not an object":   {reply: reply{200, `[]`}, wantErr: "decoding <index>/_mapping"},
		"missing": {reply: reply{404, `{"error":{"type":"index_not_found_exception","reason":"no such index [monocle-operator.owner]"},"status":404}`},
			wantErr: "404"},
	}, func(c elastic.Client, ctx context.Context) (elastic.Owner, error) {
		return c.Owner(ctx)
	}, nil)
}

// TestSetOwner: one PUT of the mapping with the owner as _meta.
func TestSetOwner(t *testing.T) {
	testWrites(t, "PUT", "/"+elastic.OwnerIndex+"/_mapping", map[string]callCase[struct{}]{
		"acknowledged":     {reply: reply{200, `{"acknowledged":true}`}},
		"not acknowledged": {reply: reply{200, `{"acknowledged":false}`}, wantErr: "not acknowledged"},
		"missing":          {reply: reply{404, `{"error":{"type":"index_not_found_exception","reason":"no such index"},"status":404}`}, wantErr: "404"},
	}, func(c elastic.Client, ctx context.Context) error {
		return c.SetOwner(ctx, owner)
	}, func(t *testing.T, r elastictest.Request) {
		if want := `{"_meta":{"uid":"u-1","namespace":"team-a","name":"monocle"}}`; string(r.Body) != want {
			t.Errorf("body %s, want %s", r.Body, want)
		}
	})
}

// TestOwnerRefusesNoUID: an owner without a UID is never recorded, and nothing is sent.
func TestOwnerRefusesNoUID(t *testing.T) {
	srv := elastictest.NewServer(t)
	c := newClient(t, srv)
	if err := c.CreateOwner(context.Background(), elastic.Owner{Namespace: "a", Name: "b"}); err == nil {
		t.Error("CreateOwner without a UID: no error")
	}
	if err := c.SetOwner(context.Background(), elastic.Owner{Namespace: "a", Name: "b"}); err == nil {
		t.Error("SetOwner without a UID: no error")
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Errorf("sent %v", reqs)
	}
}

// TestOwnerIndexIsNotMonocles: the owner index is none of Monocle's indices.
func TestOwnerIndexIsNotMonocles(t *testing.T) {
	for name, want := range map[string]bool{elastic.OwnerIndex: false, elastic.ConfigIndex: true, elastic.WorkspaceIndexPrefix + "demo": true} {
		if got := elastic.IsMonocleIndex(name); got != want {
			t.Errorf("IsMonocleIndex(%q) = %v, want %v", name, got, want)
		}
	}
}
