package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// podRecorder follows the API and crawler pods of a namespace with a watch and records what
// an upgrade must never show: two API images among the pods at once, and a crawler pod of
// an image before an API pod of that image was ready.
type podRecorder struct {
	mu sync.Mutex
	// pods are the pods that exist, by name: component and image.
	pods map[string][2]string
	// apiReady is when an API pod of each image was first seen ready.
	apiReady map[string]time.Time
	// crawlerSeen is when a crawler pod of each image was first seen.
	crawlerSeen map[string]time.Time
	// apiImages are the API images seen together, each time more than one.
	violations []string
}

func recordPods(t *testing.T, ns string) *podRecorder {
	t.Helper()
	r := &podRecorder{pods: map[string][2]string{}, apiReady: map[string]time.Time{}, crawlerSeen: map[string]time.Time{}}
	w, err := env.Kube.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || len(pod.Spec.Containers) == 0 {
				continue
			}
			r.observe(ev.Type, pod)
		}
	}()
	return r
}

func (r *podRecorder) observe(typ watch.EventType, pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	component, image := pod.Labels[resources.ComponentLabel], pod.Spec.Containers[0].Image
	if typ == watch.Deleted {
		delete(r.pods, pod.Name)
		return
	}
	r.pods[pod.Name] = [2]string{component, image}
	now := time.Now()
	switch component {
	case resources.ComponentAPI:
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				if _, seen := r.apiReady[image]; !seen {
					r.apiReady[image] = now
				}
			}
		}
	case resources.ComponentCrawler:
		if _, seen := r.crawlerSeen[image]; !seen {
			r.crawlerSeen[image] = now
		}
	}
	var images []string
	for _, p := range r.pods {
		if p[0] == resources.ComponentAPI && !slices.Contains(images, p[1]) {
			images = append(images, p[1])
		}
	}
	if len(images) > 1 {
		r.violations = append(r.violations, fmt.Sprintf("%s: API pods of %s at once", now.Format("15:04:05.000"), strings.Join(images, " and ")))
	}
}

// check fails t for two API versions seen at once, or a crawler of image seen before an API
// of image was ready.
func (r *podRecorder) check(t *testing.T, image string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.violations {
		t.Error(v)
	}
	ready, ok := r.apiReady[image]
	crawler, started := r.crawlerSeen[image]
	switch {
	case !ok || !started:
		t.Errorf("no ready API pod (%v) or no crawler pod (%v) of %s seen", ok, started, image)
	case crawler.Before(ready):
		t.Errorf("a crawler pod of %s appeared at %s, before an API pod of %s was ready at %s",
			image, crawler.Format("15:04:05.000"), image, ready.Format("15:04:05.000"))
	}
}

// TestMonocleUpgrade: changing a Monocle's image takes a snapshot first (with backups), stops
// the crawler, replaces the API so that never two API versions run, starts the new crawler
// only once the new API is ready, and reports each phase; a downgrade across config-index
// versions is refused and changes nothing.
func TestMonocleUpgrade(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ns := "monocle-upgrade"
	const from, to = "quay.io/change-metrics/monocle:1.11.1", "quay.io/change-metrics/monocle:1.11.2"
	testkit.MustCreateNamespace(t, env.Kube, ns)
	env.Kubectl.Must(t, "create", "secret", "generic", "tokens", "-n", ns, "--from-literal=GITHUB_TOKEN=first")
	env.Elastic.SetIndices(ns, "m", "monocle.config", "monocle.changes.1.demo")
	manifest := strings.Replace(day2Monocle, "spec:\n", "spec:\n  image: "+from+"\n  backup: {}\n  api: {replicas: 2}\n", 1)
	if out, err := env.Kubectl.RunStdin(context.Background(), manifest, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	waitCondition(t, ns, "m", "Upgraded", metav1.ConditionTrue, "UpToDate")

	pods := recordPods(t, ns)
	patchMonocle(t, ns, `{"spec":{"image":"`+to+`"}}`)
	var phases []monoclev1alpha1.UpgradePhase
	testkit.Eventually(t, 50*time.Millisecond, 2*time.Minute, "the upgrade done", func() error {
		st := getMonocle(t, ns, "m").Status.Upgrade
		if st == nil {
			return fmt.Errorf("no status.upgrade")
		}
		if len(phases) == 0 || phases[len(phases)-1] != st.Phase {
			phases = append(phases, st.Phase)
		}
		if st.Phase != monoclev1alpha1.UpgradeSucceeded {
			return fmt.Errorf("phase %s", st.Phase)
		}
		return nil
	})
	t.Logf("phases seen: %v", phases)
	env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	pods.check(t, to)
	st := getMonocle(t, ns, "m").Status.Upgrade
	if st.From != from || st.To != to || !strings.HasPrefix(st.Snapshot, "pre-upgrade-") {
		t.Errorf("status.upgrade = %+v", st)
	}
	var snapshotted bool
	for _, s := range env.Elastic.Snapshots(ns, "m", resources.BackupRepositoryName) {
		snapshotted = snapshotted || (s.Name == st.Snapshot && s.State == testkit.SnapshotSuccess)
	}
	if !snapshotted {
		t.Errorf("no successful snapshot %s in the repository", st.Snapshot)
	}
	events := env.Kubectl.Must(t, "get", "events", "-n", ns, "--field-selector", "reason=Upgrading", "-o", "custom-columns=MSG:.message")
	for _, phase := range []string{"BackingUp", "StoppingCrawler", "ReplacingAPI", "StartingCrawler"} {
		if !strings.Contains(events, phase) {
			t.Errorf("no Upgrading event for phase %s:\n%s", phase, events)
		}
	}
	waitCondition(t, ns, "m", "Upgraded", metav1.ConditionTrue, "UpgradeSucceeded")
	waitEvent(t, ns, "UpgradeSucceeded", to)
	d, err := env.Kube.AppsV1().Deployments(ns).Get(context.Background(), "m-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Spec.Strategy.Type != "RollingUpdate" {
		t.Errorf("after the upgrade the API's strategy is %s, want RollingUpdate back", d.Spec.Strategy.Type)
	}

	// A downgrade across config-index versions: refused, nothing changes.
	patchMonocle(t, ns, `{"spec":{"image":"quay.io/change-metrics/monocle:1.10.0"}}`)
	refused := waitCondition(t, ns, "m", "Upgraded", metav1.ConditionFalse, "MonocleDowngrade")
	if !strings.Contains(refused.Message, "1.10.0") {
		t.Errorf("Upgraded message %q does not name the image", refused.Message)
	}
	for _, name := range []string{"m-api", "m-crawler"} {
		d, err := env.Kube.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != to {
			t.Errorf("%s runs %s after a refused downgrade, want %s", name, img, to)
		}
	}
}
