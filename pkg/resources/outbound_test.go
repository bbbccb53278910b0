package resources

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// outboundNames are the variables the outbound settings set.
var outboundNames = []string{"https_proxy", "http_proxy", "no_proxy", "API_PROXY", "SSL_CERT_FILE", "TLS_NO_VERIFY", "TLS_CIPHERS"}

// withOutbound is minimal() with a proxy, a trusted CA and crawler TLS settings.
func withOutbound() *monoclev1alpha1.Monocle {
	m := minimal()
	m.Spec.Proxy = &monoclev1alpha1.OutboundProxy{
		HTTPSProxy: "http://proxy.corp:3128", HTTPProxy: "http://proxy.corp:8080",
		NoProxy: ".corp.example.com,,ghe.example.com,localhost",
	}
	m.Spec.TrustedCA = &monoclev1alpha1.ConfigMapKeyReference{Name: "corp-bundle", Key: "bundle.pem"}
	m.Spec.Crawler.TLS = &monoclev1alpha1.CrawlerTLS{InsecureSkipVerify: true, Ciphers: "HIGH:!aNULL"}
	return m
}

// minimalWith is minimal() changed by set.
func minimalWith(set func(*monoclev1alpha1.Monocle)) *monoclev1alpha1.Monocle {
	m := minimal()
	set(m)
	return m
}

// envOf returns the variables of names the container sets by value, in order, as name=value.
func envOf(c corev1.Container, names []string) []string {
	var out []string
	for _, e := range c.Env {
		if slices.Contains(names, e.Name) {
			out = append(out, e.Name+"="+e.Value)
		}
	}
	return out
}

const (
	demoAPINoProxy     = "demo-api,demo-api.team-a,demo-api.team-a.svc,demo-api.team-a.svc.cluster.local"
	demoElasticNoProxy = "demo-elastic,demo-elastic.team-a,demo-elastic.team-a.svc,demo-elastic.team-a.svc.cluster.local"
)

func TestOutboundEnv(t *testing.T) {
	external := func(url, user string) ElasticAccess {
		return ElasticAccess{Target: ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchExternal, URL: url, Username: user}}
	}
	httpsOnly := minimalWith(func(m *monoclev1alpha1.Monocle) {
		m.Spec.Proxy = &monoclev1alpha1.OutboundProxy{HTTPSProxy: "http://proxy:3128"}
	})
	for name, tc := range map[string]struct {
		m                *monoclev1alpha1.Monocle
		elastic          ElasticAccess
		api, crawler     []string
		apiCA, crawlerCA bool
	}{
		"nothing set": {m: minimal()},
		"everything, bundled Elasticsearch": {
			m: withOutbound(),
			api: []string{"https_proxy=http://proxy.corp:3128", "http_proxy=http://proxy.corp:8080",
				"no_proxy=.corp.example.com,ghe.example.com,localhost," + demoAPINoProxy + "," + demoElasticNoProxy + ",127.0.0.1",
				"SSL_CERT_FILE=/etc/pki/tls/certs/ca-bundle.crt"},
			crawler: []string{"https_proxy=http://proxy.corp:3128", "http_proxy=http://proxy.corp:8080",
				"no_proxy=.corp.example.com,ghe.example.com,localhost," + demoAPINoProxy + ",127.0.0.1",
				"API_PROXY=", "SSL_CERT_FILE=/etc/pki/tls/certs/ca-bundle.crt", "TLS_NO_VERIFY=1", "TLS_CIPHERS=HIGH:!aNULL"},
			apiCA: true, crawlerCA: true,
		},
		"proxy with noProxy alone": {
			m:       minimalWith(func(m *monoclev1alpha1.Monocle) { m.Spec.Proxy = &monoclev1alpha1.OutboundProxy{NoProxy: "internal"} }),
			api:     []string{"no_proxy=internal," + demoAPINoProxy + "," + demoElasticNoProxy + ",localhost,127.0.0.1"},
			crawler: []string{"no_proxy=internal," + demoAPINoProxy + ",localhost,127.0.0.1", "API_PROXY="},
		},
		"https proxy, external Elasticsearch reached directly": {
			m:       httpsOnly,
			elastic: external("http://es.data.svc:9200", ""),
			api:     []string{"https_proxy=http://proxy:3128", "no_proxy=" + demoAPINoProxy + ",es.data.svc,localhost,127.0.0.1"},
			crawler: []string{"https_proxy=http://proxy:3128", "no_proxy=" + demoAPINoProxy + ",localhost,127.0.0.1", "API_PROXY="},
		},
		"external Elasticsearch behind the proxy sidecar": {
			m:       httpsOnly,
			elastic: external("https://es.example.com:9243", "monocle"),
			api:     []string{"https_proxy=http://proxy:3128", "no_proxy=" + demoAPINoProxy + ",localhost,127.0.0.1"},
			crawler: []string{"https_proxy=http://proxy:3128", "no_proxy=" + demoAPINoProxy + ",localhost,127.0.0.1", "API_PROXY="},
		},
		"trusted CA alone": {
			m: minimalWith(func(m *monoclev1alpha1.Monocle) {
				m.Spec.TrustedCA = &monoclev1alpha1.ConfigMapKeyReference{Name: "bundle", Key: "ca.crt"}
			}),
			api:     []string{"SSL_CERT_FILE=/etc/pki/tls/certs/ca-bundle.crt"},
			crawler: []string{"SSL_CERT_FILE=/etc/pki/tls/certs/ca-bundle.crt"},
			apiCA:   true, crawlerCA: true,
		},
		"crawler TLS ciphers alone": {
			m: minimalWith(func(m *monoclev1alpha1.Monocle) {
				m.Spec.Crawler.TLS = &monoclev1alpha1.CrawlerTLS{Ciphers: "DEFAULT:@SECLEVEL=1"}
			}),
			crawler: []string{"TLS_CIPHERS=DEFAULT:@SECLEVEL=1"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := tc.elastic
			if e.Target.Kind == "" {
				// A case that names no cluster has the bundled one.
				e = bundledAccess(tc.m)
			}
			in := Inputs{ConfigHash: "c", SecretHash: "s", Elastic: e, TrustedCAHash: "ca-hash"}
			for _, w := range []struct {
				component string
				tmpl      corev1.PodTemplateSpec
				env       []string
				ca        bool
			}{
				{ComponentAPI, NewAPIDeployment(tc.m, in).Spec.Template, tc.api, tc.apiCA},
				{ComponentCrawler, NewCrawlerDeployment(tc.m, in).Spec.Template, tc.crawler, tc.crawlerCA},
			} {
				c := w.tmpl.Spec.Containers[0]
				if got := envOf(c, outboundNames); !slices.Equal(got, w.env) {
					t.Errorf("%s env:\n got %q\nwant %q", w.component, got, w.env)
				}
				checkTrustedCA(t, w.component, tc.m, w.tmpl, w.ca)
			}
		})
	}
}

