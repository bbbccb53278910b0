package owned

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// newMonocle is a Monocle of the default namespace as the API server returns it.
func newMonocle(name string) *monoclev1alpha1.Monocle {
	return &monoclev1alpha1.Monocle{
		TypeMeta:   metav1.TypeMeta{APIVersion: monoclev1alpha1.SchemeGroupVersion.String(), Kind: "Monocle"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: "uid-demo", Generation: 1},
	}
}

// builtObjects are what the builders make for a minimal and a full Monocle, with the Kind
// that ensures each (as a Registry makes it: the rule of drift.go with the kind's
// immutableFields), so the drift rule is tested on every owned kind and every field a builder
// sets.
func builtObjects(t *testing.T) map[string]struct {
	desired Object
	k       func() (drifted func(d, l Object) bool, merge func(d, l Object) Object)
} {
	t.Helper()
	minimal := newMonocle("demo")
	full := newMonocle("full")
	full.Spec.Image = "quay.io/change-metrics/monocle:1.11.2"
	full.Spec.PublicURL = "https://monocle.example.com"
	full.Spec.SecretRef = &monoclev1alpha1.SecretReference{Name: "tokens"}
	full.Spec.API = monoclev1alpha1.APISpec{Replicas: ptr.To[int32](3), Title: "Changes",
		Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}}
	full.Spec.Elasticsearch.JavaOpts = "-Xms1g -Xmx1g"
	full.Spec.Ingress = &monoclev1alpha1.IngressSpec{Host: "monocle.example.com", ClassName: "nginx",
		TLS:         &monoclev1alpha1.IngressTLS{IssuerRef: &monoclev1alpha1.IssuerReference{Name: "letsencrypt"}},
		Annotations: map[string]string{"nginx.ingress.kubernetes.io/proxy-body-size": "8m"}}
	full.Spec.API.PodPlacement = placement("api")
	full.Spec.Crawler.PodPlacement = placement("crawler")
	full.Spec.Elasticsearch.PodPlacement = placement("elastic")
	full.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mirror"}}
	keys := map[string][]byte{resources.CrawlersAPIKeyKey: []byte("k1"), resources.JWKGenKeyKey: []byte("k2")}
	in := resources.Inputs{ConfigHash: "c0ffee", SecretHash: "5ec2e7"}

	type entry = struct {
		desired Object
		k       func() (func(d, l Object) bool, func(d, l Object) Object)
	}
	out := map[string]entry{}
	add := func(name string, desired Object, k func() (func(d, l Object) bool, func(d, l Object) Object)) {
		out[name] = entry{desired, k}
	}
	for _, m := range []*monoclev1alpha1.Monocle{minimal, full} {
		add(m.Name+" Secret", resources.NewAPISecret(m, keys), erase(ruleOf[*corev1.Secret]("Secret")))
		add(m.Name+" ConfigMap", resources.NewConfigMap(m, resources.DefaultConfig), erase(ruleOf[*corev1.ConfigMap]("ConfigMap")))
		add(m.Name+" API Service", resources.NewAPIService(m), erase(ruleOf[*corev1.Service]("Service")))
		add(m.Name+" Elasticsearch Service", resources.NewElasticService(m), erase(ruleOf[*corev1.Service]("Service")))
		add(m.Name+" API Deployment", resources.NewAPIDeployment(m, in), erase(ruleOf[*appsv1.Deployment]("Deployment")))
		add(m.Name+" crawler Deployment", resources.NewCrawlerDeployment(m, in), erase(ruleOf[*appsv1.Deployment]("Deployment")))
		add(m.Name+" StatefulSet", resources.NewElasticStatefulSet(m, resources.ElasticDataVolume, false, ""), erase(ruleOf[*appsv1.StatefulSet]("StatefulSet")))
		add(m.Name+" PodDisruptionBudget", resources.NewAPIPodDisruptionBudget(m), erase(ruleOf[*policyv1.PodDisruptionBudget]("PodDisruptionBudget")))
		add(m.Name+" NetworkPolicy", resources.NewNetworkPolicy(m, ""), erase(ruleOf[*networkingv1.NetworkPolicy]("NetworkPolicy")))
		if m.Spec.Ingress != nil {
			add(m.Name+" Ingress", resources.NewAPIIngress(m), erase(ruleOf[*networkingv1.Ingress]("Ingress")))
		}
	}
	return out
}

