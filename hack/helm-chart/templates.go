package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The chart's named templates (templates/_helpers.tpl) the generated templates use.
const (
	fullname       = `{{ include "monocle-operator.fullname" . }}`
	labels         = `{{- include "monocle-operator.labels" . | nindent +0 }}`
	selectorLabels = `{{- include "monocle-operator.selectorLabels" . | nindent +0 }}`
	// deployName is the name deploy/ gives the operator's objects: the chart names them after
	// the release instead (fullname), keeping what follows it (-metrics).
	deployName = "monocle-operator"
)

// holeKind says where a hole's template text goes.
type holeKind int

const (
	// value: the text replaces the scalar at the path, on its key's line.
	value holeKind = iota
	// block: the lines of the text replace the value at the path, under its key.
	block
	// after: the lines of the text follow the key (and value) at the path, at its depth.
	after
	// first, last: the lines of the text open, or close, the mapping at the path.
	first
	last
)

// A hole is a place of an object of deploy/ where the chart's template has template text of
// its own (the chart's values) instead of deploy/'s YAML.
type hole struct {
	kind holeKind
	// path is the keys (and sequence indexes) from the object's root, dot-separated.
	path string
	// text is template text. In the lines of a block, after, first or last hole,
	// "nindent +<n>" becomes "nindent <depth+n>", depth being the indentation the lines are
	// written at, so that the YAML a template function prints is indented to fit.
	text string
}

// chartObject is an object of a file of deploy/ that a template of the chart renders.
type chartObject struct {
	kind, name string
	// when is the condition of a template if action the object is rendered under; "" for
	// always.
	when string
	// holes are the places where the template differs from deploy/, beyond the metadata that
	// every object takes from the release (metaHoles).
	holes []hole
}

// chartTemplate is a template of the chart generated from a file of deploy/.
type chartTemplate struct {
	// file is the template's file in the chart's templates/; source is the file of deploy/.
	file, source string
	objects      []chartObject
}

// pod and container are the paths of the operator's pod spec and container in its Deployment.
const (
	pod       = "spec.template.spec."
	container = pod + "containers.0."
)

// templates are the chart's templates generated from deploy/: the objects of deploy/ with the
// chart's values in place of deploy/'s settings, so that the chart renders deploy/'s objects
// and cannot drift from them. At the default values the chart renders deploy/'s Deployment,
// Service and PodDisruptionBudget, with the release's name and labels, an explicit
// imagePullPolicy and every flag the values set (at the operator's defaults).
var templates = []chartTemplate{{
	file: "deployment.yaml", source: "03-operator.yaml",
	objects: []chartObject{{
		kind: "Deployment", name: deployName,
		holes: []hole{
			{value, "spec.replicas", "{{ .Values.replicas }}"},
			{block, "spec.selector.matchLabels", selectorLabels},
			{block, "spec.template.metadata.labels", labels + `
{{- with .Values.podLabels }}
{{- toYaml . | nindent +0 }}
{{- end }}`},
			{after, "spec.template.metadata.labels", `{{- with .Values.podAnnotations }}
annotations:
  {{- toYaml . | nindent +2 }}
{{- end }}`},
			{value, pod + "serviceAccountName", fullname},
			{after, pod + "serviceAccountName", `{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent +2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}`},
			// affinity replaces deploy/'s spreading of the replicas over nodes.
			{first, pod + "affinity", `{{- if .Values.affinity }}
{{- toYaml .Values.affinity | nindent +0 }}
{{- else }}`},
			{block, pod + "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.0.podAffinityTerm.labelSelector.matchLabels", selectorLabels},
			{last, pod + "affinity", "{{- end }}"},
			{after, pod + "affinity", `{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent +2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent +2 }}
{{- end }}`},
			{value, container + "image", `{{ include "monocle-operator.image" . | quote }}`},
			{after, container + "image", "imagePullPolicy: {{ .Values.image.pullPolicy }}"},
			{block, container + "args", `- --http-address=:{{ .Values.metrics.port }}
- --workers={{ .Values.workers }}
- --kube-api-qps={{ .Values.kubeAPIQPS }}
- --kube-api-burst={{ .Values.kubeAPIBurst }}
- --cross-namespace-references={{ .Values.crossNamespaceReferences }}
- --rollout-strategy={{ .Values.rollout.strategy }}
- --rollout-max-wave={{ .Values.rollout.maxWave }}
- --rollout-soak={{ .Values.rollout.soak }}
- --rollout-deadline={{ .Values.rollout.deadline }}
- --leader-elect={{ .Values.leaderElection.enabled }}
- --leader-election-id=` + fullname + `
- --leader-election-lease-duration={{ .Values.leaderElection.leaseDuration }}
- --leader-election-renew-deadline={{ .Values.leaderElection.renewDeadline }}
- --leader-election-retry-period={{ .Values.leaderElection.retryPeriod }}
- --logging-format={{ .Values.logging.format }}
- -v={{ .Values.logging.verbosity }}
{{- with .Values.watchNamespaces }}
- --namespaces={{ join "," . }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . }}
{{- end }}`},
			{value, container + "ports.0.containerPort", "{{ .Values.metrics.port }}"},
			{block, container + "resources", "{{- toYaml .Values.resources | nindent +0 }}"},
		},
	}, {
		kind: "Service", name: deployName + "-metrics", when: ".Values.metrics.service.enabled",
		holes: []hole{
			{block, "spec.selector", selectorLabels},
			{value, "spec.ports.0.port", "{{ .Values.metrics.port }}"},
		},
	}, {
		kind: "PodDisruptionBudget", name: deployName, when: "gt (int .Values.replicas) 1",
		holes: []hole{{block, "spec.selector.matchLabels", selectorLabels}},
	}},
}, {
	file: "serviceaccount.yaml", source: "02-rbac.yaml",
	objects: []chartObject{{kind: "ServiceAccount", name: deployName}},
}}

