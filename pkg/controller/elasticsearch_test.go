package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
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
