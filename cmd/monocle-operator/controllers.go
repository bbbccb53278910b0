package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"

	"github.com/change-metrics/monocle-operator/pkg/controller"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	clientset "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
	informers "github.com/change-metrics/monocle-operator/pkg/generated/informers/externalversions"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// newControllers builds one controller per watched namespace (one for all namespaces when
// --namespaces is empty), each with its own informer factories, and returns the functions
// that start those factories.
func newControllers(ctx context.Context, o options, kubeClient kubernetes.Interface, monocleClient clientset.Interface, metadataClient metadata.Interface, dynamicClient dynamic.Interface) ([]*controller.Controller, []func(<-chan struct{}), error) {
	var controllers []*controller.Controller
	var starters []func(<-chan struct{})
	for _, ns := range splitNamespaces(o.namespaces) {
		managedBy := func(lo *metav1.ListOptions) {
			lo.LabelSelector = resources.ManagedByLabel + "=" + resources.ManagedByValue
		}
		kubeFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, o.resync,
			kubeinformers.WithNamespace(ns), kubeinformers.WithTweakListOptions(managedBy))
		monocleFactory := informers.NewSharedInformerFactoryWithOptions(monocleClient, o.resync, informers.WithNamespace(ns))
		// User Secrets carry no label of ours: their metadata only is watched, to notice a
		// change of a referenced one; their data is read on demand.
		metadataFactory := metadatainformer.NewFilteredSharedInformerFactory(metadataClient, o.resync, ns, nil)
		queueName := "monocle"
		if ns != "" {
			queueName = "monocle_" + ns
		}
		c, err := controller.NewController(ctx, kubeClient, monocleClient, controller.Informers{
			Monocles:               monocleFactory.Monocle().V1alpha1().Monocles(),
			Secrets:                kubeFactory.Core().V1().Secrets(),
			ConfigMaps:             kubeFactory.Core().V1().ConfigMaps(),
			Services:               kubeFactory.Core().V1().Services(),
			Deployments:            kubeFactory.Apps().V1().Deployments(),
			StatefulSets:           kubeFactory.Apps().V1().StatefulSets(),
			Jobs:                   kubeFactory.Batch().V1().Jobs(),
			PodDisruptionBudgets:   kubeFactory.Policy().V1().PodDisruptionBudgets(),
			PersistentVolumeClaims: kubeFactory.Core().V1().PersistentVolumeClaims(),
			Ingresses:              kubeFactory.Networking().V1().Ingresses(),
			NetworkPolicies:        kubeFactory.Networking().V1().NetworkPolicies(),
			Optional: controller.OptionalAPIs{
				Dynamic: dynamicClient, Discovery: kubeClient.Discovery(), Namespace: ns,
				Resync: o.resync, TweakListOptions: managedBy, DiscoveryInterval: o.discovery,
			},
			SecretMetadata: metadataFactory.ForResource(corev1.SchemeGroupVersion.WithResource("secrets")),
		}, queueName)
		if err != nil {
			return nil, nil, err
		}
		c.ReadOperands(ctx, operand.Options{Interval: o.readInterval, Timeout: o.readTimeout,
			DialAddress: o.dialAddress, OperatorNamespace: inClusterNamespace()})
		controllers = append(controllers, c)
		starters = append(starters, kubeFactory.Start, monocleFactory.Start, metadataFactory.Start)
	}
	return controllers, starters, nil
}
