package owned

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

const testManager = "owned-test"

// podMetadata is the record of the pod labels and annotations pkg/resources' builders set,
// as the controller gives it to its Registry.
var podMetadata = PodMetadataRecord{Annotation: resources.PodMetadataAnnotation, Keys: resources.RecordedPodMetadata}

// engine is a Deployment Kind over a cache holding cached and a fake API server holding
// cached and uncached, with the events it records.
type engine struct {
	kind   Kind[*appsv1.Deployment]
	client *k8sfake.Clientset
	events *record.FakeRecorder
}

func newEngine(t *testing.T, cached []*appsv1.Deployment, uncached ...*appsv1.Deployment) *engine {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	var objects []runtime.Object
	for _, d := range cached {
		if err := indexer.Add(d); err != nil {
			t.Fatal(err)
		}
		objects = append(objects, d)
	}
	for _, d := range uncached {
		objects = append(objects, d)
	}
	client := k8sfake.NewClientset(objects...)
	k := newKind("Deployment", indexer, appsv1.Resource("deployment"),
		func(ns string) Client[*appsv1.Deployment] { return client.AppsV1().Deployments(ns) }, testManager, podMetadata)
	return &engine{kind: k, client: client, events: record.NewFakeRecorder(10)}
}

// recorded drains the events recorded so far.
func (e *engine) recorded() []string {
	var out []string
	for len(e.events.Events) > 0 {
		out = append(out, <-e.events.Events)
	}
	return out
}

// verbs names the client's actions "verb resource name".
func (e *engine) verbs() []string {
	var out []string
	for _, a := range e.client.Actions() {
		name := ""
		switch a := a.(type) {
		case core.CreateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case core.UpdateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case core.GetAction:
			name = a.GetName()
		case core.DeleteAction:
			name = a.GetName()
		}
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource+" "+name)
	}
	return out
}

