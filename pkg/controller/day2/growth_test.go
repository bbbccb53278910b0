package day2

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// elasticPVCOf is the Elasticsearch PVC of m, bound, asking for requested with capacity.
func elasticPVCOf(m *monoclev1alpha1.Monocle, requested, capacity string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: resources.ElasticPVCName(m, resources.ElasticDataVolume), Namespace: m.Namespace},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("standard"),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(requested)}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}},
	}
}

// diskRead is a read of Elasticsearch started at, finding the volume used percent full and
// blocked indices read-only.
func diskRead(at time.Time, used int32, blocked ...string) contract.Result {
	return contract.Result{Done: at.Add(time.Second), HealthTime: at,
		Health: &monoclev1alpha1.ElasticsearchHealth{Status: "green", DiskUsedPercent: ptr.To(used), ReadOnlyIndices: blocked}}
}

// TestStorageGrowthSequence: a full volume grows by a step once, the next step waits until
// the PVC has grown and a later read still finds it full, and growth stops at maxSize.
func TestStorageGrowthSequence(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.StorageSize = ptr.To(resource.MustParse("10Gi"))
	m.Spec.StorageGrowth = &monoclev1alpha1.StorageGrowthSpec{MaxSize: resource.MustParse("18Gi"), Step: ptr.To(resource.MustParse("5Gi"))}
	t0 := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	expands := func() (bool, error) { return true, nil }

	// Under the threshold: nothing.
	st, ev := PlanStorageGrowth(m, elasticPVCOf(m, "10Gi", "10Gi"), diskRead(t0, 80), expands, t0)
	if st != nil || ev != nil {
		t.Fatalf("80%% full: status %+v, event %+v, want none", st, ev)
	}
	// 96% and blocked: one step of 5Gi.
	st, ev = PlanStorageGrowth(m, elasticPVCOf(m, "10Gi", "10Gi"), diskRead(t0, 96, "monocle.changes.1.demo"), expands, t0)
	if st == nil || st.Size.String() != "15Gi" || st.Steps != 1 || st.ExpandedTime != nil || ev == nil || ev.Reason != reasons.StorageGrowing ||
		!strings.Contains(st.Message, "from 10Gi to 15Gi: the volume is 96% full and 1 indices are read-only") {
		t.Fatalf("96%% full: status %+v, event %+v, want a step to 15Gi", st, ev)
	}
	m.Status.StorageGrowth = st
	if got := StorageWant(m); got.String() != "15Gi" {
		t.Errorf("storageWant = %s, want the grown 15Gi", got.String())
	}
	// The same read again, and reads while the PVC expands: no second step.
	for _, pvc := range []*corev1.PersistentVolumeClaim{elasticPVCOf(m, "10Gi", "10Gi"), elasticPVCOf(m, "15Gi", "10Gi")} {
		if again, ev := PlanStorageGrowth(m, pvc, diskRead(t0.Add(time.Minute), 97), expands, t0.Add(time.Minute)); again.Steps != 1 || ev != nil {
			t.Fatalf("while expanding: status %+v, event %+v, want the first step alone", again, ev)
		}
	}
	// Expanded: recorded once, with an event.
	t1 := t0.Add(2 * time.Minute)
	st, ev = PlanStorageGrowth(m, elasticPVCOf(m, "15Gi", "15Gi"), diskRead(t0.Add(time.Minute), 97), expands, t1)
	if st.ExpandedTime == nil || !st.ExpandedTime.Time.Equal(t1) || ev == nil || ev.Reason != reasons.StorageGrown || !strings.HasPrefix(st.Message, "Grew") {
		t.Fatalf("expanded: status %+v, event %+v", st, ev)
	}
	m.Status.StorageGrowth = st
	// A read started before the expansion was seen still says 97%: no step.
	if again, ev := PlanStorageGrowth(m, elasticPVCOf(m, "15Gi", "15Gi"), diskRead(t1.Add(-time.Second), 97), expands, t1.Add(time.Minute)); again.Steps != 1 || ev != nil {
		t.Fatalf("an older read: status %+v, event %+v, want no step", again, ev)
	}
	// A later read finds it full still: the next step stops at maxSize.
	st, ev = PlanStorageGrowth(m, elasticPVCOf(m, "15Gi", "15Gi"), diskRead(t1.Add(time.Second), 92), expands, t1.Add(time.Minute))
	if st.Size.String() != "18Gi" || st.Steps != 2 || ev == nil || ev.Reason != reasons.StorageGrowing {
		t.Fatalf("second step: status %+v, event %+v, want 18Gi", st, ev)
	}
	m.Status.StorageGrowth = st
	t2 := t1.Add(2 * time.Minute)
	st, _ = PlanStorageGrowth(m, elasticPVCOf(m, "18Gi", "18Gi"), diskRead(t1.Add(time.Minute), 92), expands, t2)
	m.Status.StorageGrowth = st
	// At maxSize: a Warning once, no step.
	st, ev = PlanStorageGrowth(m, elasticPVCOf(m, "18Gi", "18Gi"), diskRead(t2.Add(time.Second), 96), expands, t2.Add(time.Minute))
	if st.Size.String() != "18Gi" || st.Steps != 2 || ev == nil || !ev.Warning || ev.Reason != reasons.StorageGrowthAtMaximum {
		t.Fatalf("at maxSize: status %+v, event %+v", st, ev)
	}
	m.Status.StorageGrowth = st
	if _, ev = PlanStorageGrowth(m, elasticPVCOf(m, "18Gi", "18Gi"), diskRead(t2.Add(2*time.Second), 96), expands, t2.Add(2*time.Minute)); ev != nil {
		t.Errorf("at maxSize again: event %+v, want the Warning once", ev)
	}
	// Room again: the refusal leaves the message.
	if st, _ = PlanStorageGrowth(m, elasticPVCOf(m, "18Gi", "18Gi"), diskRead(t2.Add(3*time.Second), 60), expands, t2.Add(3*time.Minute)); st.Message != "" || st.Size.String() != "18Gi" {
		t.Errorf("with room: status %+v, want the size kept and no message", st)
	}

	// storageGrowth removed: the grown size stays the floor, and no step is taken.
	m.Spec.StorageGrowth = nil
	if got := StorageWant(m); got.String() != "18Gi" {
		t.Errorf("storageWant without storageGrowth = %s, want 18Gi kept", got.String())
	}
	if st, ev = PlanStorageGrowth(m, elasticPVCOf(m, "18Gi", "18Gi"), diskRead(t2.Add(time.Hour), 99), expands, t2.Add(time.Hour)); ev != nil || st.Steps != 2 {
		t.Errorf("without storageGrowth: status %+v, event %+v", st, ev)
	}
}

