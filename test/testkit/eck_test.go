package testkit

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestBundledObjects: the StatefulSets, the PVCs and Monocle m's Elasticsearch Service of a
// namespace are listed, objects of other namespaces and other Services are not.
func TestBundledObjects(t *testing.T) {
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	e := &Env{Kube: fake.NewClientset(
		&appsv1.StatefulSet{ObjectMeta: meta("ns", "m-elastic")},
		&corev1.PersistentVolumeClaim{ObjectMeta: meta("ns", "data-m-elastic-0")},
		&corev1.Service{ObjectMeta: meta("ns", "m-elastic")},
		&corev1.Service{ObjectMeta: meta("ns", "m-api")},
		&corev1.Service{ObjectMeta: meta("other", "n-elastic")},
		&corev1.PersistentVolumeClaim{ObjectMeta: meta("other", "data-n-elastic-0")},
	)}
	got, err := e.BundledObjects(t.Context(), "ns", "m")
	want := []string{"statefulset/m-elastic", "persistentvolumeclaim/data-m-elastic-0", "service/m-elastic"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("BundledObjects(ns, m) = %v, %v; want %v", got, err, want)
	}
	if got, err := e.BundledObjects(t.Context(), "other", "m"); err != nil || !reflect.DeepEqual(got, []string{"persistentvolumeclaim/data-n-elastic-0"}) {
		t.Errorf("BundledObjects(other, m) = %v, %v; want only the PVC", got, err)
	}
	if got, err := e.BundledObjects(t.Context(), "empty", "m"); err != nil || len(got) != 0 {
		t.Errorf("BundledObjects(empty, m) = %v, %v; want none", got, err)
	}
}
