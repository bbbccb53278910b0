package testkit

import (
	"context"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestECKElasticsearchCRD: the ECK module's Elasticsearch CRD is found and is the one CRD of
// its file, and its served v1 version has the fields the operator reads of an Elasticsearch
// (status.phase and status.health, spec.http.tls.selfSignedCertificate.disabled) and those
// the ECK manifest of docs/external-elasticsearch.md sets (spec.auth.fileRealm and
// spec.auth.roles, spec.nodeSets).
func TestECKElasticsearchCRD(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path, err := ECKElasticsearchCRD(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err := DecodeManifests(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(objs) != 1 {
		t.Fatalf("%s holds %d objects, want one CRD", path, len(objs))
	}
	crd := objs[0]
	if crd.GetAPIVersion() != "apiextensions.k8s.io/v1" || crd.GetKind() != "CustomResourceDefinition" || crd.GetName() != "elasticsearches.elasticsearch.k8s.elastic.co" {
		t.Fatalf("%s is %s %s %q, want the apiextensions.k8s.io/v1 CustomResourceDefinition elasticsearches.elasticsearch.k8s.elastic.co", path, crd.GetAPIVersion(), crd.GetKind(), crd.GetName())
	}
	if scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope"); scope != "Namespaced" {
		t.Errorf("scope %q, want Namespaced", scope)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var schema map[string]any
	for _, v := range versions {
		v, _ := v.(map[string]any)
		if name, _, _ := unstructured.NestedString(v, "name"); name != "v1" {
			continue
		}
		if served, _, _ := unstructured.NestedBool(v, "served"); !served {
			t.Fatal("version v1 is not served")
		}
		schema, _, _ = unstructured.NestedMap(v, "schema", "openAPIV3Schema")
	}
	if schema == nil {
		t.Fatalf("no version v1 with a schema among %d versions", len(versions))
	}
	for _, field := range [][]string{
		{"status", "phase"},
		{"status", "health"},
		{"spec", "http", "tls", "selfSignedCertificate", "disabled"},
		{"spec", "auth", "fileRealm"},
		{"spec", "auth", "roles"},
		{"spec", "nodeSets"},
		{"spec", "version"},
	} {
		props := []string{}
		for _, name := range field {
			props = append(props, "properties", name)
		}
		if _, found, _ := unstructured.NestedMap(schema, props...); !found {
			t.Errorf("the v1 schema has no %v", field)
		}
	}
}
