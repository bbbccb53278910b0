package resources

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// What the operator knows of ECK, the Elastic Cloud on Kubernetes operator, whose
// Elasticsearch an elasticsearchRef names: its API, the names of the objects it makes, and
// what the operator reads of an Elasticsearch (ReadECK).

// ECKIdentity is the Identity of the ECK Elasticsearch namespace/name.
func ECKIdentity(namespace, name string) string { return "eck/" + namespace + "/" + name }

// ECKElasticsearchResource is ECK's Elasticsearch resource, elasticsearch.k8s.elastic.co/v1
// elasticsearches (config/crds/v1/resources/elasticsearch.k8s.elastic.co_elasticsearches.yaml
// of github.com/elastic/cloud-on-k8s/v3), an API a cluster serves only where ECK is installed.
var ECKElasticsearchResource = schema.GroupVersionResource{Group: "elasticsearch.k8s.elastic.co", Version: "v1", Resource: "elasticsearches"}

// ECKElasticsearchKind is the kind of ECKElasticsearchResource, as a ReferenceGrant's `to`
// names it.
const ECKElasticsearchKind = "Elasticsearch"

// ECKNamespace is the namespace of m's ECK Elasticsearch: elasticsearchRef.namespace, else
// m's own. m must have an elasticsearchRef.
func ECKNamespace(m *monoclev1alpha1.Monocle) string {
	if ns := m.Spec.Elasticsearch.ElasticsearchRef.Namespace; ns != "" {
		return ns
	}
	return m.Namespace
}

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

// ECKReadyPhase is the phase of an ECK Elasticsearch "operating at the desired spec"
// (github.com/elastic/cloud-on-k8s/v3 v3.5.0, pkg/apis/elasticsearch/v1/status.go,
// ElasticsearchReadyPhase).
const ECKReadyPhase = "Ready"

// ECKElasticsearch is what the operator reads of an ECK Elasticsearch.
type ECKElasticsearch struct {
	// TLS is set when it serves HTTPS.
	TLS bool
	// Phase and Health are its status.phase (Ready, ApplyingChanges, MigratingData, Stalled,
	// Invalid) and status.health (green, yellow, red, unknown).
	Phase, Health string
}

// ReadECK reads an ECK Elasticsearch. It serves HTTPS unless
// spec.http.tls.selfSignedCertificate.disabled is true with no
// spec.http.tls.certificate.secretName (github.com/elastic/cloud-on-k8s/v3 v3.5.0,
// pkg/apis/common/v1/common.go, TLSOptions.Enabled).
func ReadECK(eck *unstructured.Unstructured) ECKElasticsearch {
	disabled, _, _ := unstructured.NestedBool(eck.Object, "spec", "http", "tls", "selfSignedCertificate", "disabled")
	custom, _, _ := unstructured.NestedString(eck.Object, "spec", "http", "tls", "certificate", "secretName")
	e := ECKElasticsearch{TLS: !disabled || custom != ""}
	e.Phase, _, _ = unstructured.NestedString(eck.Object, "status", "phase")
	e.Health, _, _ = unstructured.NestedString(eck.Object, "status", "health")
	return e
}

// Ready reports whether the Elasticsearch's phase is ECKReadyPhase.
func (e ECKElasticsearch) Ready() bool { return e.Phase == ECKReadyPhase }