// metaHoles are the holes of every object: its name is the release's (fullname, with what
// follows deploy/'s name), its namespace the release's, its labels the release's.
func metaHoles(obj *yaml.Node, name string) ([]hole, error) {
	suffix, ok := strings.CutPrefix(name, deployName)
	if !ok {
		return nil, fmt.Errorf("the name %s does not start with %s", name, deployName)
	}
	holes := []hole{{value, "metadata.name", fullname + suffix}}
	if _, _, err := find(obj, "metadata.namespace"); err == nil {
		holes = append(holes, hole{value, "metadata.namespace", "{{ .Release.Namespace }}"})
	}
	if _, _, err := find(obj, "metadata.labels"); err == nil {
		holes = append(holes, hole{block, "metadata.labels", labels})
	}
	return holes, nil
}

// renderTemplate returns the template t generated from the file of deploy/ source holds.
func renderTemplate(t chartTemplate, source []byte) ([]byte, error) {
	docs, err := decodeDocs(source)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.source, err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "{{- /* Generated by hack/helm-chart from deploy/%s: do not edit; run make generate. */ -}}\n", t.source)
	for i, o := range t.objects {
		obj, err := objectNode(docs, o.kind, o.name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.source, err)
		}
		meta, err := metaHoles(obj, o.name)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", t.source, o.kind, o.name, err)
		}
		text, err := fill(obj, append(meta, o.holes...))
		if err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", t.source, o.kind, o.name, err)
		}
		if o.when != "" {
			fmt.Fprintf(&out, "{{- if %s }}\n", o.when)
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(text)
		if o.when != "" {
			out.WriteString("{{- end }}\n")
		}
	}
	return out.Bytes(), nil
}

// decodeDocs returns the YAML documents of b (separated by "---" lines, as operatorRules
// reads them), without their comments: deploy/'s comments speak of deploy/.
func decodeDocs(b []byte) ([]*yaml.Node, error) {
	var docs []*yaml.Node
	for _, d := range bytes.Split(b, []byte("\n---\n")) {
		doc := &yaml.Node{}
		if err := yaml.Unmarshal(d, doc); err != nil {
			return nil, err
		}
		dropComments(doc)
		docs = append(docs, doc)
	}
	return docs, nil
}

func dropComments(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		dropComments(c)
	}
}

// objectNode returns the mapping of the object of docs with the given kind and name.
func objectNode(docs []*yaml.Node, kind, name string) (*yaml.Node, error) {
	for _, doc := range docs {
		if len(doc.Content) != 1 {
			continue
		}
		obj := doc.Content[0]
		if scalarAt(obj, "kind") == kind && scalarAt(obj, "metadata.name") == name {
			return obj, nil
		}
	}
	return nil, fmt.Errorf("no %s %s", kind, name)
}

// scalarAt returns the scalar at path in n, "" if there is none.
func scalarAt(n *yaml.Node, path string) string {
	m, i, err := find(n, path)
	if err != nil || m.Content[i+1].Kind != yaml.ScalarNode {
		return ""
	}
	return m.Content[i+1].Value
}

