package controller

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
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
	// userConfigMaps are ConfigMaps the user made (spec.trustedCA's): in the API server and
	// the metadata cache only.
	userConfigMaps []*corev1.ConfigMap
	// served are the optional APIs discovery finds; dynamicObjects are their objects, in the
	// dynamic client (the informers list them from there).
	served         []schema.GroupVersionResource
	dynamicObjects []runtime.Object
	dynamic        *dynamicfake.FakeDynamicClient
	// eckObjects are ECK Elasticsearch objects, in the dynamic client (served only when
	// served lists resources.ECKElasticsearchResource).
	eckObjects []*unstructured.Unstructured
	// crossNamespaceOff turns cross-namespace references off, as
	// --cross-namespace-references=false does.
	crossNamespaceOff bool
	// bumpGenerations makes the fake API server bump a Deployment's generation on update, as
	// the real one does on a spec change, so that its rollout is not done yet.
	bumpGenerations bool
	// operands turns on the reads of the operands, as --elasticsearch-read-interval does;
	// the zero value reads nothing.
	operands operand.Options
	// operatorNamespace is the namespace of the operator's pods (Options.OperatorNamespace).
	operatorNamespace string

	// controller is the last one newController built; kubeInformers and monocleInformers
	// are the informer factories whose caches it reads, for tests that change them between
	// syncs.
	controller       *Controller
	kubeInformers    kubeinformers.SharedInformerFactory
	monocleInformers informers.SharedInformerFactory
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
	// The end of the test ends the reads of the operands under way.
	ctx, cancel := context.WithCancel(ctx)
	f.t.Cleanup(cancel)
	var objects []runtime.Object
	for _, m := range f.monocles {
		objects = append(objects, m)
	}
	f.client = fake.NewSimpleClientset(objects...)
	all := append(append([]runtime.Object(nil), f.kubeobjects...), f.uncached...)
	for _, s := range f.userSecrets {
		all = append(all, s)
	}
	for _, cm := range f.userConfigMaps {
		all = append(all, cm)
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
		// Read only: ECK's Elasticsearch (target.go).
		resources.ECKElasticsearchResource: "ElasticsearchList",
		resources.ReferenceGrantResource:   "ReferenceGrantList",
	}, f.dynamicObjects...)
	for _, o := range f.eckObjects {
		// The fake would guess the resource "elasticsearchs" from the kind: name it.
		if err := f.dynamic.Tracker().Create(resources.ECKElasticsearchResource, o, o.GetNamespace()); err != nil {
			f.t.Fatal(err)
		}
	}
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
	configMapMetadata := md.ForResource(corev1.SchemeGroupVersion.WithResource("configmaps"))
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
		ConfigMapMetadata:      configMapMetadata,
	}, "test", Options{Operands: f.operands, OperatorNamespace: f.operatorNamespace, RefuseCrossNamespaceReferences: f.crossNamespaceOff})
	if err != nil {
		f.t.Fatal(err)
	}
	f.recorder = record.NewFakeRecorder(100)
	c.recorder = f.recorder
	// The indexers are filled by hand, not synced by running informers.
	for i := range c.fleet.sources {
		c.fleet.sources[i].synced = func() bool { return true }
	}
	c.random = rand.New(rand.NewSource(1))
	for _, m := range f.monocles {
		mustAdd(f.t, i.Monocle().V1alpha1().Monocles().Informer().GetIndexer(), m)
	}
	for _, obj := range f.kubeobjects {
		gvks, _, err := testScheme.ObjectKinds(obj)
		if err != nil {
			f.t.Fatalf("unexpected seeded object %T: %v", obj, err)
		}
		gvr, _ := apimeta.UnsafeGuessKindToResource(gvks[0])
		informer, err := k.ForResource(gvr)
		if err != nil {
			f.t.Fatalf("unexpected seeded object %T: %v", obj, err)
		}
		mustAdd(f.t, informer.Informer().GetIndexer(), obj)
	}
	for _, s := range f.userSecrets {
		mustAdd(f.t, secretMetadata.Informer().GetIndexer(), &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: s.ObjectMeta})
	}
	for _, cm := range f.userConfigMaps {
		mustAdd(f.t, configMapMetadata.Informer().GetIndexer(), &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: cm.ObjectMeta})
	}
	c.optional.Refresh(ctx, func() {})
	f.dynamic.ClearActions()
	f.kubeclient.ClearActions() // discovery
	f.controller, f.kubeInformers, f.monocleInformers = c, k, i
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

// resolve runs the resolve phase of the fixture's first Monocle on c and returns its state.
func (f *fixture) resolve(c *Controller) *syncState {
	f.t.Helper()
	_, ctx := ktesting.NewTestContext(f.t)
	ctx, st := newSyncState(ctx, f.monocles[0].DeepCopy(), time.Now())
	st.cluster = c.resolveElasticsearch(ctx, st)
	if len(st.errs) > 0 {
		f.t.Fatalf("resolve failed: %v", st.errs)
	}
	return st
}

// runStatus syncs the fixture's first Monocle once and returns the writes of the kube client
// and the Monocle as the sync left it: the one it wrote to the status, else as it was.
func (f *fixture) runStatus() ([]core.Action, *monoclev1alpha1.Monocle) {
	f.t.Helper()
	kubeWrites, monocleWrites := f.run()
	if len(monocleWrites) == 1 {
		return kubeWrites, monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	}
	return kubeWrites, f.monocles[0]
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
	return resources.Inputs{ConfigHash: resources.ConfigHash(config), SecretHash: resources.SecretHash(secret.Data, ""),
		Elastic: bundledAccess(m, objects)}
}

