package owned

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// contestWorld is the API Deployment of the Monocle "demo" in a fake API server that keeps
// managedFields as the real one does (k8sfake.NewClientset) and stamps resourceVersions, a
// cache that follows it as the informer does (without managedFields, StripManagedFields), and
// a Deployment Kind whose Contests read a fake clock.
type contestWorld struct {
	t       *testing.T
	m       *monoclev1alpha1.Monocle
	desired *appsv1.Deployment
	kind    Kind[*appsv1.Deployment]
	client  *k8sfake.Clientset
	indexer cache.Indexer
	clock   *clocktesting.FakeClock
	events  *record.FakeRecorder
	// version is the last resourceVersion stamped.
	version int
}

var deploymentsResource = appsv1.SchemeGroupVersion.WithResource("deployments")

// newContestWorld returns a world whose Deployment the operator has just created (Ensure),
// with the client's actions and the events cleared. admission, when set, changes each object
// the operator creates or updates, as a mutating admission webhook would.
func newContestWorld(t *testing.T, admission func(d *appsv1.Deployment)) *contestWorld {
	t.Helper()
	w := &contestWorld{t: t, m: newMonocle("demo"), client: k8sfake.NewClientset(), events: record.NewFakeRecorder(1000),
		clock:   clocktesting.NewFakeClock(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)),
		indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
	w.desired = resources.NewAPIDeployment(w.m, resources.Inputs{ConfigHash: "c0ffee"})
	w.client.PrependReactor("*", "deployments", func(a core.Action) (bool, runtime.Object, error) {
		if a.GetVerb() != "create" && a.GetVerb() != "update" {
			return false, nil, nil
		}
		d := a.(interface{ GetObject() runtime.Object }).GetObject().(*appsv1.Deployment)
		if admission != nil {
			admission(d)
		}
		w.version++
		d.ResourceVersion = strconv.Itoa(w.version)
		return false, nil, nil
	})
	w.kind = newKind("Deployment", w.indexer, appsv1.Resource("deployment"),
		func(ns string) Client[*appsv1.Deployment] { return w.client.AppsV1().Deployments(ns) }, testManager, podMetadata)
	w.kind.contests = NewContests(w.clock)
	w.sync()
	w.client.ClearActions()
	w.drain()
	return w
}

// stored is the Deployment as the fake API server holds it, managedFields included.
func (w *contestWorld) stored() *appsv1.Deployment {
	w.t.Helper()
	obj, err := w.client.Tracker().Get(deploymentsResource, w.desired.Namespace, w.desired.Name)
	if err != nil {
		w.t.Fatal(err)
	}
	return obj.(*appsv1.Deployment).DeepCopy()
}

// sync brings the cache up to the API server, as the informer does, and runs Ensure.
func (w *contestWorld) sync() {
	w.t.Helper()
	if obj, err := w.client.Tracker().Get(deploymentsResource, w.desired.Namespace, w.desired.Name); err == nil {
		cached, _ := StripManagedFields(obj.DeepCopyObject())
		if err := w.indexer.Update(cached); err != nil {
			w.t.Fatal(err)
		}
	}
	if _, err := w.kind.Ensure(testContext(w.t), w.events, w.m, w.desired.DeepCopy()); err != nil {
		w.t.Fatal(err)
	}
}

// write updates the Deployment in the API server as field manager manager, with edit made
// on it, bypassing the operator's client (its actions count only the operator's calls).
func (w *contestWorld) write(manager string, edit func(d *appsv1.Deployment)) {
	w.t.Helper()
	d := w.stored()
	edit(d)
	w.version++
	d.ResourceVersion = strconv.Itoa(w.version)
	if err := w.client.Tracker().Update(deploymentsResource, d, d.Namespace, metav1.UpdateOptions{FieldManager: manager}); err != nil {
		w.t.Fatal(err)
	}
}

// policyToleration is the toleration a policy engine adds to every Deployment.
var policyToleration = corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

