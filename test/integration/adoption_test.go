package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// What an adopted Monocle's objects carry, spelled out as a user sees them rather than taken
// from the operator's packages.
const (
	managedByLabel        = "app.kubernetes.io/managed-by"
	instanceLabel         = "app.kubernetes.io/instance"
	secretHashAnnotation  = "monocle.change-metrics.io/secret-hash"
	configHashAnnotation  = "monocle.change-metrics.io/config-hash"
	conditionAdopted      = "Adopted"
	adoptedReason         = "AdoptedEarlierOperator"
	earlierUpdateIdentJob = "update-idents-job"
)

// startEarlier creates in ns what the earlier operator (v0.0.2) leaves for a Monocle name,
// paused so that our operator leaves it alone, and waits until its pods are ready.
func startEarlier(t *testing.T, ns, name string) *testkit.EarlierMonocle {
	t.Helper()
	ctx := context.Background()
	e, err := testkit.CreateEarlierOperatorMonocle(ctx, env.Kubectl, filepath.Join(env.Root, testkit.EarlierFixture), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := testkit.WaitEarlierRolledOut(ctx, env.Kubectl, e, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	return e
}

// unpause starts our operator on the earlier Monocle e.
func unpause(t *testing.T, e *testkit.EarlierMonocle) {
	t.Helper()
	if err := testkit.UnpauseMonocle(context.Background(), env.Kubectl, e.Namespace, e.Name); err != nil {
		t.Fatal(err)
	}
}

// waitAdopted waits until the Monocle e is Adopted and Ready.
func waitAdopted(t *testing.T, e *testkit.EarlierMonocle) {
	t.Helper()
	waitCondition(t, e.Namespace, e.Name, conditionAdopted, metav1.ConditionTrue, adoptedReason)
	env.Kubectl.Must(t, "wait", "-n", e.Namespace, "--for=condition=Ready", "--timeout=120s", "monocle/"+e.Name)
}

// podTemplateAnnotations returns the pod template annotations of Deployments name-api and
// name-crawler, by Deployment name, and their generations.
func podTemplateAnnotations(t *testing.T, ns, name string) (map[string]map[string]string, map[string]int64) {
	t.Helper()
	annotations, generations := map[string]map[string]string{}, map[string]int64{}
	for _, d := range []string{name + "-api", name + "-crawler"} {
		dep, err := env.Kube.AppsV1().Deployments(ns).Get(context.Background(), d, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		annotations[d], generations[d] = dep.Spec.Template.Annotations, dep.Generation
	}
	return annotations, generations
}

// updateIdentsJobs returns the names of the Jobs in ns named like the operator's
// update-idents Jobs of Monocle name: <name>-update-idents-<8 hex digits>.
func updateIdentsJobs(t *testing.T, ns, name string) map[string]bool {
	t.Helper()
	pattern := regexp.MustCompile("^" + regexp.QuoteMeta(name) + "-update-idents-[0-9a-f]{8}$")
	list, err := env.Kube.BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]bool{}
	for _, j := range list.Items {
		if pattern.MatchString(j.Name) {
			jobs[j.Name] = true
		}
	}
	return jobs
}

// expectStorageKept checks that the adopted Monocle e still uses the earlier operator's
// volume: same PVC and StatefulSet, legacy selector and claim template, the claim mounted,
// now labelled as ours, and no second volume.
func expectStorageKept(t *testing.T, e *testkit.EarlierMonocle) {
	t.Helper()
	ctx := context.Background()
	ns := e.Namespace
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "the PVC labelled as ours", func() error {
		pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, e.PVCName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if string(pvc.UID) != e.PVCUID {
			return fmt.Errorf("PVC %s was replaced: uid %s, was %s", e.PVCName, pvc.UID, e.PVCUID)
		}
		if pvc.Labels[managedByLabel] != "monocle-operator" || pvc.Labels[instanceLabel] != e.Name {
			return fmt.Errorf("PVC %s labels %v", e.PVCName, pvc.Labels)
		}
		return nil
	})
	sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, e.StatefulSetName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(sts.UID) != e.StatefulSetUID {
		t.Errorf("StatefulSet %s was replaced: uid %s, was %s", sts.Name, sts.UID, e.StatefulSetUID)
	}
	if sel := metav1.FormatLabelSelector(sts.Spec.Selector); sel != "app=monocle,tier=elastic" {
		t.Errorf("StatefulSet selector %s, want the earlier app=monocle,tier=elastic", sel)
	}
	claim := e.Name + "-elastic-data-volume"
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != claim {
		t.Errorf("StatefulSet volumeClaimTemplates %v, want only %s", sts.Spec.VolumeClaimTemplates, claim)
	}
	mounted := false
	for _, c := range sts.Spec.Template.Spec.Containers {
		for _, m := range c.VolumeMounts {
			mounted = mounted || m.Name == claim
		}
	}
	if !mounted {
		t.Errorf("the StatefulSet's pod template does not mount its claim template %s: %+v", claim, sts.Spec.Template.Spec.Containers)
	}
	pod, err := env.Kube.CoreV1().Pods(ns).Get(ctx, e.Name+"-elastic-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	usesClaim := false
	for _, v := range pod.Spec.Volumes {
		usesClaim = usesClaim || (v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == e.PVCName)
	}
	if !usesClaim {
		t.Errorf("pod %s does not use PVC %s: %+v", pod.Name, e.PVCName, pod.Spec.Volumes)
	}
	if _, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-"+e.Name+"-elastic-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a second volume data-%s-elastic-0 was made: %v", e.Name, err)
	}
}

// expectOwnServices waits until Services name-api and name-elastic select the instance's
// component by our labels, and checks that each has ready endpoints, all pods of name.
func expectOwnServices(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	for _, component := range []string{"api", "elastic"} {
		svcName := name + "-" + component
		want := map[string]string{"app.kubernetes.io/name": "monocle", instanceLabel: name, "app.kubernetes.io/component": component}
		testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "Service "+svcName+" selecting its own pods", func() error {
			svc, err := env.Kube.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !maps.Equal(svc.Spec.Selector, want) {
				return fmt.Errorf("selector %v, want %v", svc.Spec.Selector, want)
			}
			pods, err := env.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
			if err != nil {
				return err
			}
			if len(pods.Items) == 0 {
				return fmt.Errorf("the selector matches no pod")
			}
			for _, p := range pods.Items {
				if !strings.HasPrefix(p.Name, name+"-") {
					return fmt.Errorf("the selector matches pod %s of another instance", p.Name)
				}
			}
			slices, err := env.Kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svcName})
			if err != nil {
				return err
			}
			ready := 0
			for _, s := range slices.Items {
				for _, ep := range s.Endpoints {
					if ep.TargetRef == nil || !strings.HasPrefix(ep.TargetRef.Name, name+"-") {
						return fmt.Errorf("endpoint %+v is not a pod of %s", ep.TargetRef, name)
					}
					if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
						ready++
					}
				}
			}
			if ready == 0 {
				return fmt.Errorf("no ready endpoint")
			}
			return nil
		})
	}
}

