package controller

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/change-metrics/monocle-operator/pkg/version"
)

// Prometheus metrics of the controller, served on /metrics with client-go's workqueue and
// REST client metrics (registered by component-base). No series carries a label of
// TargetLabels.

// TargetLabels are the labels Prometheus gives every series of a target that a
// prometheus-operator ServiceMonitor or PodMonitor selects (its relabelling of
// __meta_kubernetes_* into namespace, pod, service, endpoint and container; job and instance
// from Prometheus itself). A series label of the same name would be renamed exported_<name>.
var TargetLabels = []string{"namespace", "pod", "service", "endpoint", "container", "job", "instance"}
var (
	syncsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "monocle_operator",
		Name:           "syncs_total",
		Help:           "Monocle syncs by result: success, error, or unavailable when the API server could not serve the sync (retried with a backoff capped at 10s).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	syncDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Namespace:      "monocle_operator",
		Name:           "sync_duration_seconds",
		Help:           "Duration of one Monocle sync in seconds, including its API calls.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	})
	// monocleReady names its Monocle with the labels monocle_namespace and monocle, never
	// namespace or name: a ServiceMonitor or PodMonitor adds the target's own namespace, pod,
	// service, endpoint, container, job and instance labels to every series it scrapes, and
	// Prometheus renames a series label that collides with one (namespace becomes
	// exported_namespace) unless honorLabels is set, which would let the operator's series
	// override the target's labels (prometheus-operator API reference, Endpoint.honorLabels).
	monocleReady = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      "monocle_operator",
		Name:           "monocle_ready",
		Help:           "1 when the Monocle's Ready condition is True, else 0.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"monocle_namespace", "monocle"})
	// buildInfo follows the Prometheus convention of <program>_build_info (as in
	// prometheus/common/version): a constant 1 whose labels describe the build.
	buildInfo = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      "monocle_operator",
		Name:           "build_info",
		Help:           "A metric with a constant '1' value labeled by the version, commit and Go version the operator was built from.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"version", "commit", "goversion"})

	registerMetrics sync.Once
)

// RegisterMetrics registers the controller's metrics in component-base's legacy registry,
// once per process, with monocle_operator_build_info set to 1 for this binary's
// version.Info().
func RegisterMetrics() {
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(syncsTotal, syncDuration, monocleReady, buildInfo)
		// component-base's metrics record nothing until registered: set after MustRegister.
		info := version.Info()
		buildInfo.WithLabelValues(info.Version, info.Commit, info.GoVersion).Set(1)
	})
}
