package integration

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// outboundSpec is the outbound part of the spec of the Monocles of TestOutboundNetwork.
const outboundSpec = `  proxy: {httpsProxy: 'http://proxy.corp.example.com:3128', httpProxy: 'http://proxy.corp.example.com:3128', noProxy: '.corp.example.com'}
  trustedCA: {name: corp-bundle, key: ca-bundle.pem}
  crawler: {tls: {ciphers: 'DEFAULT:@SECLEVEL=1'}}
`

// outboundPEM is a CA bundle of the shape trust-manager writes (the operator checks that the
// key holds a PEM certificate, not the certificate itself).
const outboundPEM = "-----BEGIN CERTIFICATE-----\nMIIBfirst\n-----END CERTIFICATE-----\n"

// outboundNames are the variables of the outbound settings.
var outboundNames = []string{"https_proxy", "http_proxy", "no_proxy", "API_PROXY", "SSL_CERT_FILE", "TLS_NO_VERIFY", "TLS_CIPHERS"}

// applyOutboundMonocle applies, as the tenant of ns, day2Monocle named name in ns with
// outboundSpec, and elasticsearch as its spec.elasticsearch (flow YAML) when not empty.
func applyOutboundMonocle(t *testing.T, ns, name, elasticsearch string) {
	t.Helper()
	manifest := strings.Replace(day2Monocle, "name: m\n", "name: "+name+"\n", 1)
	manifest = strings.Replace(manifest, "spec:\n", "spec:\n"+outboundSpec, 1)
	if elasticsearch != "" {
		manifest = strings.Replace(manifest, "spec:\n", "spec:\n  elasticsearch: "+elasticsearch+"\n", 1)
	}
	if out, err := tenant(t, ns).RunStdin(t.Context(), manifest, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}

// outboundOf returns the outbound variables of a container as name=value, and whether it
// mounts the trusted CA bundle.
func outboundOf(c corev1.Container) (env []string, mounted bool) {
	for _, e := range c.Env {
		if slices.Contains(outboundNames, e.Name) {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	for _, v := range c.VolumeMounts {
		if v.MountPath == resources.TrustedCADir {
			mounted = v.ReadOnly
		}
	}
	return env, mounted
}

// expectOutbound checks the Monocle container of a pod spec of component: its outbound
// variables are want (in order), and it mounts the bundle; every other container of the
// pod (the Elasticsearch proxy sidecar) has none of it.
func expectOutbound(t *testing.T, what string, pod corev1.PodSpec, component string, want []string) {
	t.Helper()
	for _, c := range append(pod.Containers, pod.InitContainers...) {
		got, mounted := outboundOf(c)
		if c.Name != component {
			if len(got) > 0 || mounted {
				t.Errorf("%s, container %s: outbound settings %q, bundle mounted %v; want none", what, c.Name, got, mounted)
			}
			continue
		}
		if !slices.Equal(got, want) || !mounted {
			t.Errorf("%s, container %s: outbound settings\n got %q\nwant %q\nbundle mounted read-only: %v", what, c.Name, got, want, mounted)
		}
	}
}

// expectNoOutbound checks that no container of pod has outbound settings or the bundle.
func expectNoOutbound(t *testing.T, what string, pod corev1.PodSpec) {
	t.Helper()
	expectOutbound(t, what, pod, "", nil)
}

// podsOf returns the pods of component of Monocle name in ns.
func podsOf(t *testing.T, ns, name, component string) []corev1.Pod {
	t.Helper()
	list, err := env.Kube.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{
		LabelSelector: resources.InstanceLabel + "=" + name + "," + resources.ComponentLabel + "=" + component})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestOutboundNetwork: spec.proxy, spec.trustedCA and spec.crawler.tls reach the crawler's and
// the API's containers and pods, never Elasticsearch, the Jobs or the Elasticsearch proxy
// sidecar; a new CA bundle rolls the crawler and the API alone, new crawler TLS settings the
// crawler alone; a Monocle whose bundle is missing says so and starts no API or crawler until
// it is there; an https:// proxy, which Monocle cannot use, is refused at admission.
func TestOutboundNetwork(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := t.Context()
	ns := "outbound"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	env.Kubectl.Must(t, "create", "configmap", "corp-bundle", "-n", ns, "--from-literal=ca-bundle.pem="+outboundPEM)
	env.Kubectl.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	applyOutboundMonocle(t, ns, "m", "")
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")

	apiNames := "m-api,m-api.outbound,m-api.outbound.svc,m-api.outbound.svc.cluster.local"
	common := []string{"https_proxy=http://proxy.corp.example.com:3128", "http_proxy=http://proxy.corp.example.com:3128"}
	wantAPI := append(slices.Clone(common),
		"no_proxy=.corp.example.com,"+apiNames+",m-elastic,m-elastic.outbound,m-elastic.outbound.svc,m-elastic.outbound.svc.cluster.local,localhost,127.0.0.1",
		"SSL_CERT_FILE=/etc/pki/tls/certs/ca-bundle.crt")
	wantCrawler := append(slices.Clone(common), "no_proxy=.corp.example.com,"+apiNames+",localhost,127.0.0.1",
		"API_PROXY=", "SSL_CERT_FILE=/etc/pki/tls/certs/ca-bundle.crt", "TLS_CIPHERS=DEFAULT:@SECLEVEL=1")
	deployment := func(name string) *appsv1.Deployment {
		d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	statefulSet := func() *appsv1.StatefulSet {
		s, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, "m-elastic", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("the crawler and the API get them, nothing else", func(t *testing.T) {
		expectOutbound(t, "Deployment m-api", deployment("m-api").Spec.Template.Spec, resources.ComponentAPI, wantAPI)
		expectOutbound(t, "Deployment m-crawler", deployment("m-crawler").Spec.Template.Spec, resources.ComponentCrawler, wantCrawler)
		for component, want := range map[string][]string{resources.ComponentAPI: wantAPI, resources.ComponentCrawler: wantCrawler} {
			pods := podsOf(t, ns, "m", component)
			if len(pods) == 0 {
				t.Errorf("no %s pod", component)
			}
			for _, p := range pods {
				expectOutbound(t, "pod "+p.Name, p.Spec, component, want)
			}
		}
		expectNoOutbound(t, "StatefulSet m-elastic", statefulSet().Spec.Template.Spec)
		for _, p := range podsOf(t, ns, "m", resources.ComponentElastic) {
			expectNoOutbound(t, "pod "+p.Name, p.Spec)
		}
		// A config change runs update-idents.
		config := strings.Replace(getMonocle(t, ns, "m").Spec.Config, "2024-01-01", "2024-02-01", 1)
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"config": config}})
		patchMonocle(t, ns, string(patch))
		job := "m-update-idents-" + resources.ConfigHash(config)[:8]
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=create", "--timeout=60s", "job/"+job)
		j, err := env.Kube.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		expectNoOutbound(t, "Job "+j.Name, j.Spec.Template.Spec)
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "monocle/m")
	})

	t.Run("the Elasticsearch proxy sidecar does not get them", func(t *testing.T) {
		env.Elastic.ServePlainHTTP("outbound.example.com")
		env.Elastic.Cluster("outbound.example.com").SetIndices("monocle.config")
		env.Kubectl.Must(t, "create", "secret", "generic", "es-credentials", "-n", ns,
			"--from-literal=username="+testkit.ClusterUser, "--from-literal=password="+testkit.ClusterPassword)
		applyOutboundMonocle(t, ns, "ext", "{external: {url: 'http://outbound.example.com:9200', credentialsSecretRef: {name: es-credentials}}}")
		var api *appsv1.Deployment
		testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "Deployment ext-api", func() (err error) {
			api, err = env.Kube.AppsV1().Deployments(ns).Get(ctx, "ext-api", metav1.GetOptions{})
			return err
		})
		if len(api.Spec.Template.Spec.InitContainers) == 0 {
			t.Fatal("the API of a cluster with credentials has no proxy sidecar")
		}
		// The API reaches Elasticsearch on 127.0.0.1 through the sidecar: no other
		// Elasticsearch host in no_proxy.
		want := append(slices.Clone(common),
			"no_proxy=.corp.example.com,ext-api,ext-api.outbound,ext-api.outbound.svc,ext-api.outbound.svc.cluster.local,localhost,127.0.0.1",
			"SSL_CERT_FILE=/etc/pki/tls/certs/ca-bundle.crt")
		expectOutbound(t, "Deployment ext-api", api.Spec.Template.Spec, resources.ComponentAPI, want)
		env.Kubectl.Must(t, "delete", "-n", ns, "monocle/ext", "--wait=false")
	})

	t.Run("a new CA bundle rolls the crawler and the API alone", func(t *testing.T) {
		before := takeSnapshot(t, ns)
		jobs := updateIdentsJobs(t, ns, "m")
		env.Kubectl.Must(t, "patch", "configmap", "-n", ns, "corp-bundle", "--type=merge",
			"-p", fmt.Sprintf(`{"data":{"ca-bundle.pem":%q}}`, outboundPEM+strings.Replace(outboundPEM, "first", "second", 1)))
		before.waitAnnotationChanged(t, ns, resources.TrustedCAHashAnnotation, "m-api", "m-crawler")
		before.expectUnchanged(t, ns, "m-elastic")
		for j := range updateIdentsJobs(t, ns, "m") {
			if !jobs[j] {
				t.Errorf("the new bundle started Job %s", j)
			}
		}
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "monocle/m")
	})

	t.Run("new crawler TLS settings roll the crawler alone", func(t *testing.T) {
		before := takeSnapshot(t, ns)
		patchMonocle(t, ns, `{"spec":{"crawler":{"tls":{"insecureSkipVerify":true,"ciphers":"HIGH"}}}}`)
		testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "crawler rolled", func() error {
			if takeSnapshot(t, ns).generations["m-crawler"] == before.generations["m-crawler"] {
				return fmt.Errorf("m-crawler not updated")
			}
			return nil
		})
		got, _ := outboundOf(deployment("m-crawler").Spec.Template.Spec.Containers[0])
		if !slices.Contains(got, "TLS_NO_VERIFY=1") || !slices.Contains(got, "TLS_CIPHERS=HIGH") {
			t.Errorf("crawler TLS settings %q, want TLS_NO_VERIFY=1 and TLS_CIPHERS=HIGH", got)
		}
		// The operator acts on the whole spec in one sync: by now the API would have moved.
		before.expectUnchanged(t, ns, "m-api", "m-elastic")
	})

	t.Run("a missing bundle holds the API and the crawler", func(t *testing.T) {
		manifest := strings.Replace(day2Monocle, "name: m\n", "name: nobundle\n", 1)
		manifest = strings.Replace(manifest, "spec:\n", "spec:\n  trustedCA: {name: later-bundle, key: ca.crt}\n", 1)
		if out, err := env.Kubectl.RunStdin(ctx, manifest, "apply", "-n", ns, "-f", "-"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		c := waitCondition(t, ns, "nobundle", monoclev1alpha1.ConditionSecretsReady, metav1.ConditionFalse, reasons.ConfigMapNotFound)
		if !strings.Contains(c.Message, "later-bundle") {
			t.Errorf("SecretsReady message does not name the ConfigMap: %q", c.Message)
		}
		waitCondition(t, ns, "nobundle", monoclev1alpha1.ConditionDegraded, metav1.ConditionTrue, reasons.ConfigMapNotFound)
		// Elasticsearch is made: only what mounts the bundle waits.
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=create", "--timeout=60s", "statefulset/nobundle-elastic")
		for _, d := range []string{"nobundle-api", "nobundle-crawler"} {
			if _, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("Deployment %s: %v, want it not created while the bundle is missing", d, err)
			}
		}
		env.Kubectl.Must(t, "create", "configmap", "later-bundle", "-n", ns, "--from-literal=ca.crt="+outboundPEM)
		waitCondition(t, ns, "nobundle", monoclev1alpha1.ConditionSecretsReady, metav1.ConditionTrue, reasons.SecretsPresent)
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/nobundle")
	})

	t.Run("an https:// proxy is refused", func(t *testing.T) {
		out, err := env.Kubectl.Run(ctx, "patch", "-n", ns, "monocle/m", "--type=merge",
			"-p", `{"spec":{"proxy":{"httpsProxy":"https://proxy.corp.example.com:3128"}}}`)
		if err == nil || !strings.Contains(out, "spec.proxy.httpsProxy") || !strings.Contains(out, "must be http://") {
			t.Errorf("patch to an https:// proxy: %v: %s; want a refusal naming spec.proxy.httpsProxy", err, out)
		}
	})
}