// TestStorageGrowthRefused: a StorageClass that does not allow expansion gets no step, a
// Warning once and the reason in the status; one that cannot be read gets no step either.
func TestStorageGrowthRefused(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.StorageGrowth = &monoclev1alpha1.StorageGrowthSpec{MaxSize: resource.MustParse("10Gi")}
	now := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	pvc := elasticPVCOf(m, "1Gi", "1Gi")
	st, ev := PlanStorageGrowth(m, pvc, diskRead(now, 96), func() (bool, error) { return false, nil }, now)
	if st == nil || st.Steps != 0 || st.Size.String() != "1Gi" || ev == nil || ev.Reason != reasons.StorageGrowthRefused ||
		!strings.Contains(st.Message, `StorageClass "standard" does not allow volume expansion`) {
		t.Fatalf("status %+v, event %+v", st, ev)
	}
	m.Status.StorageGrowth = st
	if again, _ := PlanStorageGrowth(m, pvc, diskRead(now.Add(time.Minute), 96), func() (bool, error) { return false, nil }, now.Add(time.Minute)); again.ExpandedTime == nil || again.Steps != 0 {
		t.Errorf("the refusal's status %+v reads as a step under way", again)
	}
	m.Status.StorageGrowth = nil
	if st, ev := PlanStorageGrowth(m, pvc, diskRead(now, 96), func() (bool, error) { return false, errors.New("forbidden") }, now); st != nil || ev != nil {
		t.Errorf("unreadable StorageClass: status %+v, event %+v, want none", st, ev)
	}
	// The DiskPressure condition carries the refusal.
	m.Status.StorageGrowth = nil
	st, _ = PlanStorageGrowth(m, pvc, diskRead(now, 96), func() (bool, error) { return false, nil }, now)
	conds := WithGrowth([]metav1.Condition{{Type: monoclev1alpha1.ConditionDiskPressure, Status: metav1.ConditionTrue, Reason: reasons.VolumeAlmostFull, Message: "96% full"}}, st)
	if !strings.Contains(conds[0].Message, "does not allow volume expansion") || conds[0].Reason != reasons.VolumeAlmostFull {
		t.Errorf("DiskPressure = %+v", conds[0])
	}
}

