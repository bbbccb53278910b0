package resources

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// FuzzBuilders feeds the builders random specs. Whatever the spec, no builder may panic and
// building twice gives the same objects. For a spec the CRD admits (the fuzzed values are
// first mapped onto what the CRD schema accepts, see admitted), every object must also carry
// valid names, labels, selectors and annotations, so the API server never refuses what the
// operator builds. Seeds are in testdata/fuzz/FuzzBuilders.
func FuzzBuilders(f *testing.F) {
	f.Add("demo", "ns", "", "", "", "", "", "", "", int32(1), "", "", "", "", "", "")
	f.Add("full", "team-a", "quay.io/change-metrics/monocle:1.11.1", "registry:5000/monocle@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"monocle:latest", "elasticsearch:7.17.26", "20Gi", "fast", "https://monocle.example.com", int32(3),
		"Title", "-Xms1g -Xmx1g", "ignored.example.com", "tokens", "workspaces: []", "GITHUB_TOKEN=x")
	f.Add("Bad_Name-"+strings.Repeat("x", 60), "NS", " ", "image:-_-.", "::::", "@", "1e3", "UPPER", "ftp://x", int32(-5),
		strings.Repeat("t", 300), "\n", "Host", "../x", "\x00", "")
	f.Add("a", "b", "img:"+strings.Repeat("v", 200), "img:.v1.", "img:_", "img", "1Pi", "a.b", "http://h:1/p?q#f", int32(21),
		"", "", "a.b.c", "s", "", "")
	f.Fuzz(func(t *testing.T, name, namespace, image, apiImage, crawlerImage, esImage, storageSize, storageClass, publicURL string,
		replicas int32, title, javaOpts, host, secretName, config, secretData string) {
		raw := &monoclev1alpha1.Monocle{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: "0b6f6a36-5d3e-4a3c-9a1e-3c1d2f7a9e01"},
			Spec: monoclev1alpha1.MonocleSpec{
				PublicURL:        publicURL,
				Image:            image,
				StorageClassName: storageClass,
				Route:            &monoclev1alpha1.RouteSpec{Host: host},
				Config:           config,
				SecretRef:        &monoclev1alpha1.SecretReference{Name: secretName},
				API:              monoclev1alpha1.APISpec{Image: apiImage, Replicas: ptr.To(replicas), Title: title},
				Crawler:          monoclev1alpha1.CrawlerSpec{Image: crawlerImage},
				Elasticsearch:    monoclev1alpha1.ElasticsearchSpec{Image: esImage, JavaOpts: javaOpts},
			},
		}
		if q, err := resource.ParseQuantity(storageSize); err == nil {
			raw.Spec.StorageSize = &q
		}
		keys := map[string][]byte{CrawlersAPIKeyKey: []byte(secretData), JWKGenKeyKey: []byte(secretData)}
		first := buildAll(raw, keys)
		if second := buildAll(raw.DeepCopy(), keys); !equality.Semantic.DeepEqual(first, second) {
			t.Fatalf("building twice gives different objects")
		}

		m := admitted(raw)
		for _, obj := range buildAll(m, keys) {
			if errs := validateBuilt(m, obj); len(errs) > 0 {
				t.Fatalf("%T %s of an admitted Monocle %+v is invalid: %v", obj, obj.(metav1.Object).GetName(), m.Spec, errs.ToAggregate())
			}
		}
	})
}

// buildAll runs every builder.
func buildAll(m *monoclev1alpha1.Monocle, keys map[string][]byte) []any {
	in := Inputs{ConfigHash: ConfigHash(Config(m)), SecretHash: SecretHash(keys, DataHash(keys))}
	return []any{
		NewAPIDeployment(m, in),
		NewAPIService(m),
		NewCrawlerDeployment(m, in),
		NewElasticService(m),
		NewElasticStatefulSet(m, ElasticDataVolume, false, ""),
		NewAPISecret(m, keys),
		NewConfigMap(m, Config(m)),
		NewUpdateIdentsJob(m, in.ConfigHash, bundledAccess(m)),
		NewAPIPodDisruptionBudget(m),
		NewNetworkPolicy(m, ""),
	}
}

// publicURLRule is the CRD's rule for spec.publicURL (with isURL, approximated by url.Parse).
var publicURLRule = regexp.MustCompile(`^https?://[^\s/?#@]+([/?#][^\s]*)?$`)

