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
		return ECKIdentity(ns, es.ElasticsearchRef.Name)
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

// ECKIdentity is the Identity of the ECK Elasticsearch namespace/name.
func ECKIdentity(namespace, name string) string { return "eck/" + namespace + "/" + name }

// ECKElasticsearchResource is ECK's Elasticsearch resource, elasticsearch.k8s.elastic.co/v1
// elasticsearches (config/crds/v1/resources/elasticsearch.k8s.elastic.co_elasticsearches.yaml
// of github.com/elastic/cloud-on-k8s/v3), an API a cluster serves only where ECK is installed.
var ECKElasticsearchResource = schema.GroupVersionResource{Group: "elasticsearch.k8s.elastic.co", Version: "v1", Resource: "elasticsearches"}

// ECKElasticsearchKind is the kind of ECKElasticsearchResource, as a ReferenceGrant's `to`
// names it.
const ECKElasticsearchKind = "Elasticsearch"

// ReferenceGrantResource is the Gateway API's ReferenceGrant, gateway.networking.k8s.io/v1beta1
// (served by Gateway API v0.6 and later; the CRD of sigs.k8s.io/gateway-api's
// config/crd/standard, whose storage version it is in v1.6.0), an API a cluster serves only
// where the Gateway API's CRDs are installed. The operator only reads it: the owner of a
// namespace grants Monocles of another namespace the use of an ECK Elasticsearch there.
var ReferenceGrantResource = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1beta1", Resource: "referencegrants"}

// The objects ECK makes for an Elasticsearch, as github.com/elastic/cloud-on-k8s/v3 v3.5.0
// names them and as https://www.elastic.co/guide/en/cloud-on-k8s/current/k8s-services.html
// and https://www.elastic.co/docs/deploy-manage/security/k8s-https-settings document them.
const (
	// ECKHTTPPort is the port of the HTTP Service (pkg/controller/elasticsearch/network
	// HTTPPort).
	ECKHTTPPort = 9200
	// ECKElasticUser is the superuser ECK generates; its Secret's key is the user's name
	// (pkg/controller/elasticsearch/user/predefined.go, ElasticUserName).
	ECKElasticUser = "elastic"
	// ECKCAKey is the key of the CA's PEM in the public certificates' Secret
	// (pkg/controller/common/certificates/secret.go, CAFileName). ECK leaves it out when a
	// user-provided certificate comes without its CA, as one a public CA issued may.
	ECKCAKey = "ca.crt"
)

// ECKHTTPService is the name of the HTTP Service of the ECK Elasticsearch name:
// "<name>-es-http" (pkg/apis/elasticsearch/v1/name.go, HTTPService: ESNamer's "es" and the
// suffix "http").
func ECKHTTPService(name string) string { return name + "-es-http" }

// ECKElasticUserSecret is the name of the Secret holding the password of ECK's "elastic"
// user: "<name>-es-elastic-user" (pkg/apis/elasticsearch/v1/name.go, ElasticUserSecret).
func ECKElasticUserSecret(name string) string { return name + "-es-elastic-user" }

// ECKPublicCertsSecret is the name of the Secret holding the HTTP layer's public certificate
// and CA: "<name>-es-http-certs-public" (pkg/controller/common/certificates/secret.go,
// PublicCertsSecretName: ESNamer's "es", the CA type "http" and "certs-public").
func ECKPublicCertsSecret(name string) string { return name + "-es-http-certs-public" }

// ECKURL is where the operator reaches the ECK Elasticsearch namespace/name: its HTTP
// Service by its cluster DNS name, in https unless tls is false.
func ECKURL(namespace, name string, tls bool) string {
	scheme := "https"
	if !tls {
		scheme = "http"
	}
	return fmt.Sprintf("%s://%s.%s.svc:%d", scheme, ECKHTTPService(name), namespace, ECKHTTPPort)
}
