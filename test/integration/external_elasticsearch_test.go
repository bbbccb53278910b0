package integration

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// installECK installs ECK's Elasticsearch CRD until the end of the test, then removes it, so
// that each test starts without it.
func installECK(t *testing.T) {
	t.Helper()
	path, err := env.InstallECK(t.Context())
	// Removed at the end, and waited for: a CRD being deleted cannot be installed again.
	if path != "" {
		t.Cleanup(func() { _, _ = env.Kubectl.Run(context.Background(), "delete", "--timeout=60s", "-f", path) })
	}
	if err != nil {
		t.Fatal(err)
	}
}

// eckInstalled reports whether the cluster serves ECK's Elasticsearch API.
func eckInstalled(t *testing.T) bool {
	_, err := env.Kubectl.Run(t.Context(), "get", "crd", testkit.ECKCRDName)
	return err == nil
}

// createECK creates, in ns, the ECK Elasticsearch "es" with the Secrets ECK makes for it and
// its status phase and health (testkit.Env.CreateECK).
func createECK(t *testing.T, ns, phase, health string) {
	t.Helper()
	if err := env.CreateECK(t.Context(), ns, phase, health); err != nil {
		t.Fatal(err)
	}
}

// setECKStatus sets status.phase and status.health of the ECK Elasticsearch "es" of ns.
func setECKStatus(t *testing.T, ns, phase, health string) {
	t.Helper()
	if err := env.SetECKStatus(t.Context(), ns, phase, health); err != nil {
		t.Fatal(err)
	}
}

// applyMonocle creates, as the tenant of ns, the Monocle of day2Monocle named name in ns (with
// the Secret "tokens", created unless it exists), with elasticsearch as its
// spec.elasticsearch (flow YAML) when not empty.
func applyMonocle(t *testing.T, ns, name, elasticsearch string) {
	t.Helper()
	applyMonocleAs(t, tenant(t, ns), ns, name, elasticsearch)
}

// applyMonocleAs is applyMonocle acting as k (a tenant of ns: testkit.Tenant).
func applyMonocleAs(t *testing.T, k testkit.Kubectl, ns, name, elasticsearch string) {
	t.Helper()
	ctx := t.Context()
	if _, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, "tokens", metav1.GetOptions{}); err != nil {
		k.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	}
	manifest := strings.Replace(day2Monocle, "name: m\n", "name: "+name+"\n", 1)
	if elasticsearch != "" {
		manifest = strings.Replace(manifest, "spec:\n", "spec:\n  elasticsearch: "+elasticsearch+"\n", 1)
	}
	if out, err := k.RunStdin(ctx, manifest, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}

// expectNoPods fails the test if namespace ns has pods: a Monocle whose cluster is not there
// or not usable starts none.
func expectNoPods(t *testing.T, ns string) {
	t.Helper()
	if pods := env.Kubectl.Must(t, "get", "pods", "-n", ns, "-o", "name"); strings.TrimSpace(pods) != "" {
		t.Errorf("pods run in %s while the Monocle's Elasticsearch is not usable:\n%s", ns, pods)
	}
}

