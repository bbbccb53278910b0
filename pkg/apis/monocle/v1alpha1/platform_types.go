package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodPlacement is where the pods of one component run and the metadata they carry. Each
// field is set as given on the component's pod template and owned by the operator like every
// field it sets: an edit of the live Deployment, StatefulSet or Job template is put back, and
// a field removed here is removed there. The keys the operator itself sets cannot be given:
// the labels app.kubernetes.io/name, instance, component, managed-by and version, and the
// annotations of the monocle.change-metrics.io/ prefix.
type PodPlacement struct {
	// NodeSelector is the pods' nodeSelector (core/v1 PodSpec): the labels a node must have.
	// Keys and values have the syntax of label keys and values (Kubernetes' "Labels and
	// Selectors": syntax and character set).
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && !k.matches('^[^/]{254,}/'))",message="nodeSelector keys must be qualified names such as team or example.com/team: an optional DNS subdomain of at most 253 characters and '/', then at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit"
	NodeSelector map[string]LabelValue `json:"nodeSelector,omitempty"`
	// Tolerations are the pods' tolerations (core/v1 PodSpec).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// Affinity is the pods' node, pod and pod anti-affinity (core/v1 PodSpec).
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// TopologySpreadConstraints are the pods' topology spread constraints (core/v1 PodSpec),
	// to spread the API's replicas over zones or nodes. Their labelSelector selects the pods
	// to count: the component's pods carry app.kubernetes.io/instance=<name> and
	// app.kubernetes.io/component=<api|crawler|elastic>.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// PriorityClassName is the pods' PriorityClass (scheduling.k8s.io/v1), which must exist.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// PodLabels are added to the pods' labels. The operator's own labels cannot be set.
	// Keys and values have the syntax of label keys and values (Kubernetes' "Labels and
	// Selectors": syntax and character set): a key is a name of at most 63 characters with
	// an optional DNS subdomain prefix and '/', a value at most 63 characters.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && !k.matches('^[^/]{254,}/'))",message="podLabels keys must be qualified names such as team or example.com/team: an optional DNS subdomain of at most 253 characters and '/', then at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k in ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/component', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/version']))",message="podLabels cannot set the operator's own labels app.kubernetes.io/name, instance, component, managed-by and version: they select the component's pods"
	PodLabels map[string]LabelValue `json:"podLabels,omitempty"`
	// PodAnnotations are added to the pods' annotations. Keys of the
	// monocle.change-metrics.io/ prefix are the operator's and cannot be set. Keys have the
	// syntax of label keys (Kubernetes' "Annotations": syntax and character set); values
	// are free text.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && !k.matches('^[^/]{254,}/'))",message="podAnnotations keys must be qualified names such as team or example.com/team: an optional DNS subdomain of at most 253 characters and '/', then at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('monocle.change-metrics.io/'))",message="podAnnotations cannot set keys of the monocle.change-metrics.io/ prefix: they are the operator's"
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
}

// A CEL rule over the values of a map whose values have no maxLength exceeds the cost
// budget of CRD validation rules, and controller-gen has no marker for the schema of a
// map's values but that of their type: LabelValue, an alias, so that the maps stay
// map[string]string for the code.

// LabelValue is a label value: empty, or at most 63 characters (Kubernetes' "Labels and
// Selectors": syntax and character set).
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
type LabelValue = string

// JobsSpec holds the settings of the Jobs the operator runs for a Monocle: update-idents and
// the maintenance requests' janitor runs.
type JobsSpec struct {
	// Resources are the requests and limits of the Jobs' janitor container. Defaults to
	// requests of 50m CPU and 128Mi memory and a 512Mi memory limit.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// PodPlacement places the Jobs' pods.
	PodPlacement `json:",inline"`
}