// admitted returns a copy of m changed into a Monocle the CRD schema admits: each field the
// schema would refuse is mapped to a close valid value, or dropped.
func admitted(in *monoclev1alpha1.Monocle) *monoclev1alpha1.Monocle {
	m := in.DeepCopy()
	m.Name = dns1035(m.Name, 40)
	m.Namespace = dns1035(m.Namespace, 63)
	for _, img := range []*string{&m.Spec.Image, &m.Spec.API.Image, &m.Spec.Crawler.Image, &m.Spec.Elasticsearch.Image} {
		*img = cut(strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, *img), 512)
	}
	if _, err := url.Parse(m.Spec.PublicURL); err != nil || len(m.Spec.PublicURL) > 2048 || !publicURLRule.MatchString(m.Spec.PublicURL) {
		m.Spec.PublicURL = ""
	}
	if len(validation.IsDNS1123Subdomain(m.Spec.StorageClassName)) > 0 {
		m.Spec.StorageClassName = ""
	}
	if m.Spec.StorageSize != nil && m.Spec.StorageSize.Cmp(resource.MustParse("1Gi")) < 0 {
		m.Spec.StorageSize = nil
	}
	if len(validation.IsDNS1123Subdomain(m.Spec.Route.Host)) > 0 {
		m.Spec.Route.Host = ""
	}
	if len(validation.IsDNS1123Subdomain(m.Spec.SecretRef.Name)) > 0 {
		m.Spec.SecretRef = nil
	}
	r := *m.Spec.API.Replicas % 21
	if r < 0 {
		r = -r
	}
	m.Spec.API.Replicas = &r
	m.Spec.API.Title = cut(m.Spec.API.Title, 256)
	m.Spec.Elasticsearch.JavaOpts = cut(m.Spec.Elasticsearch.JavaOpts, 1024)
	return m
}

// dns1035 maps s onto a DNS-1035 label of at most max characters.
func dns1035(s string, max int) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	out := strings.Trim(string(b), "-0123456789")
	out = strings.TrimRight(cut(out, max), "-")
	if out == "" {
		return "m"
	}
	return out
}

func cut(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// validateBuilt checks what the API server checks of obj's metadata and pod template, plus
// the name limits of the objects Kubernetes derives from it.
func validateBuilt(m *monoclev1alpha1.Monocle, obj any) field.ErrorList {
	meta := obj.(metav1.Object)
	var errs field.ErrorList
	path := field.NewPath("metadata")
	nameIs := func(problems []string) {
		for _, p := range problems {
			errs = append(errs, field.Invalid(path.Child("name"), meta.GetName(), p))
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(meta.GetLabels(), path.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(meta.GetAnnotations(), path.Child("annotations"))...)
	if meta.GetNamespace() != m.Namespace || !metav1.IsControlledBy(meta, m) {
		errs = append(errs, field.Invalid(path, meta.GetNamespace(), "not in the Monocle's namespace or not controlled by it"))
	}

	var template *corev1.PodTemplateSpec
	var selector *metav1.LabelSelector
	var claims []string
	switch o := obj.(type) {
	case *corev1.Service:
		nameIs(validation.IsDNS1035Label(o.Name))
		errs = append(errs, metav1validation.ValidateLabels(o.Spec.Selector, field.NewPath("spec", "selector"))...)
	case *appsv1.Deployment:
		nameIs(validation.IsDNS1123Subdomain(o.Name))
		template, selector = &o.Spec.Template, o.Spec.Selector
	case *appsv1.StatefulSet:
		// The StatefulSet controller labels each pod with its name, "<name>-<ordinal>".
		nameIs(validation.IsDNS1123Label(o.Name + "-0"))
		template, selector = &o.Spec.Template, o.Spec.Selector
		for _, pvc := range o.Spec.VolumeClaimTemplates {
			claims = append(claims, pvc.Name)
			nameIs(validation.IsDNS1123Subdomain(pvc.Name + "-" + o.Name + "-0"))
			if got, want := pvc.Spec.Resources.Requests[corev1.ResourceStorage], StorageSize(m); got.Cmp(want) != 0 {
				errs = append(errs, field.Invalid(field.NewPath("spec", "volumeClaimTemplates"), got.String(), "want "+want.String()))
			}
		}
	case *batchv1.Job:
		// The Job controller labels the Job's pods with its name.
		nameIs(validation.IsDNS1123Label(o.Name))
		template = &o.Spec.Template
	case *networkingv1.NetworkPolicy:
		nameIs(validation.IsDNS1123Subdomain(o.Name))
		spath := field.NewPath("spec")
		opts := metav1validation.LabelSelectorValidationOptions{}
		errs = append(errs, metav1validation.ValidateLabelSelector(&o.Spec.PodSelector, opts, spath.Child("podSelector"))...)
		for _, rule := range o.Spec.Ingress {
			for _, peer := range rule.From {
				errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, opts, spath.Child("ingress", "from", "podSelector"))...)
			}
		}
	default:
		nameIs(validation.IsDNS1123Subdomain(meta.GetName()))
	}
	if template != nil {
		tpath := field.NewPath("spec", "template", "metadata")
		errs = append(errs, metav1validation.ValidateLabels(template.Labels, tpath.Child("labels"))...)
		errs = append(errs, apivalidation.ValidateAnnotations(template.Annotations, tpath.Child("annotations"))...)
		errs = append(errs, validatePodSpec(&template.Spec, claims)...)
		if selector != nil {
			sel, err := metav1.LabelSelectorAsSelector(selector)
			if err != nil || !sel.Matches(labels.Set(template.Labels)) || sel.Empty() {
				errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), selector, fmt.Sprintf("does not select the template's labels: %v", err)))
			}
		}
	}
	return errs
}