// expectNoBundledObjects fails the test if namespace ns has objects of a bundled
// Elasticsearch (testkit.Env.BundledObjects) for Monocle m.
func expectNoBundledObjects(t *testing.T, ns, m string) {
	t.Helper()
	found, err := env.BundledObjects(t.Context(), ns, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 0 {
		t.Errorf("%s has objects of a bundled Elasticsearch: %v", ns, found)
	}
}

// expectNoPassword fails the test if a Deployment, StatefulSet, Job or Pod of ns has user's
// password, plain or in base64 (alone, or with the user as a basic-auth header has it),
// anywhere: env, args, command, annotations.
func expectNoPassword(t *testing.T, ns, user, password string) {
	t.Helper()
	workloads := env.Kubectl.Must(t, "get", "deployments,statefulsets,jobs,pods", "-n", ns, "-o", "json")
	for _, s := range []string{password, base64.StdEncoding.EncodeToString([]byte(password)),
		base64.StdEncoding.EncodeToString([]byte(user + ":" + password))} {
		if strings.Contains(workloads, s) {
			t.Errorf("the workloads of %s carry the password of %s (%q)", ns, user, s)
		}
	}
}

// expectProxy checks the proxy of Monocle m of ns: the API's pods reach the cluster through
// the sidecar on 127.0.0.1, and the proxy Secret holds user's credentials (and caPEM, unless
// nil).
func expectProxy(t *testing.T, ns, m, user, password string, caPEM []byte) {
	t.Helper()
	ctx := t.Context()
	api, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, m+"-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := api.Spec.Template.Spec
	sidecar := false
	for _, c := range pod.InitContainers {
		if c.Name == resources.ComponentProxy && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecar = true
		}
	}
	if !sidecar {
		t.Errorf("the API's pods have no proxy sidecar: init containers %+v", pod.InitContainers)
	}
	url := ""
	for _, c := range pod.Containers {
		for _, e := range c.Env {
			if e.Name == "MONOCLE_ELASTIC_URL" {
				url = e.Value
			}
		}
	}
	if url != "http://127.0.0.1:9200" {
		t.Errorf("MONOCLE_ELASTIC_URL = %q, want the proxy's http://127.0.0.1:9200", url)
	}
	if api.Spec.Template.Annotations[resources.ProxyHashAnnotation] == "" {
		t.Errorf("the API's pod template has no %s annotation", resources.ProxyHashAnnotation)
	}
	secret, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, m+"-elastic-proxy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if conf := string(secret.Data[resources.ProxyConfigKey]); !strings.Contains(conf, basicAuth(user, password)) {
		t.Errorf("the proxy's nginx.conf does not send the credentials:\n%s", conf)
	}
	if caPEM != nil && string(secret.Data[resources.ProxyCAKey]) != string(caPEM) {
		t.Errorf("the proxy Secret's %s is not the cluster's CA", resources.ProxyCAKey)
	}
}

// basicAuth is the Authorization header of user and password.
func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// waitCluster waits until status.elasticsearchCluster passes check.
func waitCluster(t *testing.T, ns, name, what string, check func(*monoclev1alpha1.ElasticsearchClusterStatus) error) {
	t.Helper()
	testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, what, func() error {
		c := getMonocle(t, ns, name).Status.ElasticsearchCluster
		if c == nil {
			return fmt.Errorf("no status.elasticsearchCluster")
		}
		return check(c)
	})
}

// greenOf3 is the _cluster/health answer of a green cluster of three data nodes
// (Elasticsearch 7.17, Cluster health API).
var greenOf3 = strings.NewReplacer(`"yellow"`, `"green"`, `"number_of_nodes":1,"number_of_data_nodes":1`,
	`"number_of_nodes":3,"number_of_data_nodes":3`, `"unassigned_shards":3`, `"unassigned_shards":0`).Replace(testkit.ElasticYellow)

