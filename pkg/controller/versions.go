package controller

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// supportedElasticsearchMajor is the Elasticsearch major version Monocle 1.11.2 talks to: its
// docker-compose file and k8s manifests run 7.17.16, and its client speaks the 7.x API.
const supportedElasticsearchMajor = 7

// elasticVersionCondition is the VersionAccepted condition of m's Elasticsearch image against
// the image live runs (nil for a new Monocle). An image of another major version than
// Monocle supports is refused, and so is a downgrade of the running version: Elasticsearch
// cannot read data a newer version wrote (ECK refuses downgrades for the same reason). A tag
// that is not a release version (latest, a digest) cannot be checked and is accepted. While
// the condition is False the StatefulSet is left as it is.
func elasticVersionCondition(m *monoclev1alpha1.Monocle, live *appsv1.StatefulSet) metav1.Condition {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionVersionAccepted, Status: metav1.ConditionTrue,
		Reason: ReasonVersionsAccepted, Message: "The Elasticsearch image's version is one Monocle supports"}
	image := resources.ElasticImage(m)
	want, ok := resources.ImageVersion(image)
	if !ok {
		cond.Message = fmt.Sprintf("The Elasticsearch image %s has no release tag to check; Monocle supports Elasticsearch %d only", image, supportedElasticsearchMajor)
		return cond
	}
	if want[0] != supportedElasticsearchMajor {
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonElasticsearchVersionUnsupported
		cond.Message = fmt.Sprintf("elasticsearch.image %s is Elasticsearch %d: Monocle 1.11.2 supports Elasticsearch %d only; the StatefulSet is left as it is",
			image, want[0], supportedElasticsearchMajor)
		return cond
	}
	if live == nil || len(live.Spec.Template.Spec.Containers) == 0 {
		return cond
	}
	running := live.Spec.Template.Spec.Containers[0].Image
	if have, ok := resources.ImageVersion(running); ok && older(want, have) {
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonElasticsearchDowngrade
		cond.Message = fmt.Sprintf("elasticsearch.image %s is older than the running %s: Elasticsearch cannot read data a newer version wrote, so downgrades are refused; the StatefulSet is left as it is",
			image, running)
	}
	return cond
}

// older reports whether version a comes before b.
func older(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
