package resources

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// placementOf is a placement that differs per name, in every field.
func placementOf(name string) monoclev1alpha1.PodPlacement {
	return monoclev1alpha1.PodPlacement{
		NodeSelector: map[string]string{"pool": name},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: name, Effect: corev1.TaintEffectNoSchedule}},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{name}}}}},
		}}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}},
		PriorityClassName:         name + "-priority",
		PodLabels:                 map[string]string{"team": name},
		PodAnnotations:            map[string]string{"example.com/owner": name},
	}
}

// placed is full() with a different placement for each component and the Jobs, and
// imagePullSecrets.
func placed() *monoclev1alpha1.Monocle {
	m := full()
	m.Spec.API.PodPlacement = placementOf("api")
	m.Spec.Crawler.PodPlacement = placementOf("crawler")
	m.Spec.Elasticsearch.PodPlacement = placementOf("elastic")
	m.Spec.Jobs.PodPlacement = placementOf("jobs")
	m.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mirror"}, {Name: "other"}}
	return m
}

// ownedPods are the pod templates of every pod the builders make for m, by the placement
// that places them, with the Elasticsearch access e for the Jobs and Monocle pods.
func ownedPods(m *monoclev1alpha1.Monocle, e ElasticAccess) map[string]struct {
	placedBy string
	tpl      corev1.PodTemplateSpec
} {
	in := inputs
	in.Elastic = e
	r := monoclev1alpha1.MaintenanceRequest{Name: "x", Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "w", Crawler: "c"}
	type pod = struct {
		placedBy string
		tpl      corev1.PodTemplateSpec
	}
	return map[string]pod{
		"api":           {"api", NewAPIDeployment(m, in).Spec.Template},
		"crawler":       {"crawler", NewCrawlerDeployment(m, in).Spec.Template},
		"elastic":       {"elastic", NewElasticStatefulSet(m, ElasticDataVolume, false, "").Spec.Template},
		"update-idents": {"jobs", NewUpdateIdentsJob(m, "c", e).Spec.Template},
		"maintenance":   {"jobs", NewMaintenanceJob(m, r, "c", e).Spec.Template},
	}
}

func TestPlacementReachesEveryPod(t *testing.T) {
	proxied := ElasticAccess{Target: externalTarget("https://es.example.com", "monocle", testCA), ProxyHash: "abc"}
	for access, e := range map[string]ElasticAccess{"bundled": {}, "through the proxy sidecar": proxied} {
		m := placed()
		for name, pod := range ownedPods(m, e) {
			want := placementOf(pod.placedBy)
			spec := pod.tpl.Spec
			switch {
			case !equality.Semantic.DeepEqual(spec.NodeSelector, want.NodeSelector):
				t.Errorf("%s, %s: nodeSelector %v, want %v", access, name, spec.NodeSelector, want.NodeSelector)
			case !equality.Semantic.DeepEqual(spec.Tolerations, want.Tolerations):
				t.Errorf("%s, %s: tolerations %v, want %v", access, name, spec.Tolerations, want.Tolerations)
			case !equality.Semantic.DeepEqual(spec.Affinity, want.Affinity):
				t.Errorf("%s, %s: affinity %v, want %v", access, name, spec.Affinity, want.Affinity)
			case !equality.Semantic.DeepEqual(spec.TopologySpreadConstraints, want.TopologySpreadConstraints):
				t.Errorf("%s, %s: topologySpreadConstraints %v, want %v", access, name, spec.TopologySpreadConstraints, want.TopologySpreadConstraints)
			case spec.PriorityClassName != want.PriorityClassName:
				t.Errorf("%s, %s: priorityClassName %q, want %q", access, name, spec.PriorityClassName, want.PriorityClassName)
			case !equality.Semantic.DeepEqual(spec.ImagePullSecrets, m.Spec.ImagePullSecrets):
				t.Errorf("%s, %s: imagePullSecrets %v, want %v", access, name, spec.ImagePullSecrets, m.Spec.ImagePullSecrets)
			case pod.tpl.Labels["team"] != pod.placedBy || pod.tpl.Annotations["example.com/owner"] != pod.placedBy:
				t.Errorf("%s, %s: pod labels %v, annotations %v lack the placement's", access, name, pod.tpl.Labels, pod.tpl.Annotations)
			case pod.tpl.Annotations[PodMetadataAnnotation] != "annotation:example.com/owner,label:team":
				t.Errorf("%s, %s: recorded pod metadata %q", access, name, pod.tpl.Annotations[PodMetadataAnnotation])
			case pod.tpl.Labels[ComponentLabel] != name:
				t.Errorf("%s, %s: component label %q", access, name, pod.tpl.Labels[ComponentLabel])
			}
			if errs := validatePodSpec(&spec, []string{ElasticDataVolume}); len(errs) > 0 {
				t.Errorf("%s, %s: %v", access, name, errs)
			}
		}
	}
}