// TestElasticsearchRef: a Monocle referencing an ECK Elasticsearch of another namespace, with
// a ReferenceGrant there and credentials of its own, waits, with a condition and no pod,
// while ECK's API is not served, while the Elasticsearch does not exist and while it is not
// Ready; then it becomes Ready without a bundled node, its pods reach the cluster through the
// proxy sidecar and carry no password, and its health and crawlers' progress are read from
// that cluster (over TLS, with its CA and the Monocle's credentials), not from the Monocle's
// namespace.
func TestElasticsearchRef(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns, esNS := "eck-monocle", "eck-cluster"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	testkit.MustCreateNamespace(t, env.Kube, esNS)
	installReferenceGrants(t)
	grantMonocles(t, esNS, ns, "es")
	createClusterUser(t, env.Kubectl, ns)
	ref := "{elasticsearchRef: {name: es, namespace: " + esNS + ", credentialsSecretRef: {name: " + clusterUserSecret + "}}}"

	if eckInstalled(t) {
		t.Logf("ECK's CRD is installed already: the Monocle is created with it")
	} else {
		applyMonocle(t, ns, "m", ref)
		c := waitCondition(t, ns, "m", monoclev1alpha1.ConditionElasticsearchHealthy, metav1.ConditionFalse, reasons.ElasticsearchNotFound)
		if !strings.Contains(c.Message, "does not serve ECK's API") {
			t.Errorf("ElasticsearchHealthy message %q does not say ECK's API is not served", c.Message)
		}
		expectNoPods(t, ns)
	}
	installECK(t)
	applyMonocle(t, ns, "m", ref)
	// ECK's API now served, the operator finds that the Elasticsearch does not exist.
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "ElasticsearchNotFound naming the missing Elasticsearch", func() error {
		c := apimeta.FindStatusCondition(getMonocle(t, ns, "m").Status.Conditions, monoclev1alpha1.ConditionElasticsearchHealthy)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reasons.ElasticsearchNotFound ||
			!strings.Contains(c.Message, esNS+"/es") || !strings.Contains(c.Message, "does not exist") {
			return fmt.Errorf("condition is %+v", c)
		}
		return nil
	})
	if ready := apimeta.FindStatusCondition(getMonocle(t, ns, "m").Status.Conditions, monoclev1alpha1.ConditionReady); ready == nil || ready.Status == metav1.ConditionTrue {
		t.Errorf("Ready = %+v while the Elasticsearch does not exist", ready)
	}
	expectNoPods(t, ns)
	if panic := hostileOperatorPanic(); panic != "" {
		t.Fatalf("the operator panicked:\n%s", panic)
	}

	env.Elastic.Answer(esNS, testkit.ElasticAnswer{Health: greenOf3, Allocation: testkit.Allocation40})
	createECK(t, esNS, "ApplyingChanges", "unknown")
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionElasticsearchHealthy, metav1.ConditionUnknown, reasons.ElasticsearchNotReady)
	expectNoPods(t, ns)
	setECKStatus(t, esNS, "Ready", "green")
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")

	url := "https://es-es-http." + esNS + ".svc:9200"
	waitCluster(t, ns, "m", "the ECK cluster in the status", func(c *monoclev1alpha1.ElasticsearchClusterStatus) error {
		if c.Kind != monoclev1alpha1.ElasticsearchECK || c.URL != url || c.Phase != "Ready" || c.Health != "green" {
			return fmt.Errorf("status.elasticsearchCluster = %+v", c)
		}
		return nil
	})
	expectNoBundledObjects(t, ns, "m")
	expectProxy(t, ns, "m", testkit.ClusterUser, testkit.ClusterPassword, env.Elastic.CAPEM())
	expectNoPassword(t, ns, testkit.ClusterUser, testkit.ClusterPassword)

	// Health: the referenced cluster's answer (green, of its namespace), not the yellow the
	// fake gives the Monocle's namespace.
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionElasticsearchHealthy, metav1.ConditionTrue, "Green")
	if h := getMonocle(t, ns, "m").Status.ElasticsearchHealth; h == nil || h.Status != "green" {
		t.Errorf("status.elasticsearchHealth = %+v, want the cluster's green", h)
	}
	// Crawler progress: the metadata of that cluster's index.
	until := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	env.Elastic.Cluster("es-es-http."+esNS+".svc").SetCrawlerMetadata("monocle.changes.1.demo",
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "organization", Value: "change-metrics", LastCommitAt: until})
	waitCrawledUntil(t, ns, until, 1)
	expectNoPassword(t, ns, testkit.ClusterUser, testkit.ClusterPassword)
}

