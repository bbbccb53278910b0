package resources

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// Stopped names the components that hibernation (spec.hibernate) stops in a sync: each is
// built with zero replicas, its volumes, Secrets and ConfigMap left as they are. The zero
// value stops nothing.
type Stopped struct {
	// Crawler, API and Elastic stop the crawler Deployment, the API Deployment and the
	// bundled Elasticsearch StatefulSet.
	Crawler, API, Elastic bool
}

// Names returns the components s stops, in the order hibernation stops them: "crawler",
// "api", "elastic" (the component labels).
func (s Stopped) Names() []string {
	var out []string
	for _, c := range []struct {
		stopped bool
		name    string
	}{{s.Crawler, ComponentCrawler}, {s.API, ComponentAPI}, {s.Elastic, ComponentElastic}} {
		if c.stopped {
			out = append(out, c.name)
		}
	}
	return out
}

// NewElasticStatefulSetFor is NewElasticStatefulSet built with what in says of it: zero
// replicas while hibernation stops Elasticsearch (in.Stopped.Elastic). The PVC stays: the
// StatefulSet retains it when scaled down (its persistentVolumeClaimRetentionPolicy).
func NewElasticStatefulSetFor(m *monoclev1alpha1.Monocle, volume string, in Inputs) *appsv1.StatefulSet {
	s := NewElasticStatefulSet(m, volume)
	if in.Stopped.Elastic {
		s.Spec.Replicas = ptr.To[int32](0)
		setSpecHash(&s.ObjectMeta, s.Spec)
	}
	return s
}