// TestOperatorPodMetadataWins: podLabels and podAnnotations that admission should have
// refused never replace the operator's own keys, and are not recorded as set.
func TestOperatorPodMetadataWins(t *testing.T) {
	m := minimal()
	smuggled := monoclev1alpha1.PodPlacement{
		PodLabels:      map[string]string{ComponentLabel: "other", InstanceLabel: "other", ManagedByLabel: "other", "team": "a"},
		PodAnnotations: map[string]string{SecretHashAnnotation: "forged", ConfigHashAnnotation: "forged", RestartedAtAnnotation: "forged"},
	}
	m.Spec.API.PodPlacement, m.Spec.Crawler.PodPlacement, m.Spec.Elasticsearch.PodPlacement, m.Spec.Jobs.PodPlacement = smuggled, smuggled, smuggled, smuggled
	clean := minimal()
	for name, pod := range ownedPods(m, bundledAccess(m)) {
		before := ownedPods(clean, bundledAccess(clean))[name].tpl
		labels := maps.Clone(before.Labels)
		labels["team"] = "a"
		if !maps.Equal(pod.tpl.Labels, labels) {
			t.Errorf("%s: labels %v, want %v", name, pod.tpl.Labels, labels)
		}
		annotations := maps.Clone(before.Annotations)
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[PodMetadataAnnotation] = "label:team"
		if !maps.Equal(pod.tpl.Annotations, annotations) {
			t.Errorf("%s: annotations %v, want %v", name, pod.tpl.Annotations, annotations)
		}
	}
}

// TestEmptyPlacementBuildsTheSameObjects: an empty placement, whether its fields are absent
// or empty (as `nodeSelector: {}` decodes), builds the objects a Monocle without the fields
// gets, spec hashes included, so an operator upgrade rolls no pod.
func TestEmptyPlacementBuildsTheSameObjects(t *testing.T) {
	empty := monoclev1alpha1.PodPlacement{NodeSelector: map[string]string{}, Tolerations: []corev1.Toleration{},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{}, PodLabels: map[string]string{}, PodAnnotations: map[string]string{}}
	for name, m := range map[string]*monoclev1alpha1.Monocle{"minimal": minimal(), "full": full()} {
		withEmpty := m.DeepCopy()
		withEmpty.Spec.API.PodPlacement, withEmpty.Spec.Crawler.PodPlacement = empty, empty
		withEmpty.Spec.Elasticsearch.PodPlacement, withEmpty.Spec.Jobs.PodPlacement = empty, empty
		withEmpty.Spec.ImagePullSecrets = []corev1.LocalObjectReference{}
		for _, pair := range [][2]interface{ GetAnnotations() map[string]string }{
			{NewAPIDeployment(m, inputs), NewAPIDeployment(withEmpty, inputs)},
			{NewCrawlerDeployment(m, inputs), NewCrawlerDeployment(withEmpty, inputs)},
			{NewElasticStatefulSet(m, ElasticDataVolume, false, ""), NewElasticStatefulSet(withEmpty, ElasticDataVolume, false, "")},
		} {
			if a, b := pair[0].GetAnnotations()[SpecHashAnnotation], pair[1].GetAnnotations()[SpecHashAnnotation]; a != b {
				t.Errorf("%s: an empty placement changes the spec hash from %s to %s", name, a, b)
			}
		}
		for pod, p := range ownedPods(withEmpty, bundledAccess(withEmpty)) {
			if want := ownedPods(m, bundledAccess(m))[pod].tpl; !equality.Semantic.DeepEqual(p.tpl.ObjectMeta, want.ObjectMeta) {
				t.Errorf("%s, %s: an empty placement changes the template's metadata to %v", name, pod, p.tpl.ObjectMeta)
			}
		}
	}
}

// TestPlacementIsCopied: the built templates share nothing with the Monocle, so a change of
// one (the drift merge writes into copies, the controller deep-copies the cache) never
// reaches the other.
func TestPlacementIsCopied(t *testing.T) {
	m := placed()
	tpl := NewAPIDeployment(m, inputs).Spec.Template
	tpl.Spec.NodeSelector["pool"] = "changed"
	tpl.Spec.Tolerations[0].Value = "changed"
	tpl.Spec.ImagePullSecrets[0].Name = "changed"
	tpl.Spec.Affinity.NodeAffinity = nil
	if !equality.Semantic.DeepEqual(m, placed()) {
		t.Errorf("changing a built template changed the Monocle: %+v", m.Spec.API.PodPlacement)
	}
}

func TestRecordedPodMetadata(t *testing.T) {
	for record, want := range map[string][2][]string{
		"":           {nil, nil},
		"label:team": {{"team"}, nil},
		"annotation:example.com/a,label:b,label:c": {{"b", "c"}, {"example.com/a"}},
		"label:,other:x,annotation:":               {nil, nil},
	} {
		labels, annotations := RecordedPodMetadata(map[string]string{PodMetadataAnnotation: record})
		if !equality.Semantic.DeepEqual(labels, want[0]) || !equality.Semantic.DeepEqual(annotations, want[1]) {
			t.Errorf("RecordedPodMetadata(%q) = %q, %q, want %q, %q", record, labels, annotations, want[0], want[1])
		}
	}
}