// checkTrustedCA checks that tmpl mounts m's trusted CA bundle read-only in its Monocle
// container and carries its hash, when want, and has none of it otherwise.
func checkTrustedCA(t *testing.T, component string, m *monoclev1alpha1.Monocle, tmpl corev1.PodTemplateSpec, want bool) {
	t.Helper()
	vi := slices.IndexFunc(tmpl.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == trustedCAVolume })
	c := tmpl.Spec.Containers[0]
	mi := slices.IndexFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool { return v.Name == trustedCAVolume })
	hash, annotated := tmpl.Annotations[TrustedCAHashAnnotation]
	if !want {
		if vi >= 0 || mi >= 0 || annotated {
			t.Errorf("%s: trusted CA volume %v, mount %v, annotation %v; want none", component, vi >= 0, mi >= 0, annotated)
		}
		return
	}
	if vi < 0 || mi < 0 {
		t.Fatalf("%s: trusted CA volume %v, mount %v; want both", component, vi >= 0, mi >= 0)
	}
	cm := tmpl.Spec.Volumes[vi].ConfigMap
	wantItems := []corev1.KeyToPath{{Key: m.Spec.TrustedCA.Key, Path: "ca-bundle.crt"}}
	if cm == nil || cm.Name != m.Spec.TrustedCA.Name || !equality.Semantic.DeepEqual(cm.Items, wantItems) || cm.Optional != nil {
		t.Errorf("%s: trusted CA volume %+v, want ConfigMap %s with items %+v", component, tmpl.Spec.Volumes[vi], m.Spec.TrustedCA.Name, wantItems)
	}
	if mount := c.VolumeMounts[mi]; mount.MountPath != "/etc/pki/tls/certs" || !mount.ReadOnly || mount.SubPath != "" {
		t.Errorf("%s: trusted CA mount %+v, want read-only at /etc/pki/tls/certs", component, mount)
	}
	if hash != "ca-hash" {
		t.Errorf("%s: %s = %q, want the input's hash", component, TrustedCAHashAnnotation, hash)
	}
}

