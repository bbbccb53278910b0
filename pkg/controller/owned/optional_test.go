package owned

import (
	"context"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestWatchReadsEveryObject: a kind added with Watch is watched once its API is served, with
// no label filter (unlike the owned kinds, filtered by TweakListOptions), without
// managedFields, and its events go to its own handler, not to the Registry's.
func TestWatchReadsEveryObject(t *testing.T) {
	obj := func(r schema.GroupVersionResource, kind, name string, labelled bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(r.GroupVersion().String())
		u.SetKind(kind)
		u.SetNamespace("default")
		u.SetName(name)
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "elastic-operator", Operation: metav1.ManagedFieldsOperationUpdate}})
		if labelled {
			u.SetLabels(map[string]string{resources.ManagedByLabel: resources.ManagedByValue})
		}
		return u
	}
	eck, routes := resources.ECKElasticsearchResource, resources.HTTPRouteResource
	dynamic := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{eck: "ElasticsearchList", routes: "HTTPRouteList"},
		obj(routes, "HTTPRoute", "ours", true), obj(routes, "HTTPRoute", "theirs", false))
	// The fake would guess the resource "elasticsearchs" from the kind: name it.
	if err := dynamic.Tracker().Create(eck, obj(eck, "Elasticsearch", "es", false), "default"); err != nil {
		t.Fatal(err)
	}
	kube := k8sfake.NewClientset()
	for _, r := range []schema.GroupVersionResource{eck, routes} {
		kube.Resources = append(kube.Resources, &metav1.APIResourceList{GroupVersion: r.GroupVersion().String(),
			APIResources: []metav1.APIResource{{Name: r.Resource, Namespaced: true}}})
	}

	var mu sync.Mutex
	var toRegistry, toWatch []string
	record := func(to *[]string) cache.ResourceEventHandlerFuncs {
		return cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			mu.Lock()
			defer mu.Unlock()
			*to = append(*to, obj.(*unstructured.Unstructured).GetName())
		}}
	}
	r := NewRegistry(testManager, record(&toRegistry), PodMetadataRecord{})
	o := r.Optional(OptionalAPIs{Dynamic: dynamic, Discovery: kube.Discovery(), TweakListOptions: func(lo *metav1.ListOptions) {
		lo.LabelSelector = resources.ManagedByLabel + "=" + resources.ManagedByValue
	}}, map[schema.GroupVersionResource]string{routes: "HTTPRoute"})
	o.Watch(eck, "Elasticsearch", record(&toWatch))

	ctx, stop := context.WithCancel(testContext(t))
	defer stop()
	o.Refresh(ctx, func() {})
	k, served := o.Kind(eck)
	if !served {
		t.Fatal("the watched kind's API counts as not served")
	}
	es, err := k.Get("default", "es")
	if err != nil {
		t.Fatalf("the unlabelled Elasticsearch is not in the cache: %v", err)
	}
	if es.GetManagedFields() != nil {
		t.Errorf("the cache holds managedFields %v", es.GetManagedFields())
	}
	owned, _ := o.Kind(routes)
	if _, err := owned.Get("default", "theirs"); err == nil {
		t.Error("the owned kind's informer is not filtered on the managed-by label")
	}
	if _, err := owned.Get("default", "ours"); err != nil {
		t.Errorf("the owned kind's labelled object is not cached: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(toWatch) != 1 || toWatch[0] != "es" {
		t.Errorf("the watched kind's handler got %q, want the Elasticsearch", toWatch)
	}
	if len(toRegistry) != 1 || toRegistry[0] != "ours" {
		t.Errorf("the Registry's handler got %q, want the owned HTTPRoute only", toRegistry)
	}
}
