package controller

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned/fake"
	informers "github.com/change-metrics/monocle-operator/pkg/generated/informers/externalversions"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// fixture follows kubernetes/sample-controller's: objects are seeded into the informer
// indexers (what the controller reads) and into the fake clientsets (what it writes to), a
// sync runs, and the recorded write actions are checked.
type fixture struct {
	t *testing.T

	kubeclient *k8sfake.Clientset
	client     *fake.Clientset
	recorder   *record.FakeRecorder

	monocles    []*monoclev1alpha1.Monocle
	kubeobjects []runtime.Object
	// uncached are objects the API server has but the label-filtered informers do not see.
	uncached []runtime.Object
	// userSecrets are Secrets the user made: in the API server and the metadata cache only.
	userSecrets []*corev1.Secret

	// controller is the last one newController built.
	controller *Controller
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t}
}

func newMonocle(name string) *monoclev1alpha1.Monocle {
	return &monoclev1alpha1.Monocle{
		TypeMeta:   metav1.TypeMeta{APIVersion: monoclev1alpha1.SchemeGroupVersion.String(), Kind: "Monocle"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: "uid-" + "0b6f6a36", Generation: 1},
	}
}

func (f *fixture) newController() *Controller {
	_, ctx := ktesting.NewTestContext(f.t)
	var objects []runtime.Object
	for _, m := range f.monocles {
		objects = append(objects, m)
	}
	f.client = fake.NewSimpleClientset(objects...)
	all := append(append([]runtime.Object(nil), f.kubeobjects...), f.uncached...)
	for _, s := range f.userSecrets {
		all = append(all, s)
	}
	f.kubeclient = k8sfake.NewClientset(all...)
	i := informers.NewSharedInformerFactory(f.client, 0)
	k := kubeinformers.NewSharedInformerFactory(f.kubeclient, 0)
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		f.t.Fatal(err)
	}
	md := metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(scheme), 0)
	secretMetadata := md.ForResource(corev1.SchemeGroupVersion.WithResource("secrets"))
	c, err := NewController(ctx, f.kubeclient, f.client, Informers{
		Monocles:               i.Monocle().V1alpha1().Monocles(),
		Secrets:                k.Core().V1().Secrets(),
		ConfigMaps:             k.Core().V1().ConfigMaps(),
		Services:               k.Core().V1().Services(),
		Deployments:            k.Apps().V1().Deployments(),
		StatefulSets:           k.Apps().V1().StatefulSets(),
		Jobs:                   k.Batch().V1().Jobs(),
		PodDisruptionBudgets:   k.Policy().V1().PodDisruptionBudgets(),
		PersistentVolumeClaims: k.Core().V1().PersistentVolumeClaims(),
		SecretMetadata:         secretMetadata,
	}, "test")
	if err != nil {
		f.t.Fatal(err)
	}
	f.recorder = record.NewFakeRecorder(100)
	c.recorder = f.recorder
	c.random = rand.New(rand.NewSource(1))
	for _, m := range f.monocles {
		mustAdd(f.t, i.Monocle().V1alpha1().Monocles().Informer().GetIndexer(), m)
	}
	for _, obj := range f.kubeobjects {
		var indexer cache.Indexer
		switch obj.(type) {
		case *corev1.Secret:
			indexer = k.Core().V1().Secrets().Informer().GetIndexer()
		case *corev1.ConfigMap:
			indexer = k.Core().V1().ConfigMaps().Informer().GetIndexer()
		case *corev1.Service:
			indexer = k.Core().V1().Services().Informer().GetIndexer()
		case *appsv1.Deployment:
			indexer = k.Apps().V1().Deployments().Informer().GetIndexer()
		case *appsv1.StatefulSet:
			indexer = k.Apps().V1().StatefulSets().Informer().GetIndexer()
		case *batchv1.Job:
			indexer = k.Batch().V1().Jobs().Informer().GetIndexer()
		case *policyv1.PodDisruptionBudget:
			indexer = k.Policy().V1().PodDisruptionBudgets().Informer().GetIndexer()
		case *corev1.PersistentVolumeClaim:
			indexer = k.Core().V1().PersistentVolumeClaims().Informer().GetIndexer()
		default:
			f.t.Fatalf("unexpected seeded object %T", obj)
		}
		mustAdd(f.t, indexer, obj)
	}
	for _, s := range f.userSecrets {
		mustAdd(f.t, secretMetadata.Informer().GetIndexer(), &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: s.ObjectMeta})
	}
	f.controller = c
	return c
}

