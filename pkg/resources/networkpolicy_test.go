package resources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// TestNetworkPolicySelectsTheRightPods checks the policy against the pod labels the builders
// make: it guards this Monocle's API and Elasticsearch pods and not its crawler or another
// Monocle's pods; Elasticsearch's port admits this Monocle's API, crawler and Job pods only;
// the API's port admits everyone.
func TestNetworkPolicySelectsTheRightPods(t *testing.T) {
	m := &monoclev1alpha1.Monocle{}
	m.Name, m.Namespace = "demo", "ns"
	pods := podLabels(m, Inputs{ConfigHash: "c", SecretHash: "s"})
	p := NewNetworkPolicy(m, "")
	checkSelects(t, mustSelector(t, &p.Spec.PodSelector), pods, "the policy guards the %s pods", map[string]bool{
		"api": true, "elastic": true, "crawler": false, "update-idents": false, "other api": false, "other elastic": false})
	if len(p.Spec.Ingress) != 2 {
		t.Fatalf("ingress rules = %+v", p.Spec.Ingress)
	}
	elastic, api := p.Spec.Ingress[0], p.Spec.Ingress[1]
	if elastic.Ports[0].Port.IntValue() != ElasticPort || *elastic.Ports[0].Protocol != corev1.ProtocolTCP || len(elastic.From) != 1 {
		t.Fatalf("Elasticsearch rule = %+v", elastic)
	}
	checkSelects(t, mustSelector(t, elastic.From[0].PodSelector), pods, "Elasticsearch admits the %s pods", map[string]bool{
		"api": true, "crawler": true, "update-idents": true, "maintenance": true, "other api": false, "other crawler": false})
	if elastic.From[0].NamespaceSelector != nil {
		t.Error("Elasticsearch admits pods of other namespaces")
	}
	if api.Ports[0].Port.IntValue() != APIPort || len(api.From) != 0 {
		t.Errorf("API rule = %+v, want port %d from everywhere", api, APIPort)
	}
	if _, ok := p.Labels[ComponentLabel]; ok || p.Labels[ManagedByLabel] != ManagedByValue || p.Name != "demo" {
		t.Errorf("metadata = %+v", p.ObjectMeta)
	}
}

// podLabels returns the labels of the pods the builders make, with the inputs in, for Monocle
// m ("api", "crawler", "elastic", "update-idents" and "maintenance") and for another Monocle
// of its namespace ("other api", "other crawler" and "other elastic").
func podLabels(m *monoclev1alpha1.Monocle, in Inputs) map[string]map[string]string {
	other := &monoclev1alpha1.Monocle{}
	other.Name, other.Namespace = "other", m.Namespace
	return map[string]map[string]string{
		"api":           NewAPIDeployment(m, in).Spec.Template.Labels,
		"crawler":       NewCrawlerDeployment(m, in).Spec.Template.Labels,
		"elastic":       NewElasticStatefulSet(m, ElasticDataVolume, false, "").Spec.Template.Labels,
		"update-idents": NewUpdateIdentsJob(m, "c", bundledAccess(m)).Spec.Template.Labels,
		"maintenance":   NewMaintenanceJob(m, monoclev1alpha1.MaintenanceRequest{Name: "x", Operation: monoclev1alpha1.WipeCrawlerData}, "c", bundledAccess(m)).Spec.Template.Labels,
		"other api":     NewAPIDeployment(other, in).Spec.Template.Labels,
		"other crawler": NewCrawlerDeployment(other, in).Spec.Template.Labels,
		"other elastic": NewElasticStatefulSet(other, ElasticDataVolume, false, "").Spec.Template.Labels,
	}
}

// checkSelects fails the test unless selector matches the pods (of podLabels) that want maps
// to true and none of those it maps to false; what, a format with one %s for the pod's name,
// says what matching means.
func checkSelects(t *testing.T, selector labels.Selector, pods map[string]map[string]string, what string, want map[string]bool) {
	t.Helper()
	for name, w := range want {
		labelsOf, ok := pods[name]
		if !ok {
			t.Fatalf("no pod %q", name)
		}
		if got := selector.Matches(labels.Set(labelsOf)); got != w {
			t.Errorf(what+": %v, want %v", name, got, w)
		}
	}
}

func mustSelector(t *testing.T, s *metav1.LabelSelector) labels.Selector {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// TestNetworkPolicyAdmitsTheOperator: with the operator's namespace known, Elasticsearch's
// port also admits the operator's pods, labelled as deploy/03-operator.yaml labels them, in
// that namespace only.
func TestNetworkPolicyAdmitsTheOperator(t *testing.T) {
	m := &monoclev1alpha1.Monocle{}
	m.Name, m.Namespace = "demo", "ns"
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "03-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var operator *appsv1.Deployment
	for _, doc := range strings.Split(string(raw), "\n---") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err == nil && d.Kind == "Deployment" {
			operator = &d
		}
	}
	if operator == nil {
		t.Fatal("no Deployment in deploy/03-operator.yaml")
	}
	rule := NewNetworkPolicy(m, "ops").Spec.Ingress[0]
	if len(rule.From) != 2 || rule.From[1].NamespaceSelector == nil || rule.From[1].PodSelector == nil {
		t.Fatalf("Elasticsearch rule = %+v, want this Monocle's pods and the operator's", rule)
	}
	pods, namespaces := mustSelector(t, rule.From[1].PodSelector), mustSelector(t, rule.From[1].NamespaceSelector)
	if !pods.Matches(labels.Set(operator.Spec.Template.Labels)) {
		t.Errorf("the operator's pods %v are not admitted", operator.Spec.Template.Labels)
	}
	for ns, want := range map[string]bool{"ops": true, "ns": false, "other": false} {
		if got := namespaces.Matches(labels.Set{corev1.LabelMetadataName: ns}); got != want {
			t.Errorf("pods of namespace %s admitted: %v, want %v", ns, got, want)
		}
	}
	if n := len(NewNetworkPolicy(m, "").Spec.Ingress[0].From); n != 1 {
		t.Errorf("outside the cluster the Elasticsearch rule has %d peers, want this Monocle's pods only", n)
	}
}
