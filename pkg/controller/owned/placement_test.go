package owned

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// placement is a placement of every field, its values named after name.
func placement(name string) monoclev1alpha1.PodPlacement {
	return monoclev1alpha1.PodPlacement{
		NodeSelector: map[string]string{"pool": name},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: name, Effect: corev1.TaintEffectNoSchedule}},
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"},
		}}}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule}},
		PriorityClassName:         name + "-priority",
		PodLabels:                 map[string]string{"team": name, "cost-center": "42"},
		PodAnnotations:            map[string]string{"example.com/owner": name},
	}
}

// placedMonocle is the Monocle "demo" with p on the API, the crawler and Elasticsearch, and
// pullSecrets.
func placedMonocle(p monoclev1alpha1.PodPlacement, pullSecrets ...string) *monoclev1alpha1.Monocle {
	m := newMonocle("demo")
	m.Spec.API.PodPlacement, m.Spec.Crawler.PodPlacement, m.Spec.Elasticsearch.PodPlacement = p, p, p
	for _, s := range pullSecrets {
		m.Spec.ImagePullSecrets = append(m.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	return m
}

// byHand is a change someone makes to a live pod template.
type byHand func(t *corev1.PodTemplateSpec)

// TestPlacementDrift: a workload's placement follows the Monocle's spec alone. Ensure's update
// (Kind.Updated) of a live workload built from the spec `live`, then changed by hand, towards
// the workload built from the spec `desired` gives the desired pod template, with the labels
// and annotations others added kept; and the result is not drift any more.
func TestPlacementDrift(t *testing.T) {
	in := resources.Inputs{ConfigHash: "c0ffee", SecretHash: "5ec2e7"}
	deployments, statefulSets := ruleOf[*appsv1.Deployment]("Deployment"), ruleOf[*appsv1.StatefulSet]("StatefulSet")
	fewer := placement("a")
	delete(fewer.PodLabels, "cost-center")
	fewer.PodAnnotations = nil
	foreign := func(t *corev1.PodTemplateSpec) {
		t.Annotations = Union(t.Annotations, map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"})
		t.Labels["added-by"] = "someone"
	}
	unlabelled := placement("a")
	unlabelled.PodLabels, unlabelled.PodAnnotations = nil, nil
	kept := map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z", "added-by": "someone"}
	for name, tc := range map[string]struct {
		live, desired *monoclev1alpha1.Monocle
		edit          byHand
		// drift is whether the live workload, after edit, drifts from the desired one.
		drift bool
		// kept are labels or annotations the update must keep.
		kept map[string]string
	}{
		"no placement, nothing by hand": {live: newMonocle("demo"), desired: newMonocle("demo")},
		"a foreign restartedAt and label are kept": {live: placedMonocle(placement("a")), desired: placedMonocle(placement("a")),
			edit: foreign, kept: kept},
		"a nodeSelector added by hand is removed": {live: newMonocle("demo"), desired: newMonocle("demo"), drift: true,
			edit: func(t *corev1.PodTemplateSpec) { t.Spec.NodeSelector = map[string]string{"by": "hand"} }},
		"tolerations added by hand are removed": {live: newMonocle("demo"), desired: newMonocle("demo"), drift: true,
			edit: func(t *corev1.PodTemplateSpec) {
				t.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
			}},
		"a nodeSelector changed by hand is put back": {live: placedMonocle(placement("a")), desired: placedMonocle(placement("a")), drift: true,
			edit: func(t *corev1.PodTemplateSpec) { t.Spec.NodeSelector["pool"] = "other" }},
		"a toleration appended by hand is removed": {live: placedMonocle(placement("a")), desired: placedMonocle(placement("a")), drift: true,
			edit: func(t *corev1.PodTemplateSpec) {
				t.Spec.Tolerations = append(t.Spec.Tolerations, corev1.Toleration{Key: "x"})
			}},
		"a pull secret added by hand is removed": {live: placedMonocle(placement("a"), "mirror"), desired: placedMonocle(placement("a"), "mirror"), drift: true,
			edit: func(t *corev1.PodTemplateSpec) {
				t.Spec.ImagePullSecrets = append(t.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: "x"})
			}},
		"a pod label removed by hand is put back": {live: placedMonocle(placement("a")), desired: placedMonocle(placement("a")), drift: true,
			edit: func(t *corev1.PodTemplateSpec) { delete(t.Labels, "team") }},
		"every field removed from the spec leaves the workload": {live: placedMonocle(placement("a"), "mirror"), desired: newMonocle("demo"),
			drift: true, edit: foreign, kept: kept},
		"one pod label and the annotations removed from the spec leave": {live: placedMonocle(placement("a")), desired: placedMonocle(fewer),
			drift: true, edit: foreign, kept: kept},
		"pod labels and annotations removed from the spec leave, the rest stays": {live: placedMonocle(placement("a")), desired: placedMonocle(unlabelled),
			drift: true, edit: foreign, kept: kept},
		"a changed placement replaces the old one": {live: placedMonocle(placement("a"), "mirror"), desired: placedMonocle(placement("b"), "other"), drift: true},
	} {
		t.Run(name, func(t *testing.T) {
			deployment := func(d *appsv1.Deployment) *corev1.PodTemplateSpec { return &d.Spec.Template }
			statefulSet := func(s *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &s.Spec.Template }
			for _, w := range []workload{
				workloadCase(deployments, resources.NewAPIDeployment(tc.desired, in), resources.NewAPIDeployment(tc.live, in), deployment, tc.edit),
				workloadCase(deployments, resources.NewCrawlerDeployment(tc.desired, in), resources.NewCrawlerDeployment(tc.live, in), deployment, tc.edit),
				workloadCase(statefulSets, resources.NewElasticStatefulSet(tc.desired, resources.ElasticDataVolume, false, ""),
					resources.NewElasticStatefulSet(tc.live, resources.ElasticDataVolume, false, ""), statefulSet, tc.edit),
			} {
				component := w.desired.Labels[resources.ComponentLabel]
				if w.drifted != tc.drift {
					t.Errorf("%s: drifted = %v, want %v", component, w.drifted, tc.drift)
				}
				got := w.updated()
				if w.redrifts(got) {
					t.Errorf("%s: the updated template still drifts", component)
				}
				if !equality.Semantic.DeepEqual(got.Spec, w.desired.Spec) {
					t.Errorf("%s: updated pod spec\n%+v\nwant\n%+v", component, got.Spec, w.desired.Spec)
				}
				checkMap(t, component+" labels", got.Labels, w.desired.Labels, tc.kept)
				checkMap(t, component+" annotations", got.Annotations, w.desired.Annotations, tc.kept)
			}
		})
	}
}

// checkMap checks that got holds exactly want's entries and those of kept that it held
// before (labels or annotations, by key).
func checkMap(t *testing.T, what string, got, want, kept map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; ok {
			continue
		}
		if kept[k] != v {
			t.Errorf("%s: %s = %q is left", what, k, v)
		}
	}
}

// workload is one live workload of TestPlacementDrift: the desired pod template, whether
// the live workload drifted by the field rule, its update's pod template, and a drift check of a pod template
// in the live workload's place.
type workload struct {
	desired  *corev1.PodTemplateSpec
	drifted  bool
	updated  func() *corev1.PodTemplateSpec
	redrifts func(*corev1.PodTemplateSpec) bool
}

// workloadCase applies edit to a copy of live's pod template (template returns an object's)
// and returns the workload of desired and that copy under k's rule.
func workloadCase[T Object](k Kind[T], desired, live T, template func(T) *corev1.PodTemplateSpec, edit byHand) workload {
	live = live.DeepCopyObject().(T)
	if edit != nil {
		edit(template(live))
	}
	// The rule alone: the spec hash Ensure also compares changes with any change of the spec.
	return workload{template(desired), k.Drifted(desired, live),
		func() *corev1.PodTemplateSpec { return template(k.Updated(desired, live)) },
		func(tpl *corev1.PodTemplateSpec) bool {
			d := live.DeepCopyObject().(T)
			*template(d) = *tpl
			return k.Drifted(desired, d)
		}}
}

// TestPodMetadataRecordIsGiven: the drift rule removes a pod label the builder recorded and no
// longer sets by the PodMetadataRecord its Registry is given; with none (the zero record) the
// label stays, as others' labels do.
func TestPodMetadataRecordIsGiven(t *testing.T) {
	fewer := placement("a")
	delete(fewer.PodLabels, "cost-center")
	live := resources.NewAPIDeployment(placedMonocle(placement("a")), resources.Inputs{})
	desired := resources.NewAPIDeployment(placedMonocle(fewer), resources.Inputs{})
	for _, tc := range []struct {
		record PodMetadataRecord
		kept   bool
	}{{record: podMetadata, kept: false}, {record: PodMetadataRecord{}, kept: true}} {
		k := newKind[*appsv1.Deployment]("Deployment", nil, schema.GroupResource{}, nil, testManager, tc.record)
		if _, ok := k.Merge(desired, live).Spec.Template.Labels["cost-center"]; ok != tc.kept {
			t.Errorf("record %q: the label the Monocle no longer sets is kept: %v, want %v", tc.record.Annotation, ok, tc.kept)
		}
	}
}
