package resources

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// NetworkPolicyName is the name of the NetworkPolicy of Monocle m: "<name>".
func NetworkPolicyName(m *monoclev1alpha1.Monocle) string { return m.Name }

// NewNetworkPolicy builds the NetworkPolicy "<name>" that guards the pods of Monocle m that
// listen on the network, its Elasticsearch and API pods (policyTypes Ingress only: egress is
// left alone, the crawler reaches the providers on the internet):
//   - Elasticsearch has no authentication (Monocle runs it with security off), so its port
//     9200 admits only this Monocle's own pods: the API, the crawler and the maintenance Jobs,
//     which carry the instance's labels. Another Monocle's pods in the same namespace, or any
//     other pod of the cluster, are refused.
//   - When the operator runs in the cluster, in namespace operatorNamespace (not ""), its
//     pods (app.kubernetes.io/name=monocle-operator there, as deploy/ and the Helm chart
//     label them) are admitted to port 9200 too: the operator reads Elasticsearch's health.
//   - With spec.elasticsearch.exporter, the exporter's port 9114 admits every source, as the
//     API's does: Prometheus runs in a namespace the operator does not know.
//   - With elasticsearchRef or external there is no Elasticsearch pod: the policy guards the
//     API pods alone, and the rule of port 9200 is left out.
//   - The API's port 8080 admits every source: the web UI's users come through an Ingress
//     controller, a Gateway or an OpenShift router that run in namespaces the operator does
//     not know, and the crawler of this Monocle reaches it too. No other port of those pods is
//     admitted.
//
// The ports are numbers, not names: both containers name their port "http". A policy is
// enforced only by a network plugin that implements NetworkPolicy (Calico, Cilium,
// OVN-Kubernetes...); elsewhere it is inert. Kubelet probes are not affected.
func NewNetworkPolicy(m *monoclev1alpha1.Monocle, operatorNamespace string) *networkingv1.NetworkPolicy {
	tcp := ptr.To(corev1.ProtocolTCP)
	p := &networkingv1.NetworkPolicy{
		ObjectMeta: objectMeta(m, NetworkPolicyName(m), ""),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{
				MatchLabels: map[string]string{NameLabel: "monocle", InstanceLabel: m.Name},
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: ComponentLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{ComponentAPI, ComponentElastic},
				}},
			},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{
				{
					From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{
						MatchLabels: map[string]string{NameLabel: "monocle", InstanceLabel: m.Name},
					}}},
					Ports: []networkingv1.NetworkPolicyPort{{Protocol: tcp, Port: ptr.To(intstr.FromInt32(ElasticPort))}},
				},
				{
					Ports: []networkingv1.NetworkPolicyPort{{Protocol: tcp, Port: ptr.To(intstr.FromInt32(APIPort))}},
				},
			},
		},
	}
	if m.Spec.Elasticsearch.Exporter != nil {
		// The exporter's metrics go to a Prometheus of a namespace the operator does not
		// know; they are Elasticsearch's statistics, not its documents.
		p.Spec.Ingress = append(p.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: tcp, Port: ptr.To(intstr.FromInt32(ExporterPort))}},
		})
	}
	if !BundledElasticsearch(m) {
		p.Spec.PodSelector.MatchExpressions[0].Values = []string{ComponentAPI}
		p.Spec.Ingress = p.Spec.Ingress[1:]
	} else if operatorNamespace != "" {
		p.Spec.Ingress[0].From = append(p.Spec.Ingress[0].From, networkingv1.NetworkPolicyPeer{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: operatorNamespace}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{NameLabel: OperatorName}},
		})
	}
	// The policy belongs to no one component.
	delete(p.Labels, ComponentLabel)
	setSpecHash(&p.ObjectMeta, p.Spec)
	return p
}
