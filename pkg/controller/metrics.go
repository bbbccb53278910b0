package controller

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/change-metrics/monocle-operator/pkg/version"
)

// Prometheus metrics of the controller, served on /metrics with client-go's workqueue and
// REST client metrics (registered by component-base).
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
	monocleReady = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      "monocle_operator",
		Name:           "monocle_ready",
		Help:           "1 when the Monocle's Ready condition is True, else 0.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"namespace", "name"})
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
