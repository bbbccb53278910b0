package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// TestProgressWritesAreSpaced: a status that differs from the last written one only in the
// workloads' progress waits for progressInterval after the last write (startProgressInterval
// while the Monocle starts); any other change, or a Monocle whose status this process has not
// written, goes at once.
func TestProgressWritesAreSpaced(t *testing.T) {
	starting := func(msg string, ready int32) monoclev1alpha1.MonocleStatus {
		return monoclev1alpha1.MonocleStatus{
			Elasticsearch: monoclev1alpha1.ComponentStatus{Replicas: 1, ReadyReplicas: ready},
			Conditions: []metav1.Condition{
				{Type: monoclev1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: reasons.Starting, Message: msg},
				{Type: monoclev1alpha1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: reasons.RollingOut, Message: msg},
				{Type: monoclev1alpha1.ConditionConfigValid, Status: metav1.ConditionTrue, Reason: reasons.ConfigAccepted},
			},
		}
	}
	was := starting("Waiting for elasticsearch 0/1 ready", 0)
	progress := starting("Waiting for api 0/1 ready", 1)
	ready := starting("", 1)
	ready.Conditions[0].Status, ready.Conditions[0].Reason = metav1.ConditionTrue, reasons.AllComponentsReady
	invalid := starting("Waiting for elasticsearch 0/1 ready", 0)
	invalid.Conditions[2].Status, invalid.Conditions[2].Reason = metav1.ConditionFalse, reasons.InvalidConfig
	degraded := starting("Waiting for elasticsearch 0/1 ready", 0)
	degraded.Conditions = append(degraded.Conditions, metav1.Condition{Type: monoclev1alpha1.ConditionDegraded,
		Status: metav1.ConditionTrue, Reason: reasons.InvalidConfig})
	rolling := starting("Rolling out: api", 1)
	rolling.Conditions[0].Status, rolling.Conditions[0].Reason = metav1.ConditionTrue, reasons.AllComponentsReady
	rolled := starting("", 1)
	rolled.Conditions[0] = rolling.Conditions[0]
	rolledInvalid := *rolled.DeepCopy()
	rolledInvalid.Conditions[2].Status, rolledInvalid.Conditions[2].Reason = metav1.ConditionFalse, reasons.InvalidConfig

	key := cache.ObjectName{Namespace: "default", Name: "demo"}
	t0 := time.Now()
	tests := map[string]struct {
		written bool
		was     *monoclev1alpha1.MonocleStatus
		status  monoclev1alpha1.MonocleStatus
		at      time.Duration
		want    time.Duration
	}{
		"never written":                       {status: progress, at: time.Second, want: 0},
		"progress right after a write":        {written: true, status: progress, at: time.Second, want: startProgressInterval - time.Second},
		"progress once the interval ran":      {written: true, status: progress, at: startProgressInterval, want: 0},
		"Ready turns True":                    {written: true, status: ready, at: time.Second, want: 0},
		"a condition changes while it starts": {written: true, status: invalid, at: time.Second, want: startProgressInterval - time.Second},
		"Degraded turns True while it starts": {written: true, status: degraded, at: time.Second, want: 0},
		"a rollout's progress":                {written: true, was: &rolling, status: rolled, at: time.Second, want: progressInterval - time.Second},
		"a condition changes once Ready":      {written: true, was: &rolled, status: rolledInvalid, at: time.Second, want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := &statusWrites{last: map[cache.ObjectName]time.Time{}}
			if tc.written {
				w.wrote(key, t0)
			}
			from := was
			if tc.was != nil {
				from = *tc.was
			}
			if got := w.wait(key, from, tc.status, t0.Add(tc.at)); got != tc.want {
				t.Errorf("wait = %s, want %s", got, tc.want)
			}
		})
	}
}