func equalStrings(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// with returns a copy of m with key set to value.
func with(m map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func testContext(t *testing.T) context.Context {
	_, ctx := ktesting.NewTestContext(t)
	return ctx
}

func TestEnsureCreatesAMissingObject(t *testing.T) {
	m := newMonocle("demo")
	desired := resources.NewAPIDeployment(m, resources.Inputs{})
	e := newEngine(t, nil)
	got, err := e.kind.Ensure(testContext(t), e.events, m, desired)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Name != desired.Name {
		t.Errorf("Ensure returned %v, want the created %s", got, desired.Name)
	}
	equalStrings(t, "actions", e.verbs(), "create deployments demo-api")
	if opts := e.client.Actions()[0].(core.CreateActionImpl).GetCreateOptions(); opts.FieldManager != testManager {
		t.Errorf("created with field manager %q, want %q", opts.FieldManager, testManager)
	}
	equalStrings(t, "events", e.recorded(), "Normal Created Created Deployment demo-api")
}

func TestCreatedLogRecordsOneEventPerSync(t *testing.T) {
	m := newMonocle("demo")
	e := newEngine(t, nil)
	ctx, log := WithCreatedLog(testContext(t))
	for _, d := range []*appsv1.Deployment{resources.NewCrawlerDeployment(m, resources.Inputs{}), resources.NewAPIDeployment(m, resources.Inputs{})} {
		if _, err := e.kind.Ensure(ctx, e.events, m, d); err != nil {
			t.Fatal(err)
		}
	}
	NoteCreated(ctx, e.events, m, "Job", "demo-update-idents")
	equalStrings(t, "events before Record", e.recorded())
	log.Record(e.events, m)
	equalStrings(t, "events", e.recorded(), "Normal Created Created Deployment demo-api, Deployment demo-crawler, Job demo-update-idents")
}

func TestEnsureLeavesAnEqualObjectAlone(t *testing.T) {
	m := newMonocle("demo")
	desired := resources.NewAPIDeployment(m, resources.Inputs{})
	live := desired.DeepCopy()
	live.ResourceVersion = "7"
	// What others and the API server add is not the operator's: no drift.
	live.Labels["team"] = "search"
	live.Annotations = with(desired.Annotations, "deployment.kubernetes.io/revision", "3")
	live.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	e := newEngine(t, []*appsv1.Deployment{live})
	got, err := e.kind.Ensure(testContext(t), e.events, m, desired)
	if err != nil {
		t.Fatal(err)
	}
	if got != live {
		t.Errorf("Ensure returned %v, want the cached object", got)
	}
	equalStrings(t, "actions", e.verbs())
	equalStrings(t, "events", e.recorded())
}

func TestEnsureUpdatesADriftedObjectAtTheCachedVersion(t *testing.T) {
	m := newMonocle("demo")
	desired := resources.NewAPIDeployment(m, resources.Inputs{ConfigHash: "c0ffee"})
	live := desired.DeepCopy()
	live.ResourceVersion = "7"
	live.Spec.Replicas = ptr.To[int32](5)
	delete(live.Labels, resources.ManagedByLabel)
	live.Labels["team"] = "search"
	live.Annotations = with(with(desired.Annotations, resources.AnnotationPrefix+"stale", "x"), "theirs", "kept")
	e := newEngine(t, []*appsv1.Deployment{live})
	got, err := e.kind.Ensure(testContext(t), e.events, m, desired)
	if err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "actions", e.verbs(), "update deployments demo-api")
	update := e.client.Actions()[0].(core.UpdateActionImpl)
	if opts := update.GetUpdateOptions(); opts.FieldManager != testManager {
		t.Errorf("updated with field manager %q, want %q", opts.FieldManager, testManager)
	}
	written := update.GetObject().(*appsv1.Deployment)
	if written.ResourceVersion != "7" {
		t.Errorf("updated at resourceVersion %q, want the cached 7", written.ResourceVersion)
	}
	if *written.Spec.Replicas != *desired.Spec.Replicas {
		t.Errorf("replicas %d, want %d", *written.Spec.Replicas, *desired.Spec.Replicas)
	}
	if written.Labels[resources.ManagedByLabel] != resources.ManagedByValue || written.Labels["team"] != "search" {
		t.Errorf("labels %v: want the operator's back and the others' kept", written.Labels)
	}
	if _, ok := written.Annotations[resources.AnnotationPrefix+"stale"]; ok || written.Annotations["theirs"] != "kept" {
		t.Errorf("annotations %v: want the operator's stale one dropped and the others' kept", written.Annotations)
	}
	if got == nil || got.Name != desired.Name {
		t.Errorf("Ensure returned %v, want the updated object", got)
	}
	equalStrings(t, "events", e.recorded(), "Normal Updated Updated Deployment demo-api to the desired state")
}

func TestEnsureLeavesAnObjectOfAnotherOwner(t *testing.T) {
	m := newMonocle("demo")
	desired := resources.NewAPIDeployment(m, resources.Inputs{})
	unowned := desired.DeepCopy()
	unowned.OwnerReferences = nil
	recreated := desired.DeepCopy()
	recreated.OwnerReferences[0].UID = "uid-of-an-earlier-demo"
	for name, live := range map[string]*appsv1.Deployment{"no owner": unowned, "another Monocle UID": recreated} {
		live.Spec.Replicas = ptr.To[int32](5)
		e := newEngine(t, []*appsv1.Deployment{live})
		_, err := e.kind.Ensure(testContext(t), e.events, m, desired)
		var conflict *ConflictError
		if !errors.As(err, &conflict) || conflict.Kind != "Deployment" || conflict.Name != "demo-api" {
			t.Errorf("%s: Ensure returned %v, want a *ConflictError of Deployment demo-api", name, err)
		}
		equalStrings(t, name+": actions", e.verbs())
		equalStrings(t, name+": events", e.recorded(),
			"Warning NameConflict Deployment demo-api exists and is not controlled by this Monocle; it was left unchanged")
	}
}

// The filtered cache does not see an object without the operator's label: the create fails,
// and Ensure goes on with the object read from the API server.
func TestEnsureReadsAnObjectTheCacheCannotSee(t *testing.T) {
	m := newMonocle("demo")
	desired := resources.NewAPIDeployment(m, resources.Inputs{})
	live := desired.DeepCopy()
	delete(live.Labels, resources.ManagedByLabel)
	e := newEngine(t, nil, live)
	if _, err := e.kind.Ensure(testContext(t), e.events, m, desired); err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "actions", e.verbs(), "create deployments demo-api", "get deployments demo-api", "update deployments demo-api")
	if got := e.client.Actions()[2].(core.UpdateActionImpl).GetObject().(*appsv1.Deployment); got.Labels[resources.ManagedByLabel] != resources.ManagedByValue {
		t.Errorf("updated labels %v, want the operator's label", got.Labels)
	}
}

