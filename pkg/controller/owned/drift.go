package owned

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// The drift rule. The fields the operator owns in an object are the fields its builder sets:
// every field of the desired object that is not the zero value, at any depth. No list of
// fields is kept by hand, so a field a builder starts to set is owned at once: compared with
// the live object (ownedDiffers) and written back when someone changed it (mergeOwned).
//
//   - A field the builder leaves zero is not owned: the API server defaults it, or someone
//     else sets it, and the operator leaves it as it is. A zero value the operator means (a
//     count of 0, false) is built as a non-nil pointer, which is owned whole.
//   - A list the builder sets is owned whole: same length, each element compared by this rule
//     (so the API server's defaults inside a container are not drift), and replaced whole.
//   - A map the builder sets is owned whole (a selector with an extra key is drift), except
//     the open maps others add to: labels and annotations, and the data of Secrets and
//     ConfigMaps, where only the builder's keys are owned.
//   - Quantities compare by value ("1Gi" equals "1024Mi"), int-or-strings as values.
//   - A union (a struct whose fields are alternatives, such as a Deployment's strategy, whose
//     rollingUpdate is forbidden with type Recreate) is compared by the rule but written whole
//     (unions), so a member someone else set does not survive next to the builder's. Lists
//     are written whole anyway, which covers the unions inside them (probe handlers, volume
//     and env sources).
//   - Object metadata is compared by metadataDrifted, status never; fields Kubernetes does not
//     let an update change are named per kind (immutableFields) and skipped, so an adopted
//     object keeps its own.
//   - A pod template's placement fields (ownedWhenEmpty) are owned even when the builder
//     leaves them empty: the Monocle's spec is their one source, so a value it does not give
//     is removed, whether the spec dropped it or someone added it to the workload by hand.
//   - A pod template's labels and annotations that the builder set from a source the user
//     edits (a Monocle's podLabels and podAnnotations) are recorded in an annotation of the
//     template, which the Registry's PodMetadataRecord reads; a key the live template's
//     record lists that the desired template no longer has is drift, and removed
//     (stalePodMetadata). Keys others add are not recorded, and stay.
//
// What the operator no longer wants (a field the builder stopped setting) shows in the spec
// hash annotation, which changes with the desired spec: the update then writes the desired
// fields and drops the operator's own annotations the desired object no longer has.

// openMaps are the struct fields holding maps others add keys to.
var openMaps = map[string]bool{"Labels": true, "Annotations": true, "Data": true}

// unions are the union types the builders set outside lists, written whole by mergeOwned
// (Kubernetes API validation forbids their members together: apps/v1 DeploymentStrategy and
// StatefulSetUpdateStrategy, policy/v1 PodDisruptionBudgetSpec's minAvailable and
// maxUnavailable).
var unions = map[reflect.Type]bool{
	reflect.TypeOf(appsv1.DeploymentStrategy{}):        true,
	reflect.TypeOf(appsv1.StatefulSetUpdateStrategy{}): true,
	reflect.TypeOf(policyv1.PodDisruptionBudgetSpec{}): true,
}

// immutableFields are, per owned type, the fields ("Spec.Selector") the rule skips because
// Kubernetes API validation refuses an update that changes them: apps/v1 Deployment's
// selector; StatefulSet's selector, serviceName, volumeClaimTemplates and
// podManagementPolicy; a Secret's type.
var immutableFields = map[reflect.Type][]string{
	reflect.TypeFor[*appsv1.Deployment]():  {"Spec.Selector"},
	reflect.TypeFor[*appsv1.StatefulSet](): {"Spec.Selector", "Spec.ServiceName", "Spec.VolumeClaimTemplates", "Spec.PodManagementPolicy"},
	reflect.TypeFor[*corev1.Secret]():      {"Type"},
}

// ownedWhenEmpty are the fields ("Spec.Template.Spec.NodeSelector") the rule owns even when
// the builder leaves them empty: an empty one in the desired object must be empty in the live
// one. They are the placement fields of a pod template at spec.template (Deployment,
// StatefulSet, Job), which the builders set from the Monocle's spec alone
// (resources.applyPlacement): core/v1 PodSpec's nodeSelector, tolerations, affinity,
// topologySpreadConstraints, priorityClassName and imagePullSecrets; and the template's
// initContainers, which only the builders set: the Elasticsearch proxy sidecar leaves the
// API's pods with its volumes once the cluster needs neither TLS nor credentials, and an
// init container kept without the volumes it mounts makes the API server refuse the update.
// The API server's admission does not set them on a template: the Priority,
// DefaultTolerationSeconds and ServiceAccount admission plugins, which fill priority,
// tolerations and imagePullSecrets, act on Pods
// (https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/).
var ownedWhenEmpty = []string{
	"Spec.Template.Spec.NodeSelector",
	"Spec.Template.Spec.Tolerations",
	"Spec.Template.Spec.Affinity",
	"Spec.Template.Spec.TopologySpreadConstraints",
	"Spec.Template.Spec.PriorityClassName",
	"Spec.Template.Spec.ImagePullSecrets",
	"Spec.Template.Spec.InitContainers",
}

