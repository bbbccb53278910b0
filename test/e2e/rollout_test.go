package e2e

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// fleetMonocle is a Monocle of a fleet rollout test, made with the previous release.
type fleetMonocle struct {
	ns, name string
	// spec is its spec in the previous release's schema; empty for a bundled Monocle.
	spec string
	// canary marks it monocle.change-metrics.io/rollout: canary.
	canary bool
}

func (m fleetMonocle) key() string { return m.ns + "/" + m.name }

func (m fleetMonocle) bundled() bool { return m.spec == "" }

// manifest is the Monocle's YAML document.
func (m fleetMonocle) manifest() string {
	doc := "apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata:\n  name: " + m.name + "\n  namespace: " + m.ns + "\n"
	if m.canary {
		doc += "  annotations:\n    " + monoclev1alpha1.RolloutAnnotation + ": " + monoclev1alpha1.RolloutCanary + "\n"
	}
	return doc + "spec: {" + m.spec + "}\n"
}

// bundledFleet is n bundled Monocles of ns, named prefix-01, prefix-02...
func bundledFleet(ns, prefix string, n int) []fleetMonocle {
	var out []fleetMonocle
	for i := 1; i <= n; i++ {
		out = append(out, fleetMonocle{ns: ns, name: fmt.Sprintf("%s-%02d", prefix, i)})
	}
	return out
}

// eckMonocle is the Monocle name of ns on the ECK Elasticsearch "es" of ns (made by
// makeFleet).
func eckMonocle(ns, name string) fleetMonocle {
	return fleetMonocle{ns: ns, name: name, spec: "elasticsearch: {elasticsearchRef: {name: es}}"}
}

// externalMonocle is the Monocle name of ns on an external cluster of its own, at
// https://<name>.<ns>.example.com:9200 (the fake, secured), with the credentials and the CA
// of the Secrets es-credentials and es-ca of ns (made by makeFleet).
func externalMonocle(ns, name string) fleetMonocle {
	return fleetMonocle{ns: ns, name: name, spec: "elasticsearch: {external: {url: 'https://" + name + "." + ns +
		".example.com:9200', credentialsSecretRef: {name: es-credentials}, caSecretRef: {name: es-ca}}}"}
}

// fleetNamespaces are the namespaces of fleet, in order of appearance.
func fleetNamespaces(fleet []fleetMonocle) []string {
	var out []string
	for _, m := range fleet {
		if !slices.Contains(out, m.ns) {
			out = append(out, m.ns)
		}
	}
	return out
}

// makeFleet makes fleet with the previous release's operator old: the namespaces (deleted
// when the test ends), the ECK Elasticsearch of a namespace with an ECK Monocle, the Secrets
// of its external ones, then the Monocles, and waits until old serves each, Ready. The fake
// Elasticsearch serves the bundled nodes without security, as that release runs them.
func makeFleet(t *testing.T, old *replica, fleet []fleetMonocle) {
	t.Helper()
	ctx := context.Background()
	var docs []string
	for _, ns := range fleetNamespaces(fleet) {
		testkit.MustCreateNamespace(t, env.Kube, ns)
		if slices.ContainsFunc(fleet, func(m fleetMonocle) bool { return m.ns == ns && strings.Contains(m.spec, "elasticsearchRef") }) {
			if err := env.CreateECK(ctx, ns, "Ready", "green"); err != nil {
				t.Fatal(err)
			}
		}
		if slices.ContainsFunc(fleet, func(m fleetMonocle) bool { return m.ns == ns && strings.Contains(m.spec, "external") }) {
			env.Kubectl.Must(t, "create", "secret", "generic", "es-credentials", "-n", ns,
				"--from-literal=username="+testkit.ClusterUser, "--from-literal=password="+testkit.ClusterPassword)
			env.Kubectl.Must(t, "create", "secret", "generic", "es-ca", "-n", ns, "--from-literal=ca.crt="+string(env.Elastic.CAPEM()))
		}
	}
	for _, m := range fleet {
		if m.bundled() {
			env.Elastic.ServeBundledWithoutSecurity(m.ns, m.name)
		}
		docs = append(docs, m.manifest())
	}
	if out, err := env.Kubectl.RunStdin(ctx, strings.Join(docs, "---\n"), "apply", "-f", "-"); err != nil {
		t.Fatalf("the fleet with the previous release: %v\n%s", err, out)
	}
	for _, m := range fleet {
		waitServing(t, old, m.ns, m.name)
	}
}