func mustAdd(t *testing.T, indexer cache.Indexer, obj any) {
	t.Helper()
	if err := indexer.Add(obj); err != nil {
		t.Fatal(err)
	}
}

// run syncs the fixture's first Monocle once and returns the write actions of both clients.
func (f *fixture) run() (kubeWrites, monocleWrites []core.Action) {
	f.t.Helper()
	c := f.newController()
	_, ctx := ktesting.NewTestContext(f.t)
	m := f.monocles[0]
	if err := c.syncHandler(ctx, cache.ObjectName{Namespace: m.Namespace, Name: m.Name}); err != nil {
		f.t.Logf("sync returned: %v", err)
	}
	return writes(f.kubeclient.Actions()), writes(f.client.Actions())
}

// writes drops reads and the events the broadcaster may send.
func writes(actions []core.Action) []core.Action {
	var out []core.Action
	for _, a := range actions {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" || a.GetResource().Resource == "events" {
			continue
		}
		out = append(out, a)
	}
	return out
}

func describe(actions []core.Action) []string {
	var out []string
	for _, a := range actions {
		name := ""
		switch a := a.(type) {
		case core.CreateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case core.UpdateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case core.DeleteAction:
			name = a.GetName()
		}
		s := fmt.Sprintf("%s %s %s", a.GetVerb(), a.GetResource().Resource, name)
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	return out
}

func expectActions(t *testing.T, got []core.Action, want ...string) {
	t.Helper()
	gotDesc := describe(got)
	if !equality.Semantic.DeepEqual(sortedCopy(gotDesc), sortedCopy(want)) {
		t.Errorf("actions differ\n got: %q\nwant: %q", gotDesc, want)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// converged returns the objects the first sync of m creates, with ready workload statuses,
// and m with the status that sync wrote.
func converged(t *testing.T, m *monoclev1alpha1.Monocle, userSecrets ...*corev1.Secret) (*monoclev1alpha1.Monocle, []runtime.Object) {
	t.Helper()
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.userSecrets = userSecrets
	kubeWrites, monocleWrites := f.run()
	var objects []runtime.Object
	for _, a := range kubeWrites {
		obj := a.(core.CreateAction).GetObject().DeepCopyObject()
		switch o := obj.(type) {
		case *appsv1.Deployment:
			r := ptr.Deref(o.Spec.Replicas, 1)
			o.Status = appsv1.DeploymentStatus{ObservedGeneration: o.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r}
		case *appsv1.StatefulSet:
			o.Status = appsv1.StatefulSetStatus{ObservedGeneration: o.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1,
				CurrentRevision: "r1", UpdateRevision: "r1"}
		}
		objects = append(objects, obj)
	}
	out := m.DeepCopy()
	if len(monocleWrites) == 1 {
		out = monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).DeepCopy()
	}
	// Sync once more against the ready workloads so the status says Ready.
	f = newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{out}
	f.userSecrets = userSecrets
	f.kubeobjects = objects
	_, monocleWrites = f.run()
	if len(monocleWrites) == 1 {
		out = monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).DeepCopy()
	}
	return out, objects
}

func find[T runtime.Object](objects []runtime.Object, name string) T {
	for _, o := range objects {
		if t, ok := o.(T); ok && o.(metav1.Object).GetName() == name {
			return t
		}
	}
	var zero T
	return zero
}

func TestCreatesAllObjects(t *testing.T) {
	f := newFixture(t)
	m := newMonocle("demo")
	f.monocles = []*monoclev1alpha1.Monocle{m}
	kubeWrites, monocleWrites := f.run()

	expectActions(t, kubeWrites,
		"create secrets demo-api", "create secrets demo-api-keys", "create configmaps demo-api",
		"create services demo-elastic", "create statefulsets demo-elastic",
		"create services demo-api", "create deployments demo-api", "create deployments demo-crawler")
	expectActions(t, monocleWrites, "update monocles demo/status")

	var objects []runtime.Object
	for _, a := range kubeWrites {
		objects = append(objects, a.(core.CreateAction).GetObject())
	}
	secret := find[*corev1.Secret](objects, "demo-api")
	for _, k := range resources.GeneratedKeys {
		if !resources.ValidKey(k, secret.Data[k]) {
			t.Errorf("generated %s = %q is not a valid key", k, secret.Data[k])
		}
	}
	if string(secret.Data[resources.CrawlersAPIKeyKey]) == string(secret.Data[resources.JWKGenKeyKey]) {
		t.Error("the two generated keys are equal")
	}
	in := resources.Inputs{ConfigHash: resources.ConfigHash(resources.DefaultConfig), SecretHash: resources.SecretHash(secret.Data, "")}
	wantAPI := resources.NewAPIDeployment(m, in)
	if got := find[*appsv1.Deployment](objects, "demo-api"); !equality.Semantic.DeepEqual(got, wantAPI) {
		t.Errorf("API Deployment differs from the builder's:\n got: %+v\nwant: %+v", got, wantAPI)
	}
	if got := find[*appsv1.StatefulSet](objects, "demo-elastic"); !equality.Semantic.DeepEqual(got, resources.NewElasticStatefulSet(m, resources.ElasticDataVolume)) {
		t.Error("Elasticsearch StatefulSet differs from the builder's")
	}
	for _, o := range objects {
		if !isControlledBy(o.(metav1.Object), m) {
			t.Errorf("%T %s is not controlled by the Monocle", o, o.(metav1.Object).GetName())
		}
		if o.(metav1.Object).GetLabels()[resources.ManagedByLabel] != resources.ManagedByValue {
			t.Errorf("%T %s lacks the managed-by label the informers select on", o, o.(metav1.Object).GetName())
		}
	}

	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).Status
	ready := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != ReasonComponentsNotReady {
		t.Errorf("Ready condition after creation = %+v, want False/%s", ready, ReasonComponentsNotReady)
	}
	if status.ObservedGeneration != 1 || status.URL != "http://demo-api.default.svc:8080" {
		t.Errorf("status = %+v", status)
	}
	if n := len(f.recorder.Events); n != 8 {
		t.Errorf("recorded %d events, want one per created object (8)", n)
	}
}

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

