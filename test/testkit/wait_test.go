package testkit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestPoll(t *testing.T) {
	notYet := errors.New("not yet")
	tests := map[string]struct {
		okAfter int // calls before cond returns nil; -1 never
		cancel  bool
		// cutAt is the call that waits for the poll's context to end and returns its
		// error, as a read cut by the deadline does; 0 none
		cutAt   int
		wantErr string
	}{
		"at once":            {okAfter: 0},
		"after three tries":  {okAfter: 3},
		"never":              {okAfter: -1, wantErr: "ready: not true after 50ms: not yet"},
		"context ends first": {okAfter: -1, cancel: true, wantErr: "ready: not true after 1m0s: not yet"},
		"last check cut by the deadline": {okAfter: -1, cutAt: 3,
			wantErr: "ready: not true after 50ms: not yet"},
		"only check cut by the deadline": {okAfter: -1, cutAt: 1,
			wantErr: "ready: not true after 50ms: context deadline exceeded"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			timeout := 50 * time.Millisecond
			if tc.cancel {
				timeout = time.Minute
			}
			calls := 0
			err := Poll(ctx, time.Millisecond, timeout, "ready", func(ctx context.Context) error {
				calls++
				if tc.cancel && calls == 2 {
					cancel()
				}
				if calls == tc.cutAt {
					<-ctx.Done()
					return ctx.Err()
				}
				if tc.okAfter >= 0 && calls > tc.okAfter {
					return nil
				}
				return notYet
			})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Poll: %v", err)
				}
				if calls != tc.okAfter+1 {
					t.Errorf("cond called %d times, want %d", calls, tc.okAfter+1)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("Poll = %v, want %q", err, tc.wantErr)
			}
			if tc.cutAt != 1 && !errors.Is(err, notYet) {
				t.Fatalf("Poll = %v, want it to wrap cond's last completed error", err)
			}
		})
	}
}

func TestCreateNamespace(t *testing.T) {
	kube := fake.NewClientset()
	for range 2 { // the second create finds it there
		if err := CreateNamespace(t.Context(), kube, "ns"); err != nil {
			t.Fatalf("CreateNamespace: %v", err)
		}
	}
	ns, err := kube.CoreV1().Namespaces().Get(t.Context(), "ns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"pod-security.kubernetes.io/enforce", "pod-security.kubernetes.io/warn"} {
		if ns.Labels[l] != "restricted" {
			t.Errorf("label %s = %q, want restricted", l, ns.Labels[l])
		}
	}

	kube.PrependReactor("create", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "other", errors.New("no"))
	})
	if err := CreateNamespace(t.Context(), kube, "other"); err == nil || !strings.Contains(err.Error(), "creating namespace other") {
		t.Errorf("CreateNamespace on a refusal = %v, want the wrapped error", err)
	}
}