// PodMetadataRecord is how the builders record, in an annotation of a pod template, the
// template's labels and annotations they set from a source the user edits, so that the drift
// rule removes a key the source no longer sets and leaves alone the keys others add. Its zero
// value records nothing: such keys then stay, as others' do.
type PodMetadataRecord struct {
	// Annotation is the annotation of the pod template that holds the record.
	Annotation string
	// Keys returns the label and annotation keys the record in a pod template's annotations
	// lists; nil and nil when there is none.
	Keys func(templateAnnotations map[string]string) (labels, annotations []string)
}

// fieldRule names the fields by path ("Spec.Selector") that the rule treats apart: immutable
// ones are skipped, ownedWhenEmpty ones owned even when desired leaves them empty; and
// podMetadata reads the record of a pod template's labels and annotations.
type fieldRule struct {
	immutable, ownedWhenEmpty map[string]bool
	podMetadata               PodMetadataRecord
}

// ruleFor is the fieldRule of objects of type t (a pointer to an API object type), from
// immutableFields and ownedWhenEmpty, reading pod templates' records with podMetadata.
func ruleFor(t reflect.Type, podMetadata PodMetadataRecord) fieldRule {
	r := fieldRule{immutable: map[string]bool{}, ownedWhenEmpty: map[string]bool{}, podMetadata: podMetadata}
	for _, f := range immutableFields[t] {
		r.immutable[f] = true
	}
	for _, f := range ownedWhenEmpty {
		r.ownedWhenEmpty[f] = true
	}
	return r
}

var (
	quantityType    = reflect.TypeOf(resource.Quantity{})
	intOrStringType = reflect.TypeOf(intstr.IntOrString{})
	objectMetaType  = reflect.TypeOf(metav1.ObjectMeta{})
	typeMetaType    = reflect.TypeOf(metav1.TypeMeta{})
	podTemplateType = reflect.TypeOf(corev1.PodTemplateSpec{})
)

// FieldsDiffer reports whether live differs from desired in a field desired sets, by the rule
// above, with no field skipped (the placement fields of ownedWhenEmpty included), pod
// templates' records read with podMetadata. desired and live are pointers to objects of one
// kind.
func FieldsDiffer(desired, live any, podMetadata PodMetadataRecord) bool {
	return ownedDiffers(desired, live, ruleFor(nil, podMetadata))
}

// ownedDiffers reports whether live differs from desired in a field desired sets, by the
// rule above. desired and live are pointers to objects of one kind; r names the fields left
// out of the comparison and those owned even when empty.
func ownedDiffers(desired, live any, r fieldRule) bool {
	w := driftWalk{r: r}
	return w.differs(reflect.ValueOf(desired).Elem(), reflect.ValueOf(live).Elem(), "", nil, false)
}

// driftedPaths returns the paths of the owned fields in which live differs from desired, by
// the rule above, in the order of the types' fields: a list or a map owned whole at its own
// path, a key of an open map at the key's, a pod template's stale label or annotation at its
// key's. desired and live are pointers to objects of one kind.
func driftedPaths(desired, live any, r fieldRule) []fieldPath {
	w := driftWalk{r: r, collect: true}
	w.differs(reflect.ValueOf(desired).Elem(), reflect.ValueOf(live).Elem(), "", nil, false)
	return w.paths
}

// fieldPath is the path of a field in an object's JSON form, one element per field name or map
// key: {"spec", "template", "spec", "tolerations"}. The field managers of managedFields own
// fields by the same paths.
type fieldPath []string

// String is the path as people write it, "spec.template.spec.tolerations", with a map key that
// holds a dot or a slash in brackets: "metadata.labels[app.kubernetes.io/name]".
func (p fieldPath) String() string {
	var b strings.Builder
	for i, e := range p {
		switch {
		case strings.ContainsAny(e, "./"):
			b.WriteString("[" + e + "]")
		case i > 0:
			b.WriteString("." + e)
		default:
			b.WriteString(e)
		}
	}
	return b.String()
}