// OutboundProxy is the HTTP proxy through which Monocle's pods reach the outside: the
// crawler its code hosts (GitHub, GitLab, Gerrit, Jira...), the API its OIDC provider. Monocle
// (1.11.2) reads the variables with http-client's proxyEnvironment (src/Monocle/Client.hs,
// mkManager), which also honours no_proxy. The crawler reaches the API with a client of its
// own that reads API_PROXY only, which the operator sets empty: the API is in the cluster.
// The proxy URLs hold no credentials: a proxy that needs them takes them from the Secret
// credentialsSecretRef names.
// +kubebuilder:validation:XValidation:rule="!has(self.credentialsSecretRef) || has(self.httpsProxy) || has(self.httpProxy)",message="credentialsSecretRef needs httpsProxy or httpProxy"
type OutboundProxy struct {
	// HTTPSProxy is the proxy for https:// requests (https_proxy), such as
	// http://proxy.example.com:3128: an http:// URL, which is all Monocle's HTTP client
	// takes (https:// requests go through it with CONNECT); any other scheme would make the
	// crawler and the API fail at start (http-client's Network/HTTP/Proxy.hs, envHelper). It
	// holds no user:password@ (credentialsSecretRef gives them) and no '$', which
	// Kubernetes would read as a $(VAR) reference.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^http://[^\\s/?#@$]+/?$') && isURL(self)",message="httpsProxy must be http://, a host and an optional port, without credentials (use proxy.credentialsSecretRef): Monocle's HTTP client takes no other proxy"
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	// HTTPProxy is the proxy for http:// requests (http_proxy), an http:// URL as for
	// HTTPSProxy.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^http://[^\\s/?#@$]+/?$') && isURL(self)",message="httpProxy must be http://, a host and an optional port, without credentials (use proxy.credentialsSecretRef): Monocle's HTTP client takes no other proxy"
	HTTPProxy string `json:"httpProxy,omitempty"`
	// NoProxy is a comma-separated list of host names or domain suffixes reached without the
	// proxy (no_proxy): "example.com" covers example.com and its subdomains; ports, wildcards
	// and CIDR ranges are not understood. The operator adds the hosts in the cluster the pods
	// reach: the API Service, the Elasticsearch Service or proxy sidecar, localhost and
	// 127.0.0.1.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:Pattern=`^[^\s]*$`
	NoProxy string `json:"noProxy,omitempty"`
	// CredentialsSecretRef names a Secret of the Monocle's namespace with the keys username
	// and password (type kubernetes.io/basic-auth) that the proxy's basic authentication
	// takes. The pods read them from the Secret into MONOCLE_PROXY_USERNAME and
	// MONOCLE_PROXY_PASSWORD, and https_proxy and http_proxy refer to these variables
	// (http://$(MONOCLE_PROXY_USERNAME):$(MONOCLE_PROXY_PASSWORD)@host:port, expanded by
	// the kubelet), so no password is in the pod spec. Kubernetes does not escape the values:
	// they must be URL-safe, or percent-encoded in the Secret (RFC 3986 userinfo).
	// +optional
	CredentialsSecretRef *SecretReference `json:"credentialsSecretRef,omitempty"`
}

// ConfigMapKeyReference names one key of a ConfigMap in the Monocle's namespace.
type ConfigMapKeyReference struct {
	// Name is the ConfigMap's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key is the key holding the data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// CrawlerTLS are the crawler's TLS settings towards its code hosts, read by Monocle 1.11.2's
// mkManager (src/Monocle/Client.hs).
type CrawlerTLS struct {
	// InsecureSkipVerify sets TLS_NO_VERIFY=1: the crawler does not verify its code hosts'
	// certificates. Prefer spec.trustedCA.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// Ciphers is TLS_CIPHERS, an OpenSSL cipher list such as
	// "HIGH:!aNULL:!MD5". Monocle's default is OpenSSL's "DEFAULT".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[-+!:@=_.,A-Za-z0-9]+$`
	Ciphers string `json:"ciphers,omitempty"`
}

// HibernationPhase is where a Monocle stands in hibernation.
type HibernationPhase string

// Hibernation phases.
const (
	// HibernationHibernating: the components are being stopped, the crawler first, then the
	// API, then Elasticsearch.
	HibernationHibernating HibernationPhase = "Hibernating"
	// HibernationHibernated: no pod of the Monocle runs; volumes, keys and config are kept.
	HibernationHibernated HibernationPhase = "Hibernated"
	// HibernationWaking: the components are being started again, Elasticsearch first, then
	// the API, then the crawler.
	HibernationWaking HibernationPhase = "Waking"
)

// HibernationStatus reports a hibernation asked for by spec.hibernate, and the waking that
// follows its removal. It is removed once the Monocle is awake and Ready again.
type HibernationStatus struct {
	// Phase is Hibernating, Hibernated or Waking.
	Phase HibernationPhase `json:"phase"`
	// Stopped are the components with no pod left (crawler, api, elastic), in the order they
	// were stopped.
	// +optional
	Stopped []string `json:"stopped,omitempty"`
	// Since is when the Monocle entered Phase.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// Message says what the operator waits for.
	// +optional
	Message string `json:"message,omitempty"`
}
