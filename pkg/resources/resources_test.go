package resources

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// minimal is a Monocle with an empty spec: every default applies.
func minimal() *monoclev1alpha1.Monocle {
	return &monoclev1alpha1.Monocle{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "team-a", UID: "0b6f6a36-5d3e-4a3c-9a1e-3c1d2f7a9e01"},
	}
}

// full is a Monocle that sets every field.
func full() *monoclev1alpha1.Monocle {
	m := minimal()
	m.Name = "full"
	size := resource.MustParse("20Gi")
	m.Spec = monoclev1alpha1.MonocleSpec{
		PublicURL:        "https://monocle.example.com",
		Image:            "quay.io/change-metrics/monocle:1.11.1",
		StorageClassName: "fast",
		StorageSize:      &size,
		Route:            &monoclev1alpha1.RouteSpec{Host: "ignored.example.com"},
		Config:           "workspaces:\n  - name: openstack\n    crawlers: []\n",
		SecretRef:        &monoclev1alpha1.SecretReference{Name: "monocle-tokens"},
		API: monoclev1alpha1.APISpec{
			Image:    "quay.io/change-metrics/monocle:1.11.2",
			Replicas: ptr.To[int32](3),
			Title:    "Our Monocle",
		},
		Crawler:       monoclev1alpha1.CrawlerSpec{Image: "quay.io/change-metrics/monocle@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		Elasticsearch: monoclev1alpha1.ElasticsearchSpec{Image: "docker.elastic.co/elasticsearch/elasticsearch:7.17.20", JavaOpts: "-Xms1g -Xmx1g"},
	}
	return m
}

var inputs = Inputs{ConfigHash: "c0ffee", SecretHash: "5ec2e7"}

// bundledAccess is how m's pods reach its bundled Elasticsearch.
func bundledAccess(m *monoclev1alpha1.Monocle) ElasticAccess {
	return ElasticAccess{Target: BundledTarget(m)}
}

// inputsOf is inputs for m, whose pods reach its bundled Elasticsearch.
func inputsOf(m *monoclev1alpha1.Monocle) Inputs {
	in := inputs
	in.Elastic = bundledAccess(m)
	return in
}

func TestGolden(t *testing.T) {
	keys := map[string][]byte{CrawlersAPIKeyKey: []byte(strings.Repeat("k", 64)), JWKGenKeyKey: []byte(strings.Repeat("j", 64))}
	for name, m := range map[string]*monoclev1alpha1.Monocle{"minimal": minimal(), "full": full()} {
		objects := map[string]any{
			"secret":              NewAPISecret(m, keys),
			"keys-backup-secret":  NewKeysBackupSecret(m, keys),
			"configmap":           NewConfigMap(m, Config(m)),
			"api-deployment":      NewAPIDeployment(m, inputsOf(m)),
			"api-service":         NewAPIService(m),
			"crawler-deployment":  NewCrawlerDeployment(m, inputsOf(m)),
			"elastic-service":     NewElasticService(m),
			"elastic-statefulset": NewElasticStatefulSet(m, ElasticDataVolume, false, ""),
			"api-pdb":             NewAPIPodDisruptionBudget(m),
			"update-idents-job":   NewUpdateIdentsJob(m, "0123456789abcdef", bundledAccess(m)),
			"networkpolicy":       NewNetworkPolicy(m, ""),
		}
		for kind, obj := range objects {
			t.Run(name+"/"+kind, func(t *testing.T) {
				got, err := yaml.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", name, kind+".yaml")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./pkg/resources -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from the built object (run go test ./pkg/resources -update and review the diff):\n%s", path, got)
				}
			})
		}
	}
}

func TestBuildersAreDeterministic(t *testing.T) {
	a, _ := yaml.Marshal(NewAPIDeployment(full(), inputs))
	b, _ := yaml.Marshal(NewAPIDeployment(full(), inputs))
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of the same Monocle differ")
	}
}

