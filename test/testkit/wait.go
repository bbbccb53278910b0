package testkit

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// errNotYet stands for the last error of a Poll whose condition never ran to completion, so
// that a timeout always says something.
var errNotYet = errors.New("no check completed")

// Poll calls cond at once and then every interval until it returns nil, timeout passes or ctx
// ends, with wait.PollUntilContextTimeout; cond gets a context that ends with the poll. It
// returns nil once cond has, and otherwise "<what>: not true after <timeout>: <cond's last
// error>", wrapping that error. A cond error does not stop the poll: it is the
// reason the condition does not hold yet. A check cut short because the poll's own time ran
// out (its reads end with the context) says nothing about the condition, so the error of
// the last check that completed is the one reported; a slow machine then shows as what was
// still pending, not as a read that timed out.
func Poll(ctx context.Context, interval, timeout time.Duration, what string, cond func(context.Context) error) error {
	last := errNotYet
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		err := cond(ctx)
		if err == nil {
			return true, nil
		}
		if ctx.Err() == nil || errors.Is(last, errNotYet) {
			last = err
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("%s: not true after %s: %w", what, timeout, last)
	}
	return nil
}

// Eventually is Poll for a test: it polls cond every interval for up to timeout and fails t
// with Poll's error (what, the timeout and cond's last error) if cond never returns nil.
// The poll ends early if t's context ends.
func Eventually(t testing.TB, interval, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	if err := Poll(t.Context(), interval, timeout, what, func(context.Context) error { return cond() }); err != nil {
		t.Fatal(err)
	}
}

// NeedCluster skips t, with the reason, unless the suite started its local control plane
// (running); suites start none under -short.
func NeedCluster(t testing.TB, running bool) {
	t.Helper()
	if !running {
		t.Skip("needs the local control plane; not started with -short")
	}
}

// CreateNamespace creates the Namespace name labelled to enforce and warn at the restricted
// Pod Security level (pod-security.kubernetes.io/enforce and /warn, see
// https://kubernetes.io/docs/concepts/security/pod-security-admission/), the level the
// operator's pods are built for. A Namespace that already exists is left as it is and is not
// an error.
func CreateNamespace(ctx context.Context, kube kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	}}}
	_, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// MustCreateNamespace is CreateNamespace for a test: it fails t on error and deletes the
// Namespace, without waiting for it to go, when t ends.
func MustCreateNamespace(t testing.TB, kube kubernetes.Interface, name string) {
	t.Helper()
	if err := CreateNamespace(t.Context(), kube, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}
