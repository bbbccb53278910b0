package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestSampleMonocleLifecycle applies deploy/samples/monocle.yaml as a user would (a tenant
// with edit in the namespace) and follows
// the Monocle through creation, Ready, drift repair, quiet steady state and deletion.
func TestSampleMonocleLifecycle(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns := "lifecycle"
	testkit.MustCreateNamespace(t, env.Kube, ns)

	tenant(t, ns).Must(t, "apply", "-n", ns, "-f", filepath.Join(env.Root, "deploy", "samples", "monocle.yaml"))
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/monocle")

	kube := env.Kube
	secret, err := kube.CoreV1().Secrets(ns).Get(ctx, "monocle-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range resources.GeneratedKeys {
		if len(secret.Data[k]) < resources.KeyLength {
			t.Errorf("generated %s has %d characters, want at least %d", k, len(secret.Data[k]), resources.KeyLength)
		}
	}
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "monocle-api", metav1.GetOptions{})
	if err != nil || !strings.Contains(cm.Data["config.yaml"], "github_organization: change-metrics") {
		t.Errorf("ConfigMap monocle-api: %v, config %q", err, cm.Data["config.yaml"])
	}
	for _, name := range []string{"monocle-api", "monocle-elastic"} {
		if _, err := kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("Service %s: %v", name, err)
		}
	}
	for _, name := range []string{"monocle-api", "monocle-crawler"} {
		if _, err := kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("Deployment %s: %v", name, err)
		}
	}
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: resources.InstanceLabel + "=monocle"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		t.Errorf("%d pods, want 3 (elastic, api, crawler)", len(pods.Items))
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s is %s, want Running", p.Name, p.Status.Phase)
		}
	}
	pvc, err := kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-monocle-elastic-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.Resources.Requests.Storage().String() != "2Gi" {
		t.Errorf("PVC is %s with %s, want Bound with 2Gi", pvc.Status.Phase, pvc.Spec.Resources.Requests.Storage())
	}

	m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, "monocle", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Status.ObservedGeneration != m.Generation || m.Status.Version != "1.11.2" || m.Status.URL != "http://localhost:8090" {
		t.Errorf("status: observedGeneration %d (generation %d), version %q, url %q",
			m.Status.ObservedGeneration, m.Generation, m.Status.Version, m.Status.URL)
	}
	for _, cond := range []string{"Ready", "Progressing", "Degraded"} {
		if apimeta.FindStatusCondition(m.Status.Conditions, cond) == nil {
			t.Errorf("status lacks the %s condition", cond)
		}
	}
	if out := env.Kubectl.Must(t, "get", "-n", ns, "monocles"); !strings.Contains(out, "True") || !strings.Contains(out, "1.11.2") {
		t.Errorf("kubectl get monocles does not show readiness and version:\n%s", out)
	}

	t.Run("at rest the operator writes nothing", func(t *testing.T) {
		// Workload status updates arrive for a moment after Ready; then nothing may change.
		time.Sleep(3 * time.Second)
		since := time.Now()
		time.Sleep(5 * time.Second)
		writes, err := operatorWrites(since, ns)
		if err != nil {
			t.Fatal(err)
		}
		if len(writes) > 0 {
			t.Errorf("a converged Monocle got %d writes in 5s: %v", len(writes), writes)
		}
	})

	t.Run("drift is repaired", func(t *testing.T) {
		env.Kubectl.Must(t, "scale", "-n", ns, "deployment/monocle-api", "--replicas=0")
		env.Kubectl.Must(t, "patch", "-n", ns, "service/monocle-api", "--type=json",
			`-p=[{"op":"replace","path":"/spec/ports/0/port","value":9999}]`)
		env.Kubectl.Must(t, "delete", "-n", ns, "deployment/monocle-crawler")
		testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "drift repaired", func() error {
			api, err := kube.AppsV1().Deployments(ns).Get(ctx, "monocle-api", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if ptr.Deref(api.Spec.Replicas, 0) != 1 {
				return fmt.Errorf("API replicas %d", ptr.Deref(api.Spec.Replicas, 0))
			}
			svc, err := kube.CoreV1().Services(ns).Get(ctx, "monocle-api", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if svc.Spec.Ports[0].Port != resources.APIPort {
				return fmt.Errorf("API Service port %d", svc.Spec.Ports[0].Port)
			}
			_, err = kube.AppsV1().Deployments(ns).Get(ctx, "monocle-crawler", metav1.GetOptions{})
			return err
		})
		// A generated key removed from the Secret comes back with its original value.
		env.Kubectl.Must(t, "patch", "-n", ns, "secret/monocle-api", "--type=json",
			`-p=[{"op":"remove","path":"/data/MONOCLE_JWK_GEN_KEY"}]`)
		testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "generated key restored", func() error {
			s, err := kube.CoreV1().Secrets(ns).Get(ctx, "monocle-api", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if string(s.Data[resources.JWKGenKeyKey]) != string(secret.Data[resources.JWKGenKeyKey]) {
				return fmt.Errorf("MONOCLE_JWK_GEN_KEY is %q", s.Data[resources.JWKGenKeyKey])
			}
			return nil
		})
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "monocle/monocle")
		after, err := kube.CoreV1().Secrets(ns).Get(ctx, "monocle-api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range resources.GeneratedKeys {
			if string(after.Data[k]) != string(secret.Data[k]) {
				t.Errorf("%s changed during drift repair", k)
			}
		}
	})

	t.Run("deletion collects dependents and keeps the data", func(t *testing.T) {
		pvcUID := pvc.UID
		env.Kubectl.Must(t, "delete", "-n", ns, "monocle/monocle", "--wait=true", "--timeout=60s")
		testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "dependents garbage-collected", func() error {
			var left []string
			if _, err := kube.AppsV1().Deployments(ns).Get(ctx, "monocle-api", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, "Deployment monocle-api")
			}
			if _, err := kube.AppsV1().Deployments(ns).Get(ctx, "monocle-crawler", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, "Deployment monocle-crawler")
			}
			if _, err := kube.AppsV1().StatefulSets(ns).Get(ctx, "monocle-elastic", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, "StatefulSet monocle-elastic")
			}
			if _, err := kube.CoreV1().Services(ns).Get(ctx, "monocle-api", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, "Service monocle-api")
			}
			if _, err := kube.CoreV1().Services(ns).Get(ctx, "monocle-elastic", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, "Service monocle-elastic")
			}
			for _, name := range []string{"monocle-api", "monocle-api-keys"} {
				if _, err := kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					left = append(left, "Secret "+name)
				}
			}
			if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "monocle-api", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, "ConfigMap monocle-api")
			}
			if len(left) > 0 {
				return fmt.Errorf("still there: %s", strings.Join(left, ", "))
			}
			return nil
		})
		kept, err := kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-monocle-elastic-0", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the Elasticsearch PVC was deleted with the Monocle: %v", err)
		}
		if kept.UID != pvcUID || kept.DeletionTimestamp != nil {
			t.Errorf("the PVC was replaced or is being deleted (uid %s, was %s)", kept.UID, pvcUID)
		}
		if _, err := kube.CoreV1().Secrets(ns).Get(ctx, "monocle-tokens", metav1.GetOptions{}); err != nil {
			t.Errorf("the user's Secret is gone: %v", err)
		}
	})
}