func TestInputsChangeOnlyTheirWorkloads(t *testing.T) {
	m := minimal()
	other := Inputs{ConfigHash: "other", SecretHash: inputs.SecretHash}
	if NewAPIDeployment(m, inputs).Annotations[SpecHashAnnotation] == NewAPIDeployment(m, other).Annotations[SpecHashAnnotation] {
		t.Error("a config change does not change the API Deployment's spec hash")
	}
	if NewCrawlerDeployment(m, inputs).Annotations[SpecHashAnnotation] == NewCrawlerDeployment(m, other).Annotations[SpecHashAnnotation] {
		t.Error("a config change does not change the crawler Deployment's spec hash")
	}
}

func TestSelectorsArePerInstance(t *testing.T) {
	a, b := minimal(), minimal()
	b.Name = "other"
	for _, c := range []string{ComponentAPI, ComponentCrawler, ComponentElastic} {
		sa, sb := SelectorLabels(a, c), SelectorLabels(b, c)
		if sa[InstanceLabel] == sb[InstanceLabel] {
			t.Errorf("%s: two Monocles share the selector %v", c, sa)
		}
	}
	if NewAPIService(a).Spec.Selector[InstanceLabel] != "demo" {
		t.Errorf("API Service selector %v does not name the instance", NewAPIService(a).Spec.Selector)
	}
}

func TestNewKey(t *testing.T) {
	k1, err := NewKey(strings.NewReader(strings.Repeat("x", 100)))
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != KeyLength || !ValidKey(JWKGenKeyKey, []byte(k1)) {
		t.Errorf("key %q has length %d, want %d", k1, len(k1), KeyLength)
	}
	if _, err := NewKey(strings.NewReader("short")); err == nil {
		t.Error("NewKey succeeded on a short random source")
	}
}

