package controller

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestObserve: the observe step returns the workloads the Monocle controls, not those of the
// same names another owner holds, and whether one of its Jobs has not finished.
func TestObserve(t *testing.T) {
	m := newMonocle("demo")
	other := newMonocle("demo")
	other.UID = "uid-of-another"
	in := resources.Inputs{Elastic: bundledAccess(m, nil)}
	running := resources.NewUpdateIdentsJob(m, "c", bundledAccess(m, nil))
	done := running.DeepCopy()
	done.Name += "-done"
	done.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	for _, tc := range []struct {
		name    string
		objects []runtime.Object
		// elastic, api and crawler say which workloads are observed; jobs whether a Job runs.
		elastic, api, crawler, jobs bool
	}{
		{name: "a new Monocle: nothing"},
		{name: "its workloads and a running Job",
			objects: []runtime.Object{resources.NewElasticStatefulSet(m, resources.ElasticDataVolume, false, ""),
				resources.NewAPIDeployment(m, in), resources.NewCrawlerDeployment(m, in), running, done},
			elastic: true, api: true, crawler: true, jobs: true},
		{name: "another owner's crawler, a finished Job",
			objects: []runtime.Object{resources.NewAPIDeployment(m, in), resources.NewCrawlerDeployment(other, in), done},
			api:     true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.monocles = []*monoclev1alpha1.Monocle{m}
			f.kubeobjects = tc.objects
			o := f.newController().observe(m)
			if (o.elastic != nil) != tc.elastic || (o.api != nil) != tc.api || (o.crawler != nil) != tc.crawler || o.jobsRunning != tc.jobs {
				t.Errorf("observed StatefulSet %v, API %v, crawler %v, Jobs running %v; want %v, %v, %v, %v",
					o.elastic != nil, o.api != nil, o.crawler != nil, o.jobsRunning, tc.elastic, tc.api, tc.crawler, tc.jobs)
			}
		})
	}
}
