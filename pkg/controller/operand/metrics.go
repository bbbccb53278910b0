package operand

import (
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// The metrics of the last read of each Monocle's Elasticsearch. Their labels name the
// Monocle monocle_namespace and monocle, never namespace or name, which Prometheus sets on
// every series of a target it scrapes.
var (
	elasticsearchUp = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      "monocle_operator",
		Name:           "elasticsearch_up",
		Help:           "1 when the operator's last read of the Monocle's Elasticsearch (GET _cluster/health, _cat/allocation) succeeded, else 0.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"monocle_namespace", "monocle"})
	elasticsearchStatus = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      "monocle_operator",
		Name:           "elasticsearch_status",
		Help:           "1 for the cluster health (status: green, yellow or red) the Monocle's Elasticsearch last reported, 0 for the others.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"monocle_namespace", "monocle", "status"})
	elasticsearchDiskUsed = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      "monocle_operator",
		Name:           "elasticsearch_disk_used_ratio",
		Help:           "The share of the Monocle's Elasticsearch data volume in use (0 to 1), as Elasticsearch last reported it.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"monocle_namespace", "monocle"})
)

// Metrics returns the collectors the worker records: monocle_operator_elasticsearch_up,
// monocle_operator_elasticsearch_status and monocle_operator_elasticsearch_disk_used_ratio.
// Register them once per process (component-base metrics record nothing until registered).
func Metrics() []metrics.Registerable {
	return []metrics.Registerable{elasticsearchUp, elasticsearchStatus, elasticsearchDiskUsed}
}

// recordElasticsearch sets the Elasticsearch metrics of the Monocle key from a read: health
// is nil when the read failed.
func recordElasticsearch(key cache.ObjectName, health *monoclev1alpha1.ElasticsearchHealth) {
	if health == nil {
		elasticsearchUp.WithLabelValues(key.Namespace, key.Name).Set(0)
		return
	}
	elasticsearchUp.WithLabelValues(key.Namespace, key.Name).Set(1)
	for _, status := range []string{"green", "yellow", "red"} {
		v := 0.0
		if health.Status == status {
			v = 1
		}
		elasticsearchStatus.WithLabelValues(key.Namespace, key.Name, status).Set(v)
	}
	if health.DiskUsedPercent != nil {
		elasticsearchDiskUsed.WithLabelValues(key.Namespace, key.Name).Set(float64(*health.DiskUsedPercent) / 100)
	}
}

// forgetElasticsearch drops the Elasticsearch metrics of a Monocle that is gone.
func forgetElasticsearch(key cache.ObjectName) {
	elasticsearchUp.DeleteLabelValues(key.Namespace, key.Name)
	elasticsearchDiskUsed.DeleteLabelValues(key.Namespace, key.Name)
	for _, status := range []string{"green", "yellow", "red"} {
		elasticsearchStatus.DeleteLabelValues(key.Namespace, key.Name, status)
	}
}
