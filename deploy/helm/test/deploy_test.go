package test

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestDefaultsRenderDeploy checks that the chart at its default values, for release
// monocle-operator, renders deploy/'s objects of the operator (the Deployment, metrics Service
// and PodDisruptionBudget of deploy/03-operator.yaml, the ServiceAccount of
// deploy/02-rbac.yaml) but for what the chart adds: the release's labels (on top of deploy/'s,
// in labels and selectors alike), an explicit imagePullPolicy: IfNotPresent (Kubernetes's
// default for a tagged image), and flags its values set (on top of deploy/'s). Their templates
// are generated from deploy/ by hack/helm-chart; values.yaml, replicas and resources among it,
// is not, and this keeps its defaults deploy/'s.
func TestDefaultsRenderDeploy(t *testing.T) {
	rendered := objects(t, render(t, nil))
	n := 0
	for file, kinds := range map[string][]string{
		"../../03-operator.yaml": {"Deployment", "Service", "PodDisruptionBudget"},
		"../../02-rbac.yaml":     {"ServiceAccount"},
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			var want map[string]any
			if err := yaml.Unmarshal([]byte(doc), &want); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			kind, _ := want["kind"].(string)
			if !slices.Contains(kinds, kind) {
				continue
			}
			n++
			name := want["metadata"].(map[string]any)["name"]
			var got map[string]any
			for _, o := range rendered {
				if o["kind"] == kind && o["metadata"].(map[string]any)["name"] == name {
					got = o
				}
			}
			if got == nil {
				t.Errorf("the chart renders no %s %s", kind, name)
				continue
			}
			keepLabels(t, kind+" "+name.(string), got, want)
			if kind == "Deployment" {
				keepContainer(t, got, want)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := yaml.Marshal(got)
				w, _ := yaml.Marshal(want)
				t.Errorf("the chart's %s %s is not %s's:\n%s\nwant\n%s", kind, name, file, g, w)
			}
		}
	}
	if n != 4 {
		t.Errorf("compared %d objects of deploy/, want 4", n)
	}
}

// keepLabels checks that every map of labels in got (labels, matchLabels and a Service's
// selector: maps of strings under those keys) holds the labels of want's, and then makes it
// want's.
func keepLabels(t *testing.T, where string, got, want any) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return
		}
		for k, wv := range w {
			if labels, ok := stringMap(wv); ok && (k == "labels" || k == "matchLabels" || k == "selector") {
				for l, v := range labels {
					if gl, _ := stringMap(g[k]); gl[l] != v {
						t.Errorf("%s: %s lacks %s=%s: %v", where, k, l, v, g[k])
					}
				}
				g[k] = wv
				continue
			}
			keepLabels(t, where, g[k], wv)
		}
	case []any:
		g, ok := got.([]any)
		for i := range w {
			if ok && i < len(g) {
				keepLabels(t, where, g[i], w[i])
			}
		}
	}
}

// stringMap returns v as a map of strings, if it is a non-empty one.
func stringMap(v any) (map[string]string, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, false
	}
	out := map[string]string{}
	for k, e := range m {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// keepContainer checks that the operator container of the Deployment got pulls its image
// IfNotPresent and has the args of want's, and then drops the former and makes the args
// want's.
func keepContainer(t *testing.T, got, want map[string]any) {
	t.Helper()
	container := func(d map[string]any) map[string]any {
		return d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	}
	g, w := container(got), container(want)
	if g["imagePullPolicy"] != "IfNotPresent" {
		t.Errorf("imagePullPolicy %v, want IfNotPresent", g["imagePullPolicy"])
	}
	delete(g, "imagePullPolicy")
	args, _ := g["args"].([]any)
	for _, a := range w["args"].([]any) {
		if !slices.Contains(args, a) {
			t.Errorf("the chart's args %v lack deploy/'s %v", args, a)
		}
	}
	g["args"] = w["args"]
}