// watchEndpointGaps follows the EndpointSlices of Service ns/svc from now until stop is
// called; stop returns how many changes it saw, and a line for every change after which the
// Service had no ready endpoint (or the watch failed). The Service must have a ready endpoint
// to begin with.
func watchEndpointGaps(t *testing.T, ns, svc string) (stop func() (changes int, gaps []string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	client := env.Kube.DiscoveryV1().EndpointSlices(ns)
	selector := discoveryv1.LabelServiceName + "=" + svc
	slices := map[string]*discoveryv1.EndpointSlice{}
	ready := func() int {
		n := 0
		for _, s := range slices {
			for _, ep := range s.Endpoints {
				if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
					n++
				}
			}
		}
		return n
	}
	var resourceVersion string
	testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "Service "+svc+" has a ready endpoint", func() error {
		list, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		clear(slices)
		for i := range list.Items {
			slices[list.Items[i].Name] = &list.Items[i]
		}
		resourceVersion = list.ResourceVersion
		if ready() == 0 {
			return fmt.Errorf("%d EndpointSlices, no ready endpoint", len(list.Items))
		}
		return nil
	})

	var mu sync.Mutex
	var gaps []string
	changes := 0
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		gaps = append(gaps, time.Now().Format("15:04:05.000")+" "+s)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			w, err := client.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: resourceVersion, AllowWatchBookmarks: true})
			if err != nil {
				if ctx.Err() == nil {
					record(fmt.Sprintf("watch failed: %v", err))
				}
				return
			}
			for ev := range w.ResultChan() {
				switch ev.Type {
				case watch.Added, watch.Modified, watch.Deleted:
					s := ev.Object.(*discoveryv1.EndpointSlice)
					mu.Lock()
					changes++
					mu.Unlock()
					resourceVersion = s.ResourceVersion
					if ev.Type == watch.Deleted {
						delete(slices, s.Name)
					} else {
						slices[s.Name] = s
					}
					if ready() == 0 {
						record(fmt.Sprintf("no ready endpoint after %s of EndpointSlice %s", ev.Type, s.Name))
					}
				case watch.Bookmark:
					if m, err := apimeta.Accessor(ev.Object); err == nil {
						resourceVersion = m.GetResourceVersion()
					}
				case watch.Error:
					if ctx.Err() != nil {
						return // stop cancelled the watch
					}
					record(fmt.Sprintf("watch error: %v", apierrors.FromObject(ev.Object)))
					w.Stop()
					return
				}
			}
			w.Stop()
		}
	}()
	return func() (int, []string) {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return changes, gaps
	}
}

