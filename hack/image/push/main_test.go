package main

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPushToARegistry pushes a two-platform index from a layout shaped as make image writes it
// to go-containerregistry's in-process registry, and reads it back: same digest, same images.
func TestPushToARegistry(t *testing.T) {
	index, err := random.Index(256, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendIndex(index, layout.WithAnnotations(map[string]string{refName: "v0.1.0"})); err != nil {
		t.Fatal(err)
	}
	want, err := index.Digest()
	if err != nil {
		t.Fatal(err)
	}

	server := httptest.NewServer(registry.New())
	defer server.Close()
	u, err := url.Parse(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	repo := u.Host + "/change-metrics/monocle-operator"
	ref, err := push(context.Background(), dir, repo)
	if err != nil {
		t.Fatal(err)
	}
	if ref != repo+":v0.1.0@"+want.String() {
		t.Errorf("push returned %s", ref)
	}
	pulled, err := remote.Index(mustRef(t, repo+":v0.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pulled.Digest()
	if err != nil || got != want {
		t.Errorf("the registry's index has digest %v (%v), want %v", got, err, want)
	}
	m, err := pulled.IndexManifest()
	if err != nil || len(m.Manifests) != 2 {
		t.Fatalf("pulled index: %+v, %v", m, err)
	}
	for _, d := range m.Manifests {
		if _, err := remote.Image(mustRef(t, repo+"@"+d.Digest.String())); err != nil {
			t.Errorf("image %s was not pushed: %v", d.Digest, err)
		}
	}

	if _, err := push(context.Background(), t.TempDir(), repo); err == nil || !strings.Contains(err.Error(), "reading the layout") {
		t.Errorf("an empty directory: %v", err)
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}
