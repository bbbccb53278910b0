package resources

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// NeedsAPIDisruptionBudget reports whether the API runs enough replicas for a
// PodDisruptionBudget to protect it: more than one. With one replica a budget would block
// node drains for good.
func NeedsAPIDisruptionBudget(m *monoclev1alpha1.Monocle) bool { return APIReplicas(m) > 1 }

// NewAPIPodDisruptionBudget builds the PodDisruptionBudget "<name>-api" that lets voluntary
// disruptions (drains, evictions) take at most one API pod at a time. Pods that are not ready
// may always be evicted (unhealthyPodEvictionPolicy AlwaysAllow, GA in Kubernetes 1.31 and on
// by default since 1.27): a budget that counts them would hang a node drain while every API
// pod is unready, as after a bad image, and protects nothing (they serve no request).
func NewAPIPodDisruptionBudget(m *monoclev1alpha1.Monocle) *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: objectMeta(m, APIName(m), ComponentAPI),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable:             ptr.To(intstr.FromInt32(1)),
			Selector:                   &metav1.LabelSelector{MatchLabels: SelectorLabels(m, ComponentAPI)},
			UnhealthyPodEvictionPolicy: ptr.To(policyv1.AlwaysAllow),
		},
	}
	setSpecHash(&p.ObjectMeta, p.Spec)
	return p
}