// takeFleetState is takeUpgradeState of every Monocle of fleet, by key.
func takeFleetState(t *testing.T, fleet []fleetMonocle) map[string]upgradeState {
	t.Helper()
	states := map[string]upgradeState{}
	for _, m := range fleet {
		states[m.key()] = takeUpgradeState(t, m.ns, m.name)
	}
	return states
}

// getMonocle reads the Monocle name of ns.
func getMonocle(t *testing.T, ns, name string) *monoclev1alpha1.Monocle {
	t.Helper()
	m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitFleetRolled waits until every Monocle of fleet has rolled to revision rev (status.rollout
// with rev, phase Rolled), is Ready for its generation and no longer RolloutHeld.
func waitFleetRolled(t *testing.T, fleet []fleetMonocle, rev string, timeout time.Duration) {
	t.Helper()
	testkit.Eventually(t, time.Second, timeout, "every Monocle of the fleet rolled to "+rev, func() error {
		var waiting []string
		for _, f := range fleet {
			m, err := env.Monocles.MonocleV1alpha1().Monocles(f.ns).Get(context.Background(), f.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			ready := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionReady)
			held := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionRolloutHeld)
			switch r := m.Status.Rollout; {
			case r == nil || r.Revision != rev || r.Phase != monoclev1alpha1.RolloutRolled:
				why := fmt.Sprintf("%s: status.rollout %s", f.key(), rolloutString(r))
				if held != nil {
					why += fmt.Sprintf(", RolloutHeld %s: %s", held.Reason, held.Message)
				}
				waiting = append(waiting, why)
			case ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != m.Generation:
				waiting = append(waiting, fmt.Sprintf("%s: Ready %+v", f.key(), ready))
			case held != nil:
				waiting = append(waiting, fmt.Sprintf("%s: RolloutHeld %s: %s", f.key(), held.Reason, held.Message))
			}
		}
		if len(waiting) > 0 {
			return fmt.Errorf("%d of %d Monocles:\n%s", len(waiting), len(fleet), strings.Join(waiting, "\n"))
		}
		return nil
	})
}

// rolloutString prints r on one line.
func rolloutString(r *monoclev1alpha1.RolloutStatus) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("{revision %s, phase %s, cause %s, wave %d, readyBefore %v, message %q}", r.Revision, r.Phase, r.Cause, r.Wave, r.ReadyBefore, r.Message)
}

// waitMetric waits until the operator r's metric series (a name and labels, as
// testkit.Metrics.Family takes them) exists and sums to want.
func waitMetric(t *testing.T, r *replica, want float64, name string, labels ...string) {
	t.Helper()
	testkit.Eventually(t, 500*time.Millisecond, 30*time.Second, fmt.Sprintf("%s{%s} = %v", name, strings.Join(labels, ","), want), func() error {
		if got, n := r.metrics(t).Family(name, labels...); n == 0 || got != want {
			return fmt.Errorf("%v in %d series", got, n)
		}
		return nil
	})
}

// workloadNames are the StatefulSet (of a bundled Monocle) and Deployments of m.
func workloadNames(m fleetMonocle) []string {
	o := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: m.name, Namespace: m.ns}}
	names := []string{resources.APIName(o), resources.CrawlerName(o)}
	if m.bundled() {
		names = append(names, resources.ElasticName(o))
	}
	return names
}

// fleetRolloutFlags are the fleet rollout's flags of the operator in the fleet tests: waves
// of up to 4, each Monocle Ready for 3 s before the next wave, with deadline.
func fleetRolloutFlags(deadline time.Duration) []string {
	return []string{"--rollout-soak=3s", "--rollout-max-wave=4", "--rollout-deadline=" + deadline.String()}
}

// fleetMaxWave is --rollout-max-wave of fleetRolloutFlags.
const fleetMaxWave = 4

// waveSize is the size of wave n (from 1) under fleetRolloutFlags: 1, 2, 4, then 4.
func waveSize(n int32) int {
	return min(1<<(n-1), fleetMaxWave)
}

