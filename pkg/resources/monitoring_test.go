package resources

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// TestPodMonitorScrapesTheAPIAndTheCrawler checks the PodMonitor against the pods the
// builders make: it selects this Monocle's API and crawler pods only, and each of its
// endpoints names a port one of them has, so both are scraped.
func TestPodMonitorScrapesTheAPIAndTheCrawler(t *testing.T) {
	m := &monoclev1alpha1.Monocle{}
	m.Name, m.Namespace = "demo", "ns"
	m.Spec.Monitoring = &monoclev1alpha1.MonitoringSpec{Labels: map[string]string{"release": "prom", ManagedByLabel: "someone"}, Interval: "1m"}
	other := &monoclev1alpha1.Monocle{}
	other.Name, other.Namespace = "other", "ns"
	in := Inputs{ConfigHash: "c", SecretHash: "s"}
	api, crawler := NewAPIDeployment(m, in).Spec.Template, NewCrawlerDeployment(m, in).Spec.Template
	pods := map[string]map[string]string{
		"api": api.Labels, "crawler": crawler.Labels,
		"elastic":       NewElasticStatefulSet(m, ElasticDataVolume).Spec.Template.Labels,
		"other api":     NewAPIDeployment(other, in).Spec.Template.Labels,
		"update-idents": NewUpdateIdentsJob(m, "c").Spec.Template.Labels,
	}
	u := NewPodMonitor(m)
	if u.GetKind() != "PodMonitor" || u.GetAPIVersion() != "monitoring.coreos.com/v1" || u.GetName() != "demo" {
		t.Fatalf("PodMonitor %s %s %s", u.GetAPIVersion(), u.GetKind(), u.GetName())
	}
	if l := u.GetLabels(); l["release"] != "prom" || l[ManagedByLabel] != ManagedByValue {
		t.Errorf("labels %v: want spec.monitoring's, the operator's winning", l)
	}
	var spec struct {
		Selector            metav1.LabelSelector `json:"selector"`
		PodMetricsEndpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"podMetricsEndpoints"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object["spec"].(map[string]any), &spec); err != nil {
		t.Fatal(err)
	}
	selector := mustSelector(t, &spec.Selector)
	for name, want := range map[string]bool{"api": true, "crawler": true, "elastic": false, "other api": false, "update-idents": false} {
		if got := selector.Matches(labels.Set(pods[name])); got != want {
			t.Errorf("the PodMonitor selects the %s pods: %v, want %v", name, got, want)
		}
	}
	scraped := map[string]bool{}
	for _, e := range spec.PodMetricsEndpoints {
		if e.Path != "/metrics" || e.Interval != "1m" {
			t.Errorf("endpoint %+v, want /metrics every 1m", e)
		}
		for name, pod := range map[string][]int32{"api": {APIPort}, "crawler": {CrawlerPort}} {
			template := api
			if name == "crawler" {
				template = crawler
			}
			for _, p := range template.Spec.Containers[0].Ports {
				if p.Name == e.Port && p.ContainerPort == pod[0] {
					scraped[name] = true
				}
			}
		}
	}
	if !scraped["api"] || !scraped["crawler"] {
		t.Errorf("endpoints %+v scrape %v, want the API's port %d and the crawler's %d", spec.PodMetricsEndpoints, scraped, APIPort, CrawlerPort)
	}
}
