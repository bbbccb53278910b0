package resources

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// PodMonitorResource is the prometheus-operator's PodMonitor, monitoring.coreos.com/v1
// (prometheus-operator API reference, PodMonitor).
var PodMonitorResource = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "podmonitors"}

// PodMonitorName is the name of the PodMonitor of Monocle m: "<name>".
func PodMonitorName(m *monoclev1alpha1.Monocle) string { return m.Name }

// NewPodMonitor builds the PodMonitor "<name>" of spec.monitoring, as an unstructured
// monitoring.coreos.com/v1 object: it selects this Monocle's API and crawler pods, and its
// Elasticsearch pod when spec.elasticsearch.exporter runs the exporter there (Elasticsearch
// serves no Prometheus metrics itself), and scrapes /metrics on the port each names: "http"
// (the API, 8080), "monitoring" (the crawler, 9001), "exporter" (9114), at spec.monitoring's
// interval when set; spec.monitoring.labels go on it next to the operator's. Monocle serves
// both endpoints (monocle-facts: components table). spec.monitoring must be set.
func NewPodMonitor(m *monoclev1alpha1.Monocle) *unstructured.Unstructured {
	meta := objectMeta(m, PodMonitorName(m), "")
	delete(meta.Labels, ComponentLabel)
	components, ports := []any{ComponentAPI, ComponentCrawler}, []string{"http", "monitoring"}
	if m.Spec.Elasticsearch.Exporter != nil {
		components, ports = append(components, ComponentElastic), append(ports, "exporter")
	}
	var endpoints []any
	for _, port := range ports {
		e := map[string]any{"port": port, "path": "/metrics"}
		if m.Spec.Monitoring.Interval != "" {
			e["interval"] = m.Spec.Monitoring.Interval
		}
		endpoints = append(endpoints, e)
	}
	spec := map[string]any{
		"selector": map[string]any{
			"matchLabels": map[string]any{NameLabel: "monocle", InstanceLabel: m.Name},
			"matchExpressions": []any{map[string]any{
				"key": ComponentLabel, "operator": string(metav1.LabelSelectorOpIn), "values": components,
			}},
		},
		"podMetricsEndpoints": endpoints,
	}
	return unstructuredObject(PodMonitorResource, "PodMonitor", withUserLabels(meta, m.Spec.Monitoring.Labels), spec)
}