func TestSecondSyncMakesNoCalls(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	kubeWrites, monocleWrites := f.run()
	expectActions(t, kubeWrites)
	expectActions(t, monocleWrites)
	if n := len(f.recorder.Events); n != 0 {
		t.Errorf("a converged sync recorded %d events", n)
	}
	// Reads come from the listers: the clients see no call at all.
	if n := len(f.kubeclient.Actions()) + len(f.client.Actions()); n != 0 {
		t.Errorf("a converged sync made %d API calls: %v %v", n, describe(f.kubeclient.Actions()), describe(f.client.Actions()))
	}
}

func TestDriftIsCorrected(t *testing.T) {
	// With spec.config set, the ConfigMap is the operator's: an edit there is drift.
	withConfig := newMonocle("demo")
	withConfig.Spec.Config = resources.DefaultConfig
	m, objects := converged(t, withConfig)
	api := find[*appsv1.Deployment](objects, "demo-api")
	api.Spec.Replicas = ptr.To[int32](0)
	svc := find[*corev1.Service](objects, "demo-api")
	svc.Spec.Ports[0].Port = 9999
	svc.Spec.ClusterIP = "10.96.0.10"
	cm := find[*corev1.ConfigMap](objects, "demo-api")
	cm.Data["config.yaml"] = "workspaces: []\n"
	// Someone else's label and annotation are not drift.
	crawler := find[*appsv1.Deployment](objects, "demo-crawler")
	crawler.Labels["team"] = "x"
	crawler.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = "now"

	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	kubeWrites, _ := f.run()
	expectActions(t, kubeWrites, "update deployments demo-api", "update services demo-api", "update configmaps demo-api")
	for _, a := range kubeWrites {
		switch o := a.(core.UpdateAction).GetObject().(type) {
		case *appsv1.Deployment:
			if *o.Spec.Replicas != 1 {
				t.Errorf("API replicas after repair = %d, want 1", *o.Spec.Replicas)
			}
		case *corev1.Service:
			if o.Spec.Ports[0].Port != resources.APIPort || o.Spec.ClusterIP != "10.96.0.10" {
				t.Errorf("Service after repair: port %d clusterIP %q", o.Spec.Ports[0].Port, o.Spec.ClusterIP)
			}
		case *corev1.ConfigMap:
			if o.Data["config.yaml"] != resources.DefaultConfig {
				t.Errorf("config after repair = %q", o.Data["config.yaml"])
			}
		}
	}
}