// TestElasticsearchRefReplicasAndExistingRepository: on an ECK cluster of three data nodes,
// indexReplicas 1 is set on Monocle's indices of that cluster and reported, 3 is refused;
// a backup into the repository the cluster has already takes its snapshot there, on demand,
// and the operator never registers nor changes that repository.
func TestElasticsearchRefReplicasAndExistingRepository(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "eck-replicas"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	installECK(t)
	host := testkit.ECKHost(ns)
	cluster := env.Elastic.Cluster(host)
	cluster.SetIndices("monocle.config", "monocle.changes.1.demo")
	if err := env.RegisterRepository(t.Context(), host, "cluster-backups", elastic.Repository{Type: elastic.RepositoryS3, Bucket: "team-backups"}); err != nil {
		t.Fatal(err)
	}
	env.Elastic.Answer(ns, testkit.ElasticAnswer{Health: greenOf3, Allocation: testkit.Allocation40})
	createECK(t, ns, "Ready", "green")
	applyMonocle(t, ns, "m", "{elasticsearchRef: {name: es}, indexReplicas: 1}")
	patchMonocle(t, ns, `{"spec":{"backup":{"repository":{"existing":"cluster-backups"}}}}`)
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")

	testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "one replica on each Monocle index of the cluster", func() error {
		for _, ix := range cluster.Indices() {
			if ix.Replicas != 1 {
				return fmt.Errorf("%s has %d replicas", ix.Name, ix.Replicas)
			}
		}
		return nil
	})
	waitCluster(t, ns, "m", "indexReplicas 1 of 3 data nodes in the status", func(c *monoclev1alpha1.ElasticsearchClusterStatus) error {
		if c.IndexReplicas == nil || *c.IndexReplicas != 1 || c.DataNodes == nil || *c.DataNodes != 3 {
			return fmt.Errorf("status.elasticsearchCluster = %+v", c)
		}
		return nil
	})

	tenant(t, ns).Must(t, "annotate", "-n", ns, "monocle/m", monoclev1alpha1.BackupAnnotation+"=first", "--overwrite")
	st := waitBackup(t, ns, "the on-demand snapshot", 60*time.Second, func(st *monoclev1alpha1.BackupStatus) error {
		if st.LastRequest != "first" || st.LastSuccessful == nil || !strings.HasPrefix(st.LastSuccessful.Name, "manual-") {
			return fmt.Errorf("status.backup = %+v", st)
		}
		return nil
	})
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionBackupReady, metav1.ConditionTrue, reasons.BackupSucceeded)
	var names []string
	for _, s := range cluster.Snapshots("cluster-backups") {
		names = append(names, s.Name)
	}
	if len(names) != 1 || names[0] != st.LastSuccessful.Name {
		t.Errorf("snapshots in cluster-backups: %v, want %s", names, st.LastSuccessful.Name)
	}
	if typ, settings, ok := cluster.Repository("cluster-backups"); !ok || typ != "s3" || len(settings) != 1 || settings["bucket"] != "team-backups" {
		t.Errorf("repository cluster-backups is now %v %s %v: the operator changed it", ok, typ, settings)
	}
	if _, _, ok := cluster.Repository(resources.BackupRepositoryName); ok {
		t.Errorf("the operator registered its own repository %s in a cluster it does not run", resources.BackupRepositoryName)
	}
	expectNoBundledObjects(t, ns, "m")

	// More replicas than the data nodes can hold: refused, with the indices left as they are.
	patchMonocle(t, ns, `{"spec":{"elasticsearch":{"indexReplicas":3}}}`)
	c := waitCondition(t, ns, "m", monoclev1alpha1.ConditionSpecAccepted, metav1.ConditionFalse, reasons.IndexReplicasTooHigh)
	if !strings.Contains(c.Message, "3") {
		t.Errorf("SpecAccepted message %q does not give the numbers", c.Message)
	}
	for _, ix := range cluster.Indices() {
		if ix.Replicas != 1 {
			t.Errorf("%s has %d replicas after a refused indexReplicas", ix.Name, ix.Replicas)
		}
	}
}

