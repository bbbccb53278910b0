package day2

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// TestHeapAboveLimitIsRefused: a javaOpts heap above 75% of the memory limit (given, or the
// default 1Gi) is refused with both numbers; 75% and the derived default are accepted.
func TestHeapAboveLimitIsRefused(t *testing.T) {
	limit := func(q string) *corev1.ResourceRequirements {
		return &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}}
	}
	for _, c := range []struct {
		javaOpts  string
		resources *corev1.ResourceRequirements
		refused   string
	}{
		{"-Xms1g -Xmx1g", limit("1Gi"), "heap of 1g (1024 MiB) for a memory limit of 1Gi (1024 MiB)"},
		{"-Xmx900M", nil, "heap of 900M (900 MiB) for a memory limit of 1Gi (1024 MiB)"},
		{"-Xmx512m -Xmx3g", limit("4Gi"), ""},
		{"-Xmx3g -Xmx512m", limit("2Gi"), ""},
		{"-Xmx3g -Xmx4g", limit("4Gi"), "heap of 4g"},
		{"-Xmx768m", nil, ""},
		{"-Xmx769m", nil, "heap of 769m"},
		{"-Xmx99999999999999999999g", limit("64Gi"), "heap of 99999999999999999999g"},
		{"-Xmx9999999999g", limit("64Gi"), "heap of 9999999999g"},
		{"-Xms2g", limit("1Gi"), ""},
		{"", limit("8Gi"), ""},
	} {
		m := newMonocle("demo")
		m.Spec.Elasticsearch.JavaOpts, m.Spec.Elasticsearch.Resources = c.javaOpts, c.resources
		cond := ElasticSpecCondition(m, nil)
		switch {
		case c.refused == "" && cond.Status != metav1.ConditionTrue:
			t.Errorf("%q: refused: %s", c.javaOpts, cond.Message)
		case c.refused != "" && (cond.Reason != reasons.HeapAboveLimit || !strings.Contains(cond.Message, c.refused)):
			t.Errorf("%q: SpecAccepted = %+v, want HeapAboveLimit saying %q", c.javaOpts, cond, c.refused)
		}
	}
}
