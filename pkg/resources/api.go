package resources

import (
	"cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// NewAPIDeployment builds the Deployment "<name>-api" running `monocle api` on port 8080.
// The API creates or migrates its Elasticsearch indices before it listens (Monocle 1.11.2,
// src/Main.hs), which rewrites every document when coming from 1.7 or older, so its startup
// probe allows two hours, and the liveness probe, which only starts after it, never kills a
// migration. A rolling update keeps every ready pod until its successor is ready; an upgrade
// (in.APIRecreate) replaces them, so that one API version runs at a time.
func NewAPIDeployment(m *monoclev1alpha1.Monocle, in Inputs) *appsv1.Deployment {
	env := []corev1.EnvVar{
		{Name: "MONOCLE_CONFIG", Value: ConfigPath},
		{Name: "MONOCLE_ELASTIC_URL", Value: in.Elastic.Target.PodURL()},
		{Name: "MONOCLE_PUBLIC_URL", Value: PublicURL(m)},
	}
	if m.Spec.API.Title != "" {
		env = append(env, corev1.EnvVar{Name: "MONOCLE_WEBAPP_TITLE", Value: m.Spec.API.Title})
	}
	env = append(env, secretKeyEnv(SecretName(m), CrawlersAPIKeyKey), secretKeyEnv(SecretName(m), JWKGenKeyKey))
	container := corev1.Container{
		Name:    ComponentAPI,
		Image:   cmp.Or(in.APIImage, APIImage(m)),
		Command: []string{"monocle", "api"},
		Env:     env,
		EnvFrom: monocleEnvFrom(m),
		Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: APIPort, Protocol: corev1.ProtocolTCP},
		},
		StartupProbe:   httpProbe("/health", "http", 10, 5, apiStartupFailures),
		ReadinessProbe: httpProbe("/health", "http", 10, 5, 3),
		LivenessProbe:  httpProbe("/health", "http", 20, 5, 3),
		Resources:      resourcesOr(m.Spec.API.Resources, "100m", "256Mi", "1Gi"),
	}
	strategy := appsv1.DeploymentStrategy{
		Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{
			MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			MaxSurge:       ptr.To(intstr.FromInt32(1)),
		},
	}
	if in.APIRecreate {
		strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	}
	d := newMonocleDeployment(m, APIName(m), ComponentAPI, container, in, apiReplicas(m, in), strategy)
	if in.APIRestartedAt != "" {
		d.Spec.Template.Annotations[RestartedAtAnnotation] = in.APIRestartedAt
	}
	// Only the API and the Jobs reach Elasticsearch: the crawler reads MONOCLE_CONFIG,
	// MONOCLE_PUBLIC_URL and MONOCLE_CRAWLER_MONITORING alone and talks to the API
	// (usageCrawlerEnv in src/CLI.hs at 1.11.2), so it gets no proxy and no credentials.
	addProxy(m, in.Elastic, &d.Spec.Template, true)
	addOutbound(m, in, &d.Spec.Template, ComponentAPI)
	setSpecHash(&d.ObjectMeta, d.Spec)
	return d
}

// apiStartupFailures is the API's startup probe failure threshold: with a period of 10s, two
// hours for the index migration before it listens.
const apiStartupFailures = 720

// NewAPIService builds the ClusterIP Service "<name>-api" on port 8080 in front of the API.
func NewAPIService(m *monoclev1alpha1.Monocle) *corev1.Service {
	return newService(m, APIName(m), ComponentAPI, "http", APIPort)
}

// EarlierSelector is the selector the earlier operator (change-metrics/monocle-operator
// v0.0.2) gave the workloads and Services of a component: {app: monocle, tier: <component>}.
// It names no instance, so two such Monocles in a namespace shared their Services' pods.
func EarlierSelector(component string) map[string]string {
	return map[string]string{"app": "monocle", "tier": component}
}

// WithSelector returns a copy of the Service s selecting selector, with its spec hash
// stamped anew.
func WithSelector(s *corev1.Service, selector map[string]string) *corev1.Service {
	out := s.DeepCopy()
	out.Spec.Selector = selector
	setSpecHash(&out.ObjectMeta, out.Spec)
	return out
}

// newService builds a ClusterIP Service for one component, with one TCP port whose target is
// the container port of the same name.
func newService(m *monoclev1alpha1.Monocle, name, component, portName string, port int32) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: objectMeta(m, name, component),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: SelectorLabels(m, component),
			Ports: []corev1.ServicePort{{
				Name:       portName,
				Port:       port,
				TargetPort: intstr.FromString(portName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
	setSpecHash(&s.ObjectMeta, s.Spec)
	return s
}

// versionLabel turns an image tag into a valid label value (at most 63 characters of
// [A-Za-z0-9._-]); a digest keeps its first 63 hex characters.
func versionLabel(image string) string {
	tag := ImageTag(image)
	out := make([]byte, 0, len(tag))
	for i := 0; i < len(tag) && len(out) < 63; i++ {
		c := tag[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
			out = append(out, c)
		}
	}
	// A label value must start and end with an alphanumeric character.
	for len(out) > 0 && !isAlnum(out[0]) {
		out = out[1:]
	}
	for len(out) > 0 && !isAlnum(out[len(out)-1]) {
		out = out[:len(out)-1]
	}
	return string(out)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// apiReplicas is APIReplicas(m), or 0 while the sync stops the API (in.Stopped.API).
func apiReplicas(m *monoclev1alpha1.Monocle, in Inputs) int32 {
	if in.Stopped.API {
		return 0
	}
	return APIReplicas(m)
}
