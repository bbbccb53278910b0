package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// Label keys and values the operator stamps on what it creates.
const (
	// ManagedByLabel marks every object the operator creates; the controller's informers for
	// owned kinds select on ManagedByLabel=ManagedByValue so their caches hold only those.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of ManagedByLabel.
	ManagedByValue = "monocle-operator"
	// NameLabel is the application name label; its value is always "monocle".
	NameLabel = "app.kubernetes.io/name"
	// InstanceLabel holds the Monocle's name, so two Monocles in a namespace never share pods.
	InstanceLabel = "app.kubernetes.io/instance"
	// ComponentLabel holds the component: api, crawler or elastic.
	ComponentLabel = "app.kubernetes.io/component"
	// VersionLabel holds the image tag a workload runs.
	VersionLabel = "app.kubernetes.io/version"
	// OperatorName is the NameLabel value of the operator's own pods (deploy/03-operator.yaml,
	// the Helm chart).
	OperatorName = "monocle-operator"
)

// AnnotationPrefix starts every annotation key the operator writes.
const AnnotationPrefix = "monocle.change-metrics.io/"

// Annotation keys the operator writes.
const (
	// SpecHashAnnotation on an owned object holds the hash of the spec the operator last
	// wrote. A different hash means the desired state changed and the object is updated, even
	// where the change is a removal that a field-by-field comparison would not see.
	SpecHashAnnotation = "monocle.change-metrics.io/spec-hash"
	// ConfigHashAnnotation on a pod template holds the hash of config.yaml, so a config change
	// rolls the pods (Monocle up to 1.11.2 does not see ConfigMap volume updates).
	ConfigHashAnnotation = "monocle.change-metrics.io/config-hash"
	// SecretHashAnnotation on a pod template holds the hash of the Secret data the pods load,
	// so a changed key or token rolls them.
	SecretHashAnnotation = "monocle.change-metrics.io/secret-hash"
)

// Component names, used in object names and in ComponentLabel.
const (
	ComponentAPI     = "api"
	ComponentCrawler = "crawler"
	ComponentElastic = "elastic"
)

// Inputs are the values besides the Monocle that the builders need, gathered by the
// controller from the cluster.
type Inputs struct {
	// ConfigHash is ConfigHash of the config.yaml the pods mount.
	ConfigHash string
	// SecretHash is SecretHash of the generated keys and of the user Secret's data.
	SecretHash string
	// Stopped are the components the sync stops, for whatever reason (a restore, hibernation,
	// maintenance, an upgrade: the controller's day2.Holds): the API's and the crawler's
	// Deployments are built with zero replicas when Stopped.API and Stopped.Crawler say so.
	// The Deployment builders do not read Stopped.Elastic; NewElasticStatefulSet takes its own
	// flag.
	Stopped Stopped
	// APIImage and CrawlerImage, when set, replace the spec's images: an upgrade keeps a
	// component on its running image until its turn comes.
	APIImage, CrawlerImage string
	// APIRecreate replaces the API's pods instead of rolling them: an upgrade runs one API
	// version at a time.
	APIRecreate bool
	// CrawlerRestartedAt, when set, goes on the crawler's pod template as
	// CrawlerRestartedAtAnnotation: a new value restarts the crawler pod (as kubectl rollout
	// restart does).
	CrawlerRestartedAt string
	// APIRestartedAt, when set, goes on the API's pod template as RestartedAtAnnotation: a
	// new value restarts the API pods.
	APIRestartedAt string
	// Elastic is how the API reaches Elasticsearch; the zero value is the bundled one.
	Elastic ElasticAccess
	// TrustedCAHash is TrustedCAHash of the spec.trustedCA bundle, stamped on the crawler's
	// and the API's pod templates when the Monocle names one.
	TrustedCAHash string
}

// RestartedAtAnnotation on a pod template is the time of the last restart the operator asked
// for: of the crawler because crawlers made no progress, of the API after a read-only block
// was lifted.
const RestartedAtAnnotation = "monocle.change-metrics.io/restarted-at"

// CrawlerRestartedAtAnnotation is RestartedAtAnnotation on the crawler's pod template.
const CrawlerRestartedAtAnnotation = RestartedAtAnnotation

// APIName is the name of the API Deployment and Service, the generated Secret and the
// ConfigMap of Monocle m: "<name>-api".
func APIName(m *monoclev1alpha1.Monocle) string { return m.Name + "-" + ComponentAPI }

// CrawlerName is the name of the crawler Deployment: "<name>-crawler".
func CrawlerName(m *monoclev1alpha1.Monocle) string { return m.Name + "-" + ComponentCrawler }

// ElasticName is the name of the Elasticsearch StatefulSet and Service: "<name>-elastic".
func ElasticName(m *monoclev1alpha1.Monocle) string { return m.Name + "-" + ComponentElastic }

// SecretName is the name of the Secret holding the generated keys: "<name>-api".
func SecretName(m *monoclev1alpha1.Monocle) string { return APIName(m) }

// ConfigMapName is the name of the ConfigMap holding config.yaml: "<name>-api".
func ConfigMapName(m *monoclev1alpha1.Monocle) string { return APIName(m) }

// SelectorLabels are the labels that select the pods of one component of one Monocle.
func SelectorLabels(m *monoclev1alpha1.Monocle, component string) map[string]string {
	return map[string]string{
		NameLabel:      "monocle",
		InstanceLabel:  m.Name,
		ComponentLabel: component,
	}
}

// Labels are the labels of every object of one component of Monocle m: the selector labels
// plus ManagedByLabel.
func Labels(m *monoclev1alpha1.Monocle, component string) map[string]string {
	l := SelectorLabels(m, component)
	l[ManagedByLabel] = ManagedByValue
	return l
}

// OwnerReference is the controller owner reference that ties an object to Monocle m, so the
// garbage collector deletes it with m and the controller maps its events back to m.
func OwnerReference(m *monoclev1alpha1.Monocle) metav1.OwnerReference {
	return *metav1.NewControllerRef(m, monoclev1alpha1.SchemeGroupVersion.WithKind("Monocle"))
}

func objectMeta(m *monoclev1alpha1.Monocle, name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       m.Namespace,
		Labels:          Labels(m, component),
		OwnerReferences: []metav1.OwnerReference{OwnerReference(m)},
	}
}

// Hash returns the hex SHA-256 of v's JSON encoding, truncated to 16 characters. It panics
// only if v cannot be encoded, which for the API types built here cannot happen.
func Hash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("resources: hashing %T: %v", v, err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// setSpecHash stamps the hash of spec into meta's SpecHashAnnotation.
func setSpecHash(meta *metav1.ObjectMeta, spec any) {
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[SpecHashAnnotation] = Hash(spec)
}