// TestFleetRolloutInWaves: the previous release runs a fleet of Monocles (twelve bundled in
// two namespaces, one of them marked canary, one on ECK and two on external clusters), all
// Ready; this release's operator, started with waves of up to 4, rolls its new templates out:
// the canary first and alone, then waves of 2 and 4, each once the Monocles of the one before
// are Ready again. The pods show it: grouping the Monocles whose new pods rolled at once, no
// group is larger than its wave, a group never spans two waves, and the first new pod of wave
// N+1 is made after every pod of wave N was Ready. Every Monocle ends Ready on its own PVC,
// rolled to this release, and the metric counts them all current.
func TestFleetRolloutInWaves(t *testing.T) {
	testkit.NeedCluster(t, env != nil)
	ctx := context.Background()
	rev := currentRevision(t)
	_, kubeconfig, old := runPreviousRelease(t, "waves-previous")
	nsA, nsB := "e2e-waves-a", "e2e-waves-b"
	fleet := append(bundledFleet(nsA, "m", 6), bundledFleet(nsB, "m", 6)...)
	// The canary is the last Monocle by namespace and name: the annotation, not the order,
	// makes it first.
	fleet[len(fleet)-1].canary = true
	canary := fleet[len(fleet)-1]
	fleet = append(fleet, eckMonocle(nsA, "on-eck"), externalMonocle(nsA, "external"), externalMonocle(nsB, "external"))
	makeFleet(t, old, fleet)
	before := takeFleetState(t, fleet)
	namespaces := fleetNamespaces(fleet)
	oldPods, err := testkit.PodUIDs(ctx, env.Kube, namespaces...)
	if err != nil {
		t.Fatal(err)
	}

	current, upgraded := upgradeOperator(t, old, kubeconfig, "waves", fleetRolloutFlags(3*time.Minute)...)
	waitFleetRolled(t, fleet, rev, 5*time.Minute)
	t.Logf("the fleet of %d rolled to %s in %s", len(fleet), rev, time.Since(upgraded).Round(time.Second))

	rolls, err := testkit.PodRolls(ctx, env.Kube, oldPods, namespaces...)
	if err != nil {
		t.Fatal(err)
	}
	waves := map[int32][]string{} // wave → its Monocles, by status.rollout
	waveOf := map[string]int32{}
	for _, f := range fleet {
		m := getMonocle(t, f.ns, f.name)
		r := m.Status.Rollout
		if r.Cause != monoclev1alpha1.RolloutCauseWave || r.Wave < 1 || !r.ReadyBefore {
			t.Errorf("%s: status.rollout %s, want cause Wave, a wave and readyBefore", f.key(), rolloutString(r))
			continue
		}
		waves[r.Wave] = append(waves[r.Wave], f.key())
		waveOf[f.key()] = r.Wave
		if _, ok := rolls[f.key()]; !ok {
			t.Errorf("%s: no new pod, though the new release changes its templates", f.key())
		}
		if after := takeUpgradeState(t, f.ns, f.name); after.pvcUID != before[f.key()].pvcUID {
			t.Errorf("%s: the Elasticsearch PVC was replaced (%s, then %s)", f.key(), before[f.key()].pvcUID, after.pvcUID)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The waves, by status.rollout: the canary alone in the first, then each full in turn.
	if got := waves[1]; !slices.Equal(got, []string{canary.key()}) {
		t.Errorf("wave 1 rolled %v, want the canary %s alone", got, canary.key())
	}
	left := len(fleet)
	for n := int32(1); left > 0; n++ {
		if want := min(waveSize(n), left); len(waves[n]) != want {
			t.Errorf("wave %d rolled %d Monocles %v, want %d", n, len(waves[n]), waves[n], want)
		}
		left -= len(waves[n])
		if len(waves[n]) == 0 {
			break
		}
	}

	// The same, by the pods.
	var all []testkit.PodRoll
	for _, r := range rolls {
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b testkit.PodRoll) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Monocle, b.Monocle))
	})
	for _, r := range all {
		t.Logf("wave %d: %s's new pods made from %s, all Ready at %s: %v", waveOf[r.Monocle], r.Monocle,
			r.Start.Format("15:04:05"), r.Ready.Format("15:04:05"), r.Pods)
	}
	for i, group := range testkit.ConcurrentRolls(all) {
		var names []string
		wave := waveOf[group[0].Monocle]
		for _, r := range group {
			names = append(names, r.Monocle)
			if waveOf[r.Monocle] != wave {
				t.Errorf("rolls at once %v span waves %d and %d", names, wave, waveOf[r.Monocle])
			}
		}
		if len(group) > waveSize(wave) {
			t.Errorf("%d Monocles rolled at once, %v, more than wave %d's %d", len(group), names, wave, waveSize(wave))
		}
		if i == 0 && !slices.Equal(names, []string{canary.key()}) {
			t.Errorf("the first to roll were %v, want the canary %s alone", names, canary.key())
		}
	}
	for n := int32(2); len(waves[n]) > 0; n++ {
		var ready time.Time // when wave n-1's pods were all Ready
		var readyOf string
		for _, k := range waves[n-1] {
			if r := rolls[k]; r.Ready.After(ready) {
				ready, readyOf = r.Ready, k
			}
		}
		for _, k := range waves[n] {
			if r := rolls[k]; !r.Start.After(ready) {
				t.Errorf("wave %d: %s's first new pod was made at %s, no later than %s of wave %d was Ready, at %s",
					n, k, r.Start.Format("15:04:05"), readyOf, n-1, ready.Format("15:04:05"))
			}
		}
	}

	waitMetric(t, current, float64(len(fleet)), "monocle_operator_rollout_monocles", `state="current"`)
	waitMetric(t, current, 0, "monocle_operator_rollout_halted", `revision="`+rev+`"`)
	current.stop()
	uninstall(t, "-f", "deploy/")
}

