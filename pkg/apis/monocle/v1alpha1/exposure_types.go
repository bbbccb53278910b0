package v1alpha1

// RouteSpec is an OpenShift Route, with the fields of the earlier operator's: the host it
// exposes the API at and labels put on the Route.
type RouteSpec struct {
	// Host is the DNS name the Monocle web UI is reached at, in lowercase. Empty lets the
	// OpenShift router assign a host, which status.url then shows.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Host string `json:"host,omitempty"`
	// Labels are put on the Route, for example to pick the router shard that admits it.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Labels map[string]string `json:"labels,omitempty"`
}

// IngressSpec is the Ingress that exposes the API Service's port 8080 at host, path "/".
type IngressSpec struct {
	// Host is the DNS name the web UI is reached at, in lowercase, without a wildcard.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Host string `json:"host"`
	// ClassName is the IngressClass that serves the Ingress (spec.ingressClassName). Empty
	// means the cluster's default IngressClass.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ClassName string `json:"className,omitempty"`
	// TLS serves the host over HTTPS with the certificate of a kubernetes.io/tls Secret. Unset
	// means plain HTTP (and a default publicURL of http://<host>).
	// +optional
	TLS *IngressTLS `json:"tls,omitempty"`
	// Annotations are put on the Ingress, for the Ingress controller (such as
	// nginx.ingress.kubernetes.io/proxy-body-size). Annotations removed here are not removed
	// from the Ingress: delete them there too.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Annotations map[string]string `json:"annotations,omitempty"`
}

// IngressTLS is the certificate of an Ingress host.
type IngressTLS struct {
	// SecretName names the kubernetes.io/tls Secret holding the certificate and key, in the
	// Monocle's namespace. Defaults to "<name>-api-tls". The operator never writes it: the
	// user, or cert-manager when issuerRef is set, fills it.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SecretName string `json:"secretName,omitempty"`
	// IssuerRef names a cert-manager Issuer or ClusterIssuer: the Ingress then carries
	// cert-manager's annotation (cert-manager.io/issuer or cert-manager.io/cluster-issuer),
	// and cert-manager's ingress-shim issues the certificate into secretName.
	// +optional
	IssuerRef *IssuerReference `json:"issuerRef,omitempty"`
}

// IssuerReference names a cert-manager issuer (cert-manager.io/v1).
type IssuerReference struct {
	// Name is the Issuer's or ClusterIssuer's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Kind is Issuer (in the Monocle's namespace) or ClusterIssuer. Defaults to ClusterIssuer.
	// +optional
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	Kind string `json:"kind,omitempty"`
}

// MonitoringSpec is the PodMonitor of a Monocle's API and crawler.
type MonitoringSpec struct {
	// Labels go on the PodMonitor, next to the operator's own: the ones the
	// podMonitorSelector of your Prometheus asks for (often release: <its Helm release>).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Interval is the scrape interval, a Prometheus duration such as 30s or 1m. Defaults to
	// the Prometheus's own.
	// +optional
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`
	Interval string `json:"interval,omitempty"`
}

// HTTPRouteSpec is the Gateway API HTTPRoute that sends the hostnames' traffic, path "/", to
// the API Service's port 8080.
type HTTPRouteSpec struct {
	// ParentRefs are the Gateways (or listeners of them, by sectionName) the route attaches
	// to. A Gateway in another namespace must allow routes from this one.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	ParentRefs []ParentReference `json:"parentRefs"`
	// Hostnames are the host names the route answers, in lowercase; a leading "*." matches
	// one label. Empty means the Gateway listener's. The first one without a wildcard gives
	// the default publicURL (https://<hostname>: set publicURL when the listener serves
	// plain HTTP).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Hostnames []string `json:"hostnames,omitempty"`
}

// ParentReference names a Gateway (gateway.networking.k8s.io/v1) an HTTPRoute attaches to.
type ParentReference struct {
	// Name is the Gateway's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace is the Gateway's namespace. Defaults to the Monocle's.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// SectionName is the name of one listener of the Gateway. Empty means every listener
	// that admits the route.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SectionName string `json:"sectionName,omitempty"`
}
