package day2

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// StatusTime is t as the status keeps it: metav1.Time is serialized to the second
// (RFC 3339), so a finer time would differ from its own copy read back, and every sync
// would write the status again.
func StatusTime(t time.Time) *metav1.Time {
	return &metav1.Time{Time: t.UTC().Truncate(time.Second)}
}

// maxMessage bounds condition messages built from API errors, in bytes.
const maxMessage = 1024

// Truncate is s cut to maxMessage bytes, with "…" after a cut, for a condition message.
func Truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:maxMessage] + "…"
}

// DeploymentRolledOut reports whether every pod of d runs its latest spec; false for nil.
func DeploymentRolledOut(d *appsv1.Deployment) bool {
	if d == nil {
		return false
	}
	want := ptr.Deref(d.Spec.Replicas, 1)
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want && d.Status.Replicas == want
}

// StatefulSetRolledOut reports whether every pod of s runs its update revision; false for nil.
func StatefulSetRolledOut(s *appsv1.StatefulSet) bool {
	if s == nil {
		return false
	}
	want := ptr.Deref(s.Spec.Replicas, 1)
	return s.Status.ObservedGeneration >= s.Generation && s.Status.UpdatedReplicas == want &&
		s.Status.Replicas == want && s.Status.CurrentRevision == s.Status.UpdateRevision
}
