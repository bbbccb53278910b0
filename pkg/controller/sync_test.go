package controller

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// TestFieldContestedDegrades: a policy engine (field manager "kyverno") adds a toleration to
// the API Deployment of a converged Monocle each time the operator removes it. The operator
// removes it twice; at the second set-back it reads the Deployment's managedFields, records a Warning
// event and sets Degraded with reason FieldContested, both naming the Deployment, the field
// and the manager, and then leaves the Deployment alone over many syncs, writing the status
// once. When the toleration is gone without the operator's write, Degraded clears.
func TestFieldContestedDegrades(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	find[*appsv1.Deployment](objects, "demo-api").ResourceVersion = "1"
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	c := f.newController()
	_, ctx := ktesting.NewTestContext(t)
	key := cache.MetaObjectToName(m)
	// The API server stamps a new resourceVersion on each write.
	version := 1
	f.kubeclient.PrependReactor("update", "deployments", func(a core.Action) (bool, runtime.Object, error) {
		version++
		a.(core.UpdateAction).GetObject().(*appsv1.Deployment).ResourceVersion = strconv.Itoa(version)
		return false, nil, nil
	})
	stored := func() *appsv1.Deployment {
		obj, err := f.kubeclient.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), m.Namespace, "demo-api")
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*appsv1.Deployment).DeepCopy()
	}
	toleration := corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	// writeAs writes the Deployment, changed by edit, as field manager manager.
	writeAs := func(manager string, edit func(d *appsv1.Deployment)) {
		d := stored()
		edit(d)
		version++
		d.ResourceVersion = strconv.Itoa(version)
		if err := f.kubeclient.Tracker().Update(appsv1.SchemeGroupVersion.WithResource("deployments"), d, d.Namespace,
			metav1.UpdateOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
	}
	kyverno := func() {
		if !slices.Contains(stored().Spec.Template.Spec.Tolerations, toleration) {
			writeAs("kyverno", func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Tolerations = append(d.Spec.Template.Spec.Tolerations, toleration)
			})
		}
	}
	statusWrites := 0
	// sync brings the caches up to the fake API servers, as the informers do, and syncs.
	sync := func() {
		t.Helper()
		cached, _ := owned.StripManagedFields(stored())
		if err := f.kubeInformers.Apps().V1().Deployments().Informer().GetIndexer().Update(cached); err != nil {
			t.Fatal(err)
		}
		for _, a := range writes(f.client.Actions()) {
			statusWrites++
			if err := f.monocleInformers.Monocle().V1alpha1().Monocles().Informer().GetIndexer().Update(writtenObject(a)); err != nil {
				t.Fatal(err)
			}
		}
		f.client.ClearActions()
		if err := c.syncHandler(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	degraded := func() *metav1.Condition {
		t.Helper()
		sync()
		got, err := f.client.Tracker().Get(monoclev1alpha1.SchemeGroupVersion.WithResource("monocles"), m.Namespace, m.Name)
		if err != nil {
			t.Fatal(err)
		}
		return apimeta.FindStatusCondition(got.(*monoclev1alpha1.Monocle).Status.Conditions, monoclev1alpha1.ConditionDegraded)
	}

	kyverno()
	for range 30 {
		sync()
		kyverno()
	}
	var updates, reads []string
	for _, a := range f.kubeclient.Actions() {
		switch {
		case a.GetVerb() == "update" && a.GetResource().Resource == "deployments":
			updates = append(updates, actionName(a))
		case a.GetVerb() == "get":
			reads = append(reads, a.GetResource().Resource+" "+a.(core.GetAction).GetName())
		}
	}
	if !slices.Equal(updates, []string{"demo-api", "demo-api"}) || !slices.Equal(reads, []string{"deployments demo-api", "deployments demo-api"}) {
		t.Errorf("over 30 syncs: updates %q and reads %q, want the two updates before the contest and a read of the managedFields at each set-back", updates, reads)
	}
	if statusWrites != 1 {
		t.Errorf("%d status writes, want 1", statusWrites)
	}
	named := `Deployment demo-api: spec.template.spec.tolerations set back by field manager "kyverno"`
	var contested []string
	for _, e := range drain(f) {
		if strings.HasPrefix(e, "Warning "+reasons.FieldContested+" ") {
			contested = append(contested, e)
		}
	}
	if len(contested) != 1 || !strings.Contains(contested[0], named) {
		t.Errorf("FieldContested events %q, want one saying %q", contested, named)
	}
	if d := degraded(); d == nil || d.Status != metav1.ConditionTrue || d.Reason != reasons.FieldContested || !strings.Contains(d.Message, named) {
		t.Fatalf("Degraded = %+v, want True, FieldContested, saying %q", d, named)
	}

	// The toleration goes without the operator's write: the contest is over.
	writeAs("kubectl-edit", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Tolerations = nil })
	if d := degraded(); d == nil || d.Status != metav1.ConditionFalse || d.Reason != reasons.AsExpected {
		t.Errorf("Degraded = %+v once the toleration is gone, want False, AsExpected", d)
	}
	if got := c.kinds.Contests().Of(m); len(got) != 0 {
		t.Errorf("contests %v, want none", got)
	}
}

func TestPausedMonocleIsLeftAlone(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	find[*appsv1.Deployment](objects, "demo-api").Spec.Replicas = ptr.To[int32](0)
	paused := m.DeepCopy()
	paused.Annotations = map[string]string{monoclev1alpha1.PausedAnnotation: "true"}
	_, writes, status := resync(t, paused, objects)
	expectActions(t, writes)
	if c := condition(t, status, monoclev1alpha1.ConditionPaused); c.Status != metav1.ConditionTrue {
		t.Errorf("Paused = %+v", c)
	}
	// Resuming repairs the drift.
	resumed := status.DeepCopy()
	delete(resumed.Annotations, monoclev1alpha1.PausedAnnotation)
	_, writes, status = resync(t, resumed, objects)
	expectActions(t, writes, "update deployments demo-api")
	if c := condition(t, status, monoclev1alpha1.ConditionPaused); c.Status != metav1.ConditionFalse {
		t.Errorf("Paused after resuming = %+v", c)
	}
}
