package faults

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
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

// TestFleetRecorderCheck: the rule of waves scenarios 13 and 14 check holds for waves of 1
// and 2 one after the other (the next may start in the second the last ended), and each way
// of breaking it is told: a wave larger than its size, a roll beside one of another wave, a
// pod replaced outside its Monocle's rolls, a roll of another cause.
func TestFleetRecorderCheck(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 12, 2, 6, 0, s, 0, time.UTC) }
	roll := func(wave int32, from, to int) fleetRoll {
		return fleetRoll{wave: wave, cause: monoclev1alpha1.RolloutCauseWave, phase: monoclev1alpha1.RolloutRolled, start: at(from), end: at(to)}
	}
	pods := func(created ...int) map[types.UID]time.Time {
		out := map[types.UID]time.Time{}
		for i, s := range created {
			out[types.UID(fmt.Sprint(i))] = at(s)
		}
		return out
	}
	for name, tc := range map[string]struct {
		rolls     map[string][]fleetRoll
		pods      map[string]map[types.UID]time.Time
		waves     []int
		restarts  int
		problemed bool
	}{
		"waves one after the other": {
			rolls: map[string][]fleetRoll{"a": {roll(1, 0, 5)}, "b": {roll(2, 5, 9)}, "c": {roll(2, 6, 10)}, "d": {roll(3, 10, 12)}},
			pods:  map[string]map[types.UID]time.Time{"a": pods(1, 2), "b": pods(6, 7), "c": pods(7), "d": pods(11)},
			waves: []int{1, 2, 1}, restarts: 2,
		},
		"a failed roll, then resumed": {
			rolls: map[string][]fleetRoll{"a": {roll(1, 0, 20), roll(1, 40, 45)}, "b": {roll(2, 45, 50)}},
			pods:  map[string]map[types.UID]time.Time{"a": pods(1, 30), "b": pods(46)},
			waves: []int{1, 1}, restarts: 1,
		},
		"a wave larger than its size": {
			rolls: map[string][]fleetRoll{"a": {roll(1, 0, 5)}, "b": {roll(1, 0, 5)}},
			waves: []int{2}, problemed: true,
		},
		"a roll beside one of another wave": {
			rolls: map[string][]fleetRoll{"a": {roll(1, 0, 5)}, "b": {roll(2, 4, 9)}},
			waves: []int{1, 1}, problemed: true,
		},
		"a roll beside one still in flight": {
			rolls: map[string][]fleetRoll{"a": {{wave: 1, cause: monoclev1alpha1.RolloutCauseWave, start: at(0)}}, "b": {roll(2, 4, 9)}},
			waves: []int{1, 1}, problemed: true,
		},
		"a pod replaced before its wave": {
			rolls: map[string][]fleetRoll{"a": {roll(1, 0, 5)}, "b": {roll(2, 5, 9)}},
			pods:  map[string]map[types.UID]time.Time{"a": pods(1), "b": pods(3, 6)},
			waves: []int{1, 1}, restarts: 1, problemed: true,
		},
		"pods replaced without a roll": {
			rolls: map[string][]fleetRoll{"a": {roll(1, 0, 5)}},
			pods:  map[string]map[types.UID]time.Time{"a": pods(1, 3), "b": pods(2)},
			waves: []int{1}, restarts: 2, problemed: true,
		},
		"a roll the owner caused": {
			rolls:     map[string][]fleetRoll{"a": {{cause: monoclev1alpha1.RolloutCauseOwner, start: at(0), end: at(0)}}},
			problemed: true,
		},
	} {
		r := &fleetRecorder{rolls: tc.rolls, pods: tc.pods}
		waves, restarts, problems := r.check()
		if !slices.Equal(waves, tc.waves) || restarts != tc.restarts || (len(problems) > 0) != tc.problemed {
			t.Errorf("%s: check() = waves %v, %d restarting, problems %q; want waves %v, %d restarting, problems %t",
				name, waves, restarts, problems, tc.waves, tc.restarts, tc.problemed)
		}
	}
}
