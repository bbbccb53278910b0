package resources

import (
	"encoding/base64"
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// The proxy sidecar. Monocle 1.11.2 speaks plain HTTP only, and takes credentials only in the
// URL, which it logs (src/Monocle/Env.hs, src/Monocle/Main.hs). When the Elasticsearch of
// elasticsearchRef or external needs TLS or credentials, each Monocle pod runs NGINX beside
// Monocle as a native sidecar (an init container with restartPolicy Always, Kubernetes 1.29
// and later, which runs for the pod's life and in Jobs too): Monocle talks plain HTTP to it on
// 127.0.0.1:9200, and it talks HTTPS to the cluster, verifying its certificate, adding the
// Authorization header. Its nginx.conf, which holds the credentials, and the cluster's CA are
// the Secret "<name>-elastic-proxy", mounted in the sidecar alone.

// Keys of the proxy Secret.
const (
	// ProxyConfigKey holds the sidecar's nginx.conf.
	ProxyConfigKey = "nginx.conf"
	// ProxyCAKey holds the PEM of the cluster's CA, when the target has one.
	ProxyCAKey = "ca.crt"
)

// ComponentProxy names the sidecar container and its volumes.
const ComponentProxy = "elastic-proxy"

// ProxyHashAnnotation on a Deployment's pod template holds ProxyHash of the proxy Secret, so
// a new password or CA rolls the pods (NGINX reads its configuration and CA at start).
const ProxyHashAnnotation = AnnotationPrefix + "proxy-hash"

// ProxyHealthPort is the port on the pod's addresses where the sidecar answers the kubelet's
// probes. The kubelet probes a pod at its IP, never at its loopback, so the proxy's own
// listener on 127.0.0.1 cannot be probed; this one, opened by the same NGINX from the same
// configuration, answers 204 without reaching Elasticsearch.
const ProxyHealthPort = 9201

// proxyUID is the user the NGINX unprivileged image runs as (ARG UID=101, USER $UID in
// nginxinc/docker-nginx-unprivileged mainline/alpine-slim/Dockerfile).
const proxyUID = 101

// ProxyLayout is where the sidecar's NGINX listens and finds and writes its files.
type ProxyLayout struct {
	// Listen is the proxy's address, host:port.
	Listen string
	// HealthListen is the probes' address, [host:]port.
	HealthListen string
	// Dir holds nginx.conf and ca.crt (the proxy Secret's mount).
	Dir string
	// Temp is a writable directory for the pid file and NGINX's temporary files.
	Temp string
	// SystemRoots is the PEM bundle of the system's roots, trusted when the target has no
	// CA of its own.
	SystemRoots string
}

// PodProxyLayout is the layout in Monocle's pods. The root filesystem is read-only: the
// Secret is mounted at Dir and an emptyDir at Temp. The system roots are those of the image's
// Alpine base, whose package ca-certificates-bundle installs them at
// /etc/ssl/certs/ca-certificates.crt (https://pkgs.alpinelinux.org/contents?name=ca-certificates-bundle).
var PodProxyLayout = ProxyLayout{
	Listen:       fmt.Sprintf("127.0.0.1:%d", ProxyPort),
	HealthListen: strconv.Itoa(ProxyHealthPort),
	Dir:          "/etc/monocle-proxy",
	Temp:         "/tmp",
	SystemRoots:  "/etc/ssl/certs/ca-certificates.crt",
}

// ProxySecretName is the name of the proxy Secret: "<name>-elastic-proxy".
func ProxySecretName(m *monoclev1alpha1.Monocle) string { return ElasticName(m) + "-proxy" }

// ProxyImage is the sidecar's image: spec.elasticsearch.proxy.image, else DefaultProxyImage.
func ProxyImage(m *monoclev1alpha1.Monocle) string {
	if p := m.Spec.Elasticsearch.Proxy; p != nil && p.Image != "" {
		return p.Image
	}
	return DefaultProxyImage
}

// proxyResources is elasticsearch.proxy.resources, nil when unset.
func proxyResources(m *monoclev1alpha1.Monocle) *corev1.ResourceRequirements {
	if p := m.Spec.Elasticsearch.Proxy; p != nil {
		return p.Resources
	}
	return nil
}

// ProxyConfig is the sidecar's nginx.conf for target t with layout l. It fails when t.URL is
// not scheme://host[:port] (ParseEndpoint).
//
//   - Upstream TLS (https): the certificate is verified against t.CA (l.Dir/ca.crt) or the
//     system roots, for the URL's host, which is also sent as SNI
//     (https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_ssl_verify); the
//     verification depth allows intermediates (its default, 1, would refuse a public CA's
//     chain).
//   - Credentials: Authorization: Basic base64(user:password) on every request upstream.
//   - Logs: errors to stderr; the access log (but of the probes) to stderr in NGINX's predefined "combined"
//     format, which holds the client's address and user, the request line, status, size,
//     referer and user agent, and no other request header
//     (https://nginx.org/en/docs/http/ngx_http_log_module.html#log_format): the
//     Authorization the proxy adds upstream is never logged, and Monocle sends none.
//   - Bodies stream both ways (no buffering to disk); a request body may be up to 100 MiB,
//     Elasticsearch's own default limit, http.max_content_length
//     (https://www.elastic.co/guide/en/elasticsearch/reference/7.17/modules-network.html),
//     since Monocle's bulk indexing posts large bodies; the timeouts are long, past Monocle's
//     own 30 s response timeout (http-client's defaultManagerSettings).
//   - The pid file and every temporary path are in l.Temp: NGINX creates its temporary
//     directories at start, and the compiled-in ones are not writable by the image's user.
func ProxyConfig(t ElasticsearchTarget, l ProxyLayout) (string, error) {
	e, err := ParseEndpoint(t.URL)
	if err != nil {
		return "", fmt.Errorf("the proxy cannot serve it: %w", err)
	}
	host := e.Host
	if !validHost(host) {
		return "", fmt.Errorf("the proxy needs a DNS name or an IP address as the host of %q", t.URL)
	}
	hostPort := net.JoinHostPort(host, e.Port)
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# The Elasticsearch proxy of Monocle's pods, written by monocle-operator.")
	w("worker_processes 1;")
	w("daemon off;")
	w("pid %s/nginx.pid;", l.Temp)
	w("error_log stderr notice;")
	w("events {")
	w("    worker_connections 1024;")
	w("}")
	w("http {")
	w("    access_log /dev/stderr combined;")
	w("    server_tokens off;")
	for _, p := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		w("    %s_temp_path %s/%s_temp;", p, l.Temp, p)
	}
	w("    client_max_body_size 100m;")
	w("    client_body_timeout 300s;")
	w("    upstream elasticsearch {")
	w("        server %s;", hostPort)
	w("        keepalive 8;")
	w("    }")
	w("    server {")
	w("        listen %s;", l.HealthListen)
	w("        access_log off;")
	w("        location / {")
	w("            return 204;")
	w("        }")
	w("    }")
	w("    server {")
	w("        listen %s;", l.Listen)
	w("        location / {")
	w("            proxy_pass %s://elasticsearch;", e.Scheme)
	w("            proxy_http_version 1.1;")
	w("            proxy_set_header Connection \"\";")
	w("            proxy_set_header Host \"%s\";", e.Authority)
	if user, password := t.PodCredentials(); user != "" {
		basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
		w("            proxy_set_header Authorization \"Basic %s\";", basic)
	}
	w("            proxy_request_buffering off;")
	w("            proxy_buffering off;")
	w("            proxy_connect_timeout 10s;")
	w("            proxy_send_timeout 300s;")
	w("            proxy_read_timeout 300s;")
	if e.Scheme == "https" {
		roots := l.SystemRoots
		if t.CA != nil {
			roots = l.Dir + "/" + ProxyCAKey
		}
		w("            proxy_ssl_protocols TLSv1.2 TLSv1.3;")
		w("            proxy_ssl_verify on;")
		w("            proxy_ssl_verify_depth 4;")
		w("            proxy_ssl_trusted_certificate %s;", roots)
		w("            proxy_ssl_server_name on;")
		w("            proxy_ssl_name %s;", host)
		w("            proxy_ssl_session_reuse on;")
	}
	w("        }")
	w("    }")
	w("}")
	return b.String(), nil
}

