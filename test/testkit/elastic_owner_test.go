package testkit

import (
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// TestFakeOwnerPerHost: the owner record is kept per cluster host, a host spelled in capitals
// or with the trailing dot of a fully qualified name being the same cluster: the second
// creation is refused as existing and reads the first owner; another host has its own.
func TestFakeOwnerPerHost(t *testing.T) {
	f := startFake(t)
	base := f.Transport()
	t.Cleanup(base.CloseIdleConnections)
	client := func(url string) elastic.Client {
		c, err := elastic.New(url, base)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := t.Context()
	a, b := elastic.Owner{UID: "a", Namespace: "team-a", Name: "m"}, elastic.Owner{UID: "b", Namespace: "team-b", Name: "m"}
	if err := client("http://search.example.com:9200").CreateOwner(ctx, a); err != nil {
		t.Fatal(err)
	}
	second := client("http://SEARCH.example.com.:9200")
	if err := second.CreateOwner(ctx, b); !elastic.IsAlreadyExists(err) {
		t.Errorf("second creation: %v, want resource_already_exists_exception", err)
	}
	if got, err := second.Owner(ctx); err != nil || got != a {
		t.Errorf("owner read by the other spelling: %+v, %v; want %+v", got, err, a)
	}
	if err := second.SetOwner(ctx, b); err != nil {
		t.Fatal(err)
	}
	if meta, ok := f.Cluster("search.example.com").Meta(elastic.OwnerIndex); !ok || meta["uid"] != "b" || meta["namespace"] != "team-b" {
		t.Errorf("recorded %v (index exists: %v), want b's", meta, ok)
	}
	other := client("http://other.example.com:9200")
	if _, err := other.Owner(ctx); !elastic.IsNotFound(err) {
		t.Errorf("another host's owner: %v, want not found", err)
	}
	if err := other.CreateOwner(ctx, a); err != nil {
		t.Errorf("another host: %v", err)
	}
}