// TestAdoptionOfEarlierOperatorMonocle starts our operator on what the earlier operator
// (v0.0.2) left for its sample Monocle, and checks that the operator takes it over in place:
// same volume, same keys and the user's token, the user's config, Services switched without
// losing the API's endpoints, the earlier Job removed; then that day-2 work acts on the
// adopted objects and that a change it cannot make is refused without touching the data.
func TestAdoptionOfEarlierOperatorMonocle(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns, name := "adoption", "monocle-sample"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	e := startEarlier(t, ns, name)

	// Paused, the Monocle is the earlier operator's as it left it.
	if svc, err := env.Kube.CoreV1().Services(ns).Get(ctx, name+"-api", metav1.GetOptions{}); err != nil ||
		!maps.Equal(svc.Spec.Selector, map[string]string{"app": "monocle", "tier": "api"}) {
		t.Fatalf("before the hand-over, Service %s-api: %v, selector %v", name, err, svc.Spec.Selector)
	}
	gaps := watchEndpointGaps(t, ns, name+"-api")
	unpause(t, e)
	waitAdopted(t, e)
	expectOwnServices(t, ns, name)
	changes, lost := gaps()
	if changes == 0 {
		t.Errorf("the endpoints of Service %s-api never changed: the API pods were not replaced, or the watch saw nothing", name)
	}
	for _, g := range lost {
		t.Errorf("Service %s-api lost its endpoints during the hand-over: %s", name, g)
	}
	t.Logf("Service %s-api: %d EndpointSlice changes during the hand-over", name, changes)

	t.Run("the volume and the StatefulSet are kept", func(t *testing.T) {
		expectStorageKept(t, e)
	})

	t.Run("the Secret keeps its keys and gains MONOCLE_JWK_GEN_KEY", func(t *testing.T) {
		secret, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, name+"-api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"CRAWLERS_API_KEY", "GITHUB_TOKEN"} {
			if string(secret.Data[k]) != string(e.SecretData[k]) {
				t.Errorf("%s changed: %q, was %q", k, secret.Data[k], e.SecretData[k])
			}
		}
		if n := len(secret.Data["MONOCLE_JWK_GEN_KEY"]); n != 64 {
			t.Errorf("MONOCLE_JWK_GEN_KEY has %d characters, want 64", n)
		}
		for _, d := range []string{name + "-api", name + "-crawler"} {
			dep, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range dep.Spec.Template.Spec.Containers {
				found := false
				for _, from := range c.EnvFrom {
					found = found || (from.SecretRef != nil && from.SecretRef.Name == name+"-api")
				}
				if !found {
					t.Errorf("container %s of %s does not load Secret %s-api: envFrom %+v", c.Name, d, name, c.EnvFrom)
				}
			}
		}
	})

	t.Run("the user's ConfigMap is kept as the config source", func(t *testing.T) {
		cm, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, name+"-api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(cm.Data, map[string]string{"config.yaml": e.Config}) {
			t.Errorf("ConfigMap %s-api data changed: %q", name, cm.Data)
		}
		if got := env.Kubectl.Must(t, "get", "-n", ns, "monocle/"+name, "-o", "jsonpath={.status.configSource}"); got != "ConfigMap" {
			t.Errorf("status.configSource = %q, want ConfigMap", got)
		}
	})

	t.Run("the earlier update-idents Job is deleted", func(t *testing.T) {
		testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "Job "+earlierUpdateIdentJob+" gone", func() error {
			if _, err := env.Kube.BatchV1().Jobs(ns).Get(ctx, earlierUpdateIdentJob, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
	})

	t.Run("the adoption is reported", func(t *testing.T) {
		c := apimeta.FindStatusCondition(getMonocle(t, ns, name).Status.Conditions, conditionAdopted)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != adoptedReason {
			t.Errorf("Adopted condition %+v", c)
		}
		testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "a Normal Adopted event", func() error {
			events, err := env.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=Adopted"})
			if err != nil {
				return err
			}
			for _, ev := range events.Items {
				if ev.Type == corev1.EventTypeNormal && ev.InvolvedObject.Kind == "Monocle" {
					return nil
				}
			}
			return fmt.Errorf("no Normal Adopted event for Monocle %s: %+v", name, events.Items)
		})
	})

	t.Run("a user key changed in the Secret rolls the API and the crawler", func(t *testing.T) {
		before, _ := podTemplateAnnotations(t, ns, name)
		env.Kubectl.Must(t, "patch", "secret", "-n", ns, name+"-api", "--type=merge", "-p", `{"stringData":{"GITHUB_TOKEN":"ghp_rotated"}}`)
		testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "API and crawler rolled", func() error {
			now, _ := podTemplateAnnotations(t, ns, name)
			for d, a := range now {
				if a[secretHashAnnotation] == "" || a[secretHashAnnotation] == before[d][secretHashAnnotation] {
					return fmt.Errorf("%s has secret hash %q, had %q", d, a[secretHashAnnotation], before[d][secretHashAnnotation])
				}
			}
			return nil
		})
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "monocle/"+name)
		secret, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, name+"-api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if string(secret.Data["GITHUB_TOKEN"]) != "ghp_rotated" || string(secret.Data["CRAWLERS_API_KEY"]) != string(e.SecretData["CRAWLERS_API_KEY"]) {
			t.Errorf("Secret data after the edit: GITHUB_TOKEN %q, CRAWLERS_API_KEY %q", secret.Data["GITHUB_TOKEN"], secret.Data["CRAWLERS_API_KEY"])
		}
	})

	t.Run("the user's config edits are applied, and an invalid one is refused", func(t *testing.T) {
		patchConfig := func(config string) {
			t.Helper()
			patch, _ := json.Marshal(map[string]any{"data": map[string]string{"config.yaml": config}})
			env.Kubectl.Must(t, "patch", "configmap", "-n", ns, name+"-api", "--type=merge", "-p", string(patch))
		}
		configData := func() string {
			t.Helper()
			cm, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, name+"-api", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return cm.Data["config.yaml"]
		}
		before, _ := podTemplateAnnotations(t, ns, name)
		jobsBefore := updateIdentsJobs(t, ns, name)
		newConfig := e.Config + "    idents:\n      - ident: Jane Doe\n        aliases: [github.com/jane-doe]\n"
		patchConfig(newConfig)
		testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "API and crawler restarted with the new config, update-idents started", func() error {
			now, _ := podTemplateAnnotations(t, ns, name)
			for d, a := range now {
				if a[configHashAnnotation] == "" || a[configHashAnnotation] == before[d][configHashAnnotation] {
					return fmt.Errorf("%s has config hash %q, had %q", d, a[configHashAnnotation], before[d][configHashAnnotation])
				}
			}
			for j := range updateIdentsJobs(t, ns, name) {
				if !jobsBefore[j] {
					return nil
				}
			}
			return fmt.Errorf("no new %s-update-idents-<hash> Job (had %v)", name, jobsBefore)
		})
		if got := configData(); got != newConfig {
			t.Errorf("the user's config was rewritten: %q", got)
		}
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "monocle/"+name)

		applied, generations := podTemplateAnnotations(t, ns, name)
		jobsApplied := updateIdentsJobs(t, ns, name)
		patchConfig("workspaces: 42\n")
		waitCondition(t, ns, name, "ConfigValid", metav1.ConditionFalse, "InvalidConfig")
		time.Sleep(3 * time.Second)
		if got := configData(); got != "workspaces: 42\n" {
			t.Errorf("the operator changed the user's ConfigMap: %q", got)
		}
		now, nowGenerations := podTemplateAnnotations(t, ns, name)
		for d := range now {
			if now[d][configHashAnnotation] != applied[d][configHashAnnotation] || nowGenerations[d] != generations[d] {
				t.Errorf("%s rolled for an invalid config: config hash %q → %q, generation %d → %d", d,
					applied[d][configHashAnnotation], now[d][configHashAnnotation], generations[d], nowGenerations[d])
			}
		}
		if jobs := updateIdentsJobs(t, ns, name); !maps.Equal(jobs, jobsApplied) {
			t.Errorf("an invalid config changed the update-idents Jobs: %v → %v", jobsApplied, jobs)
		}

		patchConfig(newConfig)
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=ConfigValid", "--timeout=60s", "monocle/"+name)
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "monocle/"+name)
	})

	t.Run("a larger volume the StorageClass cannot give is refused", func(t *testing.T) {
		// kwok-volume does not allow expansion unless a test turned it on; make sure.
		env.Kubectl.Must(t, "patch", "storageclass", "kwok-volume", "-p", `{"allowVolumeExpansion":false}`)
		patchMonocleNamed(t, ns, name, `{"spec":{"storageSize":"2Gi"}}`)
		waitCondition(t, ns, name, "StorageReady", metav1.ConditionFalse, "StorageChangeRefused")
		time.Sleep(2 * time.Second)
		pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, e.PVCName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if string(pvc.UID) != e.PVCUID || pvc.Spec.Resources.Requests.Storage().String() != "1Gi" || pvc.DeletionTimestamp != nil {
			t.Errorf("PVC %s changed: uid %s (was %s), requests %s, deletion %v", e.PVCName, pvc.UID, e.PVCUID,
				pvc.Spec.Resources.Requests.Storage(), pvc.DeletionTimestamp)
		}
		sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, e.StatefulSetName, metav1.GetOptions{})
		if err != nil || string(sts.UID) != e.StatefulSetUID {
			t.Errorf("StatefulSet %s replaced: %v", e.StatefulSetName, err)
		}
	})
}

