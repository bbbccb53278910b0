package resources

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// The outbound network of the crawler and the API: the HTTP proxy of spec.proxy, the CA
// bundle of spec.trustedCA and the crawler's TLS settings of spec.crawler.tls. Only the
// crawler and the API container get them: Elasticsearch, the Jobs (which reach only
// Elasticsearch) and the Elasticsearch proxy sidecar make no request to the outside. Each is
// set as an env var, which wins over the same name loaded by envFrom from the user's Secrets
// (k8s.io/api core/v1 EnvFromSource: "Values defined by an Env with a duplicate key will take
// precedence").
//
// What Monocle 1.11.2 reads, from its sources and those of the libraries it builds on:
//   - The crawler reaches its code hosts with Monocle.Client.mkManager Nothing
//     (src/Monocle/Effects.hs runHttpEffect, src/Lentille/Gerrit.hs), whose proxy is
//     http-client's proxyEnvironment; the API reaches its OIDC provider with
//     http-client-openssl's newOpenSSLManager (src/Monocle/Api/Jwt.hs initOIDCEnv), and
//     Elasticsearch with http-client's defaultManagerSettings (src/Monocle/Env.hs mkEnv),
//     both of which take the proxy from the environment too (http-client
//     Network/HTTP/Client/Manager.hs, defaultProxy).
//   - http-client reads the variable of the exact name first, then any case of it, so the
//     lower-case https_proxy set here wins over an HTTPS_PROXY in a user's Secret; an empty
//     value means no proxy; the proxy must be an http:// URL (any other scheme makes the
//     manager's creation fail); no_proxy is a comma-separated list of host names matched as
//     domain suffixes ("example.com" matches example.com and *.example.com), without ports,
//     wildcards or CIDR ranges (Network/HTTP/Proxy.hs envHelper, unchanged since 2017).
//   - The crawler reaches the API with a manager of its own, whose proxy is the variable
//     API_PROXY alone (src/Monocle/Client.hs withClient: mkManager (Just "API_PROXY"),
//     src/CLI.hs).
//   - TLS_NO_VERIFY (any value but "0") and TLS_CIPHERS (an OpenSSL cipher list, "DEFAULT"
//     when unset) are read by mkManager, which only the crawler uses (src/Monocle/Client.hs).
//   - The CA certificates come from http-client-openssl's defaultOpenSSLSettings, whose
//     osslSettingsLoadCerts is HsOpenSSL-x509-system's contextLoadSystemCerts: on Linux the
//     first of a fixed list of locations, /etc/pki/tls/certs/ca-bundle.crt before
//     /etc/ssl/certs (OpenSSL/X509/SystemStore/Unix.hs, defaultSystemPaths, 0.1.0.4). It
//     never loads OpenSSL's default verify paths, so SSL_CERT_FILE alone is not read by
//     Monocle 1.11.2: the bundle is mounted at that first location, which the Monocle image
//     (UBI 8) fills with its own bundle otherwise.

// TrustedCAHashAnnotation on the crawler's and the API's pod templates holds the hash of the
// spec.trustedCA bundle (TrustedCAHash), so a new bundle rolls them.
const TrustedCAHashAnnotation = AnnotationPrefix + "trusted-ca-hash"

// Where the spec.trustedCA bundle is mounted: TrustedCADir, read-only, holding only
// TrustedCAFile, which SSL_CERT_FILE also names.
const (
	TrustedCADir  = "/etc/pki/tls/certs"
	TrustedCAFile = TrustedCADir + "/ca-bundle.crt"
)

// trustedCAVolume names the volume of the spec.trustedCA bundle.
const trustedCAVolume = "trusted-ca"

// TrustedCAHash is the value of TrustedCAHashAnnotation for the bundle data.
func TrustedCAHash(data []byte) string { return Hash(data) }

// addOutbound adds to the container of component (ComponentAPI or ComponentCrawler) of a pod
// template of m the variables and the volume of spec.proxy, spec.trustedCA and, for the
// crawler, spec.crawler.tls. A Monocle that sets none of them gets nothing, so its pod
// templates stay as they were.
func addOutbound(m *monoclev1alpha1.Monocle, in Inputs, tmpl *corev1.PodTemplateSpec, component string) {
	i := slices.IndexFunc(tmpl.Spec.Containers, func(c corev1.Container) bool { return c.Name == component })
	if i < 0 {
		return
	}
	c := &tmpl.Spec.Containers[i]
	c.Env = append(c.Env, OutboundEnv(m, in.Elastic, component)...)
	ca := m.Spec.TrustedCA
	if ca == nil {
		return
	}
	tmpl.Spec.Volumes = append(tmpl.Spec.Volumes, corev1.Volume{
		Name: trustedCAVolume,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: ca.Name},
			Items:                []corev1.KeyToPath{{Key: ca.Key, Path: "ca-bundle.crt"}},
			DefaultMode:          ptr.To[int32](0o444),
		}},
	})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: trustedCAVolume, MountPath: TrustedCADir, ReadOnly: true})
	if tmpl.Annotations == nil {
		tmpl.Annotations = map[string]string{}
	}
	tmpl.Annotations[TrustedCAHashAnnotation] = in.TrustedCAHash
}