// kyverno adds policyToleration as Kyverno's background mutation would, when the Deployment
// lacks it.
func (w *contestWorld) kyverno() {
	if !slices.Contains(w.stored().Spec.Template.Spec.Tolerations, policyToleration) {
		w.write("kyverno", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Tolerations = append(d.Spec.Template.Spec.Tolerations, policyToleration)
		})
	}
}

// calls counts the operator's calls since the last clear, by verb.
func (w *contestWorld) calls() map[string]int {
	out := map[string]int{}
	for _, a := range w.client.Actions() {
		out[a.GetVerb()]++
	}
	return out
}

// drain returns the events recorded since the last drain.
func (w *contestWorld) drain() []string {
	var out []string
	for len(w.events.Events) > 0 {
		out = append(out, <-w.events.Events)
	}
	return out
}

// contest returns the Deployment's contest, or nil.
func (w *contestWorld) contest() *Contest {
	cs := w.kind.contests.Of(w.m)
	if len(cs) > 1 {
		w.t.Fatalf("contests %v, want at most the Deployment's", cs)
	}
	if len(cs) == 0 {
		return nil
	}
	return &cs[0]
}

// backoffs runs a sync a second for d, calling between syncs, and returns the back-offs of the
// Deployment's contest in the order they were first seen.
func (w *contestWorld) run(d time.Duration, between func()) (backoffs []time.Duration) {
	for range int(d / time.Second) {
		w.sync()
		if between != nil {
			between()
		}
		if c := w.contest(); c != nil && (len(backoffs) == 0 || backoffs[len(backoffs)-1] != c.Backoff) {
			backoffs = append(backoffs, c.Backoff)
		}
		w.clock.Step(time.Second)
	}
	return backoffs
}

func withPrefix(events []string, prefix string) []string {
	var out []string
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// TestContestedFieldBacksOff: a policy engine (field manager "kyverno") adds a toleration to
// the API Deployment each time the operator removes it. Once the operator sees its removal
// set back twice, it leaves the Deployment for 30 s, then 1 m, 2 m, 4 m: over five minutes it
// writes five times instead of once a sync, reads the object once per set-back for its
// managedFields, and each Warning event names the object, the field and the manager. Once
// the policy stops, the operator's next write stands, the contest ends and its back-off
// starts again from 30 s at the next contest.
func TestContestedFieldBacksOff(t *testing.T) {
	w := newContestWorld(t, nil)
	w.kyverno()
	backoffs := w.run(5*time.Minute, w.kyverno)

	if want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute}; !slices.Equal(backoffs, want) {
		t.Errorf("back-offs %v, want %v", backoffs, want)
	}
	calls := w.calls()
	if calls["update"] != 5 || calls["get"] != 5 || len(calls) != 2 {
		t.Errorf("calls over 300 syncs %v, want 5 updates (two before the contest, then one per round) and 5 reads (one per set-back)", calls)
	}
	events := w.drain()
	contested := withPrefix(events, "Warning FieldContested ")
	if len(contested) != 4 || len(withPrefix(events, "Normal Updated ")) != 5 {
		t.Errorf("events %q, want 5 Updated and 4 FieldContested", events)
	}
	for _, e := range contested {
		for _, want := range []string{"Deployment demo-api: spec.template.spec.tolerations set back by field manager \"kyverno\"",
			"label app.kubernetes.io/managed-by=monocle-operator"} {
			if !strings.Contains(e, want) {
				t.Errorf("event %q does not say %q", e, want)
			}
		}
	}
	c := w.contest()
	if c == nil || !slices.Equal(c.Fields, []string{"spec.template.spec.tolerations"}) || !slices.Equal(c.Managers, []string{"kyverno"}) || c.AtAdmission {
		t.Fatalf("contest %+v, want spec.template.spec.tolerations by kyverno", c)
	}
	if next, ok := w.kind.contests.NextCheck(w.m); !ok || !next.Equal(c.Retry) {
		t.Errorf("next check %v %v, want the retry %v", next, ok, c.Retry)
	}

	// The policy stops: the retry stands, and contestWindow later the contest is over.
	w.client.ClearActions()
	w.run(c.Retry.Sub(w.clock.Now())+contestWindow+time.Second, nil)
	if calls := w.calls(); calls["update"] != 1 || len(calls) != 1 {
		t.Errorf("calls once the policy stopped %v, want the one retry", calls)
	}
	if c := w.contest(); c != nil {
		t.Errorf("contest %+v once the retry stood for %s, want none", c, contestWindow)
	}
	if d := w.kind.contests.backoff.Get(objectKey{"Deployment", "default", "demo-api"}.String()); d != 0 {
		t.Errorf("back-off %s after the contest, want it reset", d)
	}
	if tolerations := w.stored().Spec.Template.Spec.Tolerations; len(tolerations) != 0 {
		t.Errorf("tolerations %v, want the operator's none", tolerations)
	}
	if _, ok := w.kind.contests.NextCheck(w.m); ok {
		t.Error("a check is still due without a contest")
	}

	// The next contest starts over at 30 s.
	w.drain()
	w.kyverno()
	if backoffs := w.run(10*time.Second, w.kyverno); !slices.Equal(backoffs, []time.Duration{30 * time.Second}) {
		t.Errorf("back-offs of a new contest %v, want 30s", backoffs)
	}
}

