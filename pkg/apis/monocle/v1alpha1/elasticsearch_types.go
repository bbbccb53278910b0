package v1alpha1

import corev1 "k8s.io/api/core/v1"

// An Elasticsearch the operator does not run. Monocle 1.11.2 reaches Elasticsearch through
// MONOCLE_ELASTIC_URL with http-client's defaultManagerSettings (src/Monocle/Env.hs): plain
// HTTP only, and basic auth only as user:pass@ in the URL, which the API logs at start
// (src/Monocle/Main.hs). Its index names are fixed (monocle.config, monocle.changes.1.<workspace>),
// so one cluster serves one Monocle.

// ElasticsearchReference names an Elasticsearch resource of ECK, Elastic Cloud on Kubernetes
// (elasticsearch.k8s.elastic.co/v1). The operator reaches it through ECK's HTTP Service
// "<name>-es-http" on port 9200, as the "elastic" user of the Secret "<name>-es-elastic-user"
// unless credentialsSecretRef names another user, and trusts the CA of the Secret
// "<name>-es-http-certs-public" when the cluster serves HTTPS (ECK's default).
//
// namespace is a reserved word of CEL: the rules name it __namespace__ (Kubernetes, CRD
// validation rules, escaping of property names).
// +kubebuilder:validation:XValidation:rule="self.name == oldSelf.name && has(self.__namespace__) == has(oldSelf.__namespace__)",message="elasticsearchRef cannot name another Elasticsearch after creation: the data would not follow"
type ElasticsearchReference struct {
	// Name is the Elasticsearch resource's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Namespace is the Elasticsearch resource's namespace. Defaults to the Monocle's.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="elasticsearchRef cannot name another Elasticsearch after creation: the data would not follow"
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`
	Namespace string `json:"namespace,omitempty"`
	// CredentialsSecretRef names a Secret of the Monocle's namespace with the keys username
	// and password (type kubernetes.io/basic-auth) of the user Monocle and the operator log in
	// as, such as a least-privilege "monocle" user of ECK's file realm. Defaults to the
	// "elastic" superuser ECK generates.
	// +optional
	CredentialsSecretRef *SecretReference `json:"credentialsSecretRef,omitempty"`
}

// ExternalElasticsearch is an Elasticsearch 7.17 cluster reached by URL.
type ExternalElasticsearch struct {
	// URL is the cluster's HTTP endpoint: http:// or https://, a host and an optional port
	// (the scheme's, 80 or 443, by default), without credentials or path, such as
	// https://elasticsearch.example.com:9243.
	// +kubebuilder:validation:MaxLength=2048
	// The port is from 1 to 65535, without leading zeros. Hosts that would reach the pod
	// itself or the node are refused: localhost and its subdomains, the loopback
	// 127.0.0.0/8 and ::1, the unspecified 0.0.0.0/8 and ::, the link-local 169.254.0.0/16
	// (the clouds' metadata services) and fe80::/10, an IPv6 zone, the IPv4-mapped forms of
	// these IPv4 ranges, and IPv4 in any spelling but dotted decimal (127.1, 0x7f.0.0.1 and
	// 2130706433 are 127.0.0.1 to the resolver's inet_aton). Admission reads the URL's text
	// only: a name that resolves to such an address is refused when the operator connects.
	// +kubebuilder:validation:XValidation:rule="!self.matches(r':[0-9]*/?$') || self.matches(r':(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})/?$')",message="external.url's port must be from 1 to 65535"
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'(?i)^https?://([^/]*[.])?localhost[.]?(:[0-9]*)?/?$') && !self.matches(r'(?i)^https?://\\[([0:]*(:0*1)?\\]|[^\\]]*%|fe[89ab][0-9a-f]:|[0:]*:(ffff:)?((127|0+)[.]|169[.]254[.])|[0:]*:ffff:(7f[0-9a-f]{2}|a9fe|0{0,2}[0-9a-f]{1,2}):)') && (!self.matches(r'(?i)^https?://((0x[0-9a-f]*|[0-9]+)[.]){0,3}(0x[0-9a-f]*|[0-9]+)[.]?(:[0-9]*)?/?$') || self.matches(r'^https?://((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])[.]){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(:[0-9]*)?/?$') && !self.matches(r'^https?://(127|0|169[.]254)[.]'))",message="external.url's host must not be localhost, a loopback (127.0.0.0/8, ::1), unspecified (0.0.0.0/8, ::) or link-local (169.254.0.0/16, fe80::/10) address, nor IPv4 in another spelling than dotted decimal"
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^https?://[^\\s/?#@]+/?$') && isURL(self)",message="external.url must be http:// or https://, a host and an optional port, without credentials (use credentialsSecretRef) or path, such as https://elasticsearch.example.com:9243"
	URL string `json:"url"`
	// CredentialsSecretRef names a Secret of the Monocle's namespace with the keys username
	// and password (type kubernetes.io/basic-auth). Unset: no authentication.
	// +optional
	CredentialsSecretRef *SecretReference `json:"credentialsSecretRef,omitempty"`
	// CASecretRef names a Secret of the Monocle's namespace whose key ca.crt holds the PEM
	// certificates that an https:// cluster's certificate chains to. Unset: the system's
	// roots.
	// +optional
	CASecretRef *SecretReference `json:"caSecretRef,omitempty"`
}

// ElasticsearchProxy is the sidecar through which Monocle's pods reach their Elasticsearch
// when it needs credentials or TLS: always the bundled node, which runs with security on, and
// a cluster the operator does not run that needs them. Monocle speaks to it in plain HTTP on
// 127.0.0.1:9200, without credentials, and it speaks to the cluster (in HTTPS with the
// cluster's CA, for a cluster that has one), adding the credentials, so that no password is in
// Monocle's URL, environment, arguments or log.
type ElasticsearchProxy struct {
	// Image is the proxy's image. Defaults to NGINX's unprivileged build,
	// docker.io/nginxinc/nginx-unprivileged:1.30.1-alpine.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^\S+$`
	Image string `json:"image,omitempty"`
	// Resources are the sidecar container's requests and limits. Defaults to requests of
	// 10m CPU and 32Mi memory and a 128Mi memory limit.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// ElasticsearchClusterKind says which Elasticsearch a Monocle uses.
type ElasticsearchClusterKind string

// Kinds of Elasticsearch clusters.
const (
	// ElasticsearchBundled is the single-node StatefulSet the operator runs.
	ElasticsearchBundled ElasticsearchClusterKind = "Bundled"
	// ElasticsearchECK is an ECK Elasticsearch resource (spec.elasticsearch.elasticsearchRef).
	ElasticsearchECK ElasticsearchClusterKind = "ECK"
	// ElasticsearchExternal is a cluster by URL (spec.elasticsearch.external).
	ElasticsearchExternal ElasticsearchClusterKind = "External"
)

// ElasticsearchClusterStatus is the Elasticsearch cluster a Monocle uses, as the operator
// last found it.
type ElasticsearchClusterStatus struct {
	// Kind is Bundled, ECK or External.
	Kind ElasticsearchClusterKind `json:"kind"`
	// URL is the endpoint the operator reaches the cluster at, without credentials.
	// +optional
	URL string `json:"url,omitempty"`
	// Phase is an ECK Elasticsearch's status.phase (Ready, ApplyingChanges, MigratingData,
	// Stalled, Invalid).
	// +optional
	Phase string `json:"phase,omitempty"`
	// Health is an ECK Elasticsearch's status.health (green, yellow, red, unknown).
	// +optional
	Health string `json:"health,omitempty"`
	// DataNodes is the number of data nodes the cluster last reported
	// (number_of_data_nodes of GET _cluster/health).
	// +optional
	DataNodes *int32 `json:"dataNodes,omitempty"`
	// IndexReplicas is the number_of_replicas of Monocle's indices, when every one of them
	// has the same; unset otherwise or before the first read.
	// +optional
	IndexReplicas *int32 `json:"indexReplicas,omitempty"`
	// Authentication is, for the bundled Elasticsearch, whether its node requires
	// credentials: Enabled once its pod runs with Elasticsearch's security on, Enabling
	// until then (a new node starting, or a node from a release of the operator without
	// security, restarting once with it, on the same volume). Unset for a cluster the
	// Monocle references, whose authentication is its owner's.
	// +optional
	Authentication ElasticsearchAuthentication `json:"authentication,omitempty"`
}

// ElasticsearchAuthentication says whether the bundled Elasticsearch requires credentials.
type ElasticsearchAuthentication string

// The bundled Elasticsearch's authentication.
const (
	// ElasticsearchAuthenticationEnabling: the node's StatefulSet runs with security on, and
	// its pod does not yet.
	ElasticsearchAuthenticationEnabling ElasticsearchAuthentication = "Enabling"
	// ElasticsearchAuthenticationEnabled: the node's pod runs with security on, and answers
	// 401 to a request without credentials.
	ElasticsearchAuthenticationEnabled ElasticsearchAuthentication = "Enabled"
)
