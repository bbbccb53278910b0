package testkit

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// LeaseHolder returns the holder identity of the leader election Lease namespace/name: ""
// when it is free (no holder, or the empty one a leader leaves when it releases the Lease)
// or does not exist (yet). Its error is the API server's for any other failure to get the
// Lease.
func LeaseHolder(ctx context.Context, kube kubernetes.Interface, namespace, name string) (string, error) {
	lease, err := kube.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

// WaitLeader polls the Lease namespace/name every 200 ms, for up to timeout, until one of
// identities holds it, and returns the index of that identity. Its error is Poll's: `a
// replica leads: not true after <timeout>: the Lease is held by "<holder>"`, or by the last
// error getting the Lease.
func WaitLeader(ctx context.Context, kube kubernetes.Interface, namespace, name string, timeout time.Duration, identities ...string) (int, error) {
	leader := -1
	err := Poll(ctx, 200*time.Millisecond, timeout, "a replica leads", func(ctx context.Context) error {
		holder, err := LeaseHolder(ctx, kube, namespace, name)
		if err != nil {
			return err
		}
		if i := slices.Index(identities, holder); holder != "" && i >= 0 {
			leader = i
			return nil
		}
		return fmt.Errorf("the Lease is held by %q", holder)
	})
	return leader, err
}
