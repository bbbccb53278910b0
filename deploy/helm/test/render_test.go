package test

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var (
	renderOut    = flag.String("render", "", "Write the chart rendered with -values to this file (for e2e).")
	renderValues = flag.String("values", "", "YAML values for -render.")
)

// TestRender writes the rendered chart, as helm template would print it, when -render is
// given: test/e2e applies it to the local control plane.
func TestRender(t *testing.T) {
	if *renderOut == "" {
		t.Skip("no -render file")
	}
	var values map[string]any
	if err := yaml.Unmarshal([]byte(*renderValues), &values); err != nil {
		t.Fatal(err)
	}
	rendered := render(t, values)
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		if strings.TrimSpace(rendered[name]) == "" || !strings.HasSuffix(name, ".yaml") {
			continue
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", name, rendered[name])
	}
	if err := os.WriteFile(*renderOut, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