// validHost reports whether host is an IP address or a DNS name of letters, digits, dots and
// hyphens: what the configuration may quote without escaping.
func validHost(host string) bool {
	if net.ParseIP(host) != nil {
		return true
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// NewProxySecret builds the Secret "<name>-elastic-proxy" of target t: nginx.conf
// (ProxyConfig with PodProxyLayout) and, when t has a CA, ca.crt. It fails as ProxyConfig
// does.
func NewProxySecret(m *monoclev1alpha1.Monocle, t ElasticsearchTarget) (*corev1.Secret, error) {
	conf, err := ProxyConfig(t, PodProxyLayout)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{ProxyConfigKey: []byte(conf)}
	if t.CA != nil {
		data[ProxyCAKey] = t.CA
	}
	return &corev1.Secret{
		ObjectMeta: objectMeta(m, ProxySecretName(m), ComponentElastic),
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}, nil
}

// ProxyHash is the value of ProxyHashAnnotation for the proxy Secret's data proxy: its hash,
// salted with the data of the Secret "<name>-api" (apiSecret), whose generated keys are
// random, so that the annotation, which whoever reads Deployments reads, cannot be used to
// test guesses of the password in nginx.conf.
func ProxyHash(proxy, apiSecret map[string][]byte) string { return Hash([]any{proxy, apiSecret}) }

// ElasticAccess is how the pods of a Monocle reach its Elasticsearch.
type ElasticAccess struct {
	// Target is the cluster (NewTarget, with its credentials and CA).
	Target ElasticsearchTarget
	// ProxyHash is ProxyHash of the proxy Secret, stamped on the Deployments' pod templates
	// when the target needs the proxy, so that a new password or CA rolls them.
	ProxyHash string
}

// addProxy adds the proxy sidecar to a pod template of m's Monocle pods when the target
// needs it, and, when annotate, ProxyHashAnnotation (a Job's pod template never changes, so
// the Jobs go without). The sidecar runs as the image's unprivileged user with the restricted
// security context of the other containers; its startup probe holds Monocle's container
// until NGINX listens.
func addProxy(m *monoclev1alpha1.Monocle, e ElasticAccess, tmpl *corev1.PodTemplateSpec, annotate bool) {
	if !e.Target.NeedsProxy() {
		return
	}
	l := PodProxyLayout
	tmp, tmpMount := emptyDir(ComponentProxy+"-tmp", l.Temp, proxyTmpLimit)
	conf := corev1.Volume{Name: ComponentProxy, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: ProxySecretName(m), DefaultMode: ptr.To[int32](0o444),
	}}}
	security := restrictedContainerSecurityContext()
	security.RunAsUser = ptr.To[int64](proxyUID)
	tmpl.Spec.InitContainers = append(tmpl.Spec.InitContainers, corev1.Container{
		Name:          ComponentProxy,
		Image:         ProxyImage(m),
		Command:       []string{"nginx", "-c", l.Dir + "/" + ProxyConfigKey},
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Ports: []corev1.ContainerPort{
			{Name: "proxy-health", ContainerPort: ProxyHealthPort, Protocol: corev1.ProtocolTCP},
		},
		StartupProbe:   httpProbe("/", "proxy-health", 1, 1, 60),
		ReadinessProbe: httpProbe("/", "proxy-health", 10, 1, 3),
		// A sidecar whose NGINX hangs is restarted, as a container that exits is.
		LivenessProbe: httpProbe("/", "proxy-health", 20, 1, 3),
		Resources:     resourcesOr(proxyResources(m), "10m", "32Mi", "128Mi"),
		VolumeMounts: []corev1.VolumeMount{
			{Name: ComponentProxy, MountPath: l.Dir, ReadOnly: true}, tmpMount,
		},
		SecurityContext:          security,
		ImagePullPolicy:          corev1.PullIfNotPresent,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	})
	tmpl.Spec.Volumes = append(tmpl.Spec.Volumes, conf, tmp)
	if annotate {
		if tmpl.Annotations == nil {
			tmpl.Annotations = map[string]string{}
		}
		tmpl.Annotations[ProxyHashAnnotation] = e.ProxyHash
	}
}
