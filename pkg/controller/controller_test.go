package controller

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubeinformers "k8s.io/client-go/informers"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
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
	// served are the optional APIs discovery finds; dynamicObjects are their objects, in the
	// dynamic client (the informers list them from there).
	served         []schema.GroupVersionResource
	dynamicObjects []runtime.Object
	dynamic        *dynamicfake.FakeDynamicClient
	// bumpGenerations makes the fake API server bump a Deployment's generation on update, as
	// the real one does on a spec change, so that its rollout is not done yet.
	bumpGenerations bool

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
	if f.bumpGenerations {
		f.kubeclient.PrependReactor("update", "deployments", func(a core.Action) (bool, runtime.Object, error) {
			a.(core.UpdateAction).GetObject().(*appsv1.Deployment).Generation++
			return false, nil, nil
		})
	}
	f.dynamic = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		resources.HTTPRouteResource:  "HTTPRouteList",
		resources.RouteResource:      "RouteList",
		resources.PodMonitorResource: "PodMonitorList",
	}, f.dynamicObjects...)
	for _, r := range f.served {
		f.kubeclient.Resources = append(f.kubeclient.Resources, &metav1.APIResourceList{
			GroupVersion: r.GroupVersion().String(),
			APIResources: []metav1.APIResource{{Name: r.Resource, Namespaced: true}},
		})
	}
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
		Ingresses:              k.Networking().V1().Ingresses(),
		NetworkPolicies:        k.Networking().V1().NetworkPolicies(),
		Optional:               OptionalAPIs{Dynamic: f.dynamic, Discovery: f.kubeclient.Discovery()},
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
		case *networkingv1.Ingress:
			indexer = k.Networking().V1().Ingresses().Informer().GetIndexer()
		case *networkingv1.NetworkPolicy:
			indexer = k.Networking().V1().NetworkPolicies().Informer().GetIndexer()
		default:
			f.t.Fatalf("unexpected seeded object %T", obj)
		}
		mustAdd(f.t, indexer, obj)
	}
	for _, s := range f.userSecrets {
		mustAdd(f.t, secretMetadata.Informer().GetIndexer(), &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: s.ObjectMeta})
	}
	c.optional.Refresh(ctx, func() {})
	f.dynamic.ClearActions()
	f.kubeclient.ClearActions() // discovery
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

