package resources

import (
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// PodMetadataAnnotation on a pod template records the keys the operator set there from a
// PodPlacement's podLabels and podAnnotations: a sorted, comma-separated list of
// "label:<key>" and "annotation:<key>" (a label or annotation key holds neither ',' nor ':').
// It is absent when the placement sets none. The drift rule (pkg/controller/owned) removes
// from a live template the keys its record lists that the desired template no longer sets,
// and leaves alone the keys others add (kubectl rollout restart's
// kubectl.kubernetes.io/restartedAt).
const PodMetadataAnnotation = AnnotationPrefix + "pod-metadata"

// Entry kinds of PodMetadataAnnotation.
const (
	podMetadataLabel      = "label:"
	podMetadataAnnotation = "annotation:"
)

// componentPlacement is the PodPlacement of component's pods in m: spec.api, spec.crawler
// or spec.elasticsearch; any other component is a Job's, placed by spec.jobs.
func componentPlacement(m *monoclev1alpha1.Monocle, component string) monoclev1alpha1.PodPlacement {
	switch component {
	case ComponentAPI:
		return m.Spec.API.PodPlacement
	case ComponentCrawler:
		return m.Spec.Crawler.PodPlacement
	case ComponentElastic:
		return m.Spec.Elasticsearch.PodPlacement
	}
	return m.Spec.Jobs.PodPlacement
}

// applyPlacement sets on tmpl, a pod template of component's pods in m, the placement of
// componentPlacement and m's imagePullSecrets (pod-level: they serve every container,
// sidecars and init containers included). podLabels and podAnnotations are merged into the
// template's labels and annotations without overwriting a key the template already has (the
// operator's labels and hashes win, and admission refuses them anyway), and no annotation
// of AnnotationPrefix is taken; the keys set are recorded in PodMetadataAnnotation. An empty
// placement and no imagePullSecrets leave tmpl as it is, so a Monocle that sets none keeps
// the pod templates, and spec hashes, that it had before these fields existed. The values
// are copied: tmpl shares nothing with m.
func applyPlacement(m *monoclev1alpha1.Monocle, component string, tmpl *corev1.PodTemplateSpec) {
	placement := componentPlacement(m, component)
	p := placement.DeepCopy()
	spec := &tmpl.Spec
	spec.NodeSelector = p.NodeSelector
	spec.Tolerations = p.Tolerations
	spec.Affinity = p.Affinity
	spec.TopologySpreadConstraints = p.TopologySpreadConstraints
	spec.PriorityClassName = p.PriorityClassName
	spec.ImagePullSecrets = slices.Clone(m.Spec.ImagePullSecrets)

	var record []string
	tmpl.Labels, record = addNew(tmpl.Labels, p.PodLabels, podMetadataLabel, record, "")
	tmpl.Annotations, record = addNew(tmpl.Annotations, p.PodAnnotations, podMetadataAnnotation, record, AnnotationPrefix)
	if len(record) > 0 {
		sort.Strings(record)
		if tmpl.Annotations == nil {
			tmpl.Annotations = map[string]string{}
		}
		tmpl.Annotations[PodMetadataAnnotation] = strings.Join(record, ",")
	}
}

// addNew returns into with the entries of from whose key it lacks and that do not start
// with the reserved prefix (none when ""), and record with "<kind><key>" for each of them.
// into is allocated only when an entry is added.
func addNew(into, from map[string]string, kind string, record []string, reserved string) (map[string]string, []string) {
	for k, v := range from {
		if _, taken := into[k]; taken || reserved != "" && strings.HasPrefix(k, reserved) {
			continue
		}
		if into == nil {
			into = map[string]string{}
		}
		into[k] = v
		record = append(record, kind+k)
	}
	return into, record
}

// RecordedPodMetadata returns the label and annotation keys that annotations'
// PodMetadataAnnotation records (see applyPlacement); entries of another form are ignored.
func RecordedPodMetadata(annotations map[string]string) (labels, podAnnotations []string) {
	record := annotations[PodMetadataAnnotation]
	if record == "" {
		return nil, nil
	}
	for _, entry := range strings.Split(record, ",") {
		if k, ok := strings.CutPrefix(entry, podMetadataLabel); ok && k != "" {
			labels = append(labels, k)
		} else if k, ok := strings.CutPrefix(entry, podMetadataAnnotation); ok && k != "" {
			podAnnotations = append(podAnnotations, k)
		}
	}
	return labels, podAnnotations
}
