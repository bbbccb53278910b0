package owned

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// OptionalAPIs is what the controller needs to own the kinds of APIs a cluster may or may not
// serve (the Gateway API's HTTPRoute, OpenShift's Route): discovery tells which are served, at
// start and every DiscoveryInterval after, so a CRD installed later is picked up; the dynamic
// client reads and writes their objects as unstructured ones, through an informer started
// only while the API is served.
type OptionalAPIs struct {
	// Dynamic reads and writes the objects.
	Dynamic dynamic.Interface
	// Discovery finds the served APIs.
	Discovery discovery.DiscoveryInterface
	// Namespace limits the informers to one namespace; empty means all.
	Namespace string
	// Resync is the informers' resync period.
	Resync time.Duration
	// TweakListOptions filters the informers (on resources.ManagedByLabel, as the other owned
	// kinds' informers).
	TweakListOptions dynamicinformer.TweakListOptionsFunc
	// DiscoveryInterval is how often discovery runs again after start. Zero means a minute.
	DiscoveryInterval time.Duration
}

// defaultDiscoveryInterval is the discovery period when OptionalAPIs.DiscoveryInterval is 0.
const defaultDiscoveryInterval = time.Minute

// optionalKind is one kind of an optional API: owned, or only read (Watch).
type optionalKind struct {
	resource schema.GroupVersionResource
	kind     string
	// readOnly kinds are watched unfiltered, without the managedFields, and their events go
	// to handler rather than to the Registry's.
	readOnly bool
	handler  cache.ResourceEventHandler

	mu sync.Mutex
	// informer is nil while the API is not served; stop ends it.
	informer cache.SharedIndexInformer
	stop     context.CancelFunc
}

// Optional holds the owned kinds of optional APIs and starts or stops their informers as
// discovery finds their APIs served or gone. Their events go to the handler of the Registry
// that made it.
type Optional struct {
	apis     OptionalAPIs
	handler  cache.ResourceEventHandler
	manager  string
	contests *Contests
	kinds    []*optionalKind
}

// Optional returns the owned kinds of optional APIs: kinds maps each resource to its kind's
// name ("HTTPRoute"). Their informers run once Refresh finds their APIs served.
func (r *Registry) Optional(apis OptionalAPIs, kinds map[schema.GroupVersionResource]string) *Optional {
	o := &Optional{apis: apis, handler: r.handler, manager: r.manager, contests: r.contests}
	for res, k := range kinds {
		o.kinds = append(o.kinds, &optionalKind{resource: res, kind: k})
	}
	slices.SortFunc(o.kinds, func(a, b *optionalKind) int { return cmp.Compare(a.kind, b.kind) })
	return o
}

// Watch adds kind (its name, "Elasticsearch") of resource r, an optional API whose objects
// the controller only reads, never writes or owns (ECK's Elasticsearch): while the API is
// served, an informer lists and watches them all in OptionalAPIs.Namespace, without the
// TweakListOptions filter (they carry no label of the operator's) and without their
// managedFields (StripManagedFields), and sends their events to handler. Kind(r) then reads
// them from its cache. Call it before the first Refresh.
func (o *Optional) Watch(r schema.GroupVersionResource, kind string, handler cache.ResourceEventHandler) {
	o.kinds = append(o.kinds, &optionalKind{resource: r, kind: kind, readOnly: true, handler: handler})
	slices.SortFunc(o.kinds, func(a, b *optionalKind) int { return cmp.Compare(a.kind, b.kind) })
}

// Enabled reports whether o has the clients discovery and the informers need; without them
// every optional API counts as not served.
func (o *Optional) Enabled() bool {
	return o.apis.Dynamic != nil && o.apis.Discovery != nil
}

