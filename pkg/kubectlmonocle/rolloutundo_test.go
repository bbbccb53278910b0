package kubectlmonocle

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// podTemplate is a pod template of selector labels and image.
func podTemplate(labels map[string]string, image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}}}
}

// undoDeployment is Deployment name of ns/demo running the image of its newest revision,
// with a ReplicaSet per image of images, revision i+1 created created[i] before testNow.
func undoDeployment(name string, images []string, created []time.Duration) []runtime.Object {
	selector := map[string]string{"app": name}
	newest := strconv.Itoa(len(images))
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
		Annotations: map[string]string{"deployment.kubernetes.io/revision": newest}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}, Template: podTemplate(selector, images[len(images)-1])}}
	objects := []runtime.Object{d}
	for i, image := range images {
		hash := strconv.Itoa(i + 1)
		labels := map[string]string{"app": name, appsv1.DefaultDeploymentUniqueLabelKey: hash}
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + hash, Namespace: "ns", Labels: labels,
			UID: types.UID("uid-" + name + "-" + hash), CreationTimestamp: *ago(created[i]),
			Annotations: map[string]string{"deployment.kubernetes.io/revision": hash, "image": image}},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podTemplate(labels, image)}}
		rs.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}
		objects = append(objects, rs)
	}
	return objects
}

// undoStatefulSet is StatefulSet demo-elastic running the image of its newest revision, with
// a ControllerRevision per image of images, revision i+1 created created[i] before testNow,
// holding the patch kubectl applies to roll back to it.
func undoStatefulSet(t *testing.T, images []string, created []time.Duration) []runtime.Object {
	const name = "demo-elastic"
	selector := map[string]string{"app": name}
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-elastic"},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}, Template: podTemplate(selector, images[len(images)-1])}}
	s.Status.CurrentRevision = name + "-" + strconv.Itoa(len(images))
	s.Status.UpdateRevision = s.Status.CurrentRevision
	objects := []runtime.Object{s}
	for i, image := range images {
		var template map[string]any
		if err := json.Unmarshal([]byte(toJSON(t, podTemplate(selector, image))), &template); err != nil {
			t.Fatal(err)
		}
		template["$patch"] = "replace"
		cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + strconv.Itoa(i+1), Namespace: "ns", Labels: selector,
			CreationTimestamp: *ago(created[i])},
			Revision: int64(i + 1), Data: runtime.RawExtension{Raw: []byte(toJSON(t, map[string]any{"spec": map[string]any{"template": template}}))}}
		cr.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(s, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}
		objects = append(objects, cr)
	}
	return objects
}

// failedDemo is Monocle ns/demo whose roll to v0.2.0 started 10 minutes ago and failed.
func failedDemo() *monoclev1alpha1.Monocle {
	return fleetMonocle("ns", "demo", wave(1, monoclev1alpha1.RolloutFailed, 10*time.Minute, "Not Ready again within 15m0s"))
}

// undoFleet is failedDemo's (or m's) workloads: the roll changed the API's and
// Elasticsearch's templates (revision 2 of each, created after it started), not the
// crawler's.
func undoFleet(t *testing.T, m *monoclev1alpha1.Monocle) []runtime.Object {
	objects := []runtime.Object{m}
	objects = append(objects, undoDeployment("demo-api", []string{"monocle:1", "monocle:2"}, []time.Duration{48 * time.Hour, 9 * time.Minute})...)
	objects = append(objects, undoDeployment("demo-crawler", []string{"monocle:1"}, []time.Duration{2 * time.Hour})...)
	return append(objects, undoStatefulSet(t, []string{"elasticsearch:1", "elasticsearch:2"}, []time.Duration{48 * time.Hour, 9 * time.Minute})...)
}

// kubePatches are the patches sent to the Kubernetes clientset, as "resource/name".
func (f *fixture) kubePatches() []string {
	var out []string
	for _, a := range f.kube.Actions() {
		if p, ok := a.(k8stesting.PatchAction); ok {
			out = append(out, p.GetResource().Resource+"/"+p.GetName())
		}
	}
	return out
}

