// Command release-manifests writes the operator's install as one file, the asset of a
// release: every object that `kubectl apply -f deploy/` applies, in the same order (the
// files in name order, the documents of each file in its order), separated by `---`, with
// the operator image set to <repository>:<version>. `make release-manifests` runs it with the
// Makefile's VERSION:
//
//	go run ./hack/release-manifests -version v0.1.0 [-deploy deploy] [-repository quay.io/change-metrics/monocle-operator] [-o _output/release/monocle-operator.yaml]
//
// The documents are parsed and re-emitted as YAML nodes, so comments and key order are kept
// and only the image's value changes. The output is then decoded as kubectl decodes it and
// compared with deploy/ decoded the same way: anything but the image differing is an error.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// DefaultRepository is the operator image's repository in deploy/.
const DefaultRepository = "quay.io/change-metrics/monocle-operator"

func main() {
	version := flag.String("version", "", "The release, the tag of the operator image (required), such as v0.1.0.")
	deployDir := flag.String("deploy", "deploy", "The directory `kubectl apply -f` would install from.")
	repository := flag.String("repository", DefaultRepository, "The operator image's repository: images of this repository are set to <repository>:<version>.")
	out := flag.String("o", "_output/release/monocle-operator.yaml", "The file to write; - for stdout.")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("unexpected arguments %q", flag.Args()))
	}
	manifest, err := Build(*deployDir, *repository, *version)
	if err != nil {
		fail(err)
	}
	if *out == "-" {
		_, err = os.Stdout.Write(manifest)
	} else {
		err = writeFile(*out, manifest)
	}
	if err != nil {
		fail(err)
	}
	if *out != "-" {
		fmt.Fprintf(os.Stderr, "wrote %s (%s:%s)\n", *out, *repository, *version)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "release-manifests:", err)
	os.Exit(1)
}

// tagPattern is the grammar of an image tag.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// Build returns the release manifest of the files in deployDir with the images of
// repository set to repository:version. version must be a valid image tag other than
// "latest", and at least one image of repository must be found.
func Build(deployDir, repository, version string) ([]byte, error) {
	if !tagPattern.MatchString(version) || version == "latest" {
		return nil, fmt.Errorf("-version %q is not a release tag (such as v0.1.0)", version)
	}
	image := repository + ":" + version
	files, err := DeployFiles(deployDir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .yaml, .yml or .json file in %s", deployDir)
	}

	var buf bytes.Buffer
	fmt.Fprintf(&buf, `# monocle-operator %s: the operator's install, applied with kubectl apply -f.
# Every object of deploy/ at this release, in the order kubectl apply -f deploy/ applies
# them, with the operator image %s.
# Written by make release-manifests (hack/release-manifests): edit deploy/, not this file.

`, version, image)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	var want []map[string]any
	replaced := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs, err := decodeNodes(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, doc := range docs {
			replaced += setImageNode(doc, repository, image)
			if err := enc.Encode(doc); err != nil {
				return nil, fmt.Errorf("%s: encoding: %w", f, err)
			}
		}
		objs, err := DecodeObjects(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(objs) != len(docs) {
			return nil, fmt.Errorf("%s: %d documents, of which kubectl would read %d objects", f, len(docs), len(objs))
		}
		for _, obj := range objs {
			setImageValue(obj, repository, image)
		}
		want = append(want, objs...)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	if replaced == 0 {
		return nil, fmt.Errorf("no image of %s in %s", repository, deployDir)
	}

	if err := checkSame(buf.Bytes(), want); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkSame checks that kubectl reads want from output, object for object: deploy/'s objects
// with the new image.
func checkSame(output []byte, want []map[string]any) error {
	got, err := DecodeObjects(output)
	if err != nil {
		return fmt.Errorf("the output does not parse: %w", err)
	}
	if len(got) != len(want) {
		return fmt.Errorf("the output has %d objects, deploy/ %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Errorf("object %d of the output (%s %s) differs from deploy/'s beyond the image", i+1, got[i]["kind"], name(got[i]))
		}
	}
	return nil
}

// DeployFiles returns the files `kubectl apply -f dir` applies, in its order: the .json,
// .yaml and .yml files directly in dir (not in its subdirectories), by name.
func DeployFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && slices.Contains([]string{".json", ".yaml", ".yml"}, filepath.Ext(e.Name())) {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(files)
	return files, nil
}

// DecodeObjects decodes every non-empty document of b the way kubectl does (YAML 1.1 through
// sigs.k8s.io/yaml, or JSON).
func DecodeObjects(b []byte) ([]map[string]any, error) {
	var out []map[string]any
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var obj map[string]any
		err := decoder.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(obj) > 0 {
			out = append(out, obj)
		}
	}
}

// decodeNodes returns the non-empty documents of b, each of which must be an object: a
// mapping with apiVersion, kind and metadata.name.
func decodeNodes(b []byte) ([]*yaml.Node, error) {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for i := 1; ; i++ {
		doc := &yaml.Node{}
		err := dec.Decode(doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
			continue // an empty document, as between two ---
		}
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("document %d is not a mapping", i)
		}
		for _, path := range [][]string{{"apiVersion"}, {"kind"}, {"metadata", "name"}} {
			if v := lookup(root, path...); v == nil || v.Kind != yaml.ScalarNode || v.Value == "" {
				return nil, fmt.Errorf("document %d has no %s", i, strings.Join(path, "."))
			}
		}
		docs = append(docs, doc)
	}
}

// lookup returns the node at path in the mapping m, nil when there is none.
func lookup(m *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		if m == nil || m.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				next = m.Content[i+1]
			}
		}
		m = next
	}
	return m
}

// setImageNode sets every "image" string under n that names an image of repository to image,
// and returns how many it set.
func setImageNode(n *yaml.Node, repository, image string) int {
	count := 0
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "image" && v.Kind == yaml.ScalarNode && Repository(v.Value) == repository {
				v.Value, v.Tag = image, "!!str"
				count++
			}
		}
	}
	for _, c := range n.Content {
		count += setImageNode(c, repository, image)
	}
	return count
}

// setImageValue is setImageNode on a decoded object.
func setImageValue(v any, repository, image string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "image" && Repository(s) == repository {
				v[k] = image
				continue
			}
			setImageValue(e, repository, image)
		}
	case []any:
		for _, e := range v {
			setImageValue(e, repository, image)
		}
	}
}

// Repository returns ref without its tag and digest: the repository of
// quay.io/change-metrics/monocle-operator:v0.1.0 is quay.io/change-metrics/monocle-operator
// (resources.SplitImage).
func Repository(ref string) string {
	repository, _, _ := resources.SplitImage(ref)
	return repository
}

// name returns obj's namespace/name, or name alone.
func name(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	n, _ := meta["name"].(string)
	if ns, _ := meta["namespace"].(string); ns != "" {
		return ns + "/" + n
	}
	return n
}

// writeFile writes b to path, creating its directory, through a temporary file renamed into
// place so that an interrupted run leaves no half-written manifest.
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".release-manifests-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
