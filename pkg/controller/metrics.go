package controller

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
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

	registerMetrics sync.Once
)

// RegisterMetrics registers the controller's metrics in component-base's legacy registry,
// once per process.
func RegisterMetrics() {
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(syncsTotal, syncDuration, monocleReady)
	})
}
