package resources

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

const testPassword = "s3cret-Pa55"

var testCA = []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")

// external is minimal() with spec.elasticsearch.external at url.
func external(url string) *monoclev1alpha1.Monocle {
	m := minimal()
	m.Spec.Elasticsearch.External = &monoclev1alpha1.ExternalElasticsearch{URL: url}
	return m
}

func externalTarget(url, user string, ca []byte) ElasticsearchTarget {
	t := ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchExternal, URL: url, Username: user, CA: ca}
	if user != "" {
		t.Password = testPassword
	}
	return t
}

func TestProxyConfig(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("monocle:"+testPassword))
	l := PodProxyLayout
	for _, tc := range []struct {
		name     string
		target   ElasticsearchTarget
		want     []string
		wantNone []string
	}{
		{
			name:   "https with credentials and a CA",
			target: externalTarget("https://es.example.com:9243", "monocle", testCA),
			want: []string{
				"listen 127.0.0.1:9200;", "listen 9201;", "server es.example.com:9243;", "proxy_pass https://elasticsearch;",
				`proxy_set_header Host "es.example.com:9243";`, `proxy_set_header Authorization "` + basic + `";`,
				"proxy_ssl_verify on;", "proxy_ssl_trusted_certificate /etc/monocle-proxy/ca.crt;",
				"proxy_ssl_server_name on;", "proxy_ssl_name es.example.com;", "proxy_ssl_verify_depth 4;",
				"pid /tmp/nginx.pid;", "proxy_temp_path /tmp/proxy_temp;", "client_body_temp_path /tmp/client_body_temp;",
				"error_log stderr notice;", "access_log /dev/stderr combined;", "client_max_body_size 100m;",
				"daemon off;",
			},
			wantNone: []string{testPassword, "user "},
		},
		{
			name:     "https without a CA trusts the image's roots",
			target:   externalTarget("https://es.example.com", "", nil),
			want:     []string{"server es.example.com:443;", `proxy_set_header Host "es.example.com";`, "proxy_ssl_trusted_certificate /etc/ssl/certs/ca-certificates.crt;"},
			wantNone: []string{"Authorization", "ca.crt"},
		},
		{
			name:     "http with credentials",
			target:   externalTarget("http://10.0.0.7:9200", "monocle", nil),
			want:     []string{"server 10.0.0.7:9200;", "proxy_pass http://elasticsearch;", `proxy_set_header Authorization "` + basic + `";`},
			wantNone: []string{"proxy_ssl", testPassword},
		},
		{
			name:   "an IPv6 address",
			target: externalTarget("https://[fd00::7]:9200", "", testCA),
			want:   []string{"server [fd00::7]:9200;", `proxy_set_header Host "[fd00::7]:9200";`, "proxy_ssl_name fd00::7;"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf, err := ProxyConfig(tc.target, l)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(conf, w) {
					t.Errorf("nginx.conf lacks %q:\n%s", w, conf)
				}
			}
			for _, w := range tc.wantNone {
				if strings.Contains(conf, w) {
					t.Errorf("nginx.conf holds %q:\n%s", w, conf)
				}
			}
			if strings.Count(conf, "{") != strings.Count(conf, "}") {
				t.Errorf("unbalanced braces:\n%s", conf)
			}
		})
	}
	for _, url := range []string{"", "ftp://es:21", "https://user:pw@es:9200", "https://es:9200/prefix", "https://es;evil:9200", `https://"es":9200`} {
		if conf, err := ProxyConfig(externalTarget(url, "monocle", nil), l); err == nil {
			t.Errorf("ProxyConfig(%q) = nil error:\n%s", url, conf)
		}
	}
}