// ruleOf is the Kind of T as the controller's Registry makes it, without a cache or a client:
// enough for Drifted and Merge.
func ruleOf[T Object](kind string) Kind[T] {
	return newKind[T](kind, nil, schema.GroupResource{}, nil, "test", podMetadata)
}

// erase turns a typed Kind's Drifted and Merge into functions of Object.
func erase[T Object](k Kind[T]) func() (func(d, l Object) bool, func(d, l Object) Object) {
	return func() (func(d, l Object) bool, func(d, l Object) Object) {
		return func(d, l Object) bool { return k.Drifted(d.(T), l.(T)) },
			func(d, l Object) Object { return k.Merge(d.(T), l.(T)) }
	}
}

// TestEveryBuiltFieldIsOwned changes, one at a time, every field a builder sets in every
// owned kind (each scalar, each map entry and list element, an entry added to a map that is
// not open, an element removed from a list) and checks that the change is drift and that
// the merge puts the built value back. It fails when the rule misses a field a builder sets.
func TestEveryBuiltFieldIsOwned(t *testing.T) {
	for name, o := range builtObjects(t) {
		drifted, merge := o.k()
		if drifted(o.desired, o.desired.DeepCopyObject().(Object)) {
			t.Errorf("%s: the built object drifts from itself", name)
		}
		edits := 0
		for _, e := range fieldEdits(reflect.ValueOf(o.desired).Elem(), "") {
			if immutableField(o.desired, e.path) {
				continue
			}
			edits++
			live := o.desired.DeepCopyObject().(Object)
			e.apply(reflect.ValueOf(live).Elem())
			if !drifted(o.desired, live) {
				t.Errorf("%s: %s is not drift", name, e)
				continue
			}
			if len(driftedPaths(o.desired, live, ruleFor(reflect.TypeOf(o.desired), podMetadata))) == 0 {
				t.Errorf("%s: %s is drift at no path (contests could not name it)", name, e)
			}
			if merged := merge(o.desired, live); drifted(o.desired, merged) {
				t.Errorf("%s: after %s the merge does not restore the built value", name, e)
			}
		}
		if edits == 0 {
			t.Errorf("%s: no edit tried", name)
		}
	}
}

// setsEveryScalar are the kinds whose builder sets every scalar field, so that
// TestUnsetFieldsAreNotOwned has none to fill: the PodDisruptionBudget's spec sets
// maxUnavailable, selector and unhealthyPodEvictionPolicy, and leaves only minAvailable, an
// int-or-string, which fill leaves alone.
var setsEveryScalar = map[string]bool{"PodDisruptionBudget": true}

// TestUnsetFieldsAreNotOwned fills every field a builder leaves unset (as the API server's
// defaults and other clients do), and adds entries to labels, annotations and data: none of
// that is drift, so it causes no write. The fields owned even when empty (ownedWhenEmpty) are
// the exception: each one filled alone is drift, and the merge empties it again.
func TestUnsetFieldsAreNotOwned(t *testing.T) {
	ownedEmpty := 0
	for name, o := range builtObjects(t) {
		drifted, merge := o.k()
		live := o.desired.DeepCopyObject().(Object)
		filled := fillUnset(reflect.ValueOf(live).Elem(), "")
		if filled == 0 && !setsEveryScalar[reflect.TypeOf(o.desired).Elem().Name()] {
			t.Errorf("%s: no unset field filled", name)
		}
		if drifted(o.desired, live) {
			t.Errorf("%s: fields the builder does not set count as drift", name)
		}
		if paths := driftedPaths(o.desired, live, ruleFor(reflect.TypeOf(o.desired), podMetadata)); len(paths) > 0 {
			t.Errorf("%s: fields the builder does not set are drift at %v", name, paths)
		}
		for _, path := range ownedWhenEmpty {
			live := o.desired.DeepCopyObject().(Object)
			field, ok := fieldAt(reflect.ValueOf(live).Elem(), path)
			if !ok || !isEmpty(field) {
				continue
			}
			ownedEmpty++
			fillEmpty(field)
			if !drifted(o.desired, live) {
				t.Errorf("%s: %s set by hand is not drift", name, path)
				continue
			}
			// Contests name the field by its JSON path.
			wantPath := map[string]string{
				"Spec.Template.Spec.NodeSelector":              "spec.template.spec.nodeSelector",
				"Spec.Template.Spec.Tolerations":               "spec.template.spec.tolerations",
				"Spec.Template.Spec.Affinity":                  "spec.template.spec.affinity",
				"Spec.Template.Spec.TopologySpreadConstraints": "spec.template.spec.topologySpreadConstraints",
				"Spec.Template.Spec.PriorityClassName":         "spec.template.spec.priorityClassName",
				"Spec.Template.Spec.ImagePullSecrets":          "spec.template.spec.imagePullSecrets",
				"Spec.Template.Spec.InitContainers":            "spec.template.spec.initContainers",
			}[path]
			if got := driftedPaths(o.desired, live, ruleFor(reflect.TypeOf(o.desired), podMetadata)); len(got) != 1 || got[0].String() != wantPath {
				t.Errorf("%s: %s set by hand is drift at %v, want %s", name, path, got, wantPath)
			}
			merged := merge(o.desired, live)
			if got, _ := fieldAt(reflect.ValueOf(merged).Elem(), path); !isEmpty(got) || drifted(o.desired, merged) {
				t.Errorf("%s: the merge leaves %s = %v", name, path, got)
			}
		}
	}
	// The minimal Monocle's API, crawler and Elasticsearch pods set none of the placement
	// fields (all but the last, InitContainers); the API and crawler pods of both Monocles
	// have no init container, Elasticsearch's have one.
	if want := 3*(len(ownedWhenEmpty)-1) + 4; ownedEmpty != want {
		t.Errorf("tried %d fields owned when empty, want %d", ownedEmpty, want)
	}
}

