package controller

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestUnionsAreWrittenWhole: a member of a union that someone else set is dropped by the
// merge, where keeping it next to the builder's member would make the update invalid (the
// crawler of an adopted earlier Monocle came with a rollingUpdate strategy).
func TestUnionsAreWrittenWhole(t *testing.T) {
	c := newFixture(t).newController()
	m := newMonocle("demo")
	crawler := resources.NewCrawlerDeployment(m, resources.Inputs{})
	live := crawler.DeepCopy()
	live.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromString("25%"))}}
	if !c.deployments.Drifted(crawler, live) {
		t.Fatal("another strategy is not drift")
	}
	if got := c.deployments.Merge(crawler, live).Spec.Strategy; got.Type != appsv1.RecreateDeploymentStrategyType || got.RollingUpdate != nil {
		t.Errorf("merged strategy %+v, want Recreate alone", got)
	}

	m.Spec.API.Replicas = ptr.To[int32](3)
	pdb := resources.NewAPIPodDisruptionBudget(m)
	livePDB := pdb.DeepCopy()
	livePDB.Spec.MaxUnavailable, livePDB.Spec.MinAvailable = nil, ptr.To(intstr.FromInt32(2))
	if !c.pdbs.Drifted(pdb, livePDB) {
		t.Fatal("minAvailable instead of maxUnavailable is not drift")
	}
	if got := c.pdbs.Merge(pdb, livePDB).Spec; got.MinAvailable != nil || got.MaxUnavailable == nil {
		t.Errorf("merged PodDisruptionBudget spec %+v, want maxUnavailable alone", got)
	}
}
