package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestAutoPilotElasticsearchFirstOff: with elasticsearch-first off, the first sync creates
// the API (the other parts: day2's TestAutoPilotPartsTurnOff, operand's
// TestBlockClearingOff).
func TestAutoPilotElasticsearchFirstOff(t *testing.T) {
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{autoPilotOff("elasticsearch-first")}
	kubeWrites, _ := f.run()
	if written[*appsv1.Deployment](kubeWrites, "demo-api") == nil {
		t.Errorf("elasticsearch-first off: writes %v, want the API created", describe(kubeWrites))
	}
}

func TestAPIDisruptionBudgetFollowsReplicas(t *testing.T) {
	m := newMonocle("demo")
	m.Spec.API.Replicas = ptr.To[int32](3)
	m, objects := converged(t, m)
	pdb := find[runtime.Object](objects, "demo-api")
	if find[*appsv1.Deployment](objects, "demo-api") == nil || pdb == nil {
		t.Fatal("no API Deployment or PodDisruptionBudget")
	}
	one := m.DeepCopy()
	one.Spec.API.Replicas = ptr.To[int32](1)
	_, writes, _ := resync(t, one, objects)
	expectActions(t, writes, "update deployments demo-api", "delete poddisruptionbudgets demo-api")
}

// TestAPIWaitsForElasticsearch: the API Deployment is created only once Elasticsearch has a
// ready pod, and rolled only while it has one; the crawler and every other object do not wait,
// and the status says what the API waits for.
func TestAPIWaitsForElasticsearch(t *testing.T) {
	m := newMonocle("demo")
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	kubeWrites, monocleWrites := f.run()
	if written[*appsv1.Deployment](kubeWrites, "demo-api") != nil || written[*appsv1.Deployment](kubeWrites, "demo-crawler") == nil {
		t.Fatalf("first sync wrote %v, want the crawler and no API", describe(kubeWrites))
	}
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	if c := condition(t, status, monoclev1alpha1.ConditionReady); !strings.Contains(c.Message, "api (waits for a ready Elasticsearch pod)") {
		t.Errorf("Ready = %+v, want it to say the API waits for Elasticsearch", c)
	}

	// Elasticsearch has a pod, not ready yet: still no API.
	var objects []runtime.Object
	for _, a := range kubeWrites {
		objects = append(objects, a.(core.CreateAction).GetObject())
	}
	elastic := find[*appsv1.StatefulSet](objects, "demo-elastic")
	elastic.Status = appsv1.StatefulSetStatus{Replicas: 1, ObservedGeneration: 1}
	if _, kubeWrites, _ = resync(t, status, objects); len(kubeWrites) != 0 {
		t.Errorf("with Elasticsearch unready: writes %v, want none", describe(kubeWrites))
	}
	// Ready: the API is created, as its builder makes it.
	withReadyStatus(elastic)
	_, kubeWrites, _ = resync(t, status, objects)
	in := builtInputs(m, objects, resources.DefaultConfig)
	checkActions(t, kubeWrites, expectCreate(resources.NewAPIDeployment(m, in)))

	// A converged Monocle whose Elasticsearch pod is down (restarting): a config change rolls
	// the crawler and not the API, and Progressing says why.
	m, objects = converged(t, newMonocle("demo"))
	find[*appsv1.StatefulSet](objects, "demo-elastic").Status.ReadyReplicas = 0
	m.Spec.Config = "workspaces:\n  - name: other\n    crawlers: []\n"
	_, kubeWrites, status = resync(t, m, objects)
	for _, d := range describe(kubeWrites) {
		if strings.Contains(d, "deployments demo-api") {
			t.Errorf("rolled the API while Elasticsearch has no ready pod: %s", d)
		}
	}
	if written[*appsv1.Deployment](kubeWrites, "demo-crawler") == nil {
		t.Errorf("writes %v, want the crawler rolled", describe(kubeWrites))
	}
	if c := condition(t, status, monoclev1alpha1.ConditionProgressing); c.Status != metav1.ConditionTrue ||
		!strings.Contains(c.Message, "api (waits for a ready Elasticsearch pod)") {
		t.Errorf("Progressing = %+v, want True naming the API's wait", c)
	}
	if c := condition(t, status, monoclev1alpha1.ConditionReady); c.Status != metav1.ConditionFalse {
		t.Errorf("Ready = %+v, want False while Elasticsearch has no ready pod", c)
	}
}