func TestForeignObjectIsNotOverwritten(t *testing.T) {
	m := newMonocle("demo")
	foreign := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "demo-api", Namespace: m.Namespace,
		Labels: map[string]string{resources.ManagedByLabel: resources.ManagedByValue}}}
	other := newMonocle("demo")
	other.UID = "another-uid"
	foreignCrawler := resources.NewCrawlerDeployment(other, resources.Inputs{})

	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = []runtime.Object{foreign, foreignCrawler}
	// Without our label, this one is invisible to the cache: only the create fails.
	f.uncached = []runtime.Object{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "demo-api", Namespace: m.Namespace}}}
	kubeWrites, monocleWrites := f.run()
	for _, d := range describe(kubeWrites) {
		if strings.Contains(d, "deployments") || strings.Contains(d, "update services") {
			t.Errorf("wrote an object it does not control: %s", d)
		}
	}
	expectActions(t, monocleWrites, "update monocles demo/status")
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).Status
	degraded := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionDegraded)
	if degraded == nil || degraded.Status != metav1.ConditionTrue || degraded.Reason != ReasonNameConflict ||
		!strings.Contains(degraded.Message, "Deployment demo-api") || !strings.Contains(degraded.Message, "Deployment demo-crawler") ||
		!strings.Contains(degraded.Message, "Service demo-api") {
		t.Errorf("Degraded = %+v, want True/NameConflict naming both Deployments and the Service", degraded)
	}
	if ready := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionReady); ready.Status != metav1.ConditionFalse {
		t.Errorf("Ready = %+v, want False", ready)
	}
	var warnings int
	for len(f.recorder.Events) > 0 {
		if e := <-f.recorder.Events; strings.HasPrefix(e, "Warning "+ReasonNameConflict) {
			warnings++
		}
	}
	if warnings != 3 {
		t.Errorf("recorded %d NameConflict warnings, want 3", warnings)
	}
}