// validatePodSpec checks what the API server checks of a pod spec's volume names, and of
// each container (init containers included): name, image, env names, port names, and that
// every volume mount names a volume of the pod, or one of claims (a StatefulSet's volume claim
// templates), at a path of its own.
func validatePodSpec(spec *corev1.PodSpec, claims []string) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "template", "spec")
	volumes := map[string]bool{}
	for _, c := range claims {
		volumes[c] = true
	}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
		for _, p := range validation.IsDNS1123Label(v.Name) {
			errs = append(errs, field.Invalid(path.Child("volumes"), v.Name, p))
		}
	}
	type container struct {
		path *field.Path
		corev1.Container
	}
	var containers []container
	for i, c := range spec.InitContainers {
		containers = append(containers, container{path.Child("initContainers").Index(i), c})
	}
	for i, c := range spec.Containers {
		containers = append(containers, container{path.Child("containers").Index(i), c})
	}
	for _, c := range containers {
		cpath := c.path
		mountPaths := map[string]bool{}
		for _, vm := range c.VolumeMounts {
			if !volumes[vm.Name] {
				errs = append(errs, field.NotFound(cpath.Child("volumeMounts", "name"), vm.Name))
			}
			if mountPaths[vm.MountPath] {
				errs = append(errs, field.Invalid(cpath.Child("volumeMounts", "mountPath"), vm.MountPath, "must be unique"))
			}
			mountPaths[vm.MountPath] = true
		}
		for _, p := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(cpath.Child("name"), c.Name, p))
		}
		if c.Image == "" || strings.TrimSpace(c.Image) != c.Image {
			errs = append(errs, field.Invalid(cpath.Child("image"), c.Image, "empty or with surrounding whitespace"))
		}
		for _, e := range c.Env {
			for _, p := range validation.IsEnvVarName(e.Name) {
				errs = append(errs, field.Invalid(cpath.Child("env"), e.Name, p))
			}
		}
		for _, port := range c.Ports {
			for _, p := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(cpath.Child("ports"), port.Name, p))
			}
		}
	}
	return errs
}

// TestValidateBuiltRefusesInvalidObjects keeps FuzzBuilders' checks honest: a Monocle the CRD
// refuses gives objects they refuse.
func TestValidateBuiltRefusesInvalidObjects(t *testing.T) {
	for _, name := range []string{"Bad_Name", strings.Repeat("x", 60), "1abc"} {
		m := minimal()
		m.Name = name
		failed := false
		for _, obj := range buildAll(m, nil) {
			failed = failed || len(validateBuilt(m, obj)) > 0
		}
		if !failed {
			t.Errorf("objects of a Monocle named %q pass validation", name)
		}
	}
}
