package controller

import (
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// TestConvergedReportsReady: the status of a converged Monocle says Ready, its version and
// its ready components, and no rollout.
func TestConvergedReportsReady(t *testing.T) {
	m, _ := converged(t, newMonocle("demo"))
	ready := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v, want True", ready)
	}
	if m.Status.Version != "1.11.2" || !m.Status.API.Ready || !m.Status.Crawler.Ready || !m.Status.Elasticsearch.Ready {
		t.Errorf("status = %+v", m.Status)
	}
	if p := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionProgressing); p == nil || p.Status != metav1.ConditionFalse {
		t.Errorf("Progressing = %+v, want False", p)
	}
}