// TestExternalElasticsearch: a Monocle on a cluster by an http:// URL whose credentials
// Secret lacks the password waits (SecretsReady False, no pod), then becomes Ready through
// the proxy once the key is there, with no bundled node and no password in its pods, and the
// cluster records it as the owner of its Monocle indices. A second Monocle on the same
// cluster (its URL spelled otherwise), without credentials, cannot claim it and waits, the
// first one untouched.
func TestExternalElasticsearch(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns, ns2 := "external", "external-second"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	testkit.MustCreateNamespace(t, env.Kube, ns2)
	env.Elastic.ServePlainHTTP("search.example.com")
	env.Elastic.Cluster("search.example.com").SetIndices("monocle.config")
	author := tenant(t, ns)
	author.Must(t, "create", "secret", "generic", "es-credentials", "-n", ns, "--from-literal=username="+testkit.ClusterUser)
	applyMonocle(t, ns, "m", "{external: {url: 'http://search.example.com:9200', credentialsSecretRef: {name: es-credentials}}}")
	c := waitCondition(t, ns, "m", monoclev1alpha1.ConditionSecretsReady, metav1.ConditionFalse, reasons.SecretKeyMissing)
	if !strings.Contains(c.Message, "es-credentials") || !strings.Contains(c.Message, "password") {
		t.Errorf("SecretsReady message %q does not name the Secret and its key", c.Message)
	}
	expectNoPods(t, ns)

	author.Must(t, "patch", "-n", ns, "secret/es-credentials", "--type=merge",
		"-p", `{"stringData":{"password":"`+testkit.ClusterPassword+`"}}`)
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	waitCluster(t, ns, "m", "the external cluster in the status", func(c *monoclev1alpha1.ElasticsearchClusterStatus) error {
		if c.Kind != monoclev1alpha1.ElasticsearchExternal || c.URL != "http://search.example.com:9200" {
			return fmt.Errorf("status.elasticsearchCluster = %+v", c)
		}
		return nil
	})
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionElasticsearchHealthy, metav1.ConditionTrue, "Yellow")
	expectNoBundledObjects(t, ns, "m")
	expectProxy(t, ns, "m", testkit.ClusterUser, testkit.ClusterPassword, nil)
	expectNoPassword(t, ns, testkit.ClusterUser, testkit.ClusterPassword)

	if meta, ok := env.Elastic.Cluster("search.example.com").Meta(elastic.OwnerIndex); !ok || meta["namespace"] != ns {
		t.Errorf("the cluster's owner record is %v (exists %v), want the first Monocle's", meta, ok)
	}

	// The same cluster, its host in capitals and its URL with a trailing slash, without
	// credentials: the cluster refuses its claim, and it waits.
	before := map[string]string{}
	for _, d := range []string{"m-api", "m-crawler"} {
		before[d] = jsonpath(t, ns, "deployment/"+d, "{.metadata.uid}")
	}
	applyMonocle(t, ns2, "m", "{external: {url: 'http://SEARCH.example.com:9200/'}}")
	// While a Monocle starts, its status is written at most once a minute
	// (startProgressInterval): the refusal comes with the next write.
	testkit.Eventually(t, 200*time.Millisecond, 2*time.Minute, "the second Monocle's claim refused with 401", func() error {
		c := apimeta.FindStatusCondition(getMonocle(t, ns2, "m").Status.Conditions, monoclev1alpha1.ConditionElasticsearchHealthy)
		if c == nil || c.Status != metav1.ConditionUnknown || c.Reason != reasons.ElasticsearchUnclaimed || !strings.Contains(c.Message, "401") {
			return fmt.Errorf("ElasticsearchHealthy is %+v", c)
		}
		if strings.Contains(c.Message, ns+"/") {
			t.Errorf("ElasticsearchHealthy message %q names %s", c.Message, ns)
		}
		return nil
	})
	expectNoPods(t, ns2)
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionReady, metav1.ConditionTrue, reasons.AllComponentsReady)
	for d, uid := range before {
		if now := jsonpath(t, ns, "deployment/"+d, "{.metadata.uid}"); now != uid {
			t.Errorf("%s of the first Monocle was replaced (%s → %s)", d, uid, now)
		}
	}
	if c := getMonocle(t, ns, "m").Status.ElasticsearchCluster; c == nil || c.Kind != monoclev1alpha1.ElasticsearchExternal {
		t.Errorf("the first Monocle's status.elasticsearchCluster = %+v", c)
	}
}

