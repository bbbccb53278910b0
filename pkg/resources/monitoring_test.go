package resources

import (
	"slices"
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
	in := Inputs{ConfigHash: "c", SecretHash: "s"}
	api, crawler := NewAPIDeployment(m, in).Spec.Template, NewCrawlerDeployment(m, in).Spec.Template
	pods := podLabels(m, in)
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
	checkSelects(t, mustSelector(t, &spec.Selector), pods, "the PodMonitor selects the %s pods", map[string]bool{
		"api": true, "crawler": true, "elastic": false, "other api": false, "update-idents": false})
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

// TestElasticsearchExporter: spec.elasticsearch.exporter adds the exporter beside
// Elasticsearch (reading it over the pod's loopback, restricted like the others, the default
// image pinned), the PodMonitor then selects the Elasticsearch pod and scrapes the exporter's
// port, and the NetworkPolicy admits that port; without it, none of that.
func TestElasticsearchExporter(t *testing.T) {
	m := &monoclev1alpha1.Monocle{}
	m.Name, m.Namespace = "demo", "ns"
	m.Spec.Monitoring = &monoclev1alpha1.MonitoringSpec{}
	if n := len(NewElasticStatefulSet(m, ElasticDataVolume, false, "").Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("without the exporter: %d containers", n)
	}
	if rules := NewNetworkPolicy(m, "").Spec.Ingress; len(rules) != 2 {
		t.Errorf("without the exporter: %d ingress rules", len(rules))
	}

	m.Spec.Elasticsearch.Exporter = &monoclev1alpha1.ElasticsearchExporter{}
	pod := NewElasticStatefulSet(m, ElasticDataVolume, false, "").Spec.Template
	if len(pod.Spec.Containers) != 2 {
		t.Fatalf("with the exporter: containers %v", pod.Spec.Containers)
	}
	e := pod.Spec.Containers[1]
	if e.Image != DefaultExporterImage || ImageTag(e.Image) == "latest" || !slices.Contains(e.Args, "--es.uri=http://localhost:9200") ||
		len(e.Ports) != 1 || e.Ports[0].Name != "exporter" || e.Ports[0].ContainerPort != ExporterPort {
		t.Errorf("exporter container %+v", e)
	}
	if sc := e.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("exporter security context %+v, want the restricted one", e.SecurityContext)
	}

	var spec struct {
		Selector            metav1.LabelSelector `json:"selector"`
		PodMetricsEndpoints []struct {
			Port string `json:"port"`
		} `json:"podMetricsEndpoints"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(NewPodMonitor(m).Object["spec"].(map[string]any), &spec); err != nil {
		t.Fatal(err)
	}
	if !mustSelector(t, &spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Error("the PodMonitor does not select the Elasticsearch pod")
	}
	if !slices.ContainsFunc(spec.PodMetricsEndpoints, func(p struct {
		Port string `json:"port"`
	}) bool {
		return p.Port == "exporter"
	}) {
		t.Errorf("the PodMonitor's endpoints %+v do not scrape the exporter", spec.PodMetricsEndpoints)
	}
	rules := NewNetworkPolicy(m, "").Spec.Ingress
	if last := rules[len(rules)-1]; len(rules) != 3 || last.Ports[0].Port.IntValue() != ExporterPort || len(last.From) != 0 {
		t.Errorf("NetworkPolicy rules %+v, want the exporter's port admitted from everywhere", rules)
	}
}