func TestNextSize(t *testing.T) {
	for _, tc := range []struct{ current, step, max, want string }{
		{"10Gi", "", "100Gi", "15Gi"},
		{"1Gi", "", "100Gi", "2Gi"}, // half a GiB, rounded up
		{"3Gi", "", "100Gi", "5Gi"},
		{"10Gi", "1Gi", "100Gi", "11Gi"},
		{"10Gi", "50Gi", "20Gi", "20Gi"},
		{"1500Mi", "1Gi", "100Gi", "3Gi"},
	} {
		spec := &monoclev1alpha1.StorageGrowthSpec{MaxSize: resource.MustParse(tc.max)}
		if tc.step != "" {
			spec.Step = ptr.To(resource.MustParse(tc.step))
		}
		if got := nextSize(resource.MustParse(tc.current), spec); got.String() != tc.want {
			t.Errorf("nextSize(%s, step %q, max %s) = %s, want %s", tc.current, tc.step, tc.max, got.String(), tc.want)
		}
	}
}

// TestAPIRestartedOnceTheBlockIsGone: the sync whose read finds the block gone restarts an
// API that is not ready, once; a ready API, or a block still there, is left alone.
func TestAPIRestartedOnceTheBlockIsGone(t *testing.T) {
	m := newMonocle("demo")
	m.Status.ElasticsearchHealth = &monoclev1alpha1.ElasticsearchHealth{ReadOnlyIndices: []string{"monocle.changes.1.demo"}}
	now := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	api := func(ready int32) *appsv1.Deployment {
		d := resources.NewAPIDeployment(m, resources.Inputs{})
		d.Status.ReadyReplicas = ready
		return d
	}
	if r := PlanAPIRestart(m, diskRead(now, 96, "monocle.changes.1.demo"), api(0), now); r != nil {
		t.Errorf("block still there: restart %+v", r)
	}
	if r := PlanAPIRestart(m, diskRead(now, 80), api(1), now); r != nil {
		t.Errorf("ready API: restart %+v", r)
	}
	r := PlanAPIRestart(m, diskRead(now, 80), api(0), now)
	if r == nil || !r.Time.Time.Equal(now) || !strings.Contains(r.Reason, "monocle.changes.1.demo") {
		t.Fatalf("restart = %+v, want one at now naming the index", r)
	}
	// The status now holds the read without the block: no second restart.
	m.Status.APIRestart = r
	m.Status.ElasticsearchHealth = diskRead(now, 80).Health
	if again := PlanAPIRestart(m, diskRead(now.Add(time.Minute), 80), api(0), now.Add(time.Minute)); again == nil || !again.Time.Equal(&r.Time) {
		t.Errorf("next sync: restart %+v, want the first kept", again)
	}
	in := resources.Inputs{APIRestartedAt: APIRestartedAt(m)}
	if got := resources.NewAPIDeployment(m, in).Spec.Template.Annotations[resources.RestartedAtAnnotation]; got != "2026-11-26T03:00:00Z" {
		t.Errorf("API pod template restarted-at = %q", got)
	}
}
