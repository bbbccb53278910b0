package resources

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// ProxyPort is the port on 127.0.0.1 where the proxy sidecar of a Monocle's pods serves the
// Elasticsearch of elasticsearchRef or external in plain HTTP, without credentials, for
// Monocle 1.11.2, which speaks plain HTTP only (http-client's defaultManagerSettings,
// src/Monocle/Env.hs).
const ProxyPort = 9200

// ElasticsearchTarget is the Elasticsearch cluster a Monocle uses: its kind, its identity,
// where the operator and Monocle's pods reach it, as whom, and which CA it trusts. NewTarget
// builds it from the spec, once per sync; the controller then reads the credentials and the
// CA from Secrets. Its Password is a secret: never log a target.
type ElasticsearchTarget struct {
	// Kind is Bundled, ECK or External.
	Kind monoclev1alpha1.ElasticsearchClusterKind
	// Identity names the cluster for the rule of one Monocle per cluster (Identity); "" for
	// the bundled one, which is the Monocle's own.
	Identity string
	// URL is where the operator reaches the cluster, scheme://host:port without credentials
	// or path: the bundled StatefulSet's Service and an ECK Elasticsearch's HTTP Service by
	// names that resolve from any namespace, or spec.elasticsearch.external.url.
	URL string
	// Username and Password are the operator's basic-auth credentials; empty Username means
	// none.
	Username, Password string
	// PodUsername and PodPassword are the credentials of Monocle's pods when they have their
	// own (the bundled node's ElasticMonocleUser); empty PodUsername means the operator's.
	PodUsername, PodPassword string
	// CA is the PEM of the certificates an https:// cluster's certificate chains to; nil
	// means the system's roots.
	CA []byte
	// serviceURL is where the pods of its Monocle reach the bundled cluster: its Service by
	// its name in their namespace.
	serviceURL string
}

// NewTarget is the target of m's spec.elasticsearch, without its credentials and CA:
// bundled, an ECK Elasticsearch of elasticsearchRef, served in HTTPS unless eckTLS is false,
// or the cluster of external.url.
func NewTarget(m *monoclev1alpha1.Monocle, eckTLS bool) ElasticsearchTarget {
	es := m.Spec.Elasticsearch
	t := ElasticsearchTarget{Identity: Identity(m)}
	switch {
	case BundledElasticsearch(m):
		t.Kind = monoclev1alpha1.ElasticsearchBundled
		t.URL = fmt.Sprintf("http://%s.%s.svc:%d", ElasticName(m), m.Namespace, ElasticPort)
		t.serviceURL = fmt.Sprintf("http://%s:%d", ElasticName(m), ElasticPort)
	case es.ElasticsearchRef != nil:
		t.Kind, t.URL = monoclev1alpha1.ElasticsearchECK, ECKURL(ECKNamespace(m), es.ElasticsearchRef.Name, eckTLS)
	default:
		t.Kind, t.URL = monoclev1alpha1.ElasticsearchExternal, strings.TrimSuffix(es.External.URL, "/")
	}
	return t
}

// BundledTarget is the target of m's bundled Elasticsearch, whatever m's spec says.
func BundledTarget(m *monoclev1alpha1.Monocle) ElasticsearchTarget {
	b := m.DeepCopy()
	b.Spec.Elasticsearch.ElasticsearchRef, b.Spec.Elasticsearch.External = nil, nil
	return NewTarget(b, false)
}

// Bundled reports whether the target is the Elasticsearch the operator runs for the Monocle.
func (t ElasticsearchTarget) Bundled() bool { return t.Kind == monoclev1alpha1.ElasticsearchBundled }

// TLS reports whether the cluster is reached over HTTPS.
func (t ElasticsearchTarget) TLS() bool { return strings.HasPrefix(t.URL, "https://") }

