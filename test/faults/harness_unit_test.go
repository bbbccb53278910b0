package faults

import (
	"context"
	"errors"
	"net/url"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestKwokLeftBehind(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	old := metav1.NewTime(now.Add(-2 * kwokRetryPeriod))
	young := metav1.NewTime(now.Add(-kwokRetryPeriod / 2))
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	notReady := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	pod := func(created metav1.Time, node string, phase corev1.PodPhase, conds []corev1.PodCondition, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: phase, Conditions: conds}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: now.Add(30 * time.Second)}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"scheduled, not Ready for long", pod(old, "kwok-node-0", corev1.PodRunning, notReady, false), true},
		{"scheduled, no conditions yet, for long", pod(old, "kwok-node-0", corev1.PodPending, nil, false), true},
		{"Ready", pod(old, "kwok-node-0", corev1.PodRunning, ready, false), false},
		{"not Ready, just created", pod(young, "kwok-node-0", corev1.PodPending, nil, false), false},
		{"not scheduled", pod(old, "", corev1.PodPending, nil, false), false},
		{"Succeeded", pod(old, "kwok-node-0", corev1.PodSucceeded, notReady, false), false},
		{"Failed", pod(old, "kwok-node-0", corev1.PodFailed, notReady, false), false},
		{"Ready and being deleted", pod(old, "kwok-node-0", corev1.PodRunning, ready, true), true},
	} {
		if got := kwokLeftBehind(tc.pod, now); got != tc.want {
			t.Errorf("%s: kwokLeftBehind = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestReadFailures: the suite tells its own reads that got no answer (a deadline, a timeout,
// throttling, an unavailable or unreachable API server) from answers, which a check judges.
func TestReadFailures(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for err, want := range map[error]bool{
		&url.Error{Op: "Get", URL: "https://127.0.0.1/apis/apps/v1/deployments/x", Err: context.DeadlineExceeded}: true,
		apierrors.NewServerTimeout(gr, "get", 1):                                    true,
		apierrors.NewTooManyRequests("slow down", 1):                                true,
		apierrors.NewServiceUnavailable("starting"):                                 true,
		&url.Error{Op: "Get", URL: "https://127.0.0.1/", Err: syscall.ECONNREFUSED}: true,
		apierrors.NewNotFound(gr, "x"):                                              false,
		apierrors.NewForbidden(gr, "x", errors.New("no")):                           false,
		errors.New("Ready is False (ComponentsNotReady)"):                           false,
	} {
		if got := isReadFailure(err); got != want {
			t.Errorf("isReadFailure(%v) = %t, want %t", err, got, want)
		}
	}
}
