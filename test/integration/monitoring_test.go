package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

const monitoredMonocle = `apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata:
  name: m
spec:
  monitoring:
    labels:
      release: prom
    interval: 1m
`

// TestMonitoring follows spec.monitoring on the real control plane: without the Prometheus
// operator's CRDs the Monocle runs and Monitored says what is missing; with the PodMonitor
// CRD (prometheus-operator v0.85.0) installed while the operator runs, the PodMonitor is made
// and passes the CRD's own validation, its drift is repaired, and unsetting spec.monitoring
// deletes it.
func TestMonitoring(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns := "monitoring"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	if _, err := env.Kubectl.RunStdin(ctx, monitoredMonocle, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatal(err)
	}
	cond := waitCondition(t, ns, "m", monoclev1alpha1.ConditionMonitored, metav1.ConditionFalse, reasons.APINotServed)
	if !strings.Contains(cond.Message, "podmonitors.monitoring.coreos.com/v1") {
		t.Errorf("Monitored message does not name the API: %s", cond.Message)
	}
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionReady, metav1.ConditionTrue, reasons.AllComponentsReady)

	crd, err := testkit.MonitoringCRD(ctx, "podmonitors")
	if err != nil {
		t.Fatal(err)
	}
	env.Kubectl.Must(t, "apply", "--server-side", "-f", crd)
	t.Cleanup(func() { _, _ = env.Kubectl.Run(context.Background(), "delete", "-f", crd) })
	env.Kubectl.MustWaitEstablished(t, "podmonitors.monitoring.coreos.com")
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionMonitored, metav1.ConditionTrue, reasons.Monitored)
	got := jsonpath(t, ns, "podmonitors.monitoring.coreos.com/m",
		"{.metadata.labels.release} {.spec.selector.matchLabels.app\\.kubernetes\\.io/instance} {.spec.podMetricsEndpoints[*].port} {.spec.podMetricsEndpoints[0].interval}")
	if got != "prom m http monitoring 1m" {
		t.Errorf("PodMonitor = %q", got)
	}

	env.Kubectl.Must(t, "patch", "-n", ns, "podmonitors.monitoring.coreos.com/m", "--type=json",
		"-p", `[{"op":"remove","path":"/spec/podMetricsEndpoints/1"}]`)
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "the crawler's endpoint restored", func() error {
		if ports := jsonpath(t, ns, "podmonitors.monitoring.coreos.com/m", "{.spec.podMetricsEndpoints[*].port}"); ports != "http monitoring" {
			return fmt.Errorf("ports %q", ports)
		}
		return nil
	})

	// The Elasticsearch exporter: a sidecar in the Elasticsearch pod, scraped by the PodMonitor.
	patchMonocle(t, ns, `{"spec":{"elasticsearch":{"exporter":{}}}}`)
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "the exporter running and scraped", func() error {
		containers, err := env.Kubectl.Run(ctx, "get", "-n", ns, "statefulset/m-elastic", "-o", "jsonpath={.spec.template.spec.containers[*].name}")
		if err != nil || containers != "elastic exporter" {
			return fmt.Errorf("StatefulSet containers %q (%v)", containers, err)
		}
		if ports := jsonpath(t, ns, "podmonitors.monitoring.coreos.com/m", "{.spec.podMetricsEndpoints[*].port}"); ports != "http monitoring exporter" {
			return fmt.Errorf("PodMonitor ports %q", ports)
		}
		return nil
	})
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionReady, metav1.ConditionTrue, reasons.AllComponentsReady)

	env.Kubectl.Must(t, "patch", "-n", ns, "monocle/m", "--type=json", "-p", `[{"op":"remove","path":"/spec/monitoring"}]`)
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionMonitored, metav1.ConditionFalse, reasons.NotMonitored)
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "the PodMonitor deleted", func() error {
		if out, err := env.Kubectl.Run(ctx, "get", "-n", ns, "podmonitors.monitoring.coreos.com/m"); err == nil {
			return fmt.Errorf("still there: %s", out)
		}
		return nil
	})
}
