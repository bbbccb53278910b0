package operand

import (
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// MetricsNamespace is the prefix of every metric the operator serves:
// monocle_operator_<name>.
const MetricsNamespace = "monocle_operator"

// MonocleLabels are the labels that name a Monocle on the operator's per-Monocle series,
// followed by extra: monocle_namespace and monocle, never namespace or name, which
// Prometheus sets on every series of a target it scrapes (a series label of the same name
// would be renamed exported_<name>).
func MonocleLabels(extra ...string) []string {
	return append([]string{"monocle_namespace", "monocle"}, extra...)
}

// NewGaugeVec returns the ALPHA gauge vector monocle_operator_<name> with the help text help
// and the labels labels, unregistered.
func NewGaugeVec(name, help string, labels []string) *metrics.GaugeVec {
	return metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      MetricsNamespace,
		Name:           name,
		Help:           help,
		StabilityLevel: metrics.ALPHA,
	}, labels)
}

// The metrics of the last read of each Monocle's Elasticsearch, labelled MonocleLabels.
var (
	elasticsearchUp = NewGaugeVec("elasticsearch_up",
		"1 when the operator's last read of the Monocle's Elasticsearch (GET _cluster/health, _cat/allocation) succeeded, else 0.",
		MonocleLabels())
	elasticsearchStatus = NewGaugeVec("elasticsearch_status",
		"1 for the cluster health (status: green, yellow or red) the Monocle's Elasticsearch last reported, 0 for the others.",
		MonocleLabels("status"))
	elasticsearchDiskUsed = NewGaugeVec("elasticsearch_disk_used_ratio",
		"The share of the Monocle's Elasticsearch data volume in use (0 to 1), as Elasticsearch last reported it.",
		MonocleLabels())
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