// childPath returns a new path of p followed by names.
func childPath(p fieldPath, names ...string) fieldPath {
	return append(slices.Clone(p), names...)
}

// driftWalk compares a desired object with a live one by the rule. Without collect it stops
// at the first difference; with collect it goes on and records in paths where each difference
// is.
type driftWalk struct {
	r       fieldRule
	collect bool
	paths   []fieldPath
}

// found records the difference at json (with collect) and returns true.
func (w *driftWalk) found(json fieldPath) bool {
	if w.collect {
		w.paths = append(w.paths, slices.Clone(json))
	}
	return true
}

// differs reports whether l differs from d in a field d sets. path is their Go path
// ("Spec.Template"), which fieldRule names fields by; json their JSON path, which the
// differences are recorded at.
func (w *driftWalk) differs(d, l reflect.Value, path string, json fieldPath, open bool) bool {
	if w.r.ownedWhenEmpty[path] && isEmpty(d) {
		return !isEmpty(l) && w.found(json)
	}
	switch d.Type() {
	case quantityType:
		dq, lq := d.Interface().(resource.Quantity), l.Interface().(resource.Quantity)
		return dq.Cmp(lq) != 0 && w.found(json)
	case intOrStringType:
		return d.Interface() != l.Interface() && w.found(json)
	case podTemplateType:
		if labels, annotations := stalePodMetadata(d, l, w.r.podMetadata); len(labels)+len(annotations) > 0 {
			if !w.collect {
				return true
			}
			for _, k := range labels {
				w.found(childPath(json, "metadata", "labels", k))
			}
			for _, k := range annotations {
				w.found(childPath(json, "metadata", "annotations", k))
			}
			w.structDiffers(d, l, path, json)
			return true
		}
	}
	switch d.Kind() {
	case reflect.Pointer:
		if d.IsNil() {
			return false
		}
		if l.IsNil() {
			return w.found(json)
		}
		return w.differs(d.Elem(), l.Elem(), path, json, open)
	case reflect.Struct:
		return w.structDiffers(d, l, path, json)
	case reflect.Map:
		if d.Len() == 0 {
			return false
		}
		if !open && l.Len() != d.Len() {
			return w.found(json)
		}
		quiet := driftWalk{r: w.r}
		differs := false
		for _, k := range d.MapKeys() {
			lv := l.MapIndex(k)
			if lv.IsValid() && !quiet.differs(d.MapIndex(k), lv, path, json, false) {
				continue
			}
			if !open || !w.collect {
				// A map others add no keys to is owned whole.
				return w.found(json)
			}
			differs = w.found(childPath(json, fmt.Sprint(k.Interface())))
		}
		return differs
	case reflect.Slice:
		if d.Len() == 0 {
			return false
		}
		if d.Type().Elem().Kind() == reflect.Uint8 {
			return !bytes.Equal(d.Bytes(), l.Bytes()) && w.found(json)
		}
		if l.Len() != d.Len() {
			return w.found(json)
		}
		quiet := driftWalk{r: w.r}
		for i := range d.Len() {
			if quiet.differs(d.Index(i), l.Index(i), path, json, false) {
				// Lists are owned whole.
				return w.found(json)
			}
		}
		return false
	default:
		return !reflect.DeepEqual(d.Interface(), l.Interface()) && w.found(json)
	}
}

// structDiffers reports whether struct l differs from struct d in a field the rule owns.
func (w *driftWalk) structDiffers(d, l reflect.Value, path string, json fieldPath) bool {
	differs := false
	anyOwnedField(d, path, w.r, func(i int, p string, open bool) bool {
		if w.differs(d.Field(i), l.Field(i), p, jsonChild(json, d.Type().Field(i)), open) {
			differs = true
			return !w.collect
		}
		return false
	})
	return differs
}

// jsonChild returns the JSON path of struct field f of the struct at json: json followed by
// the field's JSON name, or json itself for a field inlined into its struct (an embedded one, or
// one tagged ",inline").
func jsonChild(json fieldPath, f reflect.StructField) fieldPath {
	tag := f.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	switch {
	case name != "" && name != "-":
		return childPath(json, name)
	case f.Anonymous || strings.Contains(opts, "inline"):
		return json
	}
	return childPath(json, f.Name)
}

