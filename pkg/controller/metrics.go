package controller

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
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
		Namespace:      operand.MetricsNamespace,
		Name:           "syncs_total",
		Help:           "Monocle syncs by result: success, error, or unavailable when the API server could not serve the sync (retried with a backoff capped at 10s).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	syncDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Namespace:      operand.MetricsNamespace,
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
	monocleReady = operand.NewGaugeVec("monocle_ready",
		"1 when the Monocle's Ready condition is True, else 0.",
		operand.MonocleLabels())
	// The backups of each Monocle with spec.backup, from its status, with the
	// labels of monocleReady.
	backupLastSuccess = operand.NewGaugeVec("backup_last_success_timestamp_seconds",
		"Unix time at which the Monocle's newest successful snapshot ended (status.backup.lastSuccessful); absent before one.",
		operand.MonocleLabels())
	backupFailing = operand.NewGaugeVec("backup_failing",
		"1 when the Monocle's BackupReady condition is False (the newest snapshot failed, the repository cannot be registered, or the schedule is invalid), else 0; absent without spec.backup.",
		operand.MonocleLabels())
	// crawlerCrawledUntil is status.crawlers[].crawledUntil.
	crawlerCrawledUntil = operand.NewGaugeVec("crawler_crawled_until_timestamp_seconds",
		"Unix time up to which the crawler has indexed every one of its entities (Monocle's crawler metadata, oldest last_commit_at), as the operator last read it from Elasticsearch; a value that stops moving means a hung or failing crawler.",
		operand.MonocleLabels("workspace", "crawler"))
	// buildInfo follows the Prometheus convention of <program>_build_info (as in
	// prometheus/common/version): a constant 1 whose labels describe the build.
	buildInfo = operand.NewGaugeVec("build_info",
		"A metric with a constant '1' value labeled by the version, commit and Go version the operator was built from.",
		[]string{"version", "commit", "goversion"})

	registerMetrics sync.Once
)

// RegisterMetrics registers the controller's metrics, and those the operand worker records
// (operand.Metrics), in component-base's legacy registry, once per process, with
// monocle_operator_build_info set to 1 for this binary's version.Info().
func RegisterMetrics() {
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(syncsTotal, syncDuration, monocleReady, buildInfo,
			backupLastSuccess, backupFailing, crawlerCrawledUntil, rolloutMonocles, rolloutWave, rolloutHalted)
		legacyregistry.MustRegister(operand.Metrics()...)
		// component-base's metrics record nothing until registered: set after MustRegister.
		info := version.Info()
		buildInfo.WithLabelValues(info.Version, info.Commit, info.GoVersion).Set(1)
	})
}

// recordBackupMetrics sets the backup metrics of Monocle m from its status: st is
// status.backup, nil without spec.backup, and ready its BackupReady condition.
func recordBackupMetrics(m *monoclev1alpha1.Monocle, st *monoclev1alpha1.BackupStatus, ready metav1.Condition) {
	if st == nil {
		forgetBackup(cache.MetaObjectToName(m))
		return
	}
	if ls := st.LastSuccessful; ls != nil && ls.Time != nil {
		backupLastSuccess.WithLabelValues(m.Namespace, m.Name).Set(float64(ls.Time.Unix()))
	} else {
		backupLastSuccess.DeleteLabelValues(m.Namespace, m.Name)
	}
	v := 0.0
	if ready.Status == metav1.ConditionFalse {
		v = 1
	}
	backupFailing.WithLabelValues(m.Namespace, m.Name).Set(v)
}

// forgetBackup drops the backup metrics of a Monocle that is gone or has no spec.backup.
func forgetBackup(key cache.ObjectName) {
	backupLastSuccess.DeleteLabelValues(key.Namespace, key.Name)
	backupFailing.DeleteLabelValues(key.Namespace, key.Name)
}

// recordCrawlerMetrics sets the crawler progress metric of Monocle m from its
// status.crawlers, dropping the series of crawlers it no longer has.
func recordCrawlerMetrics(m *monoclev1alpha1.Monocle, crawlers []monoclev1alpha1.CrawlerStatus) {
	forgetCrawlers(cache.MetaObjectToName(m))
	for _, c := range crawlers {
		if c.CrawledUntil != nil {
			crawlerCrawledUntil.WithLabelValues(m.Namespace, m.Name, c.Workspace, c.Name).Set(float64(c.CrawledUntil.Unix()))
		}
	}
}

// forgetCrawlers drops the crawler series of a Monocle.
func forgetCrawlers(key cache.ObjectName) {
	if crawlerCrawledUntil.IsCreated() {
		crawlerCrawledUntil.DeletePartialMatch(map[string]string{"monocle_namespace": key.Namespace, "monocle": key.Name})
	}
}
