package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// day2Monocle is a Monocle whose GitHub crawler reads its token from the Secret "tokens".
const day2Monocle = `apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata:
  name: m
spec:
  secretRef:
    name: tokens
  config: |
    workspaces:
      - name: demo
        crawlers:
          - name: gh
            update_since: "2024-01-01"
            provider:
              github_organization: change-metrics
              github_token: GITHUB_TOKEN
`

// tenant returns kubectl acting as the tenant of namespace ns, a user who holds only "edit"
// there (testkit.Tenant): the tests act through it where a Monocle's author acts.
func tenant(t *testing.T, ns string) testkit.Kubectl {
	t.Helper()
	k, err := testkit.Tenant(t.Context(), env.Kubectl, ns)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// startDay2 creates a restricted namespace, and in it, as its tenant, the Secret "tokens" and
// day2Monocle, and waits until it is Ready.
func startDay2(t *testing.T, ns string) {
	t.Helper()
	testkit.MustCreateNamespace(t, env.Kube, ns)
	author := tenant(t, ns)
	author.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	if out, err := author.RunStdin(context.Background(), day2Monocle, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
}

// snapshot is what must not change behind the user's back.
type snapshot struct {
	generations map[string]int64 // Deployment/StatefulSet name → generation
	templates   map[string]map[string]string
	keys        map[string]string
	pvcUID      string
}

func takeSnapshot(t *testing.T, ns string) snapshot {
	t.Helper()
	ctx := context.Background()
	s := snapshot{generations: map[string]int64{}, templates: map[string]map[string]string{}, keys: map[string]string{}}
	for _, name := range []string{"m-api", "m-crawler"} {
		d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.generations[name], s.templates[name] = d.Generation, d.Spec.Template.Annotations
	}
	sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, "m-elastic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.generations["m-elastic"] = sts.Generation
	secret, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, "m-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range resources.GeneratedKeys {
		s.keys[k] = string(secret.Data[k])
	}
	if pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-m-elastic-0", metav1.GetOptions{}); err == nil {
		s.pvcUID = string(pvc.UID)
	}
	return s
}

// expectUnchanged fails for each of names whose generation moved, and for changed keys or PVC.
func (s snapshot) expectUnchanged(t *testing.T, ns string, names ...string) {
	t.Helper()
	now := takeSnapshot(t, ns)
	for _, n := range names {
		if now.generations[n] != s.generations[n] {
			t.Errorf("%s was changed (generation %d → %d)", n, s.generations[n], now.generations[n])
		}
	}
	for k, v := range s.keys {
		if now.keys[k] != v {
			t.Errorf("generated %s changed", k)
		}
	}
	if s.pvcUID != "" && now.pvcUID != s.pvcUID {
		t.Errorf("the Elasticsearch PVC was replaced (%s → %s)", s.pvcUID, now.pvcUID)
	}
}

// waitAnnotationChanged waits until the pod templates of the Deployments names have a value of
// annotation other than the one they had at s.
func (s snapshot) waitAnnotationChanged(t *testing.T, ns, annotation string, names ...string) {
	t.Helper()
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, strings.Join(names, " and ")+" rolled", func() error {
		now := takeSnapshot(t, ns)
		for _, d := range names {
			if now.templates[d][annotation] == s.templates[d][annotation] {
				return fmt.Errorf("%s still has the old %s", d, annotation)
			}
		}
		return nil
	})
}

func getMonocle(t *testing.T, ns, name string) *monoclev1alpha1.Monocle {
	t.Helper()
	m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitCondition waits until the Monocle's condition has the status and reason.
func waitCondition(t *testing.T, ns, name, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, fmt.Sprintf("%s=%s/%s", typ, status, reason), func() error {
		got = apimeta.FindStatusCondition(getMonocle(t, ns, name).Status.Conditions, typ)
		if got == nil || got.Status != status || got.Reason != reason {
			return fmt.Errorf("condition is %+v", got)
		}
		return nil
	})
	return got
}

// patchMonocle merge-patches Monocle ns/m as the tenant of ns.
func patchMonocle(t *testing.T, ns, patch string) {
	t.Helper()
	tenant(t, ns).Must(t, "patch", "-n", ns, "monocle/m", "--type=merge", "-p", patch)
}

