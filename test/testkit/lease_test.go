package testkit

import (
	"errors"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func lease(name string, holder *string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: holder},
	}
}

func TestLeaseHolder(t *testing.T) {
	kube := fake.NewClientset(lease("held", ptr.To("a")), lease("free", nil), lease("released", ptr.To("")))
	for name, want := range map[string]string{"held": "a", "free": "", "released": "", "missing": ""} {
		if got, err := LeaseHolder(t.Context(), kube, "ns", name); err != nil || got != want {
			t.Errorf("LeaseHolder of %s = %q, %v; want %q, nil", name, got, err, want)
		}
	}

	kube.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(coordinationv1.Resource("leases"), "held", errors.New("no"))
	})
	if _, err := LeaseHolder(t.Context(), kube, "ns", "held"); !apierrors.IsForbidden(err) {
		t.Errorf("LeaseHolder on a refusal = %v, want the API server's Forbidden", err)
	}
}

func TestWaitLeader(t *testing.T) {
	kube := fake.NewClientset(lease("l", ptr.To("b")))
	if i, err := WaitLeader(t.Context(), kube, "ns", "l", time.Second, "a", "b"); err != nil || i != 1 {
		t.Errorf("WaitLeader = %d, %v; want 1 (b), nil", i, err)
	}
	i, err := WaitLeader(t.Context(), kube, "ns", "l", 300*time.Millisecond, "a", "c")
	if i != -1 || err == nil || !strings.Contains(err.Error(), `a replica leads: not true after 300ms: the Lease is held by "b"`) {
		t.Errorf("WaitLeader for others = %d, %v; want -1 and Poll's timeout naming the holder", i, err)
	}
	if i, err := WaitLeader(t.Context(), kube, "ns", "missing", 300*time.Millisecond, ""); i != -1 || err == nil {
		t.Errorf("WaitLeader for a missing Lease and identity \"\" = %d, %v; want a timeout", i, err)
	}
}