func TestProxySecret(t *testing.T) {
	m := external("https://es.example.com")
	s, err := NewProxySecret(m, externalTarget("https://es.example.com", "monocle", testCA))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "demo-elastic-proxy" || s.Namespace != m.Namespace || !metav1.IsControlledBy(s, m) || s.Labels[ManagedByLabel] != ManagedByValue {
		t.Errorf("Secret %s/%s, labels %v, owners %v", s.Namespace, s.Name, s.Labels, s.OwnerReferences)
	}
	if keys := slices.Sorted(maps.Keys(s.Data)); !slices.Equal(keys, []string{ProxyCAKey, ProxyConfigKey}) || string(s.Data[ProxyCAKey]) != string(testCA) {
		t.Errorf("keys %v, ca.crt %q", keys, s.Data[ProxyCAKey])
	}
	s, err = NewProxySecret(m, externalTarget("https://es.example.com", "monocle", nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Data[ProxyCAKey]; ok || len(s.Data) != 1 {
		t.Errorf("a target without a CA gives the keys %v", s.Data)
	}
	if _, err := NewProxySecret(m, externalTarget("https://es.example.com/x", "", nil)); err == nil {
		t.Error("a URL with a path builds a Secret")
	}
}

func TestProxyHashIsSaltedAndFollowsTheData(t *testing.T) {
	a := map[string][]byte{ProxyConfigKey: []byte("one")}
	keys := map[string][]byte{JWKGenKeyKey: []byte("random")}
	if ProxyHash(a, keys) == DataHash(a) {
		t.Error("the proxy hash is the unsalted hash of the data")
	}
	if ProxyHash(a, keys) == ProxyHash(map[string][]byte{ProxyConfigKey: []byte("two")}, keys) {
		t.Error("the proxy hash does not follow the data")
	}
	if ProxyHash(a, keys) == ProxyHash(a, map[string][]byte{JWKGenKeyKey: []byte("other")}) {
		t.Error("the proxy hash does not follow the salt")
	}
}

// proxyPods are the pod templates of m's Monocle pods with access e.
func proxyPods(m *monoclev1alpha1.Monocle, e ElasticAccess) map[string]corev1.PodTemplateSpec {
	in := inputs
	in.Elastic = e
	r := monoclev1alpha1.MaintenanceRequest{Name: "x", Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "w", Crawler: "c"}
	return map[string]corev1.PodTemplateSpec{
		"api":           NewAPIDeployment(m, in).Spec.Template,
		"crawler":       NewCrawlerDeployment(m, in).Spec.Template,
		"update-idents": NewUpdateIdentsJob(m, "c", e).Spec.Template,
		"maintenance":   NewMaintenanceJob(m, r, "c", e).Spec.Template,
	}
}

// elasticURLOf returns the MONOCLE_ELASTIC_URL or --elastic of a pod's Monocle container.
func elasticURLOf(c corev1.Container) string {
	for _, e := range c.Env {
		if e.Name == "MONOCLE_ELASTIC_URL" {
			return e.Value
		}
	}
	if i := slices.Index(c.Command, "--elastic"); i >= 0 {
		return c.Command[i+1]
	}
	return ""
}

func TestProxySidecar(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *monoclev1alpha1.Monocle
		e    ElasticAccess
		// url is the Monocle containers' Elasticsearch URL; proxied the pods that run the
		// sidecar.
		url     string
		proxied []string
	}{
		{"bundled", minimal(), bundledAccess(minimal()), "http://demo-elastic:9200", nil},
		{"external http without credentials", external("http://es.example.com:9200"),
			ElasticAccess{Target: externalTarget("http://es.example.com:9200", "", nil)}, "http://es.example.com:9200", nil},
		{"external https with credentials", external("https://es.example.com"),
			ElasticAccess{Target: externalTarget("https://es.example.com", "monocle", testCA), ProxyHash: "abc"}, "http://127.0.0.1:9200",
			[]string{"api", "maintenance", "update-idents"}},
		{"external http with credentials", external("http://es.example.com:9200"),
			ElasticAccess{Target: externalTarget("http://es.example.com:9200", "monocle", nil), ProxyHash: "abc"}, "http://127.0.0.1:9200",
			[]string{"api", "maintenance", "update-idents"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var proxied []string
			for pod, tpl := range proxyPods(tc.m, tc.e) {
				if errs := validatePodSpec(&tpl.Spec, nil); len(errs) > 0 {
					t.Errorf("%s: %v", pod, errs)
				}
				if pod != "crawler" {
					if got := elasticURLOf(tpl.Spec.Containers[0]); got != tc.url {
						t.Errorf("%s reaches Elasticsearch at %q, want %q", pod, got, tc.url)
					}
				}
				if len(tpl.Spec.InitContainers) == 0 {
					if _, ok := tpl.Annotations[ProxyHashAnnotation]; ok {
						t.Errorf("%s has a proxy hash and no proxy", pod)
					}
					continue
				}
				proxied = append(proxied, pod)
				checkSidecar(t, pod, tc.m, tpl)
				if want := map[bool]string{true: "abc"}[pod == "api"]; tpl.Annotations[ProxyHashAnnotation] != want {
					t.Errorf("%s: proxy hash annotation %q, want %q", pod, tpl.Annotations[ProxyHashAnnotation], want)
				}
			}
			if slices.Sort(proxied); !slices.Equal(proxied, tc.proxied) {
				t.Errorf("the sidecar runs in %v, want %v", proxied, tc.proxied)
			}
		})
	}
}

// checkSidecar checks the proxy sidecar of pod template tpl.
func checkSidecar(t *testing.T, pod string, m *monoclev1alpha1.Monocle, tpl corev1.PodTemplateSpec) {
	t.Helper()
	c := tpl.Spec.InitContainers[0]
	s := c.SecurityContext
	switch {
	case len(tpl.Spec.InitContainers) != 1 || c.Name != ComponentProxy || c.Image != DefaultProxyImage:
		t.Errorf("%s: init containers %v", pod, tpl.Spec.InitContainers)
	case ptr.Deref(c.RestartPolicy, "") != corev1.ContainerRestartPolicyAlways:
		t.Errorf("%s: the proxy is no native sidecar (restartPolicy %v)", pod, c.RestartPolicy)
	case !slices.Equal(c.Command, []string{"nginx", "-c", "/etc/monocle-proxy/nginx.conf"}):
		t.Errorf("%s: command %v", pod, c.Command)
	case c.StartupProbe == nil || c.ReadinessProbe == nil || c.StartupProbe.HTTPGet.Port.StrVal != "proxy-health" || c.Ports[0].ContainerPort != ProxyHealthPort:
		t.Errorf("%s: probes %v %v, ports %v", pod, c.StartupProbe, c.ReadinessProbe, c.Ports)
	case s == nil || !ptr.Deref(s.ReadOnlyRootFilesystem, false) || ptr.Deref(s.AllowPrivilegeEscalation, true) ||
		!slices.Equal(s.Capabilities.Drop, []corev1.Capability{"ALL"}) || ptr.Deref(s.RunAsUser, 0) != proxyUID:
		t.Errorf("%s: security context %+v", pod, s)
	case !ptr.Deref(tpl.Spec.SecurityContext.RunAsNonRoot, false) || tpl.Spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("%s: pod security context %+v", pod, tpl.Spec.SecurityContext)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.MountPath] = vm
	}
	if conf, tmp := mounts["/etc/monocle-proxy"], mounts["/tmp"]; !conf.ReadOnly || tmp.ReadOnly || len(mounts) != 2 {
		t.Errorf("%s: proxy mounts %v", pod, c.VolumeMounts)
	}
	for _, v := range tpl.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == ProxySecretName(m) {
			return
		}
	}
	t.Errorf("%s: no volume of Secret %s", pod, ProxySecretName(m))
}