// NeedsProxy reports whether Monocle's pods reach the cluster through the proxy sidecar: a
// cluster that needs credentials or TLS, neither of which Monocle 1.11.2 can be given without
// a password in its URL (which it logs) or at all (TLS).
func (t ElasticsearchTarget) NeedsProxy() bool {
	user, _ := t.PodCredentials()
	return user != "" || t.TLS()
}

// PodCredentials are the user and password Monocle's pods reach the cluster as, through the
// proxy: their own, or the operator's.
func (t ElasticsearchTarget) PodCredentials() (user, password string) {
	if t.PodUsername != "" {
		return t.PodUsername, t.PodPassword
	}
	return t.Username, t.Password
}

// WithBundledUsers is t, the bundled node's target, with the credentials of the Secret
// "<name>-elastic-users" (users, its data): the operator's user for the operator, Monocle's for
// the pods.
func (t ElasticsearchTarget) WithBundledUsers(users map[string][]byte) ElasticsearchTarget {
	t.Username, t.Password = ElasticOperatorUser, string(users[ElasticOperatorUser])
	t.PodUsername, t.PodPassword = ElasticMonocleUser, string(users[ElasticMonocleUser])
	return t
}

// PodURL is where Monocle's pods reach the cluster, MONOCLE_ELASTIC_URL and the janitor's
// --elastic: the proxy on localhost when NeedsProxy, the bundled cluster's Service by its
// name in the Monocle's namespace, the cluster's URL otherwise.
func (t ElasticsearchTarget) PodURL() string {
	switch {
	case t.NeedsProxy():
		return fmt.Sprintf("http://127.0.0.1:%d", ProxyPort)
	case t.Bundled():
		return t.serviceURL
	}
	return t.URL
}

// Endpoint is a cluster URL split into its parts.
type Endpoint struct {
	// Scheme is http or https; Host the host name or IP address, as written; Port the port,
	// the scheme's (80 or 443) when the URL has none.
	Scheme, Host, Port string
	// Authority is host[:port] as the URL writes it, the Host header of a request to it.
	Authority string
}

// ParseEndpoint splits raw, scheme://host[:port] with an optional trailing slash. It fails
// when raw is not an http:// or https:// URL with a host, or has credentials or a path.
func ParseEndpoint(raw string) (Endpoint, error) {
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil || strings.Trim(u.Path, "/") != "" {
		return Endpoint{}, fmt.Errorf("an Elasticsearch URL must be http:// or https:// with a host, no credentials and no path, not %q", raw)
	}
	e := Endpoint{Scheme: u.Scheme, Host: u.Hostname(), Port: u.Port(), Authority: u.Host}
	if e.Port == "" {
		e.Port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return e, nil
}

// Identity names the cluster for the rule of one Monocle per cluster (Monocle's index names
// are fixed): "eck/<namespace>/<name>" for an ECK Elasticsearch, the URL's scheme, host in
// lower case and port (ParseEndpoint) for one by URL (the URL as written when it does not
// parse), "" for the bundled one.
func Identity(m *monoclev1alpha1.Monocle) string {
	es := m.Spec.Elasticsearch
	switch {
	case es.ElasticsearchRef != nil:
		return ECKIdentity(ECKNamespace(m), es.ElasticsearchRef.Name)
	case es.External != nil:
		e, err := ParseEndpoint(es.External.URL)
		if err != nil {
			return es.External.URL
		}
		return e.Scheme + "://" + strings.ToLower(e.Host) + ":" + e.Port
	}
	return ""
}

// ReferenceGrantResource is the Gateway API's ReferenceGrant, gateway.networking.k8s.io/v1beta1
// (served by Gateway API v0.6 and later; the CRD of sigs.k8s.io/gateway-api's
// config/crd/standard, whose storage version it is in v1.6.0), an API a cluster serves only
// where the Gateway API's CRDs are installed. The operator only reads it: the owner of a
// namespace grants Monocles of another namespace the use of an ECK Elasticsearch there.
var ReferenceGrantResource = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1beta1", Resource: "referencegrants"}