// TestExternalElasticsearchToPlainHTTP: a Monocle on an https:// cluster with credentials
// reaches it through the proxy, whose Secret holds the password; once its tenant switches it
// to an http:// cluster without security, the operator deletes that Secret, the API's pods
// reach the new cluster directly, the operator reads that cluster, and it converges: no
// Degraded, no request the authorizer refused, the password nowhere but in the tenant's own
// Secret.
func TestExternalElasticsearchToPlainHTTP(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "external-to-plain"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	since := time.Now()
	secured, open := "secured.example.com", "open.example.com"
	env.Elastic.Cluster(secured).SetIndices("monocle.config")
	env.Elastic.ServeWithoutSecurity(open)
	env.Elastic.Cluster(open).SetIndices("monocle.config")
	author := tenant(t, ns)
	author.Must(t, "create", "secret", "generic", "es-credentials", "-n", ns,
		"--from-literal=username="+testkit.ClusterUser, "--from-literal=password="+testkit.ClusterPassword)
	author.Must(t, "create", "secret", "generic", "es-ca", "-n", ns, "--from-literal=ca.crt="+string(env.Elastic.CAPEM()))
	applyMonocle(t, ns, "m", "{external: {url: 'https://"+secured+":9200', credentialsSecretRef: {name: es-credentials}, caSecretRef: {name: es-ca}}}")
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	expectProxy(t, ns, "m", testkit.ClusterUser, testkit.ClusterPassword, env.Elastic.CAPEM())

	patchMonocle(t, ns, `{"spec":{"elasticsearch":{"external":{"url":"http://`+open+`:9200","credentialsSecretRef":null,"caSecretRef":null}}}}`)
	proxySecret := resources.ProxySecretName(&monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: ns}})
	testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "the proxy Secret deleted", func() error {
		if _, err := env.Kube.CoreV1().Secrets(ns).Get(t.Context(), proxySecret, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			degraded := apimeta.FindStatusCondition(getMonocle(t, ns, "m").Status.Conditions, monoclev1alpha1.ConditionDegraded)
			return fmt.Errorf("Secret %s: %v; Degraded %+v", proxySecret, err, degraded)
		}
		return nil
	})
	waitCluster(t, ns, "m", "the plain cluster in the status", func(c *monoclev1alpha1.ElasticsearchClusterStatus) error {
		if c.Kind != monoclev1alpha1.ElasticsearchExternal || c.URL != "http://"+open+":9200" {
			return fmt.Errorf("status.elasticsearchCluster = %+v", c)
		}
		return nil
	})
	testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "the API's pods on the plain cluster without the proxy", func() error {
		api, err := env.Kube.AppsV1().Deployments(ns).Get(t.Context(), "m-api", metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod := api.Spec.Template.Spec
		for _, c := range pod.InitContainers {
			if c.Name == resources.ComponentProxy {
				return fmt.Errorf("the API's pods still have the proxy sidecar")
			}
		}
		for _, c := range pod.Containers {
			for _, e := range c.Env {
				if e.Name == "MONOCLE_ELASTIC_URL" && e.Value != "http://"+open+":9200" {
					return fmt.Errorf("MONOCLE_ELASTIC_URL = %q", e.Value)
				}
			}
		}
		return nil
	})
	// The operator reads the new cluster, without credentials.
	until := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	env.Elastic.Cluster(open).SetCrawlerMetadata("monocle.changes.1.demo",
		testkit.FakeCrawlerEntity{Crawler: "gh", Type: "organization", Value: "change-metrics", LastCommitAt: until})
	waitCrawledUntil(t, ns, until, 1)
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionDegraded, metav1.ConditionFalse, reasons.AsExpected)

	writes, err := operatorWrites(since, ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range writes {
		if e.DeniedByAuthorizer() {
			t.Errorf("the authorizer refused the operator's %s", e)
		}
	}
	expectNoPassword(t, ns, testkit.ClusterUser, testkit.ClusterPassword)
	secrets, err := env.Kube.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		for k, v := range s.Data {
			if (s.Name != "es-credentials" && strings.Contains(string(v), testkit.ClusterPassword)) ||
				strings.Contains(string(v), base64.StdEncoding.EncodeToString([]byte(testkit.ClusterUser+":"+testkit.ClusterPassword))) {
				t.Errorf("Secret %s still holds the password of the cluster the Monocle left (key %s)", s.Name, k)
			}
		}
	}
}