// TestNoPasswordInAnyContainer: whatever the target, no env value, command or argument of any
// container holds the password or the Authorization value.
func TestNoPasswordInAnyContainer(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("monocle:" + testPassword))
	for _, url := range []string{"https://es.example.com", "http://es.example.com:9200"} {
		e := ElasticAccess{Target: externalTarget(url, "monocle", testCA), ProxyHash: "h"}
		checked := 0
		for pod, tpl := range proxyPods(external(url), e) {
			for _, c := range append(tpl.Spec.InitContainers, tpl.Spec.Containers...) {
				checked++
				words := append(append([]string(nil), c.Command...), c.Args...)
				for _, env := range c.Env {
					words = append(words, env.Value)
				}
				for _, w := range words {
					if strings.Contains(w, testPassword) || strings.Contains(w, basic) || strings.Contains(w, "@") {
						t.Errorf("%s, container %s: %q carries the credentials", pod, c.Name, w)
					}
				}
			}
		}
		if checked != 7 {
			t.Errorf("%s: checked %d containers, want 7 (4 Monocle, 3 proxies)", url, checked)
		}
	}
}

func TestNetworkPolicyWithoutBundledElasticsearch(t *testing.T) {
	p := NewNetworkPolicy(external("https://es.example.com"), "ops")
	if got := p.Spec.PodSelector.MatchExpressions[0].Values; !slices.Equal(got, []string{ComponentAPI}) {
		t.Errorf("the policy selects components %v, want the API alone", got)
	}
	if len(p.Spec.Ingress) != 1 || p.Spec.Ingress[0].Ports[0].Port.IntValue() != APIPort || len(p.Spec.Ingress[0].From) != 0 {
		t.Errorf("ingress %+v, want port %d from anywhere alone", p.Spec.Ingress, APIPort)
	}
}

func TestProxyImage(t *testing.T) {
	m := external("https://es.example.com")
	if got := ProxyImage(m); got != DefaultProxyImage {
		t.Errorf("default %s", got)
	}
	m.Spec.Elasticsearch.Proxy = &monoclev1alpha1.ElasticsearchProxy{Image: "registry.example.com/nginx:1.27"}
	if got := ProxyImage(m); got != "registry.example.com/nginx:1.27" {
		t.Errorf("override %s", got)
	}
}