// pluginDir holds the kubectl plugin built from the working tree, once per run.
var pluginDir = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(env.WorkDir, "plugin-bin")
	return dir, testkit.BuildCommand(context.Background(), env.Root, "./cmd/kubectl-monocle", filepath.Join(dir, "kubectl-monocle"))
})

// usePlugin puts the kubectl plugin, built from the working tree, on the test's $PATH, where
// kubectl finds it as `kubectl monocle`.
func usePlugin(t *testing.T) {
	t.Helper()
	dir, err := pluginDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// kubectlMonocle runs `kubectl monocle args... -n ns` as the cluster admin, as a user would,
// and fails the test unless it succeeds.
func kubectlMonocle(t *testing.T, ns string, args ...string) string {
	t.Helper()
	out := env.Kubectl.Must(t, append(append([]string{"monocle"}, args...), "-n", ns)...)
	t.Logf("kubectl monocle %s -n %s\n%s", strings.Join(args, " "), ns, out)
	return out
}

// refusedVolumeLimits is the CEL expression of the policy TestFleetRolloutHaltsAndResumes
// puts on the canary's namespace: no emptyDir with a sizeLimit, which every scratch volume of
// this release's pods has and none of the previous release's.
const refusedVolumeLimits = `!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.emptyDir) || !has(v.emptyDir.sizeLimit))`

// refusedVolumeLimitsMessage is that policy's message.
const refusedVolumeLimitsMessage = "this namespace's policy refuses emptyDir volumes with a sizeLimit"

// policyProbe is a pod of ns that Pod Security "restricted" admits and the policy of
// refusedVolumeLimits refuses.
func policyProbe(ns string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "policy-probe", Namespace: ns},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "probe", Image: "busybox",
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
			Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Mi"))}}}},
		},
	}
}

