package controller

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/change-metrics/monocle-operator/pkg/version"
)

// TestBuildInfoMetric checks that RegisterMetrics exports monocle_operator_build_info, a
// gauge of 1 labeled with this binary's version, commit and Go version, in the registry that
// /metrics serves.
func TestBuildInfoMetric(t *testing.T) {
	RegisterMetrics()
	RegisterMetrics() // once per process: a second call must not register twice (it would panic)
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	info := version.Info()
	want := map[string]string{"version": info.Version, "commit": info.Commit, "goversion": info.GoVersion}
	for _, f := range families {
		if f.GetName() != "monocle_operator_build_info" {
			continue
		}
		if got := f.GetType().String(); got != "GAUGE" {
			t.Errorf("monocle_operator_build_info is a %s, want a gauge", got)
		}
		if len(f.GetMetric()) != 1 {
			t.Fatalf("monocle_operator_build_info has %d series, want 1", len(f.GetMetric()))
		}
		m := f.GetMetric()[0]
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if !maps.Equal(labels, want) {
			t.Errorf("monocle_operator_build_info labels %v, want %v", labels, want)
		}
		if v := m.GetGauge().GetValue(); v != 1 {
			t.Errorf("monocle_operator_build_info = %v, want 1", v)
		}
		return
	}
	t.Error("monocle_operator_build_info is not registered")
}

// TestNoSeriesLabelCollidesWithTargetLabels: no series the operator serves, its own or
// client-go's, has a label Prometheus sets on the target (TargetLabels).
func TestNoSeriesLabelCollidesWithTargetLabels(t *testing.T) {
	RegisterMetrics()
	monocleReady.WithLabelValues("ns", "m").Set(1)
	defer monocleReady.DeleteLabelValues("ns", "m")
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if slices.Contains(TargetLabels, l.GetName()) {
					t.Errorf("%s has the label %s, which a ServiceMonitor's target label would rename", f.GetName(), l.GetName())
				}
			}
			seen = seen || f.GetName() == "monocle_operator_monocle_ready"
		}
	}
	if !seen {
		t.Error("monocle_operator_monocle_ready has no series: the check saw nothing of it")
	}
}