func TestDeleteSendsTheCachedUIDAndVersion(t *testing.T) {
	m := newMonocle("demo")
	live := resources.NewAPIDeployment(m, resources.Inputs{})
	live.UID, live.ResourceVersion = types.UID("uid-api"), "9"
	e := newEngine(t, []*appsv1.Deployment{live})
	if err := e.kind.Delete(testContext(t), e.events, m, "demo-api", "the test says so"); err != nil {
		t.Fatal(err)
	}
	equalStrings(t, "actions", e.verbs(), "delete deployments demo-api")
	p := e.client.Actions()[0].(core.DeleteActionImpl).GetDeleteOptions().Preconditions
	if p == nil || ptr.Deref(p.UID, "") != "uid-api" || ptr.Deref(p.ResourceVersion, "") != "9" {
		t.Errorf("delete preconditions %+v, want UID uid-api and resourceVersion 9", p)
	}
	equalStrings(t, "events", e.recorded(), "Normal Deleted Deleted Deployment demo-api: the test says so")
}

func TestDeleteLeavesMissingAndForeignObjects(t *testing.T) {
	m := newMonocle("demo")
	foreign := resources.NewAPIDeployment(m, resources.Inputs{})
	foreign.OwnerReferences = nil
	e := newEngine(t, []*appsv1.Deployment{foreign})
	for _, name := range []string{"demo-api", "demo-missing"} {
		if err := e.kind.Delete(testContext(t), e.events, m, name, "unused"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	equalStrings(t, "actions", e.verbs())
	equalStrings(t, "events", e.recorded())
}

func TestIsControlledBy(t *testing.T) {
	m := newMonocle("demo")
	ref := func(apiVersion, kind string, uid types.UID, controller bool) metav1.Object {
		return &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{
			APIVersion: apiVersion, Kind: kind, Name: "demo", UID: uid, Controller: ptr.To(controller)}}}
	}
	gv := monoclev1alpha1.SchemeGroupVersion.String()
	for name, c := range map[string]struct {
		obj  metav1.Object
		want bool
	}{
		"the Monocle's controller reference": {ref(gv, "Monocle", m.UID, true), true},
		"another version of the group":       {ref(monoclev1alpha1.GroupName+"/v1", "Monocle", m.UID, true), true},
		"not the controller":                 {ref(gv, "Monocle", m.UID, false), false},
		"another UID":                        {ref(gv, "Monocle", "uid-other", true), false},
		"another group":                      {ref("example.com/v1", "Monocle", m.UID, true), false},
		"another kind":                       {ref(gv, "Deployment", m.UID, true), false},
		"no owner":                           {&metav1.ObjectMeta{}, false},
	} {
		if got := IsControlledBy(c.obj, m); got != c.want {
			t.Errorf("%s: IsControlledBy = %v, want %v", name, got, c.want)
		}
	}
}