// TestOutboundReachesOnlyCrawlerAndAPI checks that Elasticsearch, the Jobs and the
// Elasticsearch proxy sidecar get none of the outbound settings.
func TestOutboundReachesOnlyCrawlerAndAPI(t *testing.T) {
	m := withOutbound()
	sidecar := ElasticAccess{Target: ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchExternal, URL: "https://es.example.com", Username: "u"}}
	templates := map[string]corev1.PodTemplateSpec{
		"elasticsearch": NewElasticStatefulSet(m, "", false, "").Spec.Template,
		"update-idents": NewUpdateIdentsJob(m, "c", sidecar).Spec.Template,
		"maintenance": NewMaintenanceJob(m, monoclev1alpha1.MaintenanceRequest{Name: "r", Operation: monoclev1alpha1.WipeCrawlerData},
			"c", sidecar).Spec.Template,
	}
	// Only the API runs the sidecar (the crawler does not reach Elasticsearch).
	api := NewAPIDeployment(m, Inputs{Elastic: sidecar, TrustedCAHash: "h"}).Spec.Template
	if len(api.Spec.InitContainers) != 1 {
		t.Fatalf("want the proxy sidecar in the API's pod template, got %d init containers", len(api.Spec.InitContainers))
	}
	templates["sidecar"] = corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: api.Spec.InitContainers}}
	for name, tmpl := range templates {
		for _, c := range append(tmpl.Spec.Containers, tmpl.Spec.InitContainers...) {
			for _, e := range c.Env {
				if slices.Contains(outboundNames, e.Name) {
					t.Errorf("%s, container %s: got %s", name, c.Name, e.Name)
				}
			}
			for _, v := range c.VolumeMounts {
				if v.Name == trustedCAVolume || strings.HasPrefix(v.MountPath, "/etc/pki") {
					t.Errorf("%s, container %s: mounts %+v", name, c.Name, v)
				}
			}
		}
		if _, ok := tmpl.Annotations[TrustedCAHashAnnotation]; ok {
			t.Errorf("%s: carries %s", name, TrustedCAHashAnnotation)
		}
	}
}

// TestOutboundRollsOnlyItsReaders checks which pod templates a change of each setting
// changes: the proxy and the CA bundle the crawler's and the API's, the crawler's TLS
// settings the crawler's alone, and never the StatefulSet's or a Job's.
func TestOutboundRollsOnlyItsReaders(t *testing.T) {
	type templates map[string]corev1.PodTemplateSpec
	build := func(m *monoclev1alpha1.Monocle, caHash string) templates {
		in := Inputs{ConfigHash: "c", SecretHash: "s", TrustedCAHash: caHash}
		return templates{
			"api":           NewAPIDeployment(m, in).Spec.Template,
			"crawler":       NewCrawlerDeployment(m, in).Spec.Template,
			"elasticsearch": NewElasticStatefulSet(m, "", false, "").Spec.Template,
			"update-idents": NewUpdateIdentsJob(m, "c", in.Elastic).Spec.Template,
		}
	}
	base := build(withOutbound(), "h1")
	for name, tc := range map[string]struct {
		change func(*monoclev1alpha1.Monocle)
		caHash string
		rolled []string
	}{
		"new CA bundle":   {caHash: "h2", rolled: []string{"api", "crawler"}},
		"CA key renamed":  {change: func(m *monoclev1alpha1.Monocle) { m.Spec.TrustedCA.Key = "other" }, rolled: []string{"api", "crawler"}},
		"proxy changed":   {change: func(m *monoclev1alpha1.Monocle) { m.Spec.Proxy.HTTPSProxy = "http://p2:8080" }, rolled: []string{"api", "crawler"}},
		"noProxy changed": {change: func(m *monoclev1alpha1.Monocle) { m.Spec.Proxy.NoProxy = "x" }, rolled: []string{"api", "crawler"}},
		"crawler TLS off": {change: func(m *monoclev1alpha1.Monocle) { m.Spec.Crawler.TLS = nil }, rolled: []string{"crawler"}},
		"crawler ciphers": {change: func(m *monoclev1alpha1.Monocle) { m.Spec.Crawler.TLS.Ciphers = "DEFAULT" }, rolled: []string{"crawler"}},
		"proxy credentials": {change: func(m *monoclev1alpha1.Monocle) {
			m.Spec.Proxy.CredentialsSecretRef = &monoclev1alpha1.SecretReference{Name: "proxy-credentials"}
		}, rolled: []string{"api", "crawler"}},
		"proxy removed":      {change: func(m *monoclev1alpha1.Monocle) { m.Spec.Proxy = nil }, rolled: []string{"api", "crawler"}},
		"trusted CA removed": {change: func(m *monoclev1alpha1.Monocle) { m.Spec.TrustedCA = nil }, rolled: []string{"api", "crawler"}},
	} {
		t.Run(name, func(t *testing.T) {
			m := withOutbound()
			if tc.change != nil {
				tc.change(m)
			}
			got := build(m, cmp.Or(tc.caHash, "h1"))
			for component, tmpl := range got {
				changed := !equality.Semantic.DeepEqual(base[component], tmpl)
				if want := slices.Contains(tc.rolled, component); changed != want {
					t.Errorf("%s: template changed %v, want %v\n%s", component, changed, want, diff.Diff(base[component], tmpl))
				}
			}
		})
	}
}

