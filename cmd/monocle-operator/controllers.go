package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	appslisters "k8s.io/client-go/listers/apps/v1"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"

	"github.com/change-metrics/monocle-operator/pkg/controller"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	clientset "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
	informers "github.com/change-metrics/monocle-operator/pkg/generated/informers/externalversions"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// newControllers builds one controller per watched namespace (one for all namespaces when
// --namespaces is empty), each with its own informers, and returns the functions that start
// those informers.
func newControllers(ctx context.Context, o options, kubeClient *kubeClients, monocleClient clientset.Interface, metadataClient metadata.Interface, dynamicClient dynamic.Interface) ([]*controller.Controller, []func(<-chan struct{}), error) {
	var controllers []*controller.Controller
	var starters []func(<-chan struct{})
	// One fleet rollout across every namespace watched.
	fleet, err := controller.NewFleet(o.rollout, "")
	if err != nil {
		return nil, nil, fmt.Errorf("--rollout-*: %w", err)
	}
	for _, ns := range splitNamespaces(o.namespaces) {
		managedBy := func(lo *metav1.ListOptions) {
			lo.LabelSelector = resources.ManagedByLabel + "=" + resources.ManagedByValue
		}
		kube := &kubeInformers{resync: o.resync, tweak: managedBy}
		core, apps, networking := kubeClient.core, kubeClient.apps, kubeClient.networking
		monocleFactory := informers.NewSharedInformerFactoryWithOptions(monocleClient, o.resync, informers.WithNamespace(ns))
		// User Secrets, and the ConfigMaps of spec.trustedCA, carry no label of ours: their
		// metadata only is watched, to notice a change of a referenced one; their data is
		// read on demand.
		metadataFactory := metadatainformer.NewFilteredSharedInformerFactory(metadataClient, o.resync, ns, nil)
		queueName := "monocle"
		if ns != "" {
			queueName = "monocle_" + ns
		}
		c, err := controller.NewController(ctx, kubeClient, monocleClient, controller.Informers{
			Monocles:               monocleFactory.Monocle().V1alpha1().Monocles(),
			Secrets:                informerOf(kube, core.Secrets(ns), &corev1.Secret{}, corev1.SchemeGroupVersion.WithResource("secrets"), corelisters.NewSecretLister),
			ConfigMaps:             informerOf(kube, core.ConfigMaps(ns), &corev1.ConfigMap{}, corev1.SchemeGroupVersion.WithResource("configmaps"), corelisters.NewConfigMapLister),
			Services:               informerOf(kube, core.Services(ns), &corev1.Service{}, corev1.SchemeGroupVersion.WithResource("services"), corelisters.NewServiceLister),
			Deployments:            informerOf(kube, apps.Deployments(ns), &appsv1.Deployment{}, appsv1.SchemeGroupVersion.WithResource("deployments"), appslisters.NewDeploymentLister),
			StatefulSets:           informerOf(kube, apps.StatefulSets(ns), &appsv1.StatefulSet{}, appsv1.SchemeGroupVersion.WithResource("statefulsets"), appslisters.NewStatefulSetLister),
			Jobs:                   informerOf(kube, kubeClient.batch.Jobs(ns), &batchv1.Job{}, batchv1.SchemeGroupVersion.WithResource("jobs"), batchlisters.NewJobLister),
			PodDisruptionBudgets:   informerOf(kube, kubeClient.policy.PodDisruptionBudgets(ns), &policyv1.PodDisruptionBudget{}, policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), policylisters.NewPodDisruptionBudgetLister),
			PersistentVolumeClaims: informerOf(kube, core.PersistentVolumeClaims(ns), &corev1.PersistentVolumeClaim{}, corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), corelisters.NewPersistentVolumeClaimLister),
			Ingresses:              informerOf(kube, networking.Ingresses(ns), &networkingv1.Ingress{}, networkingv1.SchemeGroupVersion.WithResource("ingresses"), networkinglisters.NewIngressLister),
			NetworkPolicies:        informerOf(kube, networking.NetworkPolicies(ns), &networkingv1.NetworkPolicy{}, networkingv1.SchemeGroupVersion.WithResource("networkpolicies"), networkinglisters.NewNetworkPolicyLister),
			Optional: controller.OptionalAPIs{
				Dynamic: dynamicClient, Discovery: kubeClient.discovery, Namespace: ns,
				Resync: o.resync, TweakListOptions: managedBy, DiscoveryInterval: o.discovery,
			},
			SecretMetadata:    metadataFactory.ForResource(corev1.SchemeGroupVersion.WithResource("secrets")),
			ConfigMapMetadata: metadataFactory.ForResource(corev1.SchemeGroupVersion.WithResource("configmaps")),
		}, queueName, controller.Options{
			Operands:                       operand.Options{Interval: o.readInterval, Timeout: o.readTimeout, DialAddress: o.dialAddress},
			OperatorNamespace:              inClusterNamespace(),
			RefuseCrossNamespaceReferences: !o.crossNSRefs,
			Fleet:                          fleet,
		})
		if err != nil {
			return nil, nil, err
		}
		controllers = append(controllers, c)
		starters = append(starters, kube.start, monocleFactory.Start, metadataFactory.Start)
	}
	return controllers, starters, nil
}