func TestSecretChangesRollAPIAndCrawlerOnly(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "day2-secrets"
	startDay2(t, ns)
	before := takeSnapshot(t, ns)

	// Labels alone roll nothing.
	env.Kubectl.Must(t, "label", "secret", "-n", ns, "tokens", "team=a")
	time.Sleep(3 * time.Second)
	before.expectUnchanged(t, ns, "m-api", "m-crawler", "m-elastic")

	// A new token rolls the API and the crawler, and never Elasticsearch.
	env.Kubectl.Must(t, "patch", "secret", "-n", ns, "tokens", "--type=merge", "-p", `{"stringData":{"GITHUB_TOKEN":"second"}}`)
	before.waitAnnotationChanged(t, ns, resources.SecretHashAnnotation, "m-api", "m-crawler")
	before.expectUnchanged(t, ns, "m-elastic")
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "monocle/m")

	// A deleted Secret is reported and holds every rollout until it is back, then a missing
	// token holds the crawler.
	rolled := takeSnapshot(t, ns)
	env.Kubectl.Must(t, "delete", "secret", "-n", ns, "tokens")
	c := waitCondition(t, ns, "m", monoclev1alpha1.ConditionSecretsReady, metav1.ConditionFalse, "SecretNotFound")
	if !strings.Contains(c.Message, "tokens") {
		t.Errorf("SecretsReady message does not name the Secret: %q", c.Message)
	}
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "an event naming the missing Secret", func() error {
		if events := env.Kubectl.Must(t, "get", "events", "-n", ns, "--field-selector", "reason=SecretNotFound"); !strings.Contains(events, "tokens") {
			return fmt.Errorf("no SecretNotFound event names the Secret:\n%s", events)
		}
		return nil
	})
	env.Kubectl.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=OTHER=x")
	c = waitCondition(t, ns, "m", monoclev1alpha1.ConditionSecretsReady, metav1.ConditionFalse, "TokenMissing")
	if !strings.Contains(c.Message, "GITHUB_TOKEN") {
		t.Errorf("TokenMissing message does not name GITHUB_TOKEN: %q", c.Message)
	}
	// The missing token holds the crawler alone: the API, which reads the Secret too, rolls
	// to its new data and keeps serving.
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "API rolled", func() error {
		if takeSnapshot(t, ns).templates["m-api"][resources.SecretHashAnnotation] == rolled.templates["m-api"][resources.SecretHashAnnotation] {
			return fmt.Errorf("m-api still has the old secret hash")
		}
		return nil
	})
	rolled.expectUnchanged(t, ns, "m-crawler", "m-elastic")

	env.Kubectl.Must(t, "patch", "secret", "-n", ns, "tokens", "--type=merge", "-p", `{"stringData":{"GITHUB_TOKEN":"third"}}`)
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionSecretsReady, metav1.ConditionTrue, "SecretsPresent")
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "monocle/m")
	before.expectUnchanged(t, ns, "m-elastic")
}

func TestConfigChangeRunsUpdateIdents(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns := "day2-config"
	startDay2(t, ns)
	before := takeSnapshot(t, ns)
	if m := getMonocle(t, ns, "m"); m.Status.UpdateIdents != nil {
		t.Errorf("a new Monocle ran update-idents: %+v", m.Status.UpdateIdents)
	}

	newConfig := `workspaces:
  - name: demo
    crawlers:
      - name: gh
        update_since: "2024-01-01"
        provider:
          github_organization: change-metrics
          github_token: GITHUB_TOKEN
    idents:
      - ident: Jane Doe
        aliases: [github.com/jane-doe]
`
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"config": newConfig}})
	patchMonocle(t, ns, string(patch))
	hash := resources.ConfigHash(newConfig)
	jobName := "m-update-idents-" + hash[:8]
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "update-idents succeeded", func() error {
		m := getMonocle(t, ns, "m")
		if m.Status.UpdateIdents == nil || m.Status.UpdateIdents.Name != jobName || m.Status.UpdateIdents.Phase != monoclev1alpha1.JobSucceeded {
			return fmt.Errorf("status.updateIdents = %+v", m.Status.UpdateIdents)
		}
		return nil
	})
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionIdentsUpdated, metav1.ConditionTrue, "UpdateIdentsSucceeded")
	cm, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "m-api", metav1.GetOptions{})
	if err != nil || cm.Data["config.yaml"] != newConfig {
		t.Errorf("ConfigMap not updated: %v", err)
	}
	after := takeSnapshot(t, ns)
	for _, d := range []string{"m-api", "m-crawler"} {
		if after.templates[d][resources.ConfigHashAnnotation] != hash {
			t.Errorf("%s was not restarted with the new config (Monocle 1.11.2 does not reload it)", d)
		}
	}
	before.expectUnchanged(t, ns, "m-elastic")
	jobs := func() []string {
		list, err := env.Kube.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(
			resources.SelectorLabels(getMonocle(t, ns, "m"), resources.ComponentUpdateIdents)).String()})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range list.Items {
			names = append(names, j.Name)
		}
		return names
	}
	if got := jobs(); len(got) != 1 || got[0] != jobName {
		t.Errorf("update-idents Jobs = %v, want only %s", got, jobName)
	}

	// An invalid config is refused; the running Monocle keeps the last valid one.
	patchMonocle(t, ns, `{"spec":{"config":"workspaces:\n  - name: demo\n    crawlers: []\n  - name: demo\n    crawlers: []\n"}}`)
	c := waitCondition(t, ns, "m", monoclev1alpha1.ConditionConfigValid, metav1.ConditionFalse, "InvalidConfig")
	if !strings.Contains(c.Message, "demo") {
		t.Errorf("ConfigValid message does not say what is wrong: %q", c.Message)
	}
	time.Sleep(2 * time.Second)
	if cm, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "m-api", metav1.GetOptions{}); err != nil || cm.Data["config.yaml"] != newConfig {
		t.Errorf("the ConfigMap lost the last valid config: %v", err)
	}
	after.expectUnchanged(t, ns, "m-api", "m-crawler", "m-elastic")
	if got := jobs(); len(got) != 1 {
		t.Errorf("an invalid config started a Job: %v", got)
	}
	if r := apimeta.FindStatusCondition(getMonocle(t, ns, "m").Status.Conditions, monoclev1alpha1.ConditionReady); r == nil || r.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v: the last valid config still serves", r)
	}
}