// The variables that hold the proxy's credentials of spec.proxy.credentialsSecretRef, read
// from the Secret's keys ProxyUsernameKey and ProxyPasswordKey (secretKeyRef), which
// https_proxy and http_proxy refer to.
const (
	ProxyUsernameVar = "MONOCLE_PROXY_USERNAME"
	ProxyPasswordVar = "MONOCLE_PROXY_PASSWORD"
	ProxyUsernameKey = "username"
	ProxyPasswordKey = "password"
)

// proxyUserinfo is the userinfo of the proxy URLs with spec.proxy.credentialsSecretRef: the
// kubelet replaces each $(VAR) by the value of VAR when VAR is defined earlier in the
// container's env (k8s.io/api core/v1 EnvVar.Value, "Variable references $(VAR_NAME) are
// expanded using the previously defined environment variables in the container"), without
// escaping it.
const proxyUserinfo = "$(" + ProxyUsernameVar + "):$(" + ProxyPasswordVar + ")@"

// OutboundEnv is the environment spec.proxy, spec.trustedCA and spec.crawler.tls give the
// container of component (ComponentAPI or ComponentCrawler) of m, whose Elasticsearch access
// is e, in a fixed order:
//   - with spec.proxy.credentialsSecretRef: ProxyUsernameVar and ProxyPasswordVar from the
//     Secret's keys, which the proxy URLs then refer to (proxyUserinfo), so that no
//     credential is in the pod spec;
//   - with spec.proxy: https_proxy and http_proxy when given, no_proxy (NoProxy), and on the
//     crawler API_PROXY="", so that the crawler reaches the API in the cluster directly even
//     when a user's Secret sets API_PROXY;
//   - with spec.trustedCA: SSL_CERT_FILE=TrustedCAFile, for what reads OpenSSL's default
//     verify paths (Monocle 1.11.2 reads the file at that path itself);
//   - on the crawler, with spec.crawler.tls: TLS_NO_VERIFY=1 when insecureSkipVerify,
//     TLS_CIPHERS when ciphers are given.
func OutboundEnv(m *monoclev1alpha1.Monocle, e ElasticAccess, component string) []corev1.EnvVar {
	var env []corev1.EnvVar
	add := func(name, value string) { env = append(env, corev1.EnvVar{Name: name, Value: value}) }
	if p := m.Spec.Proxy; p != nil {
		proxyURL := func(u string) string { return u }
		if ref := p.CredentialsSecretRef; ref != nil {
			fromSecret := func(name, key string) corev1.EnvVar {
				return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: key}}}
			}
			env = append(env, fromSecret(ProxyUsernameVar, ProxyUsernameKey), fromSecret(ProxyPasswordVar, ProxyPasswordKey))
			proxyURL = func(u string) string {
				// Admission makes every proxy URL http:// without userinfo.
				if rest, ok := strings.CutPrefix(u, "http://"); ok {
					return "http://" + proxyUserinfo + rest
				}
				return u
			}
		}
		if p.HTTPSProxy != "" {
			add("https_proxy", proxyURL(p.HTTPSProxy))
		}
		if p.HTTPProxy != "" {
			add("http_proxy", proxyURL(p.HTTPProxy))
		}
		add("no_proxy", NoProxy(m, e, component))
		if component == ComponentCrawler {
			add("API_PROXY", "")
		}
	}
	if m.Spec.TrustedCA != nil {
		add("SSL_CERT_FILE", TrustedCAFile)
	}
	if t := m.Spec.Crawler.TLS; t != nil && component == ComponentCrawler {
		if t.InsecureSkipVerify {
			add("TLS_NO_VERIFY", "1")
		}
		if t.Ciphers != "" {
			add("TLS_CIPHERS", t.Ciphers)
		}
	}
	return env
}

// NoProxy is the no_proxy of the container of component of m: spec.proxy.noProxy's entries,
// then the hosts in the cluster the container reaches, each once: the API Service by each of
// its DNS names (<name>-api, .<namespace>, .<namespace>.svc, .<namespace>.svc.cluster.local),
// for the API the host of Elasticsearch it uses (e: the bundled Service by the same four
// names, 127.0.0.1 for the proxy sidecar, the host of an elasticsearchRef or external URL
// otherwise, which the operator reaches directly too), then localhost and 127.0.0.1.
// http-client matches each entry as a domain suffix, so every name a pod may use is listed.
func NoProxy(m *monoclev1alpha1.Monocle, e ElasticAccess, component string) string {
	var hosts []string
	if m.Spec.Proxy != nil {
		hosts = strings.Split(m.Spec.Proxy.NoProxy, ",")
	}
	hosts = append(hosts, serviceNames(m, APIName(m))...)
	if component == ComponentAPI {
		switch t := e.Target; {
		case t.Bundled():
			hosts = append(hosts, serviceNames(m, ElasticName(m))...)
		case !t.NeedsProxy():
			if ep, err := ParseEndpoint(t.URL); err == nil {
				hosts = append(hosts, ep.Host)
			}
		}
	}
	hosts = append(hosts, "localhost", "127.0.0.1")
	var out []string
	for _, h := range hosts {
		if h = strings.TrimSpace(h); h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return strings.Join(out, ",")
}

// serviceNames are the DNS names of the Service name in m's namespace, with the cluster
// domain Kubernetes defaults to, cluster.local.
func serviceNames(m *monoclev1alpha1.Monocle, name string) []string {
	ns := name + "." + m.Namespace
	return []string{name, ns, ns + ".svc", ns + ".svc.cluster.local"}
}
