// Command crd-descriptions rewraps the descriptions of a CustomResourceDefinition so that
// `kubectl explain` prints them as paragraphs.
//
// controller-gen copies a field's Go doc comment into its OpenAPI description line by line,
// so the comment's wrapping at ~95 columns ends up as line breaks in mid-sentence, which
// `kubectl explain` prints as they are. This filter reads the CRD (YAML) on stdin and writes
// it to stdout with every "description" joined into paragraphs (see Unwrap); nothing else
// changes but the YAML formatting. hack/update-codegen.sh runs it on controller-gen's output.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crd-descriptions: reading stdin:", err)
		os.Exit(1)
	}
	out, err := Rewrap(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crd-descriptions:", err)
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(out); err != nil {
		fmt.Fprintln(os.Stderr, "crd-descriptions: writing stdout:", err)
		os.Exit(1)
	}
}

// Rewrap returns the YAML documents of in, each after a "---" line, with the string value of
// every mapping key "description", at any depth, replaced by Unwrap of it. The documents are
// written as controller-gen writes them (sigs.k8s.io/yaml: keys sorted, long strings as
// literal blocks), so nothing but the descriptions changes. Its error is a YAML syntax error
// of in.
func Rewrap(in []byte) ([]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(in)))
	var out bytes.Buffer
	for {
		doc, err := r.Read()
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		var obj any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, err
		}
		if obj == nil {
			continue
		}
		data, err := yaml.Marshal(rewrap(obj))
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	return out.Bytes(), nil
}

// podSpecFields are the properties whose schema is a Kubernetes Pod spec field's (core/v1
// Affinity, Toleration, TopologySpreadConstraint), copied by controller-gen with every
// upstream description into each component's placement. The descriptions below such a
// property are dropped and its own names the Pod's field, which `kubectl explain` documents:
// with them, the CRD's JSON came within a few KiB of the 256 KiB that `kubectl apply` can
// store in its last-applied-configuration annotation (k8s.io/apimachinery
// TotalAnnotationSizeLimitB), and `kubectl apply -f deploy/` would fail.
var podSpecFields = []string{"affinity", "tolerations", "topologySpreadConstraints"}

// PodSpecFieldNote ends the description of a property of podSpecFields.
const PodSpecFieldNote = "Its fields are those of the Pod's field of the same name: `kubectl explain pod.spec.%s` documents them."

// rewrap replaces, in the decoded YAML v, every string under a "description" key by Unwrap
// of it, drops the descriptions below the properties of podSpecFields, and returns v.
func rewrap(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			for _, name := range podSpecFields {
				if field, ok := props[name].(map[string]any); ok {
					for k, x := range field {
						if k != "description" {
							field[k] = dropDescriptions(x)
						}
					}
					d, _ := field["description"].(string)
					field["description"] = strings.TrimSpace(d + "\n\n" + fmt.Sprintf(PodSpecFieldNote, name))
				}
			}
		}
		for k, x := range v {
			if s, ok := x.(string); ok && k == "description" {
				v[k] = Unwrap(s)
				continue
			}
			v[k] = rewrap(x)
		}
	case []any:
		for i := range v {
			v[i] = rewrap(v[i])
		}
	}
	return v
}

// dropDescriptions removes every "description" key from the decoded YAML v, and returns v.
func dropDescriptions(v any) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "description")
		for k, x := range v {
			v[k] = dropDescriptions(x)
		}
	case []any:
		for i := range v {
			v[i] = dropDescriptions(v[i])
		}
	}
	return v
}

// keepBreak matches a line that must start on a line of its own: an item of a list ("- ",
// "* ", "+ ", "1. ", "1) ") or an indented (preformatted) line.
var keepBreak = regexp.MustCompile(`^(\s+\S|[-*+] |\d+[.)] )`)

// Unwrap joins the lines of s into paragraphs: a line is joined to the one before it with a
// space, except after a blank line (paragraphs stay separated by one empty line) and when it
// starts a list item or is indented (keepBreak), which keep their line break. Trailing
// spaces of lines are dropped.
func Unwrap(s string) string {
	var b strings.Builder
	blank := false
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, " \t")
		switch {
		case line == "":
			blank = true
			continue
		case i == 0 || b.Len() == 0:
		case blank:
			b.WriteString("\n\n")
		case keepBreak.MatchString(line):
			b.WriteString("\n")
		default:
			b.WriteString(" ")
		}
		blank = false
		b.WriteString(line)
	}
	return b.String()
}