// mergeOwned returns a copy of live with every field desired sets written, by the rule
// above: open maps get desired's keys (and lose the operator's annotations desired no longer
// has), other maps, lists and scalars are replaced, structs merged field by field. live is
// not changed. The type parameter is a pointer to an API object.
func mergeOwned[T Object](desired, live T, r fieldRule) T {
	// The merged object shares maps, lists and pointers with this copy of desired alone.
	from := desired.DeepCopyObject().(T)
	out := live.DeepCopyObject().(T)
	merge(reflect.ValueOf(from).Elem(), reflect.ValueOf(out).Elem(), "", false, r)
	return out
}

func merge(d, out reflect.Value, path string, open bool, r fieldRule) {
	if r.ownedWhenEmpty[path] && isEmpty(d) {
		out.Set(reflect.Zero(d.Type()))
		return
	}
	if t := d.Type(); t == quantityType || t == intOrStringType || unions[t] {
		out.Set(d)
		return
	}
	if d.Type() == podTemplateType {
		labels, annotations := stalePodMetadata(d, out, r.podMetadata)
		mergeStruct(d, out, path, r)
		dropPodMetadata(d.Addr().Interface().(*corev1.PodTemplateSpec), out.Addr().Interface().(*corev1.PodTemplateSpec), labels, annotations, r.podMetadata)
		return
	}
	switch d.Kind() {
	case reflect.Pointer:
		switch {
		case d.IsNil():
		case out.IsNil():
			out.Set(d)
		default:
			merge(d.Elem(), out.Elem(), path, open, r)
		}
	case reflect.Struct:
		mergeStruct(d, out, path, r)
	case reflect.Map:
		if d.Len() == 0 {
			return
		}
		if !open {
			out.Set(d)
			return
		}
		merged := reflect.MakeMap(d.Type())
		for _, k := range out.MapKeys() {
			// The operator's own annotations that desired no longer has go, so none is left
			// stale (a config hash for an image that reloads config by itself).
			if key, ok := k.Interface().(string); ok && strings.HasSuffix(path, "Annotations") && strings.HasPrefix(key, resources.AnnotationPrefix) {
				continue
			}
			merged.SetMapIndex(k, out.MapIndex(k))
		}
		for _, k := range d.MapKeys() {
			merged.SetMapIndex(k, d.MapIndex(k))
		}
		out.Set(merged)
	default:
		out.Set(d)
	}
}

// mergeStruct merges each field of struct d (at path) the rule owns into out.
func mergeStruct(d, out reflect.Value, path string, r fieldRule) {
	anyOwnedField(d, path, r, func(i int, p string, open bool) bool {
		merge(d.Field(i), out.Field(i), p, open, r)
		return false
	})
}

// isEmpty reports whether v holds no value: a nil pointer, an empty map or list (nil or
// not), a zero scalar.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Map, reflect.Slice:
		return v.Len() == 0
	}
	return v.IsZero()
}

// stalePodMetadata returns the label and annotation keys of the pod template live (a
// corev1.PodTemplateSpec value) that the record in its annotations, read with record, lists
// as set by the builder, that live still has, and that the pod template desired does not
// have; none when record is the zero PodMetadataRecord.
func stalePodMetadata(desired, live reflect.Value, record PodMetadataRecord) (labels, annotations []string) {
	if record.Keys == nil {
		return nil, nil
	}
	d, l := desired.Interface().(corev1.PodTemplateSpec), live.Interface().(corev1.PodTemplateSpec)
	stale := func(recorded []string, desired, live map[string]string) []string {
		var out []string
		for _, k := range recorded {
			_, wanted := desired[k]
			if _, set := live[k]; set && !wanted {
				out = append(out, k)
			}
		}
		return out
	}
	recordedLabels, recordedAnnotations := record.Keys(l.Annotations)
	return stale(recordedLabels, d.Labels, l.Labels), stale(recordedAnnotations, d.Annotations, l.Annotations)
}

// dropPodMetadata removes from the merged pod template out the stale labels and annotations
// (stalePodMetadata of the live template it was merged into), and the annotation of record
// when desired has none.
func dropPodMetadata(desired, out *corev1.PodTemplateSpec, labels, annotations []string, record PodMetadataRecord) {
	for _, k := range labels {
		delete(out.Labels, k)
	}
	for _, k := range annotations {
		delete(out.Annotations, k)
	}
	if _, recorded := desired.Annotations[record.Annotation]; record.Annotation != "" && !recorded {
		delete(out.Annotations, record.Annotation)
	}
}

