package resources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// TestDefaultHeapFollowsTheMemoryLimit: without javaOpts the heap is half the memory limit.
func TestDefaultHeapFollowsTheMemoryLimit(t *testing.T) {
	m := minimal()
	if got := JavaOpts(m); got != "-Xms512m -Xmx512m" {
		t.Errorf("default JavaOpts = %q", got)
	}
	m.Spec.Elasticsearch.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}}
	if got := JavaOpts(m); got != "-Xms2048m -Xmx2048m" {
		t.Errorf("JavaOpts with a 4Gi limit = %q", got)
	}
	m.Spec.Elasticsearch.Resources = &corev1.ResourceRequirements{}
	if got := JavaOpts(m); got != DefaultJavaOpts {
		t.Errorf("JavaOpts without a limit = %q", got)
	}
	m.Spec.Elasticsearch.JavaOpts = "-Xmx1g"
	if got := JavaOpts(m); got != "-Xmx1g" {
		t.Errorf("JavaOpts set = %q", got)
	}
}

// TestEveryContainerTakesTheMonocleResources: every container and init container the
// operator builds for a bundled Monocle with the exporter and the proxy (the Elasticsearch
// pod, the API, the crawler, the update-idents and maintenance Jobs) has the requests and
// limits its spec field sets, so that a Monocle whose author sets them all runs in a
// namespace whose ResourceQuota requires CPU and memory limits; with none set, no container
// has a CPU limit (one would throttle) and every one has a memory limit.
func TestEveryContainerTakesTheMonocleResources(t *testing.T) {
	quota := func(cpu string) *corev1.ResourceRequirements {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("300Mi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}
		return &corev1.ResourceRequirements{Requests: l, Limits: l}
	}
	set := minimal()
	es := &set.Spec.Elasticsearch
	set.Spec.API.Resources, set.Spec.Crawler.Resources, es.Resources = quota("101m"), quota("102m"), quota("103m")
	es.InitResources, set.Spec.Jobs.Resources = quota("104m"), quota("105m")
	es.Exporter = &monoclev1alpha1.ElasticsearchExporter{Resources: quota("106m")}
	es.Proxy = &monoclev1alpha1.ElasticsearchProxy{Resources: quota("107m")}
	want := map[string]string{
		"api/api": "101m", "crawler/crawler": "102m", "elastic/elastic": "103m", "elastic/init-config": "104m",
		"elastic/init-keystore": "104m", "update-idents/update-idents": "105m", "maintenance/maintenance": "105m",
		"elastic/exporter": "106m", "api/elastic-proxy": "107m", "update-idents/elastic-proxy": "107m",
		"maintenance/elastic-proxy": "107m",
	}
	pods := func(m *monoclev1alpha1.Monocle) map[string]corev1.PodTemplateSpec {
		users := map[string][]byte{}
		for _, u := range ElasticUsers {
			users[u] = []byte("password")
		}
		pods := proxyPods(m, ElasticAccess{Target: BundledTarget(m).WithBundledUsers(users), ProxyHash: "h"})
		pods["elastic"] = NewElasticStatefulSet(m, ElasticDataVolume, false, "h").Spec.Template
		return pods
	}
	seen := 0
	for pod, tpl := range pods(set) {
		for _, c := range append(tpl.Spec.InitContainers, tpl.Spec.Containers...) {
			key := pod + "/" + c.Name
			cpu, ok := want[key]
			if !ok {
				t.Errorf("%s: a container this test does not know; give it a resources field", key)
				continue
			}
			seen++
			if got := c.Resources.Limits.Cpu().String(); got != cpu || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("%s: limits %v, want the CPU limit %s of its field and a memory limit", key, c.Resources.Limits, cpu)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d containers, want %d", seen, len(want))
	}

	defaults := minimal()
	defaults.Spec.Elasticsearch.Exporter = &monoclev1alpha1.ElasticsearchExporter{}
	for pod, tpl := range pods(defaults) {
		for _, c := range append(tpl.Spec.InitContainers, tpl.Spec.Containers...) {
			if !c.Resources.Limits.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("%s/%s by default: limits %v, want a memory limit and no CPU limit", pod, c.Name, c.Resources.Limits)
			}
		}
		// No scratch volume may fill the node's disk.
		for _, v := range tpl.Spec.Volumes {
			if v.EmptyDir != nil && (v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.IsZero()) {
				t.Errorf("%s: emptyDir %s has no sizeLimit", pod, v.Name)
			}
		}
	}
}