// patchMonocleNamed merge-patches Monocle ns/name as the tenant of ns.
func patchMonocleNamed(t *testing.T, ns, name, patch string) {
	t.Helper()
	tenant(t, ns).Must(t, "patch", "-n", ns, "monocle/"+name, "--type=merge", "-p", patch)
}

// TestAdoptionOfTwoEarlierMonoclesInOneNamespace adopts two earlier-operator Monocles whose
// Services, by the earlier selectors app=monocle,tier=..., select each other's pods, and
// checks that each ends with its own pods and its own volume.
func TestAdoptionOfTwoEarlierMonoclesInOneNamespace(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "adoption-two"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	earlier := []*testkit.EarlierMonocle{startEarlier(t, ns, "mona"), startEarlier(t, ns, "monb")}
	for _, e := range earlier {
		unpause(t, e)
	}
	for _, e := range earlier {
		waitAdopted(t, e)
	}
	for _, e := range earlier {
		t.Run(e.Name, func(t *testing.T) {
			expectOwnServices(t, ns, e.Name)
			expectStorageKept(t, e)
		})
	}
	// The earlier operator made one update-idents-job for the namespace, mona's.
	testkit.Eventually(t, 200*time.Millisecond, 60*time.Second, "Job "+earlierUpdateIdentJob+" gone", func() error {
		if _, err := env.Kube.BatchV1().Jobs(ns).Get(context.Background(), earlierUpdateIdentJob, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
}

// TestAdoptionNameConflict gives an earlier-operator Monocle whose crawler Deployment lost its
// owner reference (so it is not the Monocle's) to our operator, and checks that the conflict
// is reported and the foreign Deployment left as it is.
func TestAdoptionNameConflict(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	ns, name := "adoption-conflict", "monc"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	e := startEarlier(t, ns, name)
	env.Kubectl.Must(t, "patch", "deployment", "-n", ns, name+"-crawler", "--type=json", `-p=[{"op":"remove","path":"/metadata/ownerReferences"}]`)
	foreign, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, name+"-crawler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(foreign.OwnerReferences) != 0 {
		t.Fatalf("Deployment %s-crawler still has owners %v", name, foreign.OwnerReferences)
	}

	unpause(t, e)
	waitCondition(t, ns, name, "Degraded", metav1.ConditionTrue, "NameConflict")
	time.Sleep(3 * time.Second)
	now, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, name+"-crawler", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the foreign Deployment was deleted: %v", err)
	}
	if now.UID != foreign.UID || now.Generation != foreign.Generation || len(now.OwnerReferences) != 0 ||
		!maps.Equal(now.Labels, foreign.Labels) || !maps.Equal(now.Annotations, foreign.Annotations) {
		t.Errorf("the foreign Deployment was changed: uid %s→%s, generation %d→%d, owners %v, labels %v→%v, annotations %v→%v",
			foreign.UID, now.UID, foreign.Generation, now.Generation, now.OwnerReferences, foreign.Labels, now.Labels, foreign.Annotations, now.Annotations)
	}
}