// fieldAt returns the field at path ("Spec.Template.Spec.NodeSelector") of struct v, and
// whether v has it (through non-nil pointers).
func fieldAt(v reflect.Value, path string) (reflect.Value, bool) {
	for _, name := range strings.Split(path, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		if v = v.FieldByName(name); !v.IsValid() {
			return reflect.Value{}, false
		}
	}
	return v, true
}

// fillEmpty gives v, an empty map, list, pointer or string, a value, as a hand edit would.
func fillEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("by-hand"), reflect.ValueOf("x"))
		v.Set(m)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.String:
		v.SetString("by-hand")
	default:
		panic(fmt.Sprintf("cannot fill a %s", v.Type()))
	}
}

// immutableField reports whether path is one of the fields the kind of obj skips.
func immutableField(obj Object, path string) bool {
	prefixes := map[string][]string{
		"*v1.StatefulSet": {"Spec.Selector", "Spec.ServiceName", "Spec.VolumeClaimTemplates", "Spec.PodManagementPolicy"},
		"*v1.Deployment":  {"Spec.Selector"},
		"*v1.Secret":      {"Type"},
	}
	for _, p := range prefixes[fmt.Sprintf("%T", obj)] {
		if path == p || len(path) > len(p) && path[:len(p)+1] == p+"." || len(path) > len(p) && path[:len(p)+1] == p+"[" {
			return true
		}
	}
	return false
}

// fieldEdit is one change of a built object: apply makes it on a copy.
type fieldEdit struct {
	path, what string
	apply      func(root reflect.Value)
}

func (e fieldEdit) String() string { return e.what + " " + e.path }