func TestGeneratedKeysSurviveUpdatesByOthers(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	secret := find[*corev1.Secret](objects, "demo-api")
	original := secret.DeepCopy()
	// Another client adds a label: nothing of ours changed.
	secret.Labels["backup"] = "yes"
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	kubeWrites, _ := f.run()
	expectActions(t, kubeWrites)

	// A user adds a token, as the earlier operator's README says: it is kept, and the API and
	// crawler, which load the Secret with envFrom, roll to read it.
	secret.Data["EXTRA"] = []byte("theirs")
	_, kubeWrites, _ = resync(t, m, objects)
	expectActions(t, kubeWrites, "update deployments demo-api", "update deployments demo-crawler")
	for _, a := range kubeWrites {
		rolled := a.(core.UpdateAction).GetObject().(*appsv1.Deployment)
		live := find[*appsv1.Deployment](objects, rolled.Name)
		if rolled.Spec.Template.Annotations[resources.SecretHashAnnotation] == live.Spec.Template.Annotations[resources.SecretHashAnnotation] {
			t.Errorf("Deployment %s: the secret hash did not change", rolled.Name)
		}
		live.Spec.Template, live.Annotations = rolled.Spec.Template, rolled.Annotations
	}

	// Another client removes a generated key: it comes back with its original value from the
	// copy, nothing rolls, and the other client's key stays.
	delete(secret.Data, resources.JWKGenKeyKey)
	_, kubeWrites, _ = resync(t, m, objects)
	expectActions(t, kubeWrites, "update secrets demo-api")
	updated := kubeWrites[0].(core.UpdateAction).GetObject().(*corev1.Secret)
	for _, k := range resources.GeneratedKeys {
		if string(updated.Data[k]) != string(original.Data[k]) {
			t.Errorf("%s was not restored to its original value", k)
		}
	}
	if string(updated.Data["EXTRA"]) != "theirs" {
		t.Errorf("the other client's key is gone: %v", updated.Data)
	}

	// Removed from the copy too: only then is the key generated anew, with a warning, and the
	// pods that read it roll.
	delete(find[*corev1.Secret](objects, "demo-api-keys").Data, resources.JWKGenKeyKey)
	f, kubeWrites, _ = resync(t, m, objects)
	expectActions(t, kubeWrites, "update secrets demo-api", "update secrets demo-api-keys",
		"update deployments demo-api", "update deployments demo-crawler")
	for _, a := range kubeWrites {
		if s, ok := a.(core.UpdateAction).GetObject().(*corev1.Secret); ok {
			if string(s.Data[resources.CrawlersAPIKeyKey]) != string(original.Data[resources.CrawlersAPIKeyKey]) {
				t.Errorf("%s: CRAWLERS_API_KEY was regenerated", s.Name)
			}
			if !resources.ValidKey(resources.JWKGenKeyKey, s.Data[resources.JWKGenKeyKey]) || string(s.Data[resources.JWKGenKeyKey]) == string(original.Data[resources.JWKGenKeyKey]) {
				t.Errorf("%s: MONOCLE_JWK_GEN_KEY was not generated anew", s.Name)
			}
		}
	}
	var warned bool
	for len(f.recorder.Events) > 0 {
		if e := <-f.recorder.Events; strings.HasPrefix(e, "Warning "+ReasonKeyGenerated) && strings.Contains(e, resources.JWKGenKeyKey) {
			warned = true
		}
	}
	if !warned {
		t.Error("no KeyGenerated warning names the regenerated key")
	}
}

// After an API server restart the Secret informer can lag for minutes: Secrets the API
// server has but the cache has not seen must keep their keys, not get new ones.
func TestGeneratedKeysSurviveAStaleCache(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	var cached, uncached []runtime.Object
	for _, o := range objects {
		if _, ok := o.(*corev1.Secret); ok {
			uncached = append(uncached, o)
		} else {
			cached = append(cached, o)
		}
	}
	original := find[*corev1.Secret](objects, "demo-api")
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = cached
	f.uncached = uncached
	c := f.newController()
	// Another seed than the one that generated the keys, so that generating them again would
	// show.
	c.random = rand.New(rand.NewSource(2))
	_, ctx := ktesting.NewTestContext(t)
	if err := c.syncHandler(ctx, cache.ObjectName{Namespace: m.Namespace, Name: m.Name}); err != nil {
		t.Logf("sync returned: %v", err)
	}
	kubeWrites := writes(f.kubeclient.Actions())
	for _, a := range kubeWrites {
		s, ok := a.(core.UpdateAction).GetObject().(*corev1.Secret)
		if !ok {
			continue
		}
		for _, k := range resources.GeneratedKeys {
			if string(s.Data[k]) != string(original.Data[k]) {
				t.Errorf("%s %s: %s was replaced although the API server had it", a.GetVerb(), s.Name, k)
			}
		}
	}
	// The creates fail with AlreadyExists and carry the keys the API server has; nothing is
	// updated.
	expectActions(t, kubeWrites, "create secrets demo-api-keys", "create secrets demo-api")
}

