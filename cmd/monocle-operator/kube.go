package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	typedappsv1 "k8s.io/client-go/kubernetes/typed/apps/v1"
	typedbatchv1 "k8s.io/client-go/kubernetes/typed/batch/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	typednetworkingv1 "k8s.io/client-go/kubernetes/typed/networking/v1"
	typedpolicyv1 "k8s.io/client-go/kubernetes/typed/policy/v1"
	typedstoragev1 "k8s.io/client-go/kubernetes/typed/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/change-metrics/monocle-operator/pkg/version"
)

// kubeClients are the typed clients of the Kubernetes API groups the operator uses, and a
// discovery client. They share one HTTP client and one client-side rate limiter, as the
// clients of a kubernetes.Clientset do; unlike that clientset, which builds the client of
// every API group, they make the linker keep only these groups' clients. They implement
// controller.KubeClient.
type kubeClients struct {
	core       *typedcorev1.CoreV1Client
	apps       *typedappsv1.AppsV1Client
	batch      *typedbatchv1.BatchV1Client
	policy     *typedpolicyv1.PolicyV1Client
	networking *typednetworkingv1.NetworkingV1Client
	storage    *typedstoragev1.StorageV1Client
	discovery  *discovery.DiscoveryClient
}

// newKubeClients builds the clients from cfg as kubernetes.NewForConfig builds a clientset:
// one transport for all, and a token bucket of cfg.QPS and cfg.Burst unless cfg has a rate
// limiter. The error reports a configuration no HTTP client can be built from, or a QPS
// without a burst.
func newKubeClients(cfg *rest.Config) (*kubeClients, error) {
	cfg = rest.CopyConfig(cfg)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		if cfg.Burst <= 0 {
			return nil, errors.New("burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0")
		}
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	var k kubeClients
	var errs [7]error
	k.core, errs[0] = typedcorev1.NewForConfigAndClient(cfg, httpClient)
	k.apps, errs[1] = typedappsv1.NewForConfigAndClient(cfg, httpClient)
	k.batch, errs[2] = typedbatchv1.NewForConfigAndClient(cfg, httpClient)
	k.policy, errs[3] = typedpolicyv1.NewForConfigAndClient(cfg, httpClient)
	k.networking, errs[4] = typednetworkingv1.NewForConfigAndClient(cfg, httpClient)
	k.storage, errs[5] = typedstoragev1.NewForConfigAndClient(cfg, httpClient)
	k.discovery, errs[6] = discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return &k, nil
}

// checkServerVersion returns an error unless the API server d reaches runs Kubernetes
// version.MinKubernetes or later: the error names both versions and what the older one
// lacks. An API server whose version cannot be read or parsed is an error too.
func checkServerVersion(d discovery.ServerVersionInterface) error {
	info, err := d.ServerVersion()
	if err != nil {
		return fmt.Errorf("reading the API server's version: %w", err)
	}
	got, err := utilversion.ParseGeneric(info.GitVersion)
	if err != nil {
		return fmt.Errorf("the API server's version %q: %w", info.GitVersion, err)
	}
	if !got.AtLeast(utilversion.MustParseGeneric(version.MinKubernetes)) {
		return fmt.Errorf("the API server runs Kubernetes %s; monocle-operator needs %s or later "+
			"(the Monocle CRD's validation rules use CEL's Quantity library, and the Elasticsearch proxy runs as a native sidecar)",
			info.GitVersion, version.MinKubernetes)
	}
	return nil
}

// CoreV1 returns the client of the core/v1 API group.
func (k *kubeClients) CoreV1() typedcorev1.CoreV1Interface { return k.core }

// AppsV1 returns the client of the apps/v1 API group.
func (k *kubeClients) AppsV1() typedappsv1.AppsV1Interface { return k.apps }

// BatchV1 returns the client of the batch/v1 API group.
func (k *kubeClients) BatchV1() typedbatchv1.BatchV1Interface { return k.batch }

// PolicyV1 returns the client of the policy/v1 API group.
func (k *kubeClients) PolicyV1() typedpolicyv1.PolicyV1Interface { return k.policy }

// NetworkingV1 returns the client of the networking.k8s.io/v1 API group.
func (k *kubeClients) NetworkingV1() typednetworkingv1.NetworkingV1Interface { return k.networking }

// StorageV1 returns the client of the storage.k8s.io/v1 API group.
func (k *kubeClients) StorageV1() typedstoragev1.StorageV1Interface { return k.storage }

// kindInformer is an informer of one kind and a lister on its cache: it implements the
// per-kind informer interfaces of k8s.io/client-go/informers (coreinformers.SecretInformer
// and the like) for a lister type L.
type kindInformer[L any] struct {
	informer cache.SharedIndexInformer
	lister   L
}

// Informer returns the shared informer.
func (k kindInformer[L]) Informer() cache.SharedIndexInformer { return k.informer }

// Lister returns the lister reading the informer's cache.
func (k kindInformer[L]) Lister() L { return k.lister }

// listWatcher is the List and Watch of a typed client of one kind in one namespace
// (typedcorev1.SecretInterface and the like), whose List returns a T.
type listWatcher[T runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (T, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// kubeInformers builds informers of Kubernetes kinds as the shared informer factory of
// k8s.io/client-go/informers does, without that factory, which links the informers and
// clients of every API group. Its informers run from start.
type kubeInformers struct {
	// resync is every informer's resync period.
	resync time.Duration
	// tweak edits the options of every list and watch (a label selector).
	tweak     func(*metav1.ListOptions)
	informers []cache.SharedIndexInformer
}

// informerOf returns an informer of the kind of obj (whose resource is gvr) listed and watched
// through client (which sets the namespace), with the lister newLister builds on its cache,
// and adds it to k's informers. The informer is the one the generated informer of that kind in
// k8s.io/client-go/informers builds: namespace index, resync period and list options of k.
func informerOf[T runtime.Object, L any](k *kubeInformers, client listWatcher[T], obj runtime.Object, gvr schema.GroupVersionResource, newLister func(cache.Indexer) L) kindInformer[L] {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			k.tweak(&opts)
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			k.tweak(&opts)
			return client.Watch(ctx, opts)
		},
	}
	var name *cache.InformerName // as a factory without an informer name
	informer := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), obj,
		cache.SharedIndexInformerOptions{
			ResyncPeriod: k.resync,
			Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
			Identifier:   name.WithResource(gvr),
		})
	k.informers = append(k.informers, informer)
	return kindInformer[L]{informer: informer, lister: newLister(informer.GetIndexer())}
}

// start runs every informer of k until stopCh closes.
func (k *kubeInformers) start(stopCh <-chan struct{}) {
	for _, informer := range k.informers {
		go informer.Run(stopCh)
	}
}