// TestValidKey: a key a user or the earlier operator set is kept whatever its length, but
// for MONOCLE_JWK_GEN_KEY, which Monocle ignores below 64 characters.
func TestValidKey(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		want       bool
	}{
		{CrawlersAPIKeyKey, "KlLBhkCjGl1c2SxZNlJlbaNU", true}, // the earlier operator's 24 characters
		{CrawlersAPIKeyKey, "x", true},
		{CrawlersAPIKeyKey, "", false},
		{JWKGenKeyKey, strings.Repeat("k", 64), true},
		{JWKGenKeyKey, strings.Repeat("k", 63), false},
		{"GITHUB_TOKEN", "ghp_x", false},
	} {
		if got := ValidKey(tc.key, []byte(tc.value)); got != tc.want {
			t.Errorf("ValidKey(%s, %d characters) = %v, want %v", tc.key, len(tc.value), got, tc.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	m := minimal()
	if got := PublicURL(m); got != "http://localhost:8090" {
		t.Errorf("PublicURL = %q", got)
	}
	m.Spec.Route = &monoclev1alpha1.RouteSpec{Host: "monocle.example.org"}
	if got := PublicURL(m); got != "https://monocle.example.org" {
		t.Errorf("PublicURL with route = %q", got)
	}
	if got := StorageSize(m); got.String() != "1Gi" {
		t.Errorf("StorageSize = %s", got.String())
	}
	for image, want := range map[string]string{
		"quay.io/change-metrics/monocle:1.11.2": "1.11.2",
		"localhost:5000/monocle":                "latest",
		"monocle@sha256:abc":                    "sha256:abc",
		"registry:5000/ns/monocle:v2.0-rc1":     "v2.0-rc1",
	} {
		if got := ImageTag(image); got != want {
			t.Errorf("ImageTag(%q) = %q, want %q", image, got, want)
		}
		if errs := validation.IsValidLabelValue(versionLabel(image)); len(errs) > 0 {
			t.Errorf("versionLabel(%q) = %q: %v", image, versionLabel(image), errs)
		}
	}
}

func TestRestartsOnConfigChange(t *testing.T) {
	for image, want := range map[string]bool{
		"quay.io/change-metrics/monocle:1.11.2":  true,
		"quay.io/change-metrics/monocle:1.9.0":   true,
		"quay.io/change-metrics/monocle:v1.11.3": false,
		"quay.io/change-metrics/monocle:1.12.0":  false,
		"quay.io/change-metrics/monocle:2.0.0":   false,
		"quay.io/change-metrics/monocle:latest":  true,
		"quay.io/change-metrics/monocle@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": true,
	} {
		if got := RestartsOnConfigChange(image); got != want {
			t.Errorf("RestartsOnConfigChange(%q) = %v, want %v", image, got, want)
		}
		d := NewAPIDeployment(&monoclev1alpha1.Monocle{Spec: monoclev1alpha1.MonocleSpec{Image: image}}, inputs)
		if _, has := d.Spec.Template.Annotations[ConfigHashAnnotation]; has != want {
			t.Errorf("%s: pod template carries the config hash: %v, want %v", image, has, want)
		}
	}
}

func TestUpdateIdentsJobNameFitsPodLabels(t *testing.T) {
	m := minimal()
	m.Name = strings.Repeat("a", 40) // the longest name the CRD admits
	if errs := validation.IsDNS1123Label(UpdateIdentsJobName(m, "0123456789abcdef")); len(errs) > 0 {
		t.Errorf("job name: %v", errs)
	}
	if errs := validation.IsValidLabelValue(ElasticName(m) + "-0123456789"); len(errs) > 0 {
		t.Errorf("StatefulSet revision label: %v", errs)
	}
}

func TestSplitImage(t *testing.T) {
	for ref, want := range map[string][3]string{
		"quay.io/change-metrics/monocle-operator:v0.1.0":      {"quay.io/change-metrics/monocle-operator", "v0.1.0", ""},
		"quay.io/change-metrics/monocle-operator":             {"quay.io/change-metrics/monocle-operator", "", ""},
		"quay.io/change-metrics/monocle-operator@sha256:0123": {"quay.io/change-metrics/monocle-operator", "", "sha256:0123"},
		"localhost:5000/monocle-operator":                     {"localhost:5000/monocle-operator", "", ""},
		"localhost:5000/monocle-operator:latest@sha256:0123":  {"localhost:5000/monocle-operator", "latest", "sha256:0123"},
		"elasticsearch:7.17.26":                               {"elasticsearch", "7.17.26", ""},
	} {
		repository, tag, digest := SplitImage(ref)
		if got := [3]string{repository, tag, digest}; got != want {
			t.Errorf("SplitImage(%q) = %q, want %q", ref, got, want)
		}
	}
}

// TestRootFilesystemsAreReadOnly: every container the builders make, init containers
// included, has a read-only root filesystem and may write only to the volumes listed here
// (what Monocle 1.11.2 and Elasticsearch 7.17 write: see monoclePodSpec and
// NewElasticStatefulSet).
func TestRootFilesystemsAreReadOnly(t *testing.T) {
	m := minimal()
	templates := map[string]corev1.PodTemplateSpec{
		"api":           NewAPIDeployment(m, inputs).Spec.Template,
		"crawler":       NewCrawlerDeployment(m, inputs).Spec.Template,
		"elastic":       NewElasticStatefulSet(m, ElasticDataVolume, false, "").Spec.Template,
		"update-idents": NewUpdateIdentsJob(m, "c", bundledAccess(m)).Spec.Template,
		"maintenance":   NewMaintenanceJob(m, monoclev1alpha1.MaintenanceRequest{Name: "x", Operation: monoclev1alpha1.WipeCrawlerData}, "c", bundledAccess(m)).Spec.Template,
	}
	writable := map[string][]string{
		"api":           {"/tmp"},
		"crawler":       {"/tmp"},
		"init-config":   {"/mnt/config"},
		"init-keystore": {"/mnt/config", "/tmp"},
		"elastic":       {elasticHome + "/data", elasticHome + "/config", elasticHome + "/logs", "/tmp"},
		"update-idents": {"/tmp"},
		"maintenance":   {"/tmp"},
	}
	seen := 0
	for pod, tpl := range templates {
		for _, c := range append(tpl.Spec.InitContainers, tpl.Spec.Containers...) {
			seen++
			if s := c.SecurityContext; s == nil || s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem {
				t.Errorf("%s pod, container %s: root filesystem is writable", pod, c.Name)
			}
			var got []string
			for _, vm := range c.VolumeMounts {
				if !vm.ReadOnly {
					got = append(got, vm.MountPath)
				}
			}
			if want, ok := writable[c.Name]; !ok || !slices.Equal(got, want) {
				t.Errorf("%s pod, container %s writes to %q, want %q", pod, c.Name, got, want)
			}
		}
	}
	if seen != len(writable) {
		t.Errorf("checked %d containers, want %d", seen, len(writable))
	}
}
