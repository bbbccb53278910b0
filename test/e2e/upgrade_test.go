package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// previousRelease is the commit of the previous release, v0.1.0 as it landed before this
// round's changes (exposure, NetworkPolicies, read-only root filesystems, maintenance): its
// manifests and binary are built from this repository's history.
const previousRelease = "5e5cc86"

// previous is the previous release, built from git.
type previous struct {
	bin, manifests, sample string
}

// buildPrevious exports previousRelease with git archive, builds its operator and writes its
// release manifests (its own hack/release-manifests).
func buildPrevious(t *testing.T) previous {
	t.Helper()
	dir := t.TempDir()
	has := exec.Command("git", "cat-file", "-e", previousRelease+"^{commit}")
	has.Dir = env.Root
	if err := has.Run(); err != nil {
		// A shallow clone: the previous release cannot be rebuilt. Say so rather than fail
		// a run that lacks the history.
		t.Skipf("the previous release %s is not in this clone's history (shallow?): git fetch --unshallow to run this test", previousRelease)
	}
	export := exec.Command("sh", "-c", "git archive "+previousRelease+" | tar -x -C "+dir)
	export.Dir = env.Root
	if out, err := export.CombinedOutput(); err != nil {
		t.Fatalf("exporting the previous release %s from git (a shallow clone lacks it: git fetch --unshallow): %v\n%s", previousRelease, err, out)
	}
	p := previous{bin: filepath.Join(dir, "monocle-operator"), manifests: filepath.Join(dir, "release.yaml"),
		sample: filepath.Join(dir, "deploy", "samples", "monocle.yaml")}
	if err := testkit.BuildOperator(context.Background(), dir, p.bin); err != nil {
		t.Fatal(err)
	}
	release := exec.Command("go", "run", "./hack/release-manifests", "-version", "v0.1.0", "-o", p.manifests)
	release.Dir = dir
	if out, err := release.CombinedOutput(); err != nil {
		t.Fatalf("the previous release's manifests: %v\n%s", err, out)
	}
	return p
}

// upgradeState is what an upgrade must keep, or change only once, per Monocle.
type upgradeState struct {
	pvcUID    string
	keys      map[string]string
	templates map[string]string          // workload → its pod template, as JSON
	pods      map[string][]string        // workload → its pods' UIDs
	revisions map[string]map[string]bool // workload → its ReplicaSets or ControllerRevisions
}

func takeUpgradeState(t *testing.T, ns, name string) upgradeState {
	t.Helper()
	ctx := context.Background()
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	s := upgradeState{keys: map[string]string{}, templates: map[string]string{}, pods: map[string][]string{}, revisions: map[string]map[string]bool{}}
	pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, resources.ElasticPVCName(m, resources.ElasticDataVolume), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.pvcUID = string(pvc.UID)
	secret, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, resources.SecretName(m), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range resources.GeneratedKeys {
		s.keys[k] = string(secret.Data[k])
	}
	record := func(workload string, template corev1.PodTemplateSpec, selector map[string]string) {
		b, _ := json.Marshal(template)
		s.templates[workload] = string(b)
		pods, err := env.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			s.pods[workload] = append(s.pods[workload], string(p.UID))
		}
		slices.Sort(s.pods[workload])
	}
	for _, d := range []string{resources.APIName(m), resources.CrawlerName(m)} {
		dep, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		record(d, dep.Spec.Template, dep.Spec.Selector.MatchLabels)
		rss, err := env.Kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(dep.Spec.Selector.MatchLabels).String()})
		if err != nil {
			t.Fatal(err)
		}
		s.revisions[d] = map[string]bool{}
		for _, rs := range rss.Items {
			s.revisions[d][rs.Name] = true
		}
	}
	sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, resources.ElasticName(m), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	record(sts.Name, sts.Spec.Template, sts.Spec.Selector.MatchLabels)
	revs, err := env.Kube.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sts.Spec.Selector.MatchLabels).String()})
	if err != nil {
		t.Fatal(err)
	}
	s.revisions[sts.Name] = map[string]bool{}
	for _, r := range revs.Items {
		s.revisions[sts.Name][r.Name] = true
	}
	return s
}

