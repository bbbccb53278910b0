package owned

import (
	"context"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestRegisterWiresTheInformer: a registered kind's informer strips managedFields, sends its
// events to the Registry's handler and counts in HasSynced, and its Kind reads the cache.
func TestRegisterWiresTheInformer(t *testing.T) {
	m := newMonocle("demo")
	api := resources.NewAPIDeployment(m, resources.Inputs{})
	api.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}
	client := k8sfake.NewClientset(api)
	factory := kubeinformers.NewSharedInformerFactory(client, 0)
	informer := factory.Apps().V1().Deployments().Informer()

	var mu sync.Mutex
	var added []string
	r := NewRegistry(testManager, cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		mu.Lock()
		defer mu.Unlock()
		added = append(added, obj.(*appsv1.Deployment).Name)
	}}, podMetadata)
	k := Register(r, "Deployment", informer, appsv1.Resource("deployment"),
		func(ns string) Client[*appsv1.Deployment] { return client.AppsV1().Deployments(ns) })
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if r.HasSynced() {
		t.Error("HasSynced before the informer ran")
	}

	ctx, stop := context.WithCancel(testContext(t))
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer stop()
	if !cache.WaitForCacheSync(ctx.Done(), r.HasSynced) {
		t.Fatal("the registered informer did not sync")
	}
	cached, err := k.Get(api.Namespace, api.Name)
	if err != nil {
		t.Fatal(err)
	}
	if cached.ManagedFields != nil {
		t.Errorf("the cache holds managedFields %v", cached.ManagedFields)
	}
	listed, err := k.List(api.Namespace, labels.SelectorFromSet(resources.SelectorLabels(m, resources.ComponentAPI)))
	if err != nil || len(listed) != 1 || listed[0].Name != api.Name {
		t.Errorf("List returned %v, %v; want %s", listed, err, api.Name)
	}
	if listed, _ := k.List(api.Namespace, labels.SelectorFromSet(resources.SelectorLabels(m, resources.ComponentCrawler))); len(listed) != 0 {
		t.Errorf("List of the crawler's labels returned %v, want none", listed)
	}
	if _, err := k.Get(api.Namespace, "demo-missing"); err == nil || err.Error() != `deployment.apps "demo-missing" not found` {
		t.Errorf("Get of a missing object returned %v, want the lister's NotFound", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), added...)
		mu.Unlock()
		if len(got) == 1 && got[0] == api.Name {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the handler saw %v, want the add of %s", got, api.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A transform cannot be set on a running informer: the failure is kept for Err.
	Register(r, "Deployment", informer, appsv1.Resource("deployment"),
		func(ns string) Client[*appsv1.Deployment] { return client.AppsV1().Deployments(ns) })
	if r.Err() == nil {
		t.Error("Err is nil after a Register on a running informer")
	}
}
