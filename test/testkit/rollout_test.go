package testkit

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

func TestConcurrentRolls(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2025, 1, 1, 0, 0, s, 0, time.UTC) }
	roll := func(name string, start, ready int) PodRoll {
		return PodRoll{Monocle: "ns/" + name, Start: at(start), Ready: at(ready)}
	}
	names := func(groups [][]PodRoll) [][]string {
		var out [][]string
		for _, g := range groups {
			var names []string
			for _, r := range g {
				names = append(names, strings.TrimPrefix(r.Monocle, "ns/"))
			}
			out = append(out, names)
		}
		return out
	}
	tests := map[string]struct {
		rolls []PodRoll
		want  [][]string
	}{
		"none": {},
		"one after the other": {
			rolls: []PodRoll{roll("b", 10, 15), roll("a", 0, 5)},
			want:  [][]string{{"a"}, {"b"}},
		},
		"overlapping": {
			rolls: []PodRoll{roll("a", 0, 5), roll("b", 3, 8), roll("c", 20, 25)},
			want:  [][]string{{"a", "b"}, {"c"}},
		},
		// b overlaps c, not a: the group spans from a's start to c's Ready.
		"chained": {
			rolls: []PodRoll{roll("a", 0, 5), roll("b", 4, 10), roll("c", 9, 12)},
			want:  [][]string{{"a", "b", "c"}},
		},
		// The timestamps are seconds: a start in the second of a Ready may be before it.
		"same second": {
			rolls: []PodRoll{roll("a", 0, 5), roll("b", 5, 8)},
			want:  [][]string{{"a", "b"}},
		},
		// A long roll holds every roll that starts before it is Ready.
		"inside a long one": {
			rolls: []PodRoll{roll("a", 0, 30), roll("b", 5, 8), roll("c", 20, 22), roll("d", 31, 32)},
			want:  [][]string{{"a", "b", "c"}, {"d"}},
		},
		"same start, by name": {
			rolls: []PodRoll{roll("b", 0, 5), roll("a", 0, 5)},
			want:  [][]string{{"a", "b"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := names(ConcurrentRolls(tc.rolls)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ConcurrentRolls = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodRolls(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Date(2025, 1, 1, 0, 0, s, 0, time.UTC)) }
	pod := func(name, monocle, owner string, created, ready int) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name),
			Labels: map[string]string{resources.InstanceLabel: monocle}, CreationTimestamp: at(created)}}
		if owner != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: owner, Name: monocle + "-x", Controller: ptr.To(true)}}
		}
		if ready >= 0 {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(ready)}}
		}
		return p
	}
	kube := fake.NewClientset(
		pod("a-old", "a", "ReplicaSet", 0, 1),
		pod("a-api", "a", "ReplicaSet", 10, 12),
		pod("a-elastic-0", "a", "StatefulSet", 11, 15),
		pod("a-job", "a", "Job", 9, 20),
		pod("b-api", "b", "ReplicaSet", 20, 21),
		pod("c-old", "c", "ReplicaSet", 0, 1),
	)
	before := map[types.UID]bool{"a-old": true, "c-old": true}
	got, err := PodRolls(context.Background(), kube, before, "ns")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]PodRoll{
		"ns/a": {Monocle: "ns/a", Start: at(10).Time, Ready: at(15).Time, Pods: []string{"a-api", "a-elastic-0"}},
		"ns/b": {Monocle: "ns/b", Start: at(20).Time, Ready: at(21).Time, Pods: []string{"b-api"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PodRolls = %+v, want %+v", got, want)
	}

	if _, err := kube.CoreV1().Pods("ns").Create(context.Background(), pod("b-crawler", "b", "ReplicaSet", 22, -1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := PodRolls(context.Background(), kube, before, "ns"); err == nil || !strings.Contains(err.Error(), "pod ns/b-crawler") {
		t.Errorf("PodRolls with a new pod not Ready: %v, want an error naming it", err)
	}
}
