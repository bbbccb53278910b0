package day2

import (
	"fmt"
	"strings"
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

// A full disk. At its flood-stage watermark (95% by default) Elasticsearch 7.17 puts
// index.blocks.read_only_allow_delete on every index with a shard on the node; Monocle
// ignores the errors of its bulk writes, so crawled documents are dropped, and its API
// exits at start when the settings update of its indices fails (Monocle 1.11.2,
// src/Monocle/Backend/Index.hs ensureIndexSetup). The operator's answer, step by step:
//
//  1. the operand worker's reads list the blocked indices once the volume is more than
//     DiskPressurePercent full;
//  2. with spec.storageGrowth, the volume grows by a step (PlanStorageGrowth), up to maxSize,
//     when its StorageClass allows volume expansion: the step is recorded in
//     status.storageGrowth first, and the next sync asks the PVC for it;
//  3. once the disk is under the high watermark the worker clears a block that stayed
//     (Elasticsearch 7.4 and later lift it by themselves);
//  4. once the block is gone, an API that is not ready is restarted once (PlanAPIRestart),
//     so that a pod in CrashLoopBackOff starts again at once rather than after its back-off.

// StorageWant is the size the Elasticsearch PVC is kept at: spec.storageSize, or the size
// storage growth reached when larger.
func StorageWant(m *monoclev1alpha1.Monocle) resource.Quantity {
	want := resources.StorageSize(m)
	if g := m.Status.StorageGrowth; g != nil && g.Size.Cmp(want) > 0 {
		return g.Size.DeepCopy()
	}
	return want
}

// GrowthEvent is an event a growth decision records.
type GrowthEvent struct {
	// Warning makes it a Warning event, else a Normal one.
	Warning bool
	// Reason and Message are the event's.
	Reason, Message string
}

// PlanStorageGrowth returns status.storageGrowth after this sync, and the event to record
// (nil: none). pvc is the Elasticsearch PVC (nil: not made yet), read the last read of
// Elasticsearch, classExpands whether the PVC's StorageClass allows volume expansion (asked
// only when a step is due; an error leaves the status as it is). One step is taken at a time:
// the next needs the PVC at the size of the last and a read of Elasticsearch started after
// that, still finding the volume full.
func PlanStorageGrowth(m *monoclev1alpha1.Monocle, pvc *corev1.PersistentVolumeClaim, read contract.Result,
	classExpands func() (bool, error), now time.Time) (*monoclev1alpha1.StorageGrowthStatus, *GrowthEvent) {
	st := m.Status.StorageGrowth.DeepCopy()
	spec := m.Spec.StorageGrowth
	if pvc == nil {
		return st, nil
	}
	requested := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity := pvc.Status.Capacity[corev1.ResourceStorage]
	if st != nil && st.ExpandedTime == nil && capacity.Cmp(st.Size) >= 0 {
		st.ExpandedTime = StatusTime(now)
		st.Message = strings.Replace(st.Message, growing, grew, 1)
		return st, &GrowthEvent{Reason: reasons.StorageGrown, Message: fmt.Sprintf("The Elasticsearch volume has grown to %s", capacity.String())}
	}
	h := read.Health
	if spec == nil || h == nil || (st != nil && st.ExpandedTime == nil) {
		return st, nil
	}
	used := ptr.Deref(h.DiskUsedPercent, 0)
	if used <= monoclev1alpha1.DiskPressurePercent && len(h.ReadOnlyIndices) == 0 {
		if st != nil && strings.HasPrefix(st.Message, cannotGrow) {
			st.Message = ""
		}
		return st, nil
	}
	if st != nil && !read.HealthTime.After(st.ExpandedTime.Time) {
		// The read may predate the last step.
		return st, nil
	}
	want := StorageWant(m)
	if requested.Cmp(want) < 0 || capacity.Cmp(requested) < 0 {
		// A change of storageSize is being applied.
		return st, nil
	}
	why := fmt.Sprintf("the volume is %d%% full", used)
	if len(h.ReadOnlyIndices) > 0 {
		why += fmt.Sprintf(" and %d indices are read-only", len(h.ReadOnlyIndices))
	}
	refuse := func(warning bool, reason, message string) (*monoclev1alpha1.StorageGrowthStatus, *GrowthEvent) {
		if st == nil {
			st = &monoclev1alpha1.StorageGrowthStatus{Size: requested.DeepCopy(), ExpandedTime: StatusTime(now)}
		}
		if st.Message == message {
			return st, nil
		}
		st.Message = message
		return st, &GrowthEvent{Warning: warning, Reason: reason, Message: message}
	}
	if requested.Cmp(spec.MaxSize) >= 0 {
		return refuse(true, reasons.StorageGrowthAtMaximum, fmt.Sprintf(cannotGrow+"%s, and it is at storageGrowth.maxSize %s", why, spec.MaxSize.String()))
	}
	expands, err := classExpands()
	if err != nil {
		return st, nil
	}
	class := ptr.Deref(pvc.Spec.StorageClassName, "")
	if !expands {
		return refuse(true, reasons.StorageGrowthRefused, fmt.Sprintf(cannotGrow+"%s, and StorageClass %q does not allow volume expansion", why, class))
	}
	target := nextSize(requested, spec)
	st = &monoclev1alpha1.StorageGrowthStatus{Size: target, Steps: 1, LastTime: StatusTime(now),
		Message: fmt.Sprintf(growing+" the Elasticsearch volume from %s to %s: %s", requested.String(), target.String(), why)}
	if was := m.Status.StorageGrowth; was != nil {
		st.Steps = was.Steps + 1
	}
	return st, &GrowthEvent{Reason: reasons.StorageGrowing, Message: st.Message}
}

// The beginnings of status.storageGrowth.message: a step under way, a step done, and a step
// that cannot be taken.
const (
	growing    = "Growing"
	grew       = "Grew"
	cannotGrow = "The Elasticsearch volume cannot grow: "
)

// nextSize is current grown by spec's step (default: half of current), rounded up to whole
// GiB, and at most spec.maxSize.
func nextSize(current resource.Quantity, spec *monoclev1alpha1.StorageGrowthSpec) resource.Quantity {
	const gib = 1 << 30
	step := current.Value() / 2
	if spec.Step != nil {
		step = spec.Step.Value()
	}
	size := (current.Value() + step + gib - 1) / gib * gib
	if size >= spec.MaxSize.Value() {
		return spec.MaxSize.DeepCopy()
	}
	return *resource.NewQuantity(size, resource.BinarySI)
}

// PlanAPIRestart returns status.apiRestart after this sync: a new restart when the
// read-only indices the status held are gone in the last read and the API Deployment api
// runs pods that are not all ready; the API's pod template then carries its time. The
// AutoPilotAPIRestart part of AutoPilotOffAnnotation turns this off.
func PlanAPIRestart(m *monoclev1alpha1.Monocle, read contract.Result, api *appsv1.Deployment, now time.Time) *monoclev1alpha1.APIRestart {
	was := m.Status.ElasticsearchHealth
	if AutoPilotIsOff(m, monoclev1alpha1.AutoPilotAPIRestart) || was == nil || len(was.ReadOnlyIndices) == 0 || read.Health == nil || len(read.Health.ReadOnlyIndices) > 0 || api == nil {
		return m.Status.APIRestart.DeepCopy()
	}
	want := ptr.Deref(api.Spec.Replicas, 1)
	if want == 0 || api.Status.ReadyReplicas >= want {
		return m.Status.APIRestart.DeepCopy()
	}
	return &monoclev1alpha1.APIRestart{Time: *StatusTime(now),
		Reason: fmt.Sprintf("The read-only block is gone from %s and the API had %d/%d ready pods",
			strings.Join(was.ReadOnlyIndices, ", "), api.Status.ReadyReplicas, want)}
}

// APIRestartedAt is the time of the last restart of status.apiRestart in RFC 3339, for the
// API's pod template, or "".
func APIRestartedAt(m *monoclev1alpha1.Monocle) string {
	if r := m.Status.APIRestart; r != nil {
		return r.Time.UTC().Format(time.RFC3339)
	}
	return ""
}

// WithGrowth returns conditions with the DiskPressure condition telling of st, the storage
// growth: while a step grows the volume its reason is StorageGrowing, and a step that cannot
// be taken is added to its message.
func WithGrowth(conditions []metav1.Condition, st *monoclev1alpha1.StorageGrowthStatus) []metav1.Condition {
	if st == nil || (st.ExpandedTime != nil && !strings.HasPrefix(st.Message, cannotGrow)) {
		return conditions
	}
	for i, c := range conditions {
		if c.Type != monoclev1alpha1.ConditionDiskPressure || c.Status != metav1.ConditionTrue || strings.Contains(c.Message, st.Message) {
			continue
		}
		if st.ExpandedTime == nil {
			conditions[i].Reason = reasons.StorageGrowing
		}
		conditions[i].Message = Truncate(c.Message + ". " + st.Message)
	}
	return conditions
}