func TestUpgradeScaleAndPause(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns := "day2-upgrade"
	startDay2(t, ns)
	before := takeSnapshot(t, ns)

	t.Run("a Monocle upgrade rolls API and crawler and shows the version", func(t *testing.T) {
		patchMonocle(t, ns, `{"spec":{"image":"quay.io/change-metrics/monocle:1.11.1"}}`)
		testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "version 1.11.1 running", func() error {
			m := getMonocle(t, ns, "m")
			if m.Status.Version != "1.11.1" || !apimeta.IsStatusConditionTrue(m.Status.Conditions, monoclev1alpha1.ConditionReady) {
				return fmt.Errorf("version %q, conditions %v", m.Status.Version, m.Status.Conditions)
			}
			return nil
		})
		for _, name := range []string{"m-api", "m-crawler"} {
			d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil || d.Spec.Template.Spec.Containers[0].Image != "quay.io/change-metrics/monocle:1.11.1" {
				t.Errorf("%s not upgraded: %v", name, err)
			}
		}
		before.expectUnchanged(t, ns, "m-elastic")
	})

	t.Run("an Elasticsearch image change rolls the StatefulSet", func(t *testing.T) {
		patchMonocle(t, ns, `{"spec":{"elasticsearch":{"image":"docker.elastic.co/elasticsearch/elasticsearch:7.17.27"}}}`)
		testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "StatefulSet rolled", func() error {
			s, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, "m-elastic", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if s.Spec.Template.Spec.Containers[0].Image != "docker.elastic.co/elasticsearch/elasticsearch:7.17.27" ||
				s.Status.CurrentRevision != s.Status.UpdateRevision || s.Status.ReadyReplicas != 1 {
				return fmt.Errorf("image %s, revisions %s/%s", s.Spec.Template.Spec.Containers[0].Image, s.Status.CurrentRevision, s.Status.UpdateRevision)
			}
			return nil
		})
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "monocle/m")
		if got := getMonocle(t, ns, "m").Status.Elasticsearch.Image; !strings.HasSuffix(got, ":7.17.27") {
			t.Errorf("status.elasticsearch.image = %q", got)
		}
	})

	t.Run("API replicas follow the spec, with a disruption budget above one", func(t *testing.T) {
		patchMonocle(t, ns, `{"spec":{"api":{"replicas":3}}}`)
		testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "three API pods and a PDB", func() error {
			d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-api", metav1.GetOptions{})
			if err != nil || d.Status.ReadyReplicas != 3 {
				return fmt.Errorf("API: %v", err)
			}
			_, err = env.Kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "m-api", metav1.GetOptions{})
			return err
		})
		crawler, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-crawler", metav1.GetOptions{})
		if err != nil || ptr.Deref(crawler.Spec.Replicas, 0) != 1 || crawler.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("crawler: %v replicas %d strategy %s", err, ptr.Deref(crawler.Spec.Replicas, 0), crawler.Spec.Strategy.Type)
		}
		patchMonocle(t, ns, `{"spec":{"api":{"replicas":1}}}`)
		testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "PDB removed", func() error {
			_, err := env.Kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "m-api", metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("PDB still there: %v", err)
			}
			return nil
		})
	})

	t.Run("a paused Monocle is left alone until resumed", func(t *testing.T) {
		env.Kubectl.Must(t, "annotate", "-n", ns, "monocle/m", monoclev1alpha1.PausedAnnotation+"=true")
		waitCondition(t, ns, "m", monoclev1alpha1.ConditionPaused, metav1.ConditionTrue, "Paused")
		env.Kubectl.Must(t, "scale", "-n", ns, "deployment/m-api", "--replicas=0")
		time.Sleep(3 * time.Second)
		if d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-api", metav1.GetOptions{}); err != nil || ptr.Deref(d.Spec.Replicas, 1) != 0 {
			t.Errorf("a paused Monocle's Deployment was repaired: %v", err)
		}
		env.Kubectl.Must(t, "annotate", "-n", ns, "monocle/m", monoclev1alpha1.PausedAnnotation+"-")
		waitCondition(t, ns, "m", monoclev1alpha1.ConditionPaused, metav1.ConditionFalse, "NotPaused")
		testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "API back to one replica", func() error {
			d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-api", metav1.GetOptions{})
			if err != nil || ptr.Deref(d.Spec.Replicas, 0) != 1 {
				return fmt.Errorf("API replicas: %v", err)
			}
			return nil
		})
	})
	before.expectUnchanged(t, ns)
}