// fieldEdits lists the edits of every set field under v (the object struct), skipping the
// top-level metadata and status, which the rule leaves to metadataDrifted.
func fieldEdits(v reflect.Value, path string) []fieldEdit {
	var out []fieldEdit
	var walk func(steps []func(reflect.Value) reflect.Value, v reflect.Value, path string, open bool)
	at := func(steps []func(reflect.Value) reflect.Value) func(reflect.Value) reflect.Value {
		steps = append([]func(reflect.Value) reflect.Value(nil), steps...)
		return func(root reflect.Value) reflect.Value {
			for _, s := range steps {
				root = s(root)
			}
			return root
		}
	}
	leaf := func(steps []func(reflect.Value) reflect.Value, path string) {
		get := at(steps)
		out = append(out, fieldEdit{path: path, what: "change", apply: func(root reflect.Value) { change(get(root)) }})
	}
	walk = func(steps []func(reflect.Value) reflect.Value, v reflect.Value, path string, open bool) {
		switch v.Type() {
		case quantityType, intOrStringType:
			leaf(steps, path)
			return
		}
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(append(steps, func(r reflect.Value) reflect.Value { return r.Elem() }), v.Elem(), path, open)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if skipField(path, f, false) || v.Field(i).IsZero() {
					continue
				}
				i := i
				walk(append(steps, func(r reflect.Value) reflect.Value { return r.Field(i) }), v.Field(i), join(path, f.Name), openMaps[f.Name])
			}
		case reflect.Map:
			get := at(steps)
			for _, k := range v.MapKeys() {
				k := k
				p := fmt.Sprintf("%s[%v]", path, k)
				out = append(out, fieldEdit{path: p, what: "remove", apply: func(root reflect.Value) { get(root).SetMapIndex(k, reflect.Value{}) }})
				if v.MapIndex(k).Kind() == reflect.String || v.MapIndex(k).Kind() == reflect.Slice {
					out = append(out, fieldEdit{path: p, what: "change", apply: func(root reflect.Value) {
						m := get(root)
						val := reflect.New(m.Type().Elem()).Elem()
						val.Set(m.MapIndex(k))
						change(val)
						m.SetMapIndex(k, val)
					}})
				}
			}
			if !open && v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.String {
				out = append(out, fieldEdit{path: path, what: "add an entry to", apply: func(root reflect.Value) {
					get(root).SetMapIndex(reflect.ValueOf("extra"), reflect.ValueOf("x"))
				}})
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				leaf(steps, path)
				return
			}
			get := at(steps)
			out = append(out, fieldEdit{path: path, what: "drop the last element of", apply: func(root reflect.Value) {
				s := get(root)
				s.Set(s.Slice(0, s.Len()-1))
			}})
			for i := range v.Len() {
				i := i
				walk(append(steps, func(r reflect.Value) reflect.Value { return r.Index(i) }), v.Index(i), fmt.Sprintf("%s[%d]", path, i), false)
			}
		default:
			leaf(steps, path)
		}
	}
	walk(nil, v, path, false)
	return out
}

// change sets v, a settable scalar, quantity, int-or-string or byte slice, to another value.
func change(v reflect.Value) {
	switch v.Type() {
	case quantityType:
		q := v.Interface().(resource.Quantity)
		q.Add(resource.MustParse("1"))
		v.Set(reflect.ValueOf(q))
		return
	case intOrStringType:
		x := v.Interface().(intstr.IntOrString)
		if x.Type == intstr.String {
			x.StrVal += "x"
		} else {
			x.IntVal++
		}
		v.Set(reflect.ValueOf(x))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Slice:
		v.SetBytes(append(append([]byte(nil), v.Bytes()...), 'x'))
	default:
		panic(fmt.Sprintf("cannot change a %s", v.Type()))
	}
}

// fillUnset sets every zero field under v to a non-zero value (recursively through set
// structs, pointers and list elements; unset pointers get a filled new value), adds an entry
// to every open map, and returns how many fields it set.
func fillUnset(v reflect.Value, path string) int {
	n := 0
	switch v.Type() {
	case quantityType, intOrStringType:
		return 0
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			n += fillUnset(v.Elem(), path)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if skipField(path, f, false) {
				continue
			}
			fv := v.Field(i)
			p := join(path, f.Name)
			if slices.Contains(ownedWhenEmpty, p) {
				// Owned when empty: TestUnsetFieldsAreNotOwned fills each on its own.
				continue
			}
			if openMaps[f.Name] && fv.Kind() == reflect.Map {
				if fv.IsNil() {
					fv.Set(reflect.MakeMap(fv.Type()))
				}
				val := reflect.New(fv.Type().Elem()).Elem()
				if val.Kind() == reflect.String {
					val.SetString("theirs")
				} else {
					val.SetBytes([]byte("theirs"))
				}
				fv.SetMapIndex(reflect.ValueOf("added-by-others"), val)
				n++
				continue
			}
			if !fv.IsZero() {
				n += fillUnset(fv, p)
				continue
			}
			if fill(fv) {
				n++
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				n += fillUnset(v.Index(i), path)
			}
		}
	}
	return n
}

// fill sets a zero scalar, or a nil pointer to a scalar, to a non-zero value, as the API
// server's defaults do (revisionHistoryLimit, clusterIP, terminationMessagePath...); it
// leaves lists, maps and structs alone (a filled struct or list would be another object,
// not a default).
func fill(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if !fill(p.Elem()) {
			return false
		}
		v.Set(p)
	case reflect.String:
		v.SetString("server-default")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	default:
		return false
	}
	return true
}
