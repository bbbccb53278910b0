package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	sigsyaml "sigs.k8s.io/yaml"
)

func TestUnwrap(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"one line", "A field.", "A field."},
		{"wrapped sentence", "StorageSize is the size of the\nElasticsearch data volume.", "StorageSize is the size of the Elasticsearch data volume."},
		{"paragraphs", "First line\ncontinued.\n\nSecond paragraph.", "First line continued.\n\nSecond paragraph."},
		{"several blank lines", "One.\n\n\n\nTwo.", "One.\n\nTwo."},
		{"list", "Values:\n- a, the\n  first\n- b", "Values:\n- a, the\n  first\n- b"},
		{"numbered list", "Steps:\n1. stop\n2) start", "Steps:\n1. stop\n2) start"},
		{"indented code", "Example:\n  kubectl get monocles\nthen more.", "Example:\n  kubectl get monocles then more."},
		{"trailing spaces and newline", "A \nB\n", "A B"},
		{"hyphenated word at line start", "a well-\nknown value", "a well- known value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unwrap(tc.in); got != tc.want {
				t.Errorf("Unwrap(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRewrapKeepsEverythingButDescriptions(t *testing.T) {
	in := "apiVersion: v1\nkind: X\nspec:\n  description: |-\n    a b\n    c\n  properties:\n    description:\n      type: string\n      description: not\n        wrapped\n  items:\n  - description: \"x\\ny\"\n    pattern: ^a$\n"
	out, err := Rewrap([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	if err := yaml.Unmarshal([]byte("apiVersion: v1\nkind: X\nspec:\n  description: a b c\n  properties:\n    description:\n      type: string\n      description: not wrapped\n  items:\n  - description: x y\n    pattern: ^a$\n"), &want); err != nil {
		t.Fatal(err)
	}
	if !equalYAML(got, want) {
		t.Errorf("Rewrap =\n%s\nwant the same as\n%v", out, want)
	}
}

// TestCRDReadsAsParagraphs checks the committed CRD: no description breaks a line in
// mid-sentence, which kubectl explain would print as is.
func TestCRDReadsAsParagraphs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "01-crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	descriptions := 0
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == "description" && v.Kind == yaml.ScalarNode {
					descriptions++
					if v.Value != Unwrap(v.Value) {
						t.Errorf("%s: description has line breaks in mid-paragraph (run make generate):\n%s", path, v.Value)
					}
					continue
				}
				walk(v, path+"."+k.Value)
			}
			return
		}
		for _, c := range n.Content {
			walk(c, path)
		}
	}
	walk(&doc, "")
	if descriptions < 20 {
		t.Errorf("found %d descriptions in the CRD, expected its whole schema", descriptions)
	}
}

func equalYAML(a, b any) bool {
	x, err1 := yaml.Marshal(a)
	y, err2 := yaml.Marshal(b)
	return err1 == nil && err2 == nil && strings.TrimSpace(string(x)) == strings.TrimSpace(string(y))
}

// TestPodSpecFieldsKeepOnlyTheirOwnDescription checks that the schema of a Pod spec field
// keeps its own description, with the note naming the Pod's field, and loses those below it,
// while the rest of its schema stays.
func TestPodSpecFieldsKeepOnlyTheirOwnDescription(t *testing.T) {
	in := "spec:\n  properties:\n    affinity:\n      description: Affinity of the pods.\n      type: object\n      properties:\n        nodeAffinity:\n          description: long upstream text\n          type: object\n    title:\n      description: kept\n      type: string\n"
	out, err := Rewrap([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	note := fmt.Sprintf(PodSpecFieldNote, "affinity")
	if err := yaml.Unmarshal([]byte("spec:\n  properties:\n    affinity:\n      description: \"Affinity of the pods.\\n\\n"+note+"\"\n      type: object\n      properties:\n        nodeAffinity:\n          type: object\n    title:\n      description: kept\n      type: string\n"), &want); err != nil {
		t.Fatal(err)
	}
	if !equalYAML(got, want) {
		t.Errorf("Rewrap =\n%s\nwant the same as\n%v", out, want)
	}
}

// TestCRDFitsKubectlApply checks that the committed CRD, as JSON, fits in the
// last-applied-configuration annotation that `kubectl apply -f deploy/` writes: the API server
// refuses an object whose annotations exceed TotalAnnotationSizeLimitB. A quarter of it is
// kept free for the fields to come.
func TestCRDFitsKubectlApply(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "01-crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := sigsyaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if limit := apivalidation.TotalAnnotationSizeLimitB * 3 / 4; len(js) > limit {
		t.Errorf("the CRD is %d bytes of JSON, over %d (3/4 of the %d bytes kubectl apply can store in its annotation)",
			len(js), limit, apivalidation.TotalAnnotationSizeLimitB)
	}
	t.Logf("the CRD is %d bytes of JSON; kubectl apply can store %d", len(js), apivalidation.TotalAnnotationSizeLimitB)
}
