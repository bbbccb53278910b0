package resources

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

// TestStoppedScalesToZero builds each workload with each component stopped: only the stopped
// one has zero replicas, its pod template and the rest of its spec unchanged, and its spec
// hash follows the replicas so the drift rule writes them.
func TestStoppedScalesToZero(t *testing.T) {
	m := full()
	tests := map[string]struct {
		stopped               Stopped
		crawler, api, elastic int32
		names                 []string
	}{
		"nothing":       {crawler: 1, api: 3, elastic: 1},
		"crawler":       {stopped: Stopped{Crawler: true}, crawler: 0, api: 3, elastic: 1, names: []string{"crawler"}},
		"crawler, api":  {stopped: Stopped{Crawler: true, API: true}, crawler: 0, api: 0, elastic: 1, names: []string{"crawler", "api"}},
		"all":           {stopped: Stopped{Crawler: true, API: true, Elastic: true}, names: []string{"crawler", "api", "elastic"}},
		"elastic alone": {stopped: Stopped{Elastic: true}, crawler: 1, api: 3, names: []string{"elastic"}},
	}
	awake := inputs
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := inputs
			in.Stopped = tc.stopped
			crawler, api, elastic := NewCrawlerDeployment(m, in), NewAPIDeployment(m, in), NewElasticStatefulSet(m, ElasticDataVolume, tc.stopped.Elastic, "")
			for what, got := range map[string][2]int32{
				"crawler": {ptr.Deref(crawler.Spec.Replicas, -1), tc.crawler},
				"api":     {ptr.Deref(api.Spec.Replicas, -1), tc.api},
				"elastic": {ptr.Deref(elastic.Spec.Replicas, -1), tc.elastic},
			} {
				if got[0] != got[1] {
					t.Errorf("%s has %d replicas, want %d", what, got[0], got[1])
				}
			}
			if !equality.Semantic.DeepEqual(crawler.Spec.Template, NewCrawlerDeployment(m, awake).Spec.Template) ||
				!equality.Semantic.DeepEqual(elastic.Spec.Template, NewElasticStatefulSet(m, ElasticDataVolume, false, "").Spec.Template) {
				t.Error("stopping changed a pod template")
			}
			if stopped := tc.stopped.Elastic; (elastic.Annotations[SpecHashAnnotation] != NewElasticStatefulSet(m, ElasticDataVolume, false, "").Annotations[SpecHashAnnotation]) != stopped {
				t.Errorf("the StatefulSet's spec hash changed: %t, want %t", !stopped, stopped)
			}
			if got := tc.stopped.Names(); !slices.Equal(got, tc.names) {
				t.Errorf("names %v, want %v", got, tc.names)
			}
		})
	}
}
