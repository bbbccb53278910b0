package day2

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

func TestWorkloadsStopped(t *testing.T) {
	d := func(replicas int32, generation, observed int64) *appsv1.Deployment {
		x := &appsv1.Deployment{}
		x.Generation, x.Status.ObservedGeneration, x.Status.Replicas = generation, observed, replicas
		return x
	}
	if !WorkloadsStopped(nil, d(0, 2, 2)) {
		t.Error("no Deployment and one without pods: not stopped")
	}
	if WorkloadsStopped(d(1, 2, 2)) {
		t.Error("a Deployment with a pod counts as stopped")
	}
	if WorkloadsStopped(d(0, 3, 2)) {
		t.Error("a Deployment whose scale-down is not observed yet counts as stopped")
	}
	created := d(0, 1, 0)
	created.Spec.Replicas = func(v int32) *int32 { return &v }(0)
	if !WorkloadsStopped(created) {
		t.Error("a Deployment created with zero replicas, not observed yet, does not count as stopped")
	}
	scaledDown := d(0, 2, 1)
	scaledDown.Spec.Replicas = created.Spec.Replicas
	if WorkloadsStopped(scaledDown) {
		t.Error("a Deployment scaled down to zero, not observed yet, counts as stopped")
	}
}