// find returns the mapping that holds the last key of path (dot-separated keys and sequence
// indexes from n) and the index of that key in the mapping's Content, its value following it.
func find(n *yaml.Node, path string) (*yaml.Node, int, error) {
	keys := strings.Split(path, ".")
	for depth, k := range keys {
		switch n.Kind {
		case yaml.MappingNode:
			i := 0
			for i < len(n.Content) && n.Content[i].Value != k {
				i += 2
			}
			if i >= len(n.Content) {
				return nil, 0, fmt.Errorf("no %s", strings.Join(keys[:depth+1], "."))
			}
			if depth == len(keys)-1 {
				return n, i, nil
			}
			n = n.Content[i+1]
		case yaml.SequenceNode:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(n.Content) || depth == len(keys)-1 {
				return nil, 0, fmt.Errorf("no item %s", strings.Join(keys[:depth+1], "."))
			}
			n = n.Content[i]
		default:
			return nil, 0, fmt.Errorf("no %s", strings.Join(keys[:depth+1], "."))
		}
	}
	return nil, 0, fmt.Errorf("empty path")
}

// holeToken marks the place of hole number i in the encoded YAML.
func holeToken(i int) string { return fmt.Sprintf("CHART_HOLE_%d_", i) }

var (
	holeTokenPattern = regexp.MustCompile(`CHART_HOLE_(\d+)_`)
	nindentPattern   = regexp.MustCompile(`nindent \+(\d+)`)
)

// fill returns obj as YAML with the template text of holes in their places. Every hole's
// path must be in obj: a hole that finds nothing is an error, not silently dropped.
func fill(obj *yaml.Node, holes []hole) ([]byte, error) {
	// childDepth[i] is how much deeper than its key the lines of block hole i go: 0 for a
	// sequence (written compact, as deploy/ writes them), 2 for anything else.
	childDepth := make([]int, len(holes))
	for i, h := range holes {
		token := &yaml.Node{Kind: yaml.ScalarNode, Value: holeToken(i)}
		if h.kind == first || h.kind == last {
			m, k, err := find(obj, h.path)
			if err != nil {
				return nil, err
			}
			mapping := m.Content[k+1]
			if mapping.Kind != yaml.MappingNode || len(mapping.Content) == 0 {
				return nil, fmt.Errorf("%s is not a mapping", h.path)
			}
			at := 0
			if h.kind == last {
				at = len(mapping.Content)
			}
			mapping.Content = insert(mapping.Content, at, token)
			continue
		}
		m, k, err := find(obj, h.path)
		if err != nil {
			return nil, err
		}
		switch h.kind {
		case value, block:
			if m.Content[k+1].Kind != yaml.SequenceNode {
				childDepth[i] = 2
			}
			m.Content[k+1] = token
		case after:
			m.Content = insert(m.Content, k+2, token)
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}

	var out strings.Builder
	filled := make([]bool, len(holes))
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		m := holeTokenPattern.FindStringSubmatchIndex(line)
		if m == nil {
			out.WriteString(line)
			continue
		}
		i, _ := strconv.Atoi(line[m[2]:m[3]])
		h := holes[i]
		filled[i] = true
		prefix := line[:m[0]]
		depth := len(prefix) - len(strings.TrimLeft(prefix, " "))
		if strings.HasPrefix(prefix[depth:], "- ") {
			// The key opens an item of a sequence: "- " indents it. (Inserted lines never
			// do: they follow a key, or open the mapping of a key.)
			depth += 2
		}
		switch h.kind {
		case value:
			out.WriteString(prefix + h.text + "\n")
		case block:
			// prefix is "<indentation>key: ".
			out.WriteString(strings.TrimSuffix(prefix, " ") + "\n")
			writeLines(&out, h.text, depth+childDepth[i])
		default:
			writeLines(&out, h.text, depth)
		}
	}
	for i, ok := range filled {
		if !ok {
			return nil, fmt.Errorf("%s: the hole's place is lost in the YAML", holes[i].path)
		}
	}
	return []byte(out.String()), nil
}

// insert returns the mapping content c with the key and value token inserted at index at.
func insert(c []*yaml.Node, at int, token *yaml.Node) []*yaml.Node {
	return append(c[:at], append([]*yaml.Node{token, token}, c[at:]...)...)
}

// writeLines writes the lines of text at depth, with "nindent +<n>" made "nindent <depth+n>".
func writeLines(out *strings.Builder, text string, depth int) {
	text = nindentPattern.ReplaceAllStringFunc(text, func(s string) string {
		n, _ := strconv.Atoi(nindentPattern.FindStringSubmatch(s)[1])
		return fmt.Sprintf("nindent %d", depth+n)
	})
	for _, l := range strings.Split(text, "\n") {
		out.WriteString(strings.Repeat(" ", depth) + l + "\n")
	}
}

// generatedTemplates returns the generated templates of the chart, by their path in the
// chart, from root's deploy/.
func generatedTemplates(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, t := range templates {
		source, err := os.ReadFile(filepath.Join(root, "deploy", t.source))
		if err != nil {
			return nil, err
		}
		if out["templates/"+t.file], err = renderTemplate(t, source); err != nil {
			return nil, err
		}
	}
	return out, nil
}