func TestRolloutUndo(t *testing.T) {
	f, err := run(t, undoFleet(t, failedDemo()), "rollout", "undo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	want := "deployment.apps/demo-api rolled back to revision 1\n" +
		"deployment.apps/demo-crawler left at revision 1, created 110m before the roll started: the roll did not change it, or it was rolled back already\n" +
		"statefulset.apps/demo-elastic rolled back to revision 1\n" +
		"the operator leaves them so while the roll of v0.2.0 is Failed: `kubectl monocle rollout resume demo` writes its templates again once the cause is fixed\n"
	if f.out.String() != want {
		t.Errorf("printed %q, want %q", f.out.String(), want)
	}
	if got := f.kubePatches(); strings.Join(got, " ") != "deployments/demo-api statefulsets/demo-elastic" {
		t.Errorf("patched %v", got)
	}
	ctx := context.Background()
	api, err := f.kube.AppsV1().Deployments("ns").Get(ctx, "demo-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// kubectl's rollback: the ReplicaSet's template without its hash label, and its
	// annotations but the Deployment's revision.
	if got := toJSON(t, api.Spec.Template); got != toJSON(t, podTemplate(map[string]string{"app": "demo-api"}, "monocle:1")) {
		t.Errorf("demo-api's template is %s", got)
	}
	if a := api.Annotations; a["image"] != "monocle:1" || a["deployment.kubernetes.io/revision"] != "2" {
		t.Errorf("demo-api's annotations are %v", a)
	}
	es, err := f.kube.AppsV1().StatefulSets("ns").Get(ctx, "demo-elastic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := toJSON(t, es.Spec.Template); got != toJSON(t, podTemplate(map[string]string{"app": "demo-elastic"}, "elasticsearch:1")) {
		t.Errorf("demo-elastic's template is %s", got)
	}
	if len(f.writes()) != 0 {
		t.Errorf("undo wrote the Monocle: %v", f.writes())
	}
}

func TestRolloutUndoRefusals(t *testing.T) {
	rolled := fleetMonocle("ns", "demo", wave(1, monoclev1alpha1.RolloutRolled, 10*time.Minute, ""))
	f, err := run(t, undoFleet(t, rolled), "rollout", "undo", "demo")
	expectRefused(t, f, err, "status.rollout.phase is Rolled, not Failed: the operator writes the workloads of a Monocle whose roll has not failed")
	if p := f.kubePatches(); len(p) != 0 {
		t.Errorf("a refused undo patched %v", p)
	}

	// --force rolls back all the same, without the hint about resume.
	f, err = run(t, undoFleet(t, rolled), "rollout", "undo", "demo", "--force")
	if err != nil || len(f.kubePatches()) != 2 || strings.Contains(f.out.String(), "resume") {
		t.Errorf("--force: %v, patched %v, printed %q", err, f.kubePatches(), f.out.String())
	}

	// A workload the roll changed without an earlier revision: nothing is written.
	objects := []runtime.Object{failedDemo()}
	objects = append(objects, undoDeployment("demo-api", []string{"monocle:1", "monocle:2"}, []time.Duration{48 * time.Hour, 9 * time.Minute})...)
	objects = append(objects, undoDeployment("demo-crawler", []string{"monocle:2"}, []time.Duration{9 * time.Minute})...)
	f, err = run(t, objects, "rollout", "undo", "demo")
	if err == nil || err.Error() != "deployment.apps/demo-crawler has no revision before its newest, 1, to roll back to" || len(f.kubePatches()) != 0 {
		t.Errorf("undo without an earlier revision: %v, patched %v", err, f.kubePatches())
	}
}

// TestRolloutUndoTwice: an undo run again changes nothing, where `kubectl rollout undo`
// would bring the failed template back; an Elasticsearch that is not bundled has no
// StatefulSet to roll back.
func TestRolloutUndoTwice(t *testing.T) {
	objects := []runtime.Object{failedDemo()}
	// What the Deployment controller leaves after an undo: the old ReplicaSet, at a new
	// revision.
	undone := undoDeployment("demo-api", []string{"monocle:2", "monocle:1"}, []time.Duration{9 * time.Minute, 48 * time.Hour})
	objects = append(objects, undone...)
	objects = append(objects, undoDeployment("demo-crawler", []string{"monocle:1"}, []time.Duration{2 * time.Hour})...)
	f, err := run(t, objects, "rollout", "undo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if p := f.kubePatches(); len(p) != 0 {
		t.Errorf("patched %v", p)
	}
	if want := "deployment.apps/demo-api left at revision 2, created 47h before the roll started"; !strings.HasPrefix(f.out.String(), want) {
		t.Errorf("printed %q, want %q first", f.out.String(), want)
	}
}
