package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// deployDir is the repository's deploy/, from this package's directory.
var deployDir = filepath.Join("..", "..", "deploy")

// decodeUnstructured decodes every non-empty document of b as kubectl does
// (testkit.DecodeManifests), independently of the code under test.
func decodeUnstructured(t *testing.T, name string, b []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := testkit.DecodeManifests(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return objs
}

func key(obj *unstructured.Unstructured) string {
	return obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// TestBuild checks the release manifest of the repository's deploy/: it parses (as kubectl
// and as YAML 1.2 read it), holds every object of deploy/ once, in apply order and unchanged
// but for the operator image, which is the versioned one.
func TestBuild(t *testing.T) {
	const version = "v9.9.9"
	out, err := Build(deployDir, DefaultRepository, version)
	if err != nil {
		t.Fatal(err)
	}

	// deploy/ as kubectl apply -f deploy/ reads it: its top-level files by name.
	files, err := filepath.Glob(filepath.Join(deployDir, "*.y*ml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var want []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, decodeUnstructured(t, f, b)...)
	}
	got := decodeUnstructured(t, "output", out)
	keys := func(objs []*unstructured.Unstructured) []string {
		var k []string
		for _, o := range objs {
			k = append(k, key(o))
		}
		return k
	}
	if !slices.Equal(keys(got), keys(want)) {
		t.Fatalf("the output holds\n%s\ndeploy/ holds, in apply order,\n%s", strings.Join(keys(got), "\n"), strings.Join(keys(want), "\n"))
	}
	seen := map[string]bool{}
	for _, k := range keys(got) {
		if seen[k] {
			t.Errorf("%s appears twice", k)
		}
		seen[k] = true
	}
	for _, kind := range []string{"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment"} {
		if !slices.ContainsFunc(got, func(o *unstructured.Unstructured) bool { return o.GetKind() == kind }) {
			t.Errorf("the output has no %s", kind)
		}
	}

	images := 0
	for i, g := range got {
		w := want[i].DeepCopy()
		if g.GetKind() == "Deployment" && g.GetName() == "monocle-operator" {
			containers, _, _ := unstructured.NestedSlice(g.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				image, _, _ := unstructured.NestedString(c.(map[string]any), "image")
				if image != DefaultRepository+":"+version {
					t.Errorf("container image %q, want %s:%s", image, DefaultRepository, version)
				}
				images++
			}
			// Only the image may differ: put the output's in the expected object.
			if err := unstructured.SetNestedSlice(w.Object, containers, "spec", "template", "spec", "containers"); err != nil {
				t.Fatal(err)
			}
			wantContainers, _, _ := unstructured.NestedSlice(want[i].Object, "spec", "template", "spec", "containers")
			for j := range wantContainers {
				delete(wantContainers[j].(map[string]any), "image")
				delete(containers[j].(map[string]any), "image")
			}
			if !equality.Semantic.DeepEqual(wantContainers, containers) {
				t.Errorf("the operator's containers differ beyond the image")
			}
		}
		if !equality.Semantic.DeepEqual(g.Object, w.Object) {
			t.Errorf("%s differs from deploy/'s", key(g))
		}
	}
	if images != 1 {
		t.Errorf("the operator Deployment has %d containers, want 1", images)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if _, tag, ok := strings.Cut(line, DefaultRepository+":"); ok && tag != version {
			t.Errorf("the output names another tag of the operator image: %s", line)
		}
	}

	// The YAML 1.2 parsers (yaml.v3) read as many documents, separated by ---.
	dec := yaml.NewDecoder(bytes.NewReader(out))
	docs := 0
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("yaml.v3 cannot read the output: %v", err)
		}
		docs++
	}
	if docs != len(want) {
		t.Errorf("yaml.v3 reads %d documents, want %d", docs, len(want))
	}
	if n := strings.Count(string(out), "\n---\n"); n != len(want)-1 {
		t.Errorf("%d --- separators for %d documents", n, len(want))
	}
	if !strings.HasPrefix(string(out), "# monocle-operator "+version+":") {
		t.Errorf("the output does not start with its header: %.100q", out)
	}
}

// TestBuildErrors checks that Build refuses what would make a wrong release manifest.
func TestBuildErrors(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: monocle-operator
spec:
  template:
    spec:
      containers:
      - name: operator
        image: ` + DefaultRepository + `:v0.0.1
`
	for name, c := range map[string]struct {
		files   map[string]string
		version string
		want    string
	}{
		"no version":            {files: map[string]string{"a.yaml": deployment}, version: "", want: "not a release tag"},
		"latest":                {files: map[string]string{"a.yaml": deployment}, version: "latest", want: "not a release tag"},
		"not a tag":             {files: map[string]string{"a.yaml": deployment}, version: "v1 2", want: "not a release tag"},
		"no file":               {files: map[string]string{"README.md": "x"}, version: "v1", want: "no .yaml"},
		"no operator image":     {files: map[string]string{"a.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"}, version: "v1", want: "no image of"},
		"document without kind": {files: map[string]string{"a.yaml": deployment, "b.yaml": "apiVersion: v1\nmetadata:\n  name: x\n"}, version: "v1", want: "has no kind"},
		"not a mapping":         {files: map[string]string{"a.yaml": deployment + "---\n- a\n"}, version: "v1", want: "not a mapping"},
		"not YAML":              {files: map[string]string{"a.yaml": deployment + "---\nkind: [\n"}, version: "v1", want: "a.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, content := range c.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Build(dir, DefaultRepository, c.version)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Build: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestBuildOrderAndEmptyDocuments checks the apply order (file names, then documents), that
// subdirectories, other files and empty documents are left out, and that images of other
// repositories and the comments are kept.
func TestBuildOrderAndEmptyDocuments(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"10-b.yaml":            "---\n# the operator\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: op\nspec:\n  template:\n    spec:\n      containers:\n      - name: operator\n        image: " + DefaultRepository + "@sha256:0123\n      - name: sidecar\n        image: example.com/sidecar:1.0\n---\n",
		"02-a.yml":             "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  enabled: \"true\"\n",
		"01.json":              `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}`,
		"notes.txt":            "not a manifest",
		"samples/monocle.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n",
	}
	for f, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := Build(dir, DefaultRepository, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range decodeUnstructured(t, "output", out) {
		got = append(got, key(o))
	}
	if want := []string{"Namespace /ns", "ServiceAccount /sa", "ConfigMap /cm", "Deployment /op"}; !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	for _, s := range []string{
		"image: " + DefaultRepository + ":v1.2.3\n", "image: example.com/sidecar:1.0\n",
		"# the operator\n", `enabled: "true"`,
	} {
		if !strings.Contains(string(out), s) {
			t.Errorf("the output lacks %q:\n%s", s, out)
		}
	}
}

// TestCheckSame checks the guard against a re-emitted document that kubectl would read
// differently.
func TestCheckSame(t *testing.T) {
	out := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n")
	want := []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm"}, "data": map[string]any{"a": "1"}}}
	if err := checkSame(out, want); err != nil {
		t.Errorf("checkSame: %v", err)
	}
	want[0]["data"] = map[string]any{"a": float64(1)}
	if err := checkSame(out, want); err == nil || !strings.Contains(err.Error(), "ConfigMap cm") {
		t.Errorf("checkSame: %v, want a difference on ConfigMap cm", err)
	}
	if err := checkSame(out, append(want, want[0])); err == nil {
		t.Error("checkSame accepts a missing object")
	}
}

func TestRepository(t *testing.T) {
	for ref, want := range map[string]string{
		"quay.io/change-metrics/monocle-operator:v0.1.0":        "quay.io/change-metrics/monocle-operator",
		"quay.io/change-metrics/monocle-operator":               "quay.io/change-metrics/monocle-operator",
		"quay.io/change-metrics/monocle-operator@sha256:abc":    "quay.io/change-metrics/monocle-operator",
		"quay.io/change-metrics/monocle-operator:v1@sha256:abc": "quay.io/change-metrics/monocle-operator",
		"localhost:5000/monocle-operator":                       "localhost:5000/monocle-operator",
		"localhost:5000/monocle-operator:dev":                   "localhost:5000/monocle-operator",
	} {
		if got := Repository(ref); got != want {
			t.Errorf("Repository(%q) = %q, want %q", ref, got, want)
		}
	}
}

// TestWriteFile checks that the output's directory is created and no temporary file stays.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "_output", "release", "monocle-operator.yaml")
	for _, content := range []string{"first\n", "second\n"} {
		if err := writeFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Errorf("read %q, %v; want %q", b, err, content)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files, want 1", len(entries))
	}
}