// TestUpgradeFromPreviousRelease installs the previous release (its manifests and binary,
// built from git), makes two Monocles with it, then applies deploy/ and runs this operator, as
// a user upgrading would. The data and keys are kept, and each workload either keeps its pods
// (its pod template did not change between the releases) or rolls exactly once.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	testkit.NeedCluster(t, env != nil)
	uninstall(t, "-f", "deploy/")
	prev := buildPrevious(t)
	env.Kubectl.Must(t, "apply", "-f", prev.manifests)
	env.Kubectl.MustWaitEstablished(t, crdName)
	kubeconfig := serviceAccountKubeconfig(t)
	old := startReplicaOf(t, prev.bin, "previous", kubeconfig, deploymentArgs(t))
	waitLeader(t, time.Minute, old)

	ns := "e2e-upgrade"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	env.Kubectl.Must(t, "apply", "-n", ns, "-f", prev.sample)
	if _, err := env.Kubectl.RunStdin(context.Background(), "apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata:\n  name: plain\nspec: {}\n", "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatal(err)
	}
	names := []string{sample.Name, "plain"}
	before := map[string]upgradeState{}
	for _, n := range names {
		waitReady(t, ns, n)
		before[n] = takeUpgradeState(t, ns, n)
	}
	old.stop()

	env.Kubectl.Must(t, "apply", "-f", "deploy/")
	current := startReplica(t, "current", kubeconfig, deploymentArgs(t))
	waitLeader(t, time.Minute, current)
	for _, n := range names {
		waitUpgraded(t, ns, n)
		after := takeUpgradeState(t, ns, n)
		b := before[n]
		if after.pvcUID != b.pvcUID {
			t.Errorf("%s: the Elasticsearch PVC was replaced (%s, then %s)", n, b.pvcUID, after.pvcUID)
		}
		for k, v := range b.keys {
			if after.keys[k] != v {
				t.Errorf("%s: the generated key %s changed", n, k)
			}
		}
		for w, tmpl := range b.templates {
			var added []string
			for r := range after.revisions[w] {
				if !b.revisions[w][r] {
					added = append(added, r)
				}
			}
			if after.templates[w] == tmpl {
				if !slices.Equal(after.pods[w], b.pods[w]) || len(added) > 0 {
					t.Errorf("%s: %s's pod template did not change, yet its pods did (%v, then %v; new revisions %v)", n, w, b.pods[w], after.pods[w], added)
				}
				continue
			}
			if len(added) != 1 {
				t.Errorf("%s: %s's pod template changed; it rolled %d times (new revisions %v), want once", n, w, len(added), added)
				continue
			}
			t.Logf("%s: %s rolled once to the new pod template", n, w)
		}
	}
	checkServiceAccountOnly(t, operatorRequests(t))
	current.stop()
	uninstall(t, "-f", "deploy/")
}

// waitUpgraded waits until the current operator has synced Monocle name (its NetworkPolicy, an
// object the previous release did not make, exists) and every workload has rolled out its
// desired pod template, with its pods ready.
func waitUpgraded(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	testkit.Eventually(t, 500*time.Millisecond, 3*time.Minute, name+" upgraded and rolled out", func() error {
		if _, err := env.Kube.NetworkingV1().NetworkPolicies(ns).Get(ctx, resources.NetworkPolicyName(m), metav1.GetOptions{}); err != nil {
			return fmt.Errorf("not synced by the current operator yet: %v", err)
		}
		for _, d := range []string{resources.APIName(m), resources.CrawlerName(m)} {
			dep, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
			if err != nil {
				return err
			}
			want := ptr.Deref(dep.Spec.Replicas, 1)
			if s := dep.Status; s.ObservedGeneration < dep.Generation || s.UpdatedReplicas != want || s.Replicas != want || s.AvailableReplicas != want {
				return fmt.Errorf("Deployment %s rolling: %+v", d, s)
			}
		}
		sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, resources.ElasticName(m), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s := sts.Status; s.ObservedGeneration < sts.Generation || s.CurrentRevision != s.UpdateRevision || s.ReadyReplicas != ptr.Deref(sts.Spec.Replicas, 1) {
			return fmt.Errorf("StatefulSet rolling: %+v", s)
		}
		return nil
	})
	waitReady(t, ns, name)
}