// TestFleetRolloutHaltsAndResumes: the fleet upgrade of TestFleetRolloutInWaves, where the
// canary, alone in its namespace, cannot run this release's pods: a policy of its namespace
// (a ValidatingAdmissionPolicy of the API server) refuses them. The canary's roll starts, is
// not Ready again within the deadline and fails (a Warning event RolloutFailed): the
// rollout halts, every other Monocle keeps its workloads as they were (not written: the same
// generations) and Ready, held with RolloutHeld RolloutHalted, and the metric says halted.
// Meanwhile an owner's change of a held Monocle is applied at once, with this release's
// templates (cause Owner), and the rollout stays halted. `kubectl monocle rollout undo`
// brings the canary's workloads back to their templates of before, which the operator then
// leaves alone; once the policy is gone, `kubectl monocle rollout resume` rolls the canary
// again and the waves go on to the end of the fleet.
func TestFleetRolloutHaltsAndResumes(t *testing.T) {
	testkit.NeedCluster(t, env != nil)
	ctx := context.Background()
	rev := currentRevision(t)
	usePlugin(t)
	_, kubeconfig, old := runPreviousRelease(t, "halt-previous")
	canaryNS, ns := "e2e-halt-canary", "e2e-halt"
	canary := fleetMonocle{ns: canaryNS, name: "canary", canary: true}
	fleet := append([]fleetMonocle{canary}, bundledFleet(ns, "m", 6)...)
	fleet = append(fleet, eckMonocle(ns, "on-eck"), externalMonocle(ns, "external"))
	makeFleet(t, old, fleet)
	others := fleet[1:]
	remove, err := env.RefusePods(ctx, "e2e-halt-canary", canaryNS, refusedVolumeLimits, refusedVolumeLimitsMessage, policyProbe(canaryNS))
	if err != nil {
		t.Fatal(err)
	}
	removed := false
	t.Cleanup(func() {
		if !removed {
			_ = remove(context.Background())
		}
	})
	before := takeFleetState(t, fleet)
	ready := watchReady(t, ns)

	current, _ := upgradeOperator(t, old, kubeconfig, "halt", fleetRolloutFlags(40*time.Second)...)
	testkit.Eventually(t, time.Second, 3*time.Minute, "the canary's roll failed", func() error {
		if r := getMonocle(t, canaryNS, canary.name).Status.Rollout; r == nil || r.Phase != monoclev1alpha1.RolloutFailed {
			return fmt.Errorf("status.rollout %s", rolloutString(r))
		}
		return nil
	})
	r := getMonocle(t, canaryNS, canary.name).Status.Rollout
	t.Logf("the canary: status.rollout %s", rolloutString(r))
	if r.Revision != rev || r.Cause != monoclev1alpha1.RolloutCauseWave || r.Wave != 1 || !r.ReadyBefore {
		t.Errorf("the canary's status.rollout %s, want revision %s, cause Wave, wave 1, readyBefore", rolloutString(r), rev)
	}
	expectEvent(t, canaryNS, canary.name, corev1.EventTypeWarning, "RolloutFailed", "Not Ready again within 40s")
	waitHalted(t, others)
	waitMetric(t, current, 1, "monocle_operator_rollout_halted", `revision="`+rev+`"`)
	waitMetric(t, current, 1, "monocle_operator_rollout_monocles", `state="failed"`)
	waitMetric(t, current, float64(len(others)), "monocle_operator_rollout_monocles", `state="pending"`)
	var changed []string
	for _, w := range workloadNames(canary) {
		if !apiequality.Semantic.DeepEqual(takeUpgradeState(t, canaryNS, canary.name).templates[w], before[canary.key()].templates[w]) {
			changed = append(changed, w)
		}
	}
	if len(changed) == 0 {
		t.Errorf("the canary failed, yet none of its workloads has this release's template")
	}
	t.Logf("the canary's workloads with this release's template: %v", changed)
	checkUnwritten(t, others, before)

	// An owner's change of a held Monocle goes out at once, with this release's templates.
	owned := others[0]
	t.Run("owner change while halted", func(t *testing.T) {
		env.Kubectl.Must(t, "patch", "-n", owned.ns, "monocle/"+owned.name, "--type=merge", `-p={"spec":{"api":{"podAnnotations":{"example.com/owner-change":"1"}}}}`)
		o := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: owned.name, Namespace: owned.ns}}
		testkit.Eventually(t, time.Second, 2*time.Minute, owned.key()+" rolled with its owner's change", func() error {
			r := getMonocle(t, owned.ns, owned.name).Status.Rollout
			if r == nil || r.Revision != rev || r.Cause != monoclev1alpha1.RolloutCauseOwner {
				return fmt.Errorf("status.rollout %s, want revision %s, cause Owner", rolloutString(r), rev)
			}
			s := takeUpgradeState(t, owned.ns, owned.name)
			if got := s.templates[resources.APIName(o)].Annotations["example.com/owner-change"]; got != "1" {
				return fmt.Errorf("the API's pod template has no annotation example.com/owner-change")
			}
			if node := resources.ElasticName(o); apiequality.Semantic.DeepEqual(s.templates[node], before[owned.key()].templates[node]) {
				return fmt.Errorf("the StatefulSet %s's template is the previous release's", node)
			}
			return nil
		})
		waitFleetRolled(t, []fleetMonocle{owned}, rev, 2*time.Minute)
		waitMetric(t, current, 1, "monocle_operator_rollout_halted", `revision="`+rev+`"`)
		waitMetric(t, current, 1, "monocle_operator_rollout_monocles", `state="current"`)
		waitHalted(t, others[1:])
		checkUnwritten(t, others[1:], before)
	})

	// Undo: the canary's workloads back to the templates of before, left alone.
	kubectlMonocle(t, canaryNS, "rollout", "undo", canary.name)
	testkit.Eventually(t, time.Second, time.Minute, "the canary's workloads undone", func() error {
		s := takeUpgradeState(t, canaryNS, canary.name)
		for _, w := range workloadNames(canary) {
			if !apiequality.Semantic.DeepEqual(s.templates[w], before[canary.key()].templates[w]) {
				return fmt.Errorf("%s's template is not that of before the upgrade", w)
			}
		}
		return nil
	})
	waitReady(t, canaryNS, canary.name)
	undone := takeUpgradeState(t, canaryNS, canary.name)
	time.Sleep(10 * time.Second) // five fleet plans, and the canary's syncs
	if now := takeUpgradeState(t, canaryNS, canary.name); !maps.Equal(now.generations, undone.generations) {
		t.Errorf("the operator wrote the canary's undone workloads: generations %v, then %v", undone.generations, now.generations)
	}
	if r := getMonocle(t, canaryNS, canary.name).Status.Rollout; r.Phase != monoclev1alpha1.RolloutFailed {
		t.Errorf("the canary's status.rollout after undo: %s, want phase Failed", rolloutString(r))
	}
	ready.end()
	for _, f := range others[1:] {
		if falls := ready.falls[f.name]; len(falls) > 0 {
			t.Errorf("%s: Ready turned False while the rollout was halted: %v", f.key(), falls)
		}
	}

	// The fix, and resume: the rollout goes on to the end of the fleet.
	if err := remove(ctx); err != nil {
		t.Fatal(err)
	}
	removed = true
	kubectlMonocle(t, canaryNS, "rollout", "resume", canary.name)
	expectEvent(t, canaryNS, canary.name, corev1.EventTypeNormal, "RolloutResumed", "")
	waitFleetRolled(t, fleet, rev, 5*time.Minute)
	if r := getMonocle(t, canaryNS, canary.name).Status.Rollout; r.Cause != monoclev1alpha1.RolloutCauseWave || r.Wave != 1 || r.Resumed == "" {
		t.Errorf("the canary's status.rollout after resume: %s, want cause Wave, wave 1, resumed", rolloutString(r))
	}
	for _, f := range fleet {
		if after := takeUpgradeState(t, f.ns, f.name); after.pvcUID != before[f.key()].pvcUID {
			t.Errorf("%s: the Elasticsearch PVC was replaced (%s, then %s)", f.key(), before[f.key()].pvcUID, after.pvcUID)
		}
	}
	waitMetric(t, current, float64(len(fleet)), "monocle_operator_rollout_monocles", `state="current"`)
	waitMetric(t, current, 0, "monocle_operator_rollout_halted", `revision="`+rev+`"`)
	current.stop()
	uninstall(t, "-f", "deploy/")
}