// TestElasticsearchTargetAdmission: a URL with credentials in it is refused at creation, and
// a bundled Monocle cannot switch to a cluster by URL or by reference: the API server's
// validation (the CRD's rules) says why.
func TestElasticsearchTargetAdmission(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "external-admission"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	ctx := t.Context()
	author := tenant(t, ns)
	manifest := strings.Replace(day2Monocle, "spec:\n",
		"spec:\n  elasticsearch: {external: {url: 'http://"+testkit.ClusterUser+":"+testkit.ClusterPassword+"@search.example.com:9200'}}\n", 1)
	out, err := author.RunStdin(ctx, manifest, "create", "-n", ns, "-f", "-")
	if err == nil || !strings.Contains(out+err.Error(), "without credentials (use credentialsSecretRef)") {
		t.Errorf("a URL with credentials: %v: %s; want the CRD's refusal", err, out)
	}
	if _, err := env.Kubectl.Run(ctx, "get", "-n", ns, "monocle/m"); err == nil {
		t.Error("the Monocle with credentials in its URL was created")
	}

	applyMonocle(t, ns, "m", "")
	for _, patch := range []string{
		`{"spec":{"elasticsearch":{"external":{"url":"http://search.example.com:9200"}}}}`,
		`{"spec":{"elasticsearch":{"elasticsearchRef":{"name":"es"}}}}`,
	} {
		out, err := author.Run(ctx, "patch", "-n", ns, "monocle/m", "--type=merge", "-p", patch)
		if err == nil || !strings.Contains(out+err.Error(), "cannot switch between the bundled Elasticsearch") {
			t.Errorf("switching with %s: %v: %s; want the CRD's refusal", patch, err, out)
		}
	}
	if es := getMonocle(t, ns, "m").Spec.Elasticsearch; es.External != nil || es.ElasticsearchRef != nil {
		t.Errorf("spec.elasticsearch = %+v after the refused switches", es)
	}

	// A reference keeps naming the one Elasticsearch: not another name, not another
	// namespace, given or removed.
	ref := strings.Replace(day2Monocle, "spec:\n", "spec:\n  elasticsearch: {elasticsearchRef: {name: es, namespace: search}}\n", 1)
	ref = strings.Replace(ref, "name: m\n", "name: r\n", 1)
	if out, err := author.RunStdin(ctx, ref, "create", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("a Monocle with elasticsearchRef: %v: %s", err, out)
	}
	for _, patch := range []string{
		`{"spec":{"elasticsearch":{"elasticsearchRef":{"name":"es2"}}}}`,
		`{"spec":{"elasticsearch":{"elasticsearchRef":{"namespace":"other"}}}}`,
		`{"spec":{"elasticsearch":{"elasticsearchRef":{"namespace":null}}}}`,
	} {
		out, err := author.Run(ctx, "patch", "-n", ns, "monocle/r", "--type=merge", "-p", patch)
		if err == nil || !strings.Contains(out+err.Error(), "cannot name another Elasticsearch") {
			t.Errorf("changing the reference with %s: %v: %s; want the CRD's refusal", patch, err, out)
		}
	}
	if got := getMonocle(t, ns, "r").Spec.Elasticsearch.ElasticsearchRef; got == nil || got.Name != "es" || got.Namespace != "search" {
		t.Errorf("elasticsearchRef = %+v after the refused changes", got)
	}
	// Its credentials may change.
	patch := `{"spec":{"elasticsearch":{"elasticsearchRef":{"credentialsSecretRef":{"name":"monocle-user"}}}}}`
	if out, err := author.Run(ctx, "patch", "-n", ns, "monocle/r", "--type=merge", "-p", patch); err != nil {
		t.Errorf("giving the reference credentials: %v: %s", err, out)
	}
}