// allowVolumeExpansion lets kwok's StorageClass, the only one whose volumes kwok provisions,
// expand volumes until the test ends.
func allowVolumeExpansion(t *testing.T) {
	t.Helper()
	env.Kubectl.Must(t, "patch", "storageclass", "kwok-volume", "-p", `{"allowVolumeExpansion":true}`)
	t.Cleanup(func() {
		_, _ = env.Kubectl.Run(context.Background(), "patch", "storageclass", "kwok-volume", "-p", `{"allowVolumeExpansion":false}`)
	})
}

// waitElasticPVCRequests waits until the Elasticsearch PVC of Monocle "m" in ns requests size.
func waitElasticPVCRequests(t *testing.T, ns, size string) {
	t.Helper()
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "PVC requests "+size, func() error {
		pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), "data-m-elastic-0", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := pvc.Spec.Resources.Requests.Storage().String(); got != size {
			return fmt.Errorf("PVC requests %s", got)
		}
		return nil
	})
}

// resizeElasticPVC gives the Elasticsearch PVC of Monocle "m" in ns the capacity size, as the
// volume resizer, which does not run here, would once it expanded the volume.
func resizeElasticPVC(t *testing.T, ns, size string) {
	t.Helper()
	env.Kubectl.Must(t, "patch", "pvc", "-n", ns, "data-m-elastic-0", "--subresource=status", "--type=merge",
		"-p", `{"status":{"capacity":{"storage":"`+size+`"}}}`)
}

func TestStorageExpansion(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "day2-storage"
	allowVolumeExpansion(t)
	startDay2(t, ns)
	before := takeSnapshot(t, ns)

	patchMonocle(t, ns, `{"spec":{"storageSize":"3Gi"}}`)
	waitElasticPVCRequests(t, ns, "3Gi")
	// No volume resizer runs here: act as one, and see the condition follow.
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionStorageReady, metav1.ConditionFalse, "Resizing")
	resizeElasticPVC(t, ns, "3Gi")
	waitCondition(t, ns, "m", monoclev1alpha1.ConditionStorageReady, metav1.ConditionTrue, "AsRequested")

	// A change that cannot be applied in place is refused and changes nothing.
	env.Kubectl.Must(t, "patch", "storageclass", "kwok-volume", "-p", `{"allowVolumeExpansion":false}`)
	patchMonocle(t, ns, `{"spec":{"storageSize":"5Gi"}}`)
	c := waitCondition(t, ns, "m", monoclev1alpha1.ConditionStorageReady, metav1.ConditionFalse, "StorageChangeRefused")
	if !strings.Contains(c.Message, "does not allow volume expansion") {
		t.Errorf("StorageReady message: %q", c.Message)
	}
	if _, err := env.Kubectl.Run(context.Background(), "patch", "-n", ns, "monocle/m", "--type=merge", "-p", `{"spec":{"storageSize":"1Gi"}}`); err == nil {
		// Admission should refuse a shrink; if it let it through, the operator must refuse it.
		c = waitCondition(t, ns, "m", monoclev1alpha1.ConditionStorageReady, metav1.ConditionFalse, "StorageChangeRefused")
		if !strings.Contains(c.Message, "cannot shrink") {
			t.Errorf("StorageReady message after a shrink: %q", c.Message)
		}
	}
	before.expectUnchanged(t, ns, "m-api", "m-crawler")
}