// TestChangedAtAdmission: a mutating admission webhook sets a toleration whose value changes
// on every write of the operator. The API server's answer to the operator's own create
// already differs, so the operator backs off at once and says the field was changed at
// admission (managedFields name the operator itself); over five minutes it writes three times
// more, never reads, and each event names the object and the field.
func TestChangedAtAdmission(t *testing.T) {
	writes := 0
	w := newContestWorld(t, func(d *appsv1.Deployment) {
		writes++
		d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "webhook", Operator: corev1.TolerationOpEqual, Value: strconv.Itoa(writes)}}
	})
	c := w.contest()
	if c == nil || !c.AtAdmission || !slices.Equal(c.Fields, []string{"spec.template.spec.tolerations"}) ||
		!slices.Equal(c.Managers, []string{testManager}) || c.Backoff != 30*time.Second {
		t.Fatalf("contest after the create %+v, want spec.template.spec.tolerations changed at admission, for 30s", c)
	}
	backoffs := w.run(5*time.Minute, nil)
	if want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute}; !slices.Equal(backoffs, want) {
		t.Errorf("back-offs %v, want %v", backoffs, want)
	}
	if calls := w.calls(); calls["update"] != 3 || len(calls) != 1 {
		t.Errorf("calls over 300 syncs %v, want 3 updates", calls)
	}
	contested := withPrefix(w.drain(), "Warning FieldContested ")
	if len(contested) != 3 {
		t.Errorf("FieldContested events %q, want one per update", contested)
	}
	for _, e := range contested {
		if want := `Deployment demo-api: spec.template.spec.tolerations changed at admission of the operator's write`; !strings.Contains(e, want) {
			t.Errorf("event %q does not say %q", e, want)
		}
	}
}

// TestDriftIsNoContest: drift that no writer keeps setting back is repaired as before, without
// backing off: a hand edit, made again at once (one set-back: one read of the managedFields),
// then again after contestWindow (no read), and a cache that still holds the version the
// operator updated.
func TestDriftIsNoContest(t *testing.T) {
	w := newContestWorld(t, nil)
	handEdit := func() {
		w.write("kubectl-edit", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Tolerations = []corev1.Toleration{policyToleration} })
	}
	handEdit()
	w.run(time.Minute, nil)
	handEdit()
	w.run(time.Minute, nil)
	w.clock.Step(contestWindow)
	handEdit()
	w.run(time.Minute, nil)
	if calls := w.calls(); calls["update"] != 3 || calls["get"] != 1 || len(calls) != 2 {
		t.Errorf("calls %v, want one update per edit and a read for the edit made again", calls)
	}

	// The cache is behind: it still holds the version the operator updated from.
	w.client.ClearActions()
	w.clock.Step(contestWindow)
	handEdit()
	before := w.stored()
	before.ManagedFields = nil
	w.sync()
	if err := w.indexer.Update(before); err != nil {
		t.Fatal(err)
	}
	if _, err := w.kind.Ensure(testContext(t), w.events, w.m, w.desired.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if calls := w.calls(); calls["update"] != 2 || len(calls) != 1 {
		t.Errorf("calls with a stale cache %v, want two updates and no read", calls)
	}
	if c := w.contest(); c != nil {
		t.Errorf("contest %+v, want none", c)
	}
	if events := withPrefix(w.drain(), "Warning "); len(events) != 0 {
		t.Errorf("warnings %q, want none", events)
	}
}