func TestOwnedObjectEnqueuesOwner(t *testing.T) {
	m := newMonocle("demo")
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	c := f.newController()

	owned := resources.NewAPIService(m)
	c.handleObject(owned)
	if c.queue.Len() != 1 {
		t.Fatalf("queue length after an owned object's event = %d, want 1", c.queue.Len())
	}
	key, _ := c.queue.Get()
	c.queue.Done(key)
	if key != (cache.ObjectName{Namespace: m.Namespace, Name: m.Name}) {
		t.Errorf("enqueued %v", key)
	}

	stale := newMonocle("demo")
	stale.UID = "old-uid"
	c.handleObject(resources.NewAPIService(stale))
	unowned := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: m.Namespace}}
	c.handleObject(unowned)
	c.handleObject(cache.DeletedFinalStateUnknown{Key: "default/x", Obj: unowned})
	if c.queue.Len() != 0 {
		t.Errorf("objects of another owner enqueued %d keys", c.queue.Len())
	}
}

func TestSpecChangeUpdatesWorkloads(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	m = m.DeepCopy()
	m.Generation = 2
	m.Spec.API.Replicas = ptr.To[int32](3)
	m.Spec.Image = "quay.io/change-metrics/monocle:1.12.0"

	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	kubeWrites, monocleWrites := f.run()
	expectActions(t, kubeWrites, "update deployments demo-api", "update deployments demo-crawler", "create poddisruptionbudgets demo-api")
	api := kubeWrites[0].(core.UpdateAction).GetObject().(*appsv1.Deployment)
	if api.Name != "demo-api" {
		api = kubeWrites[1].(core.UpdateAction).GetObject().(*appsv1.Deployment)
	}
	if *api.Spec.Replicas != 3 || api.Spec.Template.Spec.Containers[0].Image != m.Spec.Image {
		t.Errorf("API Deployment after the change: replicas %d image %s", *api.Spec.Replicas, api.Spec.Template.Spec.Containers[0].Image)
	}
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).Status
	if status.ObservedGeneration != 2 {
		t.Errorf("observedGeneration = %d, want 2", status.ObservedGeneration)
	}
	if p := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionProgressing); p.Status != metav1.ConditionTrue {
		t.Errorf("Progressing = %+v, want True during the rollout", p)
	}
	// The version changes only once the new pods are ready.
	if status.Version != "1.11.2" {
		t.Errorf("version during the rollout = %q, want the running 1.11.2", status.Version)
	}
}

func TestStatusOnlyChangesAreCoalesced(t *testing.T) {
	m := newMonocle("demo")
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	c := f.newController()

	old := resources.NewAPIDeployment(m, resources.Inputs{})
	old.Generation, old.ResourceVersion = 1, "1"
	ready := old.DeepCopy()
	ready.ResourceVersion, ready.Status.ReadyReplicas = "2", 1
	c.handleObjectUpdate(old, ready)
	if n := c.queue.Len(); n != 0 {
		t.Fatalf("a status-only change was enqueued at once (%d keys)", n)
	}
	// The key arrives once the delay has passed.
	deadline := time.Now().Add(statusSyncDelay + 2*time.Second)
	for c.queue.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if c.queue.Len() != 1 {
		t.Fatalf("the status-only change never enqueued its Monocle")
	}
	key, _ := c.queue.Get()
	c.queue.Done(key)

	scaled := ready.DeepCopy()
	scaled.ResourceVersion, scaled.Generation, scaled.Spec.Replicas = "3", 2, ptr.To[int32](0)
	c.handleObjectUpdate(ready, scaled)
	if n := c.queue.Len(); n != 1 {
		t.Errorf("a spec change (drift) waited: %d keys queued, want 1 at once", n)
	}
}
