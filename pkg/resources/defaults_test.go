package resources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
