package resources

import (
	"cmp"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// NewCrawlerDeployment builds the Deployment "<name>-crawler" running `monocle crawler`. It
// always has one replica and the Recreate strategy, because two crawlers at once are not known
// to be safe. The crawler reaches the API through the API Service, authenticated by
// CRAWLERS_API_KEY, and reads provider tokens from the user's Secret. Its /health on port
// 9001 does not reflect crawl errors.
func NewCrawlerDeployment(m *monoclev1alpha1.Monocle, in Inputs) *appsv1.Deployment {
	env := []corev1.EnvVar{
		{Name: "MONOCLE_CONFIG", Value: ConfigPath},
		// For the crawler MONOCLE_PUBLIC_URL is where it reaches the API.
		{Name: "MONOCLE_PUBLIC_URL", Value: fmt.Sprintf("http://%s:%d", APIName(m), APIPort)},
		secretKeyEnv(SecretName(m), CrawlersAPIKeyKey),
	}
	container := corev1.Container{
		Name:    ComponentCrawler,
		Image:   cmp.Or(in.CrawlerImage, CrawlerImage(m)),
		Command: []string{"monocle", "crawler"},
		Env:     env,
		EnvFrom: monocleEnvFrom(m),
		Ports: []corev1.ContainerPort{
			{Name: "monitoring", ContainerPort: CrawlerPort, Protocol: corev1.ProtocolTCP},
		},
		StartupProbe:   httpProbe("/health", "monitoring", 5, 5, 60),
		ReadinessProbe: httpProbe("/health", "monitoring", 10, 5, 3),
		LivenessProbe:  httpProbe("/health", "monitoring", 30, 5, 3),
		Resources:      resourcesOr(m.Spec.Crawler.Resources, "50m", "128Mi", "512Mi"),
	}
	replicas := int32(1)
	if in.Stopped.Crawler {
		replicas = 0
	}
	d := newMonocleDeployment(m, CrawlerName(m), ComponentCrawler, container, in, replicas,
		appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType})
	if in.CrawlerRestartedAt != "" {
		d.Spec.Template.Annotations[CrawlerRestartedAtAnnotation] = in.CrawlerRestartedAt
	}
	addOutbound(m, in, &d.Spec.Template, ComponentCrawler)
	setSpecHash(&d.ObjectMeta, d.Spec)
	return d
}
