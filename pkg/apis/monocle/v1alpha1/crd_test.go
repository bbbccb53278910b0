package v1alpha1_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestCRDDocumentsEveryField checks that every property of the CRD's schema, which
// controller-gen takes from the Go doc comments, has a description, so that
// `kubectl explain monocle.spec` documents every field.
func TestCRDDocumentsEveryField(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "deploy", "01-crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("%d versions, want 1", len(crd.Spec.Versions))
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	props := root["properties"].(map[string]any)
	var undocumented []string
	var walk func(path string, schema map[string]any)
	walk = func(path string, schema map[string]any) {
		d, _ := schema["description"].(string)
		if d == "" {
			undocumented = append(undocumented, path)
		}
		if strings.Contains(d, "`kubectl explain pod.spec.") {
			// A Pod spec field's schema (hack/crd-descriptions): the Pod's own field
			// documents what is below.
			return
		}
		if p, ok := schema["properties"].(map[string]any); ok {
			for name, sub := range p {
				walk(path+"."+name, sub.(map[string]any))
			}
		}
		if items, ok := schema["items"].(map[string]any); ok {
			if _, ok := items["properties"]; ok {
				for name, sub := range items["properties"].(map[string]any) {
					walk(path+"[]."+name, sub.(map[string]any))
				}
			}
		}
	}
	for _, top := range []string{"spec", "status"} {
		walk(top, props[top].(map[string]any))
	}
	sort.Strings(undocumented)
	if len(undocumented) > 0 {
		t.Errorf("fields without a description (add a doc comment on the field in pkg/apis/monocle/v1alpha1 and run hack/update-codegen.sh): %v", undocumented)
	}
}