// TestAPIWaitsOnlyToStartPods: what starts no API pod does not wait for Elasticsearch.
func TestAPIWaitsOnlyToStartPods(t *testing.T) {
	m := newMonocle("demo")
	unready := resources.NewElasticStatefulSet(m, resources.ElasticDataVolume, false, "")
	in := resources.Inputs{ConfigHash: "a"}
	live := withReadyStatus(resources.NewAPIDeployment(m, in)).(*appsv1.Deployment)
	rolled := resources.NewAPIDeployment(m, resources.Inputs{ConfigHash: "b"})
	stopped := resources.NewAPIDeployment(m, resources.Inputs{ConfigHash: "b", Stopped: resources.Stopped{API: true}})
	if ptr.Deref(stopped.Spec.Replicas, 1) != 0 {
		t.Fatalf("a stopped API has %d replicas, want 0", ptr.Deref(stopped.Spec.Replicas, 1))
	}
	for _, tc := range []struct {
		name          string
		elastic       *appsv1.StatefulSet
		live, desired *appsv1.Deployment
		want          bool
	}{
		{"create, Elasticsearch unready", unready, nil, rolled, true},
		{"create, no Elasticsearch", nil, nil, rolled, true},
		{"create, Elasticsearch ready", readyElastic(m), nil, rolled, false},
		{"roll, Elasticsearch unready", unready, live, rolled, true},
		{"roll, Elasticsearch ready", readyElastic(m), live, rolled, false},
		{"same template, Elasticsearch unready", unready, live, resources.NewAPIDeployment(m, in), false},
		{"scale to zero, Elasticsearch unready", unready, live, stopped, false},
		{"create at zero, Elasticsearch unready", unready, nil, stopped, false},
	} {
		if got := apiWaitsForElasticsearch(tc.elastic, tc.live, tc.desired); got != tc.want {
			t.Errorf("%s: waits = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSpecChangeUpdatesWorkloads(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	m = m.DeepCopy()
	m.Generation = 2
	m.Spec.API.Replicas = ptr.To[int32](3)
	m.Spec.Image = "quay.io/change-metrics/monocle:1.12.0"

	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	kubeWrites, monocleWrites := f.run()
	// The image change is an upgrade (upgrade.go): this sync records it and changes no
	// image; the replicas change at once.
	in := builtInputs(m, objects, resources.DefaultConfig)
	in.APIImage = resources.DefaultMonocleImage
	wantAPI := resources.NewAPIDeployment(m, in)
	checkActions(t, kubeWrites,
		expectCreate(resources.NewAPIPodDisruptionBudget(m)),
		expectUpdate(merged(f.controller.deployments, wantAPI, find[*appsv1.Deployment](objects, wantAPI.Name))))
	api := written[*appsv1.Deployment](kubeWrites, "demo-api")
	if api == nil {
		t.Fatal("the API Deployment was not updated")
	}
	if *api.Spec.Replicas != 3 || api.Spec.Template.Spec.Containers[0].Image != resources.DefaultMonocleImage {
		t.Errorf("API Deployment after the change: replicas %d image %s", *api.Spec.Replicas, api.Spec.Template.Spec.Containers[0].Image)
	}
	status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle).Status
	if u := status.Upgrade; u == nil || u.From != resources.DefaultMonocleImage || u.To != m.Spec.Image || u.Phase != monoclev1alpha1.UpgradeStoppingCrawler {
		t.Errorf("status.upgrade = %+v, want an upgrade to %s at StoppingCrawler", u, m.Spec.Image)
	}
	if status.ObservedGeneration != 2 {
		t.Errorf("observedGeneration = %d, want 2", status.ObservedGeneration)
	}
	if p := apimeta.FindStatusCondition(status.Conditions, monoclev1alpha1.ConditionProgressing); p.Status != metav1.ConditionTrue {
		t.Errorf("Progressing = %+v, want True during the rollout", p)
	}
	// The version changes only once the new pods are ready.
	if status.Version != "1.11.2" {
		t.Errorf("version during the rollout = %q, want the running 1.11.2", status.Version)
	}
}
