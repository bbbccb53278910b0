package testkit

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// The clusters a Monocle references rather than runs are, in the suites, the fake
// Elasticsearch secured as ECK secures its clusters by default: HTTPS with a CA of its own
// and basic auth as ClusterUser with ClusterPassword (SecuredElastic). A bundled
// Elasticsearch is served without either.
const (
	// ClusterUser is the user of the secured clusters: ECK's "elastic" superuser.
	ClusterUser = "elastic"
	// ClusterPassword is ClusterUser's password.
	ClusterPassword = "Cl0ster-0wn-Pa55word"
)

// SecuredElastic are the EnvOptions.ElasticOptions of a suite whose Monocles reference
// clusters: TLS, and basic auth as ClusterUser with ClusterPassword.
func SecuredElastic() []FakeElasticOption {
	return []FakeElasticOption{WithTLS(), WithBasicAuth(ClusterUser, ClusterPassword)}
}

// ECKCRDName is the name of ECK's Elasticsearch CRD (ECKElasticsearchCRD).
const ECKCRDName = "elasticsearches.elasticsearch.k8s.elastic.co"

// InstallECK applies ECK's Elasticsearch CRD (ECKElasticsearchCRD) and waits up to 60 s
// until it is Established. It returns the CRD file, for a test that removes it
// (kubectl delete -f).
func (e *Env) InstallECK(ctx context.Context) (string, error) {
	path, err := ECKElasticsearchCRD(ctx)
	if err != nil {
		return "", err
	}
	if out, err := e.Kubectl.Run(ctx, "apply", "--server-side", "-f", path); err != nil {
		return "", fmt.Errorf("applying ECK's CRD: %v: %s", err, out)
	}
	return path, e.Kubectl.WaitEstablished(ctx, ECKCRDName)
}

// ECKElasticsearch is an ECK Elasticsearch "es" of three nodes, as
// docs/external-elasticsearch.md has it; its status is set apart (SetECKStatus), as ECK
// would.
const ECKElasticsearch = `apiVersion: elasticsearch.k8s.elastic.co/v1
kind: Elasticsearch
metadata:
  name: es
spec:
  version: 7.17.26
  nodeSets:
    - name: default
      count: 3
`

// ECKHost is the host of the HTTP Service ECK makes for the Elasticsearch "es" of namespace
// ns (<name>-es-http), through which the fake serves it (FakeElasticsearch.Cluster).
func ECKHost(ns string) string { return "es-es-http." + ns + ".svc" }

// CreateECK creates, in ns, what ECK makes for the Elasticsearch "es" (ECKElasticsearch):
// the elastic user's Secret with ClusterPassword, the public certificates' Secret with the
// fake's CA, then the Elasticsearch, with its status phase and health (SetECKStatus).
func (e *Env) CreateECK(ctx context.Context, ns, phase, health string) error {
	for name, data := range map[string]map[string][]byte{
		resources.ECKElasticUserSecret("es"): {resources.ECKElasticUser: []byte(ClusterPassword)},
		resources.ECKPublicCertsSecret("es"): {resources.ECKCAKey: e.Elastic.CAPEM()},
	} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
		if _, err := e.Kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if out, err := e.Kubectl.RunStdin(ctx, ECKElasticsearch, "apply", "-n", ns, "-f", "-"); err != nil {
		return fmt.Errorf("creating the ECK Elasticsearch: %v: %s", err, out)
	}
	return e.SetECKStatus(ctx, ns, phase, health)
}

// SetECKStatus sets status.phase and status.health of the ECK Elasticsearch "es" of ns.
func (e *Env) SetECKStatus(ctx context.Context, ns, phase, health string) error {
	args := []string{"patch", "-n", ns, ECKCRDName + "/es", "--subresource=status", "--type=merge",
		"-p", fmt.Sprintf(`{"status":{"phase":%q,"health":%q}}`, phase, health)}
	if out, err := e.Kubectl.Run(ctx, args...); err != nil {
		return fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// RegisterRepository registers repository name with repo in the cluster the fake serves at
// host (FakeElasticsearch.Cluster), as its administrators would, through package elastic
// with ClusterUser's credentials: https unless the fake runs without TLS.
func (e *Env) RegisterRepository(ctx context.Context, host, name string, repo elastic.Repository) error {
	scheme := "https://"
	if e.Elastic.CAPEM() == nil {
		scheme = "http://"
	}
	admin, err := elastic.NewClient(elastic.Config{URL: scheme + host + ":9200", Username: ClusterUser,
		Password: ClusterPassword, Transport: e.Elastic.Transport()})
	if err != nil {
		return err
	}
	return admin.EnsureRepository(ctx, name, repo)
}

// BundledObjects lists, as "kind/name", the objects of a bundled Elasticsearch that namespace
// ns holds: StatefulSets, PersistentVolumeClaims (its node, its data and backup volumes) and
// the Elasticsearch Service of Monocle m (resources.ElasticName). A Monocle on a cluster it
// does not run has none.
func (e *Env) BundledObjects(ctx context.Context, ns, m string) ([]string, error) {
	var found []string
	sets, err := e.Kube.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, s := range sets.Items {
		found = append(found, "statefulset/"+s.Name)
	}
	pvcs, err := e.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range pvcs.Items {
		found = append(found, "persistentvolumeclaim/"+p.Name)
	}
	svc := m + "-" + resources.ComponentElastic
	if _, err := e.Kube.CoreV1().Services(ns).Get(ctx, svc, metav1.GetOptions{}); err == nil {
		found = append(found, "service/"+svc)
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	return found, nil
}