// served reports whether discovery lists resource r.
func served(d discovery.DiscoveryInterface, r schema.GroupVersionResource) (bool, error) {
	list, err := d.ServerResourcesForGroupVersion(r.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, res := range list.APIResources {
		if res.Name == r.Resource {
			return true, nil
		}
	}
	return false, nil
}

// Refresh runs discovery and starts the informer of each kind whose API is now served (with
// the Registry's event handler, or the handler of a kind Watch added) and stops the one of each kind whose API is gone. changed is
// called, once the new informers have synced, when anything changed. A discovery error
// leaves that kind as it was.
func (o *Optional) Refresh(ctx context.Context, changed func()) {
	logger := klog.FromContext(ctx)
	var started []cache.InformerSynced
	anyChange := false
	for _, k := range o.kinds {
		ok, err := served(o.apis.Discovery, k.resource)
		if err != nil {
			logger.Error(err, "Discovery failed; keeping what was known", "resource", k.resource.String())
			continue
		}
		k.mu.Lock()
		switch {
		case ok && k.informer == nil:
			tweak, handler := o.apis.TweakListOptions, o.handler
			if k.readOnly {
				tweak, handler = nil, k.handler
			}
			inf := dynamicinformer.NewFilteredDynamicInformer(o.apis.Dynamic, k.resource, o.apis.Namespace, o.apis.Resync,
				cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, tweak).Informer()
			if k.readOnly {
				err = inf.SetTransform(StripManagedFields)
			}
			if err == nil {
				_, err = inf.AddEventHandler(handler)
			}
			if err != nil {
				logger.Error(err, "Setting up the informer", "resource", k.resource.String())
				k.mu.Unlock()
				continue
			}
			ictx, stop := context.WithCancel(ctx)
			go inf.RunWithContext(ictx)
			k.informer, k.stop = inf, stop
			started = append(started, inf.HasSynced)
			anyChange = true
			logger.Info("API served: watching its objects", "resource", k.resource.String())
		case !ok && k.informer != nil:
			k.stop()
			k.informer, k.stop = nil, nil
			anyChange = true
			logger.Info("API no longer served: stopped watching its objects", "resource", k.resource.String())
		}
		k.mu.Unlock()
	}
	if !anyChange {
		return
	}
	if len(started) > 0 {
		cache.WaitForCacheSync(ctx.Done(), started...)
	}
	changed()
}

// Run runs Refresh every OptionalAPIs.DiscoveryInterval until ctx ends.
func (o *Optional) Run(ctx context.Context, changed func()) {
	interval := o.apis.DiscoveryInterval
	if interval == 0 {
		interval = defaultDiscoveryInterval
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			o.Refresh(ctx, changed)
		}
	}
}

// HasSynced reports whether every running informer has synced.
func (o *Optional) HasSynced() bool {
	for _, k := range o.kinds {
		k.mu.Lock()
		inf := k.informer
		k.mu.Unlock()
		if inf != nil && !inf.HasSynced() {
			return false
		}
	}
	return true
}

// Kind returns the Kind of resource r, and false while its API is not served (or its
// informer has not synced yet). It reads and writes unstructured objects, with the drift rule
// of unstructured objects (drift.go); the controller only reads those of a kind Watch added.
func (o *Optional) Kind(r schema.GroupVersionResource) (Kind[*unstructured.Unstructured], bool) {
	for _, k := range o.kinds {
		if k.resource != r {
			continue
		}
		k.mu.Lock()
		inf := k.informer
		k.mu.Unlock()
		if inf == nil || !inf.HasSynced() {
			return Kind[*unstructured.Unstructured]{}, false
		}
		kind := newKind(k.kind, inf.GetIndexer(), r.GroupResource(), func(ns string) Client[*unstructured.Unstructured] {
			return dynamicClient{o.apis.Dynamic.Resource(r).Namespace(ns)}
		}, o.manager, PodMetadataRecord{}).WithDrift(unstructuredDiffers, mergeUnstructured)
		kind.contests = o.contests
		return kind, true
	}
	return Kind[*unstructured.Unstructured]{}, false
}

// dynamicClient adapts a dynamic client's namespaced resource to Client.
type dynamicClient struct{ r dynamic.ResourceInterface }

func (d dynamicClient) Get(ctx context.Context, name string, opts metav1.GetOptions) (*unstructured.Unstructured, error) {
	return d.r.Get(ctx, name, opts)
}

func (d dynamicClient) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions) (*unstructured.Unstructured, error) {
	return d.r.Create(ctx, obj, opts)
}

func (d dynamicClient) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return d.r.Update(ctx, obj, opts)
}

func (d dynamicClient) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return d.r.Delete(ctx, name, opts)
}