// waitHalted waits until every Monocle of fleet is held by the halted rollout: RolloutHeld
// True, reason RolloutHalted.
func waitHalted(t *testing.T, fleet []fleetMonocle) {
	t.Helper()
	testkit.Eventually(t, time.Second, time.Minute, "the fleet held by the halted rollout", func() error {
		for _, f := range fleet {
			m := getMonocle(t, f.ns, f.name)
			if c := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionRolloutHeld); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "RolloutHalted" {
				return fmt.Errorf("%s: RolloutHeld %+v", f.key(), c)
			}
		}
		return nil
	})
}

// checkUnwritten fails the test on a Monocle of fleet whose workloads were written since
// before (other generations, or other templates) or that is not Ready.
func checkUnwritten(t *testing.T, fleet []fleetMonocle, before map[string]upgradeState) {
	t.Helper()
	for _, f := range fleet {
		s, was := takeUpgradeState(t, f.ns, f.name), before[f.key()]
		for w, g := range was.generations {
			if s.generations[w] != g || !apiequality.Semantic.DeepEqual(s.templates[w], was.templates[w]) {
				t.Errorf("%s: %s was written while the rollout was held (generation %d, then %d)", f.key(), w, g, s.generations[w])
			}
		}
		if c := apimeta.FindStatusCondition(getMonocle(t, f.ns, f.name).Status.Conditions, monoclev1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("%s: not Ready while held: %+v", f.key(), c)
		}
	}
}
