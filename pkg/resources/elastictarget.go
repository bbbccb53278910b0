package resources

import (
	"net/url"
	"strings"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// ProxyPort is the port on 127.0.0.1 where the proxy sidecar of a Monocle's pods serves the
// Elasticsearch of elasticsearchRef or external in plain HTTP, without credentials, for
// Monocle 1.11.2, which speaks plain HTTP only (http-client's defaultManagerSettings,
// src/Monocle/Env.hs).
const ProxyPort = 9200

// ElasticsearchTarget is the Elasticsearch cluster a Monocle uses, resolved from its spec and
// what the cluster holds (an ECK Elasticsearch, Secrets): where the operator reaches it, as
// whom, and which CA it trusts. Its Password is a secret: never log a target.
type ElasticsearchTarget struct {
	// Kind is Bundled, ECK or External.
	Kind monoclev1alpha1.ElasticsearchClusterKind
	// URL is where the operator reaches the cluster: scheme://host:port, without credentials
	// or path.
	URL string
	// Username and Password are the basic-auth credentials; empty Username means none.
	Username, Password string
	// CA is the PEM of the certificates an https:// cluster's certificate chains to; nil
	// means the system's roots.
	CA []byte
}

// BundledTarget is the target of a Monocle's bundled Elasticsearch.
func BundledTarget(m *monoclev1alpha1.Monocle) ElasticsearchTarget {
	return ElasticsearchTarget{Kind: monoclev1alpha1.ElasticsearchBundled, URL: ElasticURL(m)}
}

// TLS reports whether the cluster is reached over HTTPS.
func (t ElasticsearchTarget) TLS() bool { return strings.HasPrefix(t.URL, "https://") }

// NeedsProxy reports whether Monocle's pods reach the cluster through the proxy sidecar: a
// cluster of elasticsearchRef or external that needs credentials or TLS, neither of which
// Monocle can be given without a password in its URL (which it logs) or at all (TLS).
func (t ElasticsearchTarget) NeedsProxy() bool {
	return t.Kind != monoclev1alpha1.ElasticsearchBundled && (t.Username != "" || t.TLS())
}

// MonocleURL is MONOCLE_ELASTIC_URL and the janitor's --elastic for the Monocle's pods: the
// proxy on localhost when NeedsProxy, the cluster's URL otherwise.
func (t ElasticsearchTarget) MonocleURL() string {
	if t.NeedsProxy() {
		return "http://127.0.0.1:9200"
	}
	return t.URL
}

// Identity names the cluster for the rule of one Monocle per cluster (Monocle's index names
// are fixed): "eck/<namespace>/<name>" for an ECK Elasticsearch, the URL's scheme, host and
// port (the scheme's, 80 or 443, when the URL has none) for one by URL, "" for the bundled
// one.
func Identity(m *monoclev1alpha1.Monocle) string {
	es := m.Spec.Elasticsearch
	switch {
	case es.ElasticsearchRef != nil:
		ns := es.ElasticsearchRef.Namespace
		if ns == "" {
			ns = m.Namespace
		}
		return "eck/" + ns + "/" + es.ElasticsearchRef.Name
	case es.External != nil:
		u, err := url.Parse(strings.TrimSuffix(es.External.URL, "/"))
		if err != nil {
			return es.External.URL
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
	}
	return ""
}
