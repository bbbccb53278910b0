package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	core "k8s.io/client-go/testing"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// TestElasticsearchVersionRefusals: an Elasticsearch image of another major version is never
// deployed, and one older than the running image does not replace it; both are reported in
// SpecAccepted and Degraded. An upgrade, and a tag without a version, go ahead.
func TestElasticsearchVersionRefusals(t *testing.T) {
	const es = "docker.elastic.co/elasticsearch/elasticsearch:"
	m := newMonocle("demo")
	m.Spec.Elasticsearch.Image = es + "8.11.0"
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	kubeWrites, monocleWrites := f.run()
	if written[*appsv1.StatefulSet](kubeWrites, "demo-elastic") != nil {
		t.Errorf("an Elasticsearch 8 StatefulSet was created: %v", describe(kubeWrites))
	}
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	expectRefused(t, status, reasons.ElasticsearchVersionUnsupported, "Elasticsearch 8")

	converged7, objects := converged(t, newMonocle("demo"))
	for image, refused := range map[string]string{
		es + "7.10.2":  reasons.ElasticsearchDowngrade,
		es + "7.17.27": "",
		es + "latest":  "",
	} {
		m := converged7.DeepCopy()
		m.Spec.Elasticsearch.Image = image
		m.Generation++
		_, writes, status := resync(t, m, objects)
		updated := written[*appsv1.StatefulSet](writes, "demo-elastic") != nil
		if refused != "" {
			if updated {
				t.Errorf("%s: the StatefulSet was updated", image)
			}
			expectRefused(t, status, refused, "older than the running")
			continue
		}
		if !updated {
			t.Errorf("%s: the StatefulSet was not updated: %v", image, describe(writes))
		}
		if c := condition(t, status, monoclev1alpha1.ConditionSpecAccepted); c.Status != metav1.ConditionTrue {
			t.Errorf("%s: SpecAccepted = %+v", image, c)
		}
	}
}

func expectRefused(t *testing.T, status *monoclev1alpha1.Monocle, reason, text string) {
	t.Helper()
	c := condition(t, status, monoclev1alpha1.ConditionSpecAccepted)
	if c.Status != metav1.ConditionFalse || c.Reason != reason || !strings.Contains(c.Message, text) {
		t.Errorf("SpecAccepted = %+v, want False/%s saying %q", c, reason, text)
	}
	if d := condition(t, status, monoclev1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != reason {
		t.Errorf("Degraded = %+v, want True/%s", d, reason)
	}
}

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
		cond := elasticSpecCondition(m, nil)
		switch {
		case c.refused == "" && cond.Status != metav1.ConditionTrue:
			t.Errorf("%q: refused: %s", c.javaOpts, cond.Message)
		case c.refused != "" && (cond.Reason != reasons.HeapAboveLimit || !strings.Contains(cond.Message, c.refused)):
			t.Errorf("%q: SpecAccepted = %+v, want HeapAboveLimit saying %q", c.javaOpts, cond, c.refused)
		}
	}
}