// anyOwnedField calls f, in order, for each field of struct d (at path) the rule owns: set in
// d or owned when empty, neither metadata nor status nor immutable. f gets the field's index,
// its path and whether it is an open map; anyOwnedField stops at the first call that returns
// true, and returns whether one did.
func anyOwnedField(d reflect.Value, path string, r fieldRule, f func(i int, path string, open bool) bool) bool {
	for i := range d.NumField() {
		field := d.Type().Field(i)
		p := join(path, field.Name)
		if skipField(path, field, r.immutable[p]) || d.Field(i).IsZero() && !r.ownedWhenEmpty[p] {
			continue
		}
		if f(i, p, openMaps[field.Name]) {
			return true
		}
	}
	return false
}

// skipField reports whether a struct field is outside the rule: type and object metadata
// and status at the top level, and the immutable fields of a kind.
func skipField(path string, f reflect.StructField, immutable bool) bool {
	if immutable || !f.IsExported() {
		return true
	}
	if path == "" {
		return f.Type == typeMetaType || f.Type == objectMetaType || f.Name == "Status"
	}
	return false
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// The rule for the kinds the operator handles as unstructured objects (those of optional APIs,
// such as OpenShift's Route, whose Go types it does not import), where every struct is a JSON
// object: each key desired sets is owned at any depth and the keys others set are kept, arrays
// are owned whole (same length, elements compared by the rule, replaced whole), scalars must be
// equal (integers as int64, as the API machinery decodes them). metadata (see metadataDrifted)
// and status are outside it.

// unstructuredDiffers reports whether live differs from desired in a field desired sets.
func unstructuredDiffers(desired, live *unstructured.Unstructured) bool {
	for k, d := range desired.Object {
		if k == "metadata" || k == "status" || k == "apiVersion" || k == "kind" {
			continue
		}
		l, ok := live.Object[k]
		if !ok || jsonDiffers(d, l) {
			return true
		}
	}
	return false
}

// unstructuredPaths returns the paths of the fields desired sets in which live differs, in
// the order of their keys: an array at its own path, an object's key at the key's.
func unstructuredPaths(desired, live *unstructured.Unstructured) []fieldPath {
	var out []fieldPath
	var walk func(d, l any, at fieldPath)
	walk = func(d, l any, at fieldPath) {
		dm, isObject := d.(map[string]any)
		lm, liveObject := l.(map[string]any)
		if !isObject || !liveObject {
			if jsonDiffers(d, l) {
				out = append(out, at)
			}
			return
		}
		for _, k := range slices.Sorted(maps.Keys(dm)) {
			lv, ok := lm[k]
			if !ok {
				out = append(out, childPath(at, k))
				continue
			}
			walk(dm[k], lv, childPath(at, k))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(desired.Object)) {
		if k == "metadata" || k == "status" || k == "apiVersion" || k == "kind" {
			continue
		}
		l, ok := live.Object[k]
		if !ok {
			out = append(out, fieldPath{k})
			continue
		}
		walk(desired.Object[k], l, fieldPath{k})
	}
	return out
}

func jsonDiffers(d, l any) bool {
	switch d := d.(type) {
	case map[string]any:
		lm, ok := l.(map[string]any)
		if !ok {
			return true
		}
		for k, dv := range d {
			lv, ok := lm[k]
			if !ok || jsonDiffers(dv, lv) {
				return true
			}
		}
		return false
	case []any:
		ls, ok := l.([]any)
		if !ok || len(ls) != len(d) {
			return true
		}
		for i := range d {
			if jsonDiffers(d[i], ls[i]) {
				return true
			}
		}
		return false
	default:
		return !reflect.DeepEqual(d, l)
	}
}

// mergeUnstructured returns a copy of live with every field desired sets written by the rule
// above; live is not changed.
func mergeUnstructured(desired, live *unstructured.Unstructured) *unstructured.Unstructured {
	out := live.DeepCopy()
	from := desired.DeepCopy()
	for k, d := range from.Object {
		if k == "metadata" || k == "status" {
			continue
		}
		out.Object[k] = mergeJSON(d, out.Object[k])
	}
	return out
}

func mergeJSON(d, l any) any {
	dm, ok := d.(map[string]any)
	lm, lok := l.(map[string]any)
	if !ok || !lok {
		return d
	}
	for k, dv := range dm {
		lm[k] = mergeJSON(dv, lm[k])
	}
	return lm
}