// TestNameTakenByForeignObject checks that an object with a needed name that the Monocle does
// not control is left alone and reported, and that the Monocle converges once it is gone.
// It also runs two Monocles side by side in one namespace.
func TestNameTakenByForeignObject(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns := "conflict"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	env.Kubectl.Must(t, "create", "configmap", "-n", ns, "taken-api", "--from-literal=config.yaml=mine")

	monocle := func(name string) string {
		return fmt.Sprintf("apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata:\n  name: %s\nspec: {}\n", name)
	}
	if out, err := env.Kubectl.RunStdin(context.Background(), monocle("taken")+"---\n"+monocle("neighbour"), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Degraded", "--timeout=60s", "monocle/taken")
	out := env.Kubectl.Must(t, "get", "-n", ns, "monocle/taken", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].message}`)
	if !strings.Contains(out, "ConfigMap taken-api") {
		t.Errorf("Ready message does not name the foreign ConfigMap: %q", out)
	}
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "a NameConflict event", func() error {
		if events := env.Kubectl.Must(t, "get", "events", "-n", ns, "--field-selector", "reason=NameConflict"); !strings.Contains(events, "taken-api") {
			return fmt.Errorf("no NameConflict event naming taken-api:\n%s", events)
		}
		return nil
	})
	cm, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "taken-api", metav1.GetOptions{})
	if err != nil || cm.Data["config.yaml"] != "mine" || len(cm.OwnerReferences) != 0 {
		t.Fatalf("the foreign ConfigMap was changed: %v %+v", err, cm)
	}

	// The neighbour converges regardless, with pods of its own.
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/neighbour")
	pods, err := env.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: resources.InstanceLabel + "=neighbour"})
	if err != nil || len(pods.Items) != 3 {
		t.Fatalf("neighbour pods: %v, %d", err, len(pods.Items))
	}
	svc, err := env.Kube.CoreV1().Services(ns).Get(ctx, "neighbour-api", metav1.GetOptions{})
	if err != nil || svc.Spec.Selector[resources.InstanceLabel] != "neighbour" {
		t.Fatalf("neighbour API Service selector: %v %v", err, svc.Spec.Selector)
	}

	env.Kubectl.Must(t, "delete", "configmap", "-n", ns, "taken-api")
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/taken")
}