// TestMigrationFromBundled follows docs/external-elasticsearch.md's migration: a bundled
// Monocle takes a snapshot, which reaches a repository the ECK cluster reads (a bucket both
// share; the fake has no shared bucket, so the test copies the snapshot the backup wrote),
// and a new Monocle referencing that cluster, with that repository as its existing one and
// the snapshot as its restore, restores it before its API starts: Restored, Ready, the
// snapshot's documents in the cluster's index, the bundled Monocle untouched.
func TestMigrationFromBundled(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	from, to := "migrate-bundled", "migrate-eck"
	testkit.MustCreateNamespace(t, env.Kube, from)
	testkit.MustCreateNamespace(t, env.Kube, to)
	const docs = 42
	applyMonocle(t, from, "m", "")
	patchMonocle(t, from, `{"spec":{"backup":{}}}`)
	env.Elastic.SetIndices(from, "m", "monocle.config", "monocle.changes.1.demo")
	env.Elastic.SetDocs(from, "m", "monocle.changes.1.demo", docs)
	env.Kubectl.Must(t, "wait", "-n", from, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	tenant(t, from).Must(t, "annotate", "-n", from, "monocle/m", monoclev1alpha1.BackupAnnotation+"=move", "--overwrite")
	st := waitBackup(t, from, "the snapshot to move", 60*time.Second, func(st *monoclev1alpha1.BackupStatus) error {
		if st.LastRequest != "move" || st.LastSuccessful == nil {
			return fmt.Errorf("status.backup = %+v", st)
		}
		return nil
	})
	var snap *testkit.FakeSnapshot
	for _, s := range env.Elastic.Snapshots(from, "m", resources.BackupRepositoryName) {
		if s.Name == st.LastSuccessful.Name {
			snap = &s
		}
	}
	if snap == nil || snap.Docs["monocle.changes.1.demo"] != docs {
		t.Fatalf("snapshot %s of the bundled Monocle: %+v", st.LastSuccessful.Name, snap)
	}

	installECK(t)
	cluster := env.Elastic.Cluster(testkit.ECKHost(to))
	if err := env.RegisterRepository(t.Context(), testkit.ECKHost(to), "team-backups", elastic.Repository{Type: elastic.RepositoryS3, Bucket: "team-backups"}); err != nil {
		t.Fatal(err)
	}
	cluster.PutSnapshot("team-backups", *snap)
	createECK(t, to, "Ready", "green")
	applyMonocle(t, to, "m", "{elasticsearchRef: {name: es}}")
	patchMonocle(t, to, `{"spec":{"backup":{"repository":{"existing":"team-backups"}},"restore":{"snapshot":"`+snap.Name+`"}}}`)
	waitCondition(t, to, "m", monoclev1alpha1.ConditionRestored, metav1.ConditionTrue, reasons.Restored)
	env.Kubectl.Must(t, "wait", "-n", to, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	for _, ix := range cluster.Indices() {
		if ix.Name == "monocle.changes.1.demo" && (!ix.Open || ix.Docs != docs) {
			t.Errorf("%s on the cluster: open %v, %d documents; want the snapshot's %d", ix.Name, ix.Open, ix.Docs, docs)
		}
	}
	if n := cluster.Restores("team-backups", snap.Name); n != 1 {
		t.Errorf("the cluster accepted %d restores of %s, want 1", n, snap.Name)
	}
	expectNoBundledObjects(t, to, "m")
	if c := apimeta.FindStatusCondition(getMonocle(t, from, "m").Status.Conditions, monoclev1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("the bundled Monocle's Ready is %+v after the migration", c)
	}
}