// describe names each action "verb resource name", with "/subresource" when it has one.
func describe(actions []core.Action) []string {
	var out []string
	for _, a := range actions {
		s := fmt.Sprintf("%s %s %s", a.GetVerb(), a.GetResource().Resource, actionName(a))
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	return out
}

// actionName is the name of the object an action writes or deletes.
func actionName(a core.Action) string {
	if d, ok := a.(core.DeleteAction); ok {
		return d.GetName()
	}
	if o, ok := writtenObject(a).(metav1.Object); ok {
		return o.GetName()
	}
	return ""
}

// expectActions compares only the verb, resource and name of the writes, in any order: for
// tests where what was written does not matter (none at all, a delete, a count). checkActions
// compares whole objects.
func expectActions(t *testing.T, got []core.Action, want ...string) {
	t.Helper()
	gotDesc := describe(got)
	if !equality.Semantic.DeepEqual(sortedCopy(gotDesc), sortedCopy(want)) {
		t.Errorf("actions differ\n got: %q\nwant: %q", gotDesc, want)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// testScheme knows every kind the tests meet: Kubernetes' and the Monocle.
var testScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(kubescheme.AddToScheme(s))
	utilruntime.Must(monoclev1alpha1.AddToScheme(s))
	return s
}()

// expectation is one write a sync must make, as sample-controller's tests expect actions: the
// verb, resource, namespace, name and subresource, and for a create or an update the whole
// object (nil for a delete).
type expectation struct {
	verb, resource, namespace, name, subresource string
	object                                       runtime.Object
}

// expectCreate expects obj to be created, whole.
func expectCreate(obj owned.Object) expectation {
	return expectation{"create", resourceOf(obj), obj.GetNamespace(), obj.GetName(), "", obj}
}

// expectUpdate expects obj to be written by an update, whole.
func expectUpdate(obj owned.Object) expectation {
	return expectation{"update", resourceOf(obj), obj.GetNamespace(), obj.GetName(), "", obj}
}

// expectStatusUpdate expects m, whole, to be written to the status subresource.
func expectStatusUpdate(m *monoclev1alpha1.Monocle) expectation {
	e := expectUpdate(m)
	e.subresource = "status"
	return e
}

// expectDelete expects the object of resource ("jobs") namespace/name to be deleted.
func expectDelete(resource, namespace, name string) expectation {
	return expectation{verb: "delete", resource: resource, namespace: namespace, name: name}
}

// String is the expectation in describe's form.
func (e expectation) String() string {
	s := fmt.Sprintf("%s %s %s", e.verb, e.resource, e.name)
	if e.subresource != "" {
		s += "/" + e.subresource
	}
	return s
}

// resourceOf is the resource ("deployments") of obj's kind.
func resourceOf(obj runtime.Object) string {
	gvks, _, err := testScheme.ObjectKinds(obj)
	if err != nil {
		return fmt.Sprintf("<%T: %v>", obj, err)
	}
	plural, _ := apimeta.UnsafeGuessKindToResource(gvks[0])
	return plural.Resource
}

// checkActions checks the writes a sync made against the expected ones, in any order (a
// phase's steps write in parallel), as sample-controller's tests do: each expectation is
// paired with the first write of the same verb, resource, subresource, namespace and name not
// paired yet, whose object must match (checkAction), and no write may be missing or extra.
func checkActions(t *testing.T, got []core.Action, want ...expectation) {
	t.Helper()
	paired := make([]bool, len(got))
	for i, w := range want {
		match := -1
		for j, a := range got {
			if !paired[j] && sameTarget(w, a) {
				match = j
				break
			}
		}
		if match < 0 {
			t.Errorf("write %d: missing %s", i, w)
			continue
		}
		paired[match] = true
		checkAction(t, match, w, got[match])
	}
	for i := range got {
		if !paired[i] {
			t.Errorf("write %d: unexpected %s", i, describe(got[i : i+1])[0])
		}
	}
}

// sameTarget reports whether a writes what want expects: the same verb, resource,
// subresource, namespace and name.
func sameTarget(want expectation, a core.Action) bool {
	return a.GetVerb() == want.verb && a.GetResource().Resource == want.resource && a.GetSubresource() == want.subresource &&
		a.GetNamespace() == want.namespace && actionName(a) == want.name
}

// checkAction checks one write: its verb, resource, subresource, namespace and name, and the
// object a create or an update carries, whole (checkObject).
func checkAction(t *testing.T, i int, want expectation, got core.Action) {
	t.Helper()
	if got.GetVerb() != want.verb || got.GetResource().Resource != want.resource || got.GetSubresource() != want.subresource ||
		got.GetNamespace() != want.namespace || actionName(got) != want.name {
		t.Errorf("write %d: got %s in namespace %q, want %s in namespace %q", i, describe([]core.Action{got})[0], got.GetNamespace(), want, want.namespace)
		return
	}
	if want.object == nil {
		return
	}
	checkObject(t, fmt.Sprintf("write %d, %s", i, want), want.object, writtenObject(got))
}

// checkObject reports got differing from want by equality.Semantic.DeepEqual, with a unified
// diff of their JSON (- want, + got). A condition of an expected Monocle whose
// lastTransitionTime is zero stands for "set by this sync": it matches the time got has, which
// must not be zero; a non-zero time must match exactly (a condition kept its time).
func checkObject(t *testing.T, what string, want, got runtime.Object) {
	t.Helper()
	if w, ok := want.(*monoclev1alpha1.Monocle); ok {
		if g, ok := got.(*monoclev1alpha1.Monocle); ok {
			w = w.DeepCopy()
			for i, c := range w.Status.Conditions {
				g := apimeta.FindStatusCondition(g.Status.Conditions, c.Type)
				switch {
				case g == nil || !c.LastTransitionTime.IsZero():
				case g.LastTransitionTime.IsZero():
					t.Errorf("%s: condition %s has no lastTransitionTime", what, c.Type)
				default:
					w.Status.Conditions[i].LastTransitionTime = g.LastTransitionTime
				}
			}
			want = w
		}
	}
	if equality.Semantic.DeepEqual(want, got) {
		return
	}
	d := diff.Diff(want, got)
	if d == "" {
		// Equal in JSON (a time's fraction of a second, say): show the Go values.
		d = diff.ObjectGoPrintSideBySide(want, got)
	}
	t.Errorf("%s: got a %T that differs from the expected %T (- want, + got):\n%s", what, got, want, d)
}

// writtenObject is the object a create or an update action writes, or nil.
func writtenObject(a core.Action) runtime.Object {
	switch a := a.(type) {
	case core.CreateAction:
		return a.GetObject()
	case core.UpdateAction:
		return a.GetObject()
	}
	return nil
}

// written is the last object of type T named name that actions create or update, or nil.
func written[T owned.Object](actions []core.Action, name string) T {
	var out T
	for _, a := range actions {
		if o, ok := writtenObject(a).(T); ok && o.GetName() == name {
			out = o
		}
	}
	return out
}

// merged is the object Ensure writes to bring live back to desired with kind k: the kind's
// merge, then the labels and spec hash (Kind.Updated). Expected updates are built with the
// controller's own functions, over the builder's object, so a test checks that this object
// arrived whole.
func merged[T owned.Object](k owned.Kind[T], desired, live T) T {
	return k.Updated(desired, live)
}

// builtInputs are the inputs the sync hands the API and crawler builders when its pods run
// config and objects hold its Secret "<name>-api" (no spec.secretRef).
func builtInputs(m *monoclev1alpha1.Monocle, objects []runtime.Object, config string) resources.Inputs {
	secret := find[*corev1.Secret](objects, resources.SecretName(m))
	return resources.Inputs{ConfigHash: resources.ConfigHash(config), SecretHash: resources.SecretHash(secret.Data, "")}
}

// converged returns the objects the syncs of m create, with ready workload statuses, and m
// with the status the last sync wrote. It syncs until a sync creates nothing: the first
// creates every object but the API Deployment, which waits for a ready Elasticsearch pod
// (elasticfirst.go); the second creates it; the last reports the ready workloads.
func converged(t *testing.T, m *monoclev1alpha1.Monocle, userSecrets ...*corev1.Secret) (*monoclev1alpha1.Monocle, []runtime.Object) {
	t.Helper()
	out := m.DeepCopy()
	var objects []runtime.Object
	for round := 0; ; round++ {
		if round == 4 {
			t.Fatalf("still creating objects after %d syncs", round)
		}
		f := newFixture(t)
		f.monocles = []*monoclev1alpha1.Monocle{out}
		f.userSecrets = userSecrets
		f.kubeobjects = objects
		kubeWrites, monocleWrites := f.run()
		if len(monocleWrites) == 1 {
			out = monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).DeepCopy()
		}
		if len(kubeWrites) == 0 {
			return out, objects
		}
		for _, a := range kubeWrites {
			create, ok := a.(core.CreateAction)
			if !ok {
				t.Fatalf("sync %d of a new Monocle: unexpected %s %s", round+1, a.GetVerb(), a.GetResource().Resource)
			}
			objects = append(objects, withReadyStatus(create.GetObject().DeepCopyObject()))
		}
	}
}

// withReadyStatus gives a Deployment or a StatefulSet the status of a rolled-out workload
// whose pods are all ready, and returns obj.
func withReadyStatus(obj runtime.Object) runtime.Object {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		r := ptr.Deref(o.Spec.Replicas, 1)
		o.Status = appsv1.DeploymentStatus{ObservedGeneration: o.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r}
	case *appsv1.StatefulSet:
		o.Status = appsv1.StatefulSetStatus{ObservedGeneration: o.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1,
			CurrentRevision: "r1", UpdateRevision: "r1"}
	}
	return obj
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

// TestCreatesAllObjects: the first sync of a new Monocle creates every object as its builder
// makes it, whole, but the API Deployment, which waits for a ready Elasticsearch pod
// (TestAPIWaitsForElasticsearch), and writes the whole status.
func TestCreatesAllObjects(t *testing.T) {
	f := newFixture(t)
	m := newMonocle("demo")
	f.monocles = []*monoclev1alpha1.Monocle{m}
	kubeWrites, monocleWrites := f.run()

	var objects []runtime.Object
	for _, a := range kubeWrites {
		if c, ok := a.(core.CreateAction); ok {
			objects = append(objects, c.GetObject())
		}
	}
	// The generated keys are random: valid and distinct is all a test can ask of them.
	keys := map[string][]byte{}
	if secret := find[*corev1.Secret](objects, "demo-api"); secret != nil {
		keys = secret.Data
	}
	for _, k := range resources.GeneratedKeys {
		if !resources.ValidKey(k, keys[k]) {
			t.Errorf("generated %s = %q is not a valid key", k, keys[k])
		}
	}
	if string(keys[resources.CrawlersAPIKeyKey]) == string(keys[resources.JWKGenKeyKey]) {
		t.Error("the two generated keys are equal")
	}
	in := builtInputs(m, objects, resources.DefaultConfig)
	checkActions(t, kubeWrites,
		expectCreate(resources.NewKeysBackupSecret(m, keys)),
		expectCreate(resources.NewAPISecret(m, keys)),
		expectCreate(resources.NewConfigMap(m, resources.DefaultConfig)),
		expectCreate(resources.NewElasticService(m)),
		expectCreate(resources.NewElasticStatefulSet(m, resources.ElasticDataVolume)),
		expectCreate(resources.NewAPIService(m)),
		expectCreate(resources.NewNetworkPolicy(m, "")),
		expectCreate(resources.NewCrawlerDeployment(m, in)))
	// What the builders must give every object, for the garbage collector and the informers.
	for _, o := range objects {
		if !owned.IsControlledBy(o.(metav1.Object), m) {
			t.Errorf("%T %s is not controlled by the Monocle", o, o.(metav1.Object).GetName())
		}
		if o.(metav1.Object).GetLabels()[resources.ManagedByLabel] != resources.ManagedByValue {
			t.Errorf("%T %s lacks the managed-by label the informers select on", o, o.(metav1.Object).GetName())
		}
	}

	// Every condition is new: its lastTransitionTime is left zero, which checkObject reads as
	// "set by this sync".
	cond := func(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, ObservedGeneration: 1, Reason: reason, Message: message}
	}
	starting := monoclev1alpha1.ComponentStatus{Image: resources.DefaultMonocleImage, Replicas: 1}
	want := m.DeepCopy()
	want.Status = monoclev1alpha1.MonocleStatus{
		ObservedGeneration: 1,
		Conditions: []metav1.Condition{
			cond(monoclev1alpha1.ConditionReady, metav1.ConditionFalse, reasons.Starting,
				"Waiting for elasticsearch 0/1 ready, api (waits for a ready Elasticsearch pod) 0/0 ready, crawler 0/1 ready"),
			cond(monoclev1alpha1.ConditionProgressing, metav1.ConditionTrue, reasons.RollingOut,
				"Rolling out: elasticsearch, api (waits for a ready Elasticsearch pod), crawler"),
			cond(monoclev1alpha1.ConditionDegraded, metav1.ConditionFalse, reasons.AsExpected, "The operator converges every owned object"),
			cond(monoclev1alpha1.ConditionConfigValid, metav1.ConditionTrue, reasons.ConfigAccepted,
				"spec.config is unset; config.yaml of ConfigMap demo-api defines 1 workspace(s)"),
			cond(monoclev1alpha1.ConditionSecretsReady, metav1.ConditionTrue, reasons.SecretsPresent,
				"Secret demo-api holds every variable config.yaml needs"),
			cond(monoclev1alpha1.ConditionSpecAccepted, metav1.ConditionTrue, reasons.SpecAccepted, "The operator accepts every part of the spec"),
			cond(monoclev1alpha1.ConditionStorageReady, metav1.ConditionTrue, reasons.AsRequested, "No storage change is pending"),
			cond(monoclev1alpha1.ConditionExposed, metav1.ConditionFalse, reasons.NotExposed,
				"No ingress, httpRoute or route is set: run kubectl port-forward -n default service/demo-api 8090:8080 and open http://localhost:8090"),
			cond(monoclev1alpha1.ConditionMonitored, metav1.ConditionFalse, reasons.NotMonitored,
				"spec.monitoring is unset: no PodMonitor scrapes the API's and the crawler's /metrics"),
			cond(monoclev1alpha1.ConditionIdentsUpdated, metav1.ConditionTrue, reasons.UpToDate, "No config change has needed an update-idents run"),
			cond(monoclev1alpha1.ConditionPaused, metav1.ConditionFalse, reasons.NotPaused, "The operator reconciles this Monocle"),
			cond(monoclev1alpha1.ConditionUpgraded, metav1.ConditionTrue, reasons.UpToDate, "The API runs "+resources.DefaultMonocleImage),
			cond(monoclev1alpha1.ConditionBackupReady, metav1.ConditionFalse, reasons.NotBackedUp,
				"spec.backup is unset: the Elasticsearch index is not backed up"),
		},
		URL:           "http://localhost:8090",
		ConfigHash:    resources.ConfigHash(resources.DefaultConfig),
		ConfigSource:  monoclev1alpha1.ConfigFromConfigMap,
		Crawler:       starting,
		Elasticsearch: monoclev1alpha1.ComponentStatus{Image: resources.DefaultElasticsearchImage, Replicas: 1},
	}
	checkActions(t, monocleWrites, expectStatusUpdate(want))
	// One event lists what the sync created: one Event write per sync, not one per object.
	wantEvent := "Normal Created Created ConfigMap demo-api, Deployment demo-crawler, NetworkPolicy demo, " +
		"Secret demo-api, Secret demo-api-keys, Service demo-api, Service demo-elastic, StatefulSet demo-elastic"
	if events := drain(f); len(events) != 1 || events[0] != wantEvent {
		t.Errorf("recorded events %q, want one: %q", events, wantEvent)
	}
}