// TestOutboundProxyCredentials checks that spec.proxy.credentialsSecretRef puts no credential
// in the pod spec: the crawler and the API read the Secret's username and password into
// variables by secretKeyRef, defined before the proxy URLs that refer to them, which the
// kubelet expands; API_PROXY stays empty; no other container reads the Secret.
func TestOutboundProxyCredentials(t *testing.T) {
	m := withOutbound()
	m.Spec.Proxy.CredentialsSecretRef = &monoclev1alpha1.SecretReference{Name: "proxy-credentials"}
	const userinfo = "$(MONOCLE_PROXY_USERNAME):$(MONOCLE_PROXY_PASSWORD)@"
	sidecar := ElasticAccess{Target: ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchExternal, URL: "https://es.example.com", Username: "u"}}
	in := Inputs{ConfigHash: "c", SecretHash: "s", Elastic: sidecar, TrustedCAHash: "h"}
	for _, w := range []struct {
		component string
		tmpl      corev1.PodTemplateSpec
		want      []string
	}{
		{ComponentAPI, NewAPIDeployment(m, in).Spec.Template, []string{
			"https_proxy=http://" + userinfo + "proxy.corp:3128", "http_proxy=http://" + userinfo + "proxy.corp:8080"}},
		{ComponentCrawler, NewCrawlerDeployment(m, in).Spec.Template, []string{
			"https_proxy=http://" + userinfo + "proxy.corp:3128", "http_proxy=http://" + userinfo + "proxy.corp:8080", "API_PROXY="}},
	} {
		c := w.tmpl.Spec.Containers[0]
		if got := envOf(c, []string{"https_proxy", "http_proxy", "API_PROXY"}); !slices.Equal(got, w.want) {
			t.Errorf("%s env:\n got %q\nwant %q", w.component, got, w.want)
		}
		for name, key := range map[string]string{ProxyUsernameVar: "username", ProxyPasswordVar: "password"} {
			i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
			if i < 0 {
				t.Errorf("%s: no %s", w.component, name)
				continue
			}
			e := c.Env[i]
			want := &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "proxy-credentials"}, Key: key}}
			if e.Value != "" || !equality.Semantic.DeepEqual(e.ValueFrom, want) {
				t.Errorf("%s: %s = %+v, want only the Secret's key %s", w.component, name, e, key)
			}
		}
		checkReferencesDefinedEarlier(t, w.component, c.Env)
	}
	others := map[string]corev1.PodTemplateSpec{
		"elasticsearch": NewElasticStatefulSet(m, "", false, "").Spec.Template,
		"update-idents": NewUpdateIdentsJob(m, "c", sidecar).Spec.Template,
		"sidecar":       {Spec: corev1.PodSpec{Containers: NewAPIDeployment(m, in).Spec.Template.Spec.InitContainers}},
	}
	for name, tmpl := range others {
		for _, c := range append(tmpl.Spec.Containers, tmpl.Spec.InitContainers...) {
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "proxy-credentials" {
					t.Errorf("%s, container %s reads the proxy credentials into %s", name, c.Name, e.Name)
				}
			}
		}
	}
}

// checkReferencesDefinedEarlier checks that every $(NAME) in the values of env names a
// variable defined before it in env: the kubelet expands only those, and leaves the others
// as they are.
func checkReferencesDefinedEarlier(t *testing.T, component string, env []corev1.EnvVar) {
	t.Helper()
	for i, e := range env {
		for rest := e.Value; ; {
			_, after, ok := strings.Cut(rest, "$(")
			if !ok {
				break
			}
			name, tail, _ := strings.Cut(after, ")")
			if !slices.ContainsFunc(env[:i], func(d corev1.EnvVar) bool { return d.Name == name }) {
				t.Errorf("%s: %s refers to $(%s), which is not defined before it", component, e.Name, name)
			}
			rest = tail
		}
	}
}