// TestContestedObjectTakesOtherChanges: while its back-off runs, a contested Deployment still
// gets a change of the Monocle at once.
func TestContestedObjectTakesOtherChanges(t *testing.T) {
	w := newContestWorld(t, nil)
	w.kyverno()
	w.run(3*time.Second, w.kyverno)
	if c := w.contest(); c == nil {
		t.Fatal("no contest")
	}
	w.client.ClearActions()
	w.desired.Spec.Replicas = ptr.To[int32](3)
	w.run(3*time.Second, nil)
	if calls := w.calls(); calls["update"] != 1 || len(calls) != 1 {
		t.Errorf("calls after the Monocle changed %v, want one update", calls)
	}
	if got := ptr.Deref(w.stored().Spec.Replicas, 0); got != 3 {
		t.Errorf("replicas %d, want 3", got)
	}
}

// TestFieldOwners: the managers named are those whose managedFields hold a contested field or
// a field under it, the operator's own aside, the latest writer first.
func TestFieldOwners(t *testing.T) {
	at := func(minute int) *metav1.Time {
		return &metav1.Time{Time: time.Date(2026, 11, 28, 12, minute, 0, 0, time.UTC)}
	}
	entry := func(manager string, op metav1.ManagedFieldsOperationType, when *metav1.Time, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Time: when, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		entry(testManager, metav1.ManagedFieldsOperationUpdate, at(9), `{"f:spec":{"f:template":{"f:spec":{"f:tolerations":{}}}}}`),
		entry("gitops", metav1.ManagedFieldsOperationApply, at(1), `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"api\"}":{".":{},"f:image":{}}}}}}}`),
		entry("kyverno", metav1.ManagedFieldsOperationUpdate, at(5), `{"f:spec":{"f:template":{"f:spec":{"f:tolerations":{}}}}}`),
		entry("labeller", metav1.ManagedFieldsOperationUpdate, at(7), `{"f:metadata":{"f:labels":{".":{},"f:team":{}}}}`),
		entry("scaler", metav1.ManagedFieldsOperationUpdate, at(8), `{"f:spec":{"f:replicas":{}}}`),
		entry("broken", metav1.ManagedFieldsOperationUpdate, at(9), `{"f:spec":`),
		entry("kyverno", metav1.ManagedFieldsOperationApply, at(2), `{"f:spec":{"f:template":{"f:spec":{"f:tolerations":{}}}}}`),
	}}}
	for _, tc := range []struct {
		paths []fieldPath
		want  []string
	}{
		{[]fieldPath{{"spec", "template", "spec", "tolerations"}}, []string{"kyverno"}},
		{[]fieldPath{{"spec", "template", "spec", "containers"}, {"spec", "template", "spec", "tolerations"}}, []string{"kyverno", "gitops"}},
		{[]fieldPath{{"spec", "template"}}, []string{"kyverno", "gitops"}},
		{[]fieldPath{{"spec", "replicas"}}, []string{"scaler"}},
		{[]fieldPath{{"metadata", "labels", "app.kubernetes.io/name"}}, nil},
		{[]fieldPath{{"metadata", "labels", "team"}}, []string{"labeller"}},
		{[]fieldPath{{"spec", "template", "spec", "nodeSelector"}}, nil},
	} {
		if got := fieldOwners(d, tc.paths, testManager); !slices.Equal(got, tc.want) {
			t.Errorf("owners of %v: %q, want %q", tc.paths, got, tc.want)
		}
	}
}