// converged returns the objects the syncs of m create, with ready workload statuses, and m
// with the status the last sync wrote. It syncs until a sync creates nothing: the first
// creates every object but the API Deployment, which waits for a ready Elasticsearch pod
// (workloads.go); the second creates it; the last reports the ready workloads.
func converged(t *testing.T, m *monoclev1alpha1.Monocle, userSecrets ...*corev1.Secret) (*monoclev1alpha1.Monocle, []runtime.Object) {
	t.Helper()
	return convergedWith(t, m, func(f *fixture) { f.userSecrets = userSecrets })
}

// convergedWith is converged with the objects setup seeds into each sync's fixture besides
// the Monocle and what the syncs created.
func convergedWith(t *testing.T, m *monoclev1alpha1.Monocle, setup func(*fixture)) (*monoclev1alpha1.Monocle, []runtime.Object) {
	t.Helper()
	out := m.DeepCopy()
	var objects []runtime.Object
	for round := 0; ; round++ {
		if round == 4 {
			t.Fatalf("still creating objects after %d syncs", round)
		}
		f := newFixture(t)
		f.monocles = []*monoclev1alpha1.Monocle{out}
		setup(f)
		f.kubeobjects = objects
		kubeWrites, status := f.runStatus()
		out = status.DeepCopy()
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

const githubConfig = "workspaces:\n  - name: demo\n    crawlers:\n      - name: gh\n        update_since: \"2024-01-01\"\n        provider:\n          github_organization: change-metrics\n          github_token: MY_GITHUB_TOKEN\n"

func newUserSecret(rv string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens", Namespace: metav1.NamespaceDefault, ResourceVersion: rv}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func withTokens(m *monoclev1alpha1.Monocle) *monoclev1alpha1.Monocle {
	m.Spec.Config = githubConfig
	m.Spec.SecretRef = &monoclev1alpha1.SecretReference{Name: "tokens"}
	return m
}

// resync runs the fixture again on the given state and returns the writes.
func resync(t *testing.T, m *monoclev1alpha1.Monocle, objects []runtime.Object, userSecrets ...*corev1.Secret) (*fixture, []core.Action, *monoclev1alpha1.Monocle) {
	t.Helper()
	return resyncWith(t, m, objects, func(f *fixture) { f.userSecrets = userSecrets })
}

// resyncWith is resync with the objects setup seeds into the fixture besides m and objects.
func resyncWith(t *testing.T, m *monoclev1alpha1.Monocle, objects []runtime.Object, setup func(*fixture)) (*fixture, []core.Action, *monoclev1alpha1.Monocle) {
	t.Helper()
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	setup(f)
	kubeWrites, status := f.runStatus()
	return f, kubeWrites, status
}

func condition(t *testing.T, m *monoclev1alpha1.Monocle, typ string) metav1.Condition {
	t.Helper()
	c := apimeta.FindStatusCondition(m.Status.Conditions, typ)
	if c == nil {
		t.Fatalf("no %s condition in %+v", typ, m.Status.Conditions)
	}
	return *c
}

// readyElastic is m's Elasticsearch StatefulSet as its builder makes it, with one ready pod.
func readyElastic(m *monoclev1alpha1.Monocle) *appsv1.StatefulSet {
	return withReadyStatus(resources.NewElasticStatefulSet(m, resources.ElasticDataVolume, false, "")).(*appsv1.StatefulSet)
}

// dialAddress is the host:port of srv, for operand.Options.DialAddress.
func dialAddress(srv *elastictest.Server) string { return strings.TrimPrefix(srv.URL, "http://") }

// resolveAs sets what the resolve phase (target.go) would find of st's cluster: its target
// (resources.NewTarget) with these credentials and CA, resolved and ready.
func resolveAs(st *syncState, username, password string, ca []byte) {
	st.cluster.target = resources.NewTarget(st.m, true)
	st.cluster.target.Username, st.cluster.target.Password, st.cluster.target.CA = username, password, ca
	st.cluster.resolved, st.cluster.ready = true, true
}

// resolvedTarget is st's target once the resolve phase resolved it, without its identity, for
// comparison with a literal target; nil before.
func resolvedTarget(st *syncState) *resources.ElasticsearchTarget {
	if !st.cluster.resolved {
		return nil
	}
	t := st.cluster.target
	t.Identity = ""
	return &t
}

// bundledAccess is how m's pods reach its bundled Elasticsearch, with the users' and proxy
// Secrets among objects (none: without credentials, as before the node's users exist).
func bundledAccess(m *monoclev1alpha1.Monocle, objects []runtime.Object) resources.ElasticAccess {
	e := resources.ElasticAccess{Target: resources.BundledTarget(m)}
	if users := find[*corev1.Secret](objects, resources.ElasticUsersSecretName(m)); users != nil {
		e.Target = e.Target.WithBundledUsers(users.Data)
	}
	proxy, api := find[*corev1.Secret](objects, resources.ProxySecretName(m)), find[*corev1.Secret](objects, resources.SecretName(m))
	if proxy != nil && api != nil {
		e.ProxyHash = resources.ProxyHash(proxy.Data, api.Data)
	}
	return e
}

// lastWritten are the objects of writes, the last write of each first.
func lastWritten(writes []core.Action) []runtime.Object {
	var out []runtime.Object
	for i := len(writes) - 1; i >= 0; i-- {
		if o := writtenObject(writes[i]); o != nil {
			out = append(out, o)
		}
	}
	return out
}
