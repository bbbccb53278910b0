package testkit

import (
	"context"
	"os"
	"path/filepath"
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
	expectServedFields(t, path, "elasticsearches.elasticsearch.k8s.elastic.co", "v1", [][]string{
		{"status", "phase"},
		{"status", "health"},
		{"spec", "http", "tls", "selfSignedCertificate", "disabled"},
		{"spec", "auth", "fileRealm"},
		{"spec", "auth", "roles"},
		{"spec", "nodeSets"},
		{"spec", "version"},
	})
}

// TestReferenceGrantCRD: the Gateway API module's ReferenceGrant CRD is found and is the one
// CRD of its file, and its served v1beta1 version, the one the operator reads, has the fields
// it reads (spec.from, spec.to).
func TestReferenceGrantCRD(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	crds, err := FindOptionalCRDs(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	expectServedFields(t, crds.ReferenceGrant, ReferenceGrantCRDName, "v1beta1", [][]string{{"spec", "from"}, {"spec", "to"}})
}

// expectServedFields checks that the file at path holds one object, the
// apiextensions.k8s.io/v1 CustomResourceDefinition name of a namespaced kind, whose version
// is served with a schema that has each of fields.
func expectServedFields(t *testing.T, path, name, version string, fields [][]string) {
	t.Helper()
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
	if crd.GetAPIVersion() != "apiextensions.k8s.io/v1" || crd.GetKind() != "CustomResourceDefinition" || crd.GetName() != name {
		t.Fatalf("%s is %s %s %q, want the apiextensions.k8s.io/v1 CustomResourceDefinition %s", path, crd.GetAPIVersion(), crd.GetKind(), crd.GetName(), name)
	}
	if scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope"); scope != "Namespaced" {
		t.Errorf("scope %q, want Namespaced", scope)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var schema map[string]any
	for _, v := range versions {
		v, _ := v.(map[string]any)
		if n, _, _ := unstructured.NestedString(v, "name"); n != version {
			continue
		}
		if served, _, _ := unstructured.NestedBool(v, "served"); !served {
			t.Fatalf("version %s is not served", version)
		}
		schema, _, _ = unstructured.NestedMap(v, "schema", "openAPIV3Schema")
	}
	if schema == nil {
		t.Fatalf("no version %s with a schema among %d versions", version, len(versions))
	}
	for _, field := range fields {
		props := []string{}
		for _, name := range field {
			props = append(props, "properties", name)
		}
		if _, found, _ := unstructured.NestedMap(schema, props...); !found {
			t.Errorf("the %s schema has no %v", version, field)
		}
	}
}
