package testkit

import (
	"strings"
	"testing"
)

func TestDecodeManifests(t *testing.T) {
	objs, err := DecodeManifests(strings.NewReader("---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n# only a comment\n---\n{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetName() != "a" || objs[1].GetKind() != "ConfigMap" {
		t.Errorf("got %d objects: %v", len(objs), objs)
	}
	if _, err := DecodeManifests(strings.NewReader("a: [\n")); err == nil {
		t.Error("broken YAML decoded without an error")
	}
}