// TestDriftedPaths: the paths of drift are JSON paths, at the list or closed map owned whole,
// and at the key of an open map or of a stale pod label.
func TestDriftedPaths(t *testing.T) {
	m := placedMonocle(placement("a"))
	desired := resources.NewAPIDeployment(m, resources.Inputs{})
	live := desired.DeepCopy()
	live.Spec.Replicas = ptr.To[int32](7)
	live.Spec.Template.Spec.Containers[0].Image = "other"
	live.Spec.Template.Spec.NodeSelector["extra"] = "x"
	live.Spec.Template.Spec.Affinity = nil
	live.Spec.Template.Annotations["example.com/owner"] = "b"
	live.Spec.Template.Labels["team"] = "b"
	live.Labels["team"] = "someone"
	delete(live.Labels, resources.ManagedByLabel)

	var got []string
	for _, p := range append(metadataPaths(desired, live), driftedPaths(desired, live, ruleFor(reflect.TypeOf(desired), podMetadata))...) {
		got = append(got, p.String())
	}
	want := []string{
		"metadata.labels[app.kubernetes.io/managed-by]",
		"spec.replicas",
		"spec.template.metadata.labels.team",
		"spec.template.metadata.annotations[example.com/owner]",
		"spec.template.spec.containers",
		"spec.template.spec.nodeSelector",
		"spec.template.spec.affinity",
	}
	if !slices.Equal(got, want) {
		t.Errorf("paths\n got %q\nwant %q", got, want)
	}

	// A pod label the Monocle no longer sets is drift at its key, and so is the record of the
	// keys it sets.
	fewer := placedMonocle(placement("a"))
	delete(fewer.Spec.API.PodLabels, "cost-center")
	if got := fmt.Sprint(driftedPaths(resources.NewAPIDeployment(fewer, resources.Inputs{}), desired, ruleFor(reflect.TypeOf(desired), podMetadata))); got !=
		"[spec.template.metadata.labels.cost-center spec.template.metadata.annotations[monocle.change-metrics.io/pod-metadata]]" {
		t.Errorf("paths of a stale pod label %s", got)
	}

	u := &unstructured.Unstructured{Object: map[string]any{"kind": "Route", "metadata": map[string]any{"name": "r"},
		"spec": map[string]any{"host": "a", "to": map[string]any{"name": "svc", "weight": int64(100)}, "tls": map[string]any{"termination": "edge"}}}}
	lu := u.DeepCopy()
	_ = unstructured.SetNestedField(lu.Object, "b", "spec", "host")
	_ = unstructured.SetNestedField(lu.Object, int64(50), "spec", "to", "weight")
	unstructured.RemoveNestedField(lu.Object, "spec", "tls")
	_ = unstructured.SetNestedField(lu.Object, "theirs", "spec", "extra")
	if got := fmt.Sprint(unstructuredPaths(u, lu)); got != "[spec.host spec.tls spec.to.weight]" {
		t.Errorf("unstructured paths %s", got)
	}
}

// TestMonocleChangesAreNoContest: the Monocle changes what it wants of a field three times in
// a row while another writer (the Deployment controller, writing the status) changes the
// object between the operator's writes: each change is written at once, with no read of the
// managedFields and no contest.
func TestMonocleChangesAreNoContest(t *testing.T) {
	w := newContestWorld(t, nil)
	w.run(3*time.Second, nil)
	w.client.ClearActions()
	for replicas := int32(2); replicas <= 4; replicas++ {
		w.desired.Spec.Replicas = &replicas
		w.sync()
		w.write("kube-controller-manager", func(d *appsv1.Deployment) { d.Status.ObservedGeneration++ })
		w.clock.Step(time.Second)
	}
	w.run(3*time.Second, nil)
	if calls := w.calls(); calls["update"] != 3 || len(calls) != 1 {
		t.Errorf("calls %v, want an update per change of the Monocle and nothing else", calls)
	}
	if c := w.contest(); c != nil {
		t.Errorf("contest %+v, want none", c)
	}
	if events := withPrefix(w.drain(), "Warning "); len(events) != 0 {
		t.Errorf("warnings %q, want none", events)
	}
}