// TestParallelSyncMakesTheSameWrites: written in parallel, a new Monocle's objects are the
// same from one sync to another, the workloads after what they need, and one event lists them.
func TestParallelSyncMakesTheSameWrites(t *testing.T) {
	writes := func() ([]string, []string) {
		f := newFixture(t)
		f.monocles = []*monoclev1alpha1.Monocle{newMonocle("demo")}
		kubeWrites, _ := f.run()
		return describe(kubeWrites), drain(f)
	}
	first, _ := writes()
	got, events := writes()
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(first))) {
		t.Errorf("writes %q, want those of the first sync %q", got, first)
	}
	if len(got) < 3 || !strings.HasPrefix(got[0], "create secrets") || got[len(got)-1] != "create deployments demo-crawler" {
		t.Errorf("parallel writes %q: want the Secret first and the crawler Deployment last", got)
	}
	if len(events) != 1 || !strings.HasPrefix(events[0], "Normal Created Created ConfigMap demo-api, ") {
		t.Errorf("events %q, want one Created event", events)
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

// TestDriftIsCorrected: a live edit of a field the operator owns is repaired by an update that
// carries the whole object: the builder's fields, and the fields and metadata of others kept.
func TestDriftIsCorrected(t *testing.T) {
	// With spec.config set, the ConfigMap is the operator's: an edit there is drift.
	withConfig := newMonocle("demo")
	withConfig.Spec.Config = resources.DefaultConfig
	m, objects := converged(t, withConfig)
	api := find[*appsv1.Deployment](objects, "demo-api")
	api.Spec.Replicas = ptr.To[int32](0)
	svc := find[*corev1.Service](objects, "demo-api")
	svc.Spec.Ports[0].Port = 9999
	// The API server's field and another client's annotation, on an object being repaired.
	svc.Spec.ClusterIP = "10.96.0.10"
	svc.Annotations["example.com/owner"] = "team-x"
	cm := find[*corev1.ConfigMap](objects, "demo-api")
	cm.Data["config.yaml"] = "workspaces: []\n"
	// Someone else's label and annotation are not drift.
	crawler := find[*appsv1.Deployment](objects, "demo-crawler")
	crawler.Labels["team"] = "x"
	crawler.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = "now"

	wantAPI := resources.NewAPIDeployment(m, builtInputs(m, objects, resources.DefaultConfig))
	wantAPI.Status = api.Status
	wantSvc := resources.NewAPIService(m)
	wantSvc.Spec.ClusterIP = "10.96.0.10"
	wantSvc.Annotations["example.com/owner"] = "team-x"

	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	kubeWrites, _ := f.run()
	checkActions(t, kubeWrites,
		expectUpdate(resources.NewConfigMap(m, resources.DefaultConfig)),
		expectUpdate(wantSvc),
		expectUpdate(wantAPI))
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
	if degraded == nil || degraded.Status != metav1.ConditionTrue || degraded.Reason != reasons.NameConflict ||
		!strings.Contains(degraded.Message, "Deployment demo-api") || !strings.Contains(degraded.Message, "Deployment demo-crawler") ||
		!strings.Contains(degraded.Message, "Service demo-api") {
		t.Errorf("Degraded = %+v, want True/NameConflict naming both Deployments and the Service", degraded)
	}
	if ready := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionReady); ready.Status != metav1.ConditionFalse {
		t.Errorf("Ready = %+v, want False", ready)
	}
	var warnings int
	for len(f.recorder.Events) > 0 {
		if e := <-f.recorder.Events; strings.HasPrefix(e, "Warning "+reasons.NameConflict) {
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
	restored := secret.DeepCopy()
	restored.Data[resources.JWKGenKeyKey] = original.Data[resources.JWKGenKeyKey]
	checkActions(t, kubeWrites, expectUpdate(restored))

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
		if e := <-f.recorder.Events; strings.HasPrefix(e, "Warning "+reasons.KeyGenerated) && strings.Contains(e, resources.JWKGenKeyKey) {
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

// A new Monocle's keys cost two creates and no read: a create cannot replace a key.
func TestNewMonocleKeysCostTwoCreates(t *testing.T) {
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{newMonocle("demo")}
	f.run()
	var secretActions []core.Action
	for _, a := range f.kubeclient.Actions() {
		if a.GetResource().Resource == "secrets" {
			secretActions = append(secretActions, a)
		}
	}
	expectActions(t, secretActions, "create secrets demo-api-keys", "create secrets demo-api")
}

// A new Monocle (never synced) whose Secrets the API server holds, in part or whole, while the
// cache has not seen them (a sync that died after its creates, an informer lagging after an
// API server restart): the creates meet them, and the keys they hold are kept.
func TestNewMonocleKeepsKeysTheCacheHasNotSeen(t *testing.T) {
	_, objects := converged(t, newMonocle("demo"))
	primary, backup := find[*corev1.Secret](objects, "demo-api"), find[*corev1.Secret](objects, "demo-api-keys")
	for name, tc := range map[string]struct {
		uncached []runtime.Object
		// want is the Secret whose keys both Secrets must end with.
		want *corev1.Secret
		// writes are the writes of the sync to Secrets. Every create of a Secret the API
		// server has fails (409); after the first, the keys come from the API server, and
		// ensure's own creates, which the cache leads to, fail as well.
		writes []string
	}{
		"both exist": {uncached: []runtime.Object{primary, backup}, want: primary,
			writes: []string{"create secrets demo-api-keys", "create secrets demo-api-keys", "create secrets demo-api"}},
		"only demo-api exists": {uncached: []runtime.Object{primary}, want: primary,
			writes: []string{"create secrets demo-api-keys", "create secrets demo-api", "create secrets demo-api-keys",
				"update secrets demo-api-keys", "create secrets demo-api"}},
		"only the copy exists": {uncached: []runtime.Object{backup}, want: backup,
			writes: []string{"create secrets demo-api-keys", "create secrets demo-api-keys", "create secrets demo-api"}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			m := newMonocle("demo")
			f.monocles = []*monoclev1alpha1.Monocle{m}
			f.uncached = tc.uncached
			c := f.newController()
			// Another seed than the one that generated the keys, so that new keys would show.
			c.random = rand.New(rand.NewSource(2))
			_, ctx := ktesting.NewTestContext(t)
			if err := c.syncHandler(ctx, cache.ObjectName{Namespace: m.Namespace, Name: m.Name}); err != nil {
				t.Logf("sync returned: %v", err)
			}
			var secretWrites []core.Action
			for _, a := range writes(f.kubeclient.Actions()) {
				if a.GetResource().Resource == "secrets" {
					secretWrites = append(secretWrites, a)
				}
			}
			expectActions(t, secretWrites, tc.writes...)
			for _, name := range []string{"demo-api", "demo-api-keys"} {
				live, err := f.kubeclient.CoreV1().Secrets(m.Namespace).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range resources.GeneratedKeys {
					if string(live.Data[k]) != string(tc.want.Data[k]) {
						t.Errorf("%s holds %s = %q, want %q, the value the API server had", name, k, live.Data[k], tc.want.Data[k])
					}
				}
			}
		})
	}
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
	// The image change is an upgrade (upgrade.go): this sync records it and changes no
	// image; the replicas change at once.
	in := builtInputs(m, objects, resources.DefaultConfig)
	in.APIImage = resources.DefaultMonocleImage
	wantAPI := resources.NewAPIDeployment(m, in)
	checkActions(t, kubeWrites,
		expectCreate(resources.NewAPIPodDisruptionBudget(m)),
		expectUpdate(merged(f.controller.deployments, wantAPI, find[*appsv1.Deployment](objects, wantAPI.Name))))
	api := written[*appsv1.Deployment](kubeWrites, "demo-api")
	if api == nil {
		t.Fatal("the API Deployment was not updated")
	}
	if *api.Spec.Replicas != 3 || api.Spec.Template.Spec.Containers[0].Image != resources.DefaultMonocleImage {
		t.Errorf("API Deployment after the change: replicas %d image %s", *api.Spec.Replicas, api.Spec.Template.Spec.Containers[0].Image)
	}
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).Status
	if u := status.Upgrade; u == nil || u.From != resources.DefaultMonocleImage || u.To != m.Spec.Image || u.Phase != monoclev1alpha1.UpgradeStoppingCrawler {
		t.Errorf("status.upgrade = %+v, want an upgrade to %s at StoppingCrawler", u, m.Spec.Image)
	}
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

// A keys' copy that cannot be written holds back the write of <name>-api: the copy is always
// written first.
func TestKeysCopyFailureHoldsTheSecret(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	// demo-api lost a key (its copy has it) and the copy drifted: both need a write.
	delete(find[*corev1.Secret](objects, "demo-api").Data, resources.JWKGenKeyKey)
	delete(find[*corev1.Secret](objects, "demo-api-keys").Labels, resources.InstanceLabel)
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	c := f.newController()
	f.kubeclient.PrependReactor("update", "secrets", func(a core.Action) (bool, runtime.Object, error) {
		if a.(core.UpdateAction).GetObject().(*corev1.Secret).Name == "demo-api-keys" {
			return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), "demo-api-keys", errors.New("denied"))
		}
		return false, nil, nil
	})
	_, ctx := ktesting.NewTestContext(t)
	if err := c.syncHandler(ctx, cache.ObjectName{Namespace: m.Namespace, Name: m.Name}); err == nil {
		t.Error("the sync hid the failed write of the copy")
	}
	for _, a := range writes(f.kubeclient.Actions()) {
		if a.GetResource().Resource == "secrets" && actionName(a) == "demo-api" {
			t.Errorf("%s although the copy could not be written", strings.Join(describe([]core.Action{a}), ""))
		}
	}
}
