package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utildiff "k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// upgradeNamespace holds the Monocles of TestUpgradeFromPreviousRelease, with the ECK
// Elasticsearch "es" one of them references.
const upgradeNamespace = "e2e-upgrade"

// upgradeMonocles are the Monocles TestUpgradeFromPreviousRelease makes with the previous
// release, one of each kind a user runs, written in that release's schema: bundled with
// backups, on an ECK cluster, placed with an outbound proxy, and hibernated. The previous
// release's sample (bundled, with a config and a Secret) joins them.
var upgradeMonocles = map[string]string{
	"backups": `backup: {schedule: "0 3 * * *", keep: 3}`,
	"eck":     `elasticsearch: {elasticsearchRef: {name: es}}`,
	"placed": `api: {nodeSelector: {kubernetes.io/os: linux}, tolerations: [{key: dedicated, operator: Exists}], podLabels: {team: search}}
  crawler: {nodeSelector: {kubernetes.io/os: linux}, podAnnotations: {example.com/owner: search}}
  elasticsearch: {nodeSelector: {kubernetes.io/os: linux}}
  proxy: {httpsProxy: 'http://proxy.corp.example.com:3128', noProxy: '.corp.example.com'}`,
	"sleeping": `hibernate: true`,
}

// bundledUpgradeMonocles are the names of upgradeMonocles (and the sample's) that run the
// bundled Elasticsearch.
var bundledUpgradeMonocles = []string{sample.Name, "backups", "placed", "sleeping"}

// upgradeState is what an upgrade must keep, or change only once, per Monocle.
type upgradeState struct {
	pvcUID    string
	keys      map[string]string
	users     map[string]string // the bundled node's users Secret, once made
	templates map[string]corev1.PodTemplateSpec
	// generations are the workloads' metadata.generation, which every write of their spec
	// moves.
	generations map[string]int64
	pods        map[string][]string        // workload → its pods' UIDs
	revisions   map[string]map[string]bool // workload → its ReplicaSets or ControllerRevisions
}

// takeUpgradeState reads the state of Monocle name of ns: its data PVC (none on a cluster of
// its own), keys, workloads' templates and generations, pods and revisions.
func takeUpgradeState(t *testing.T, ns, name string) upgradeState {
	t.Helper()
	ctx := context.Background()
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	s := upgradeState{keys: map[string]string{}, templates: map[string]corev1.PodTemplateSpec{}, generations: map[string]int64{},
		pods: map[string][]string{}, revisions: map[string]map[string]bool{}}
	pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, resources.ElasticPVCName(m, resources.ElasticDataVolume), metav1.GetOptions{})
	switch {
	case err == nil:
		s.pvcUID = string(pvc.UID)
	case !apierrors.IsNotFound(err):
		t.Fatal(err)
	}
	secret, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, resources.SecretName(m), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range resources.GeneratedKeys {
		s.keys[k] = string(secret.Data[k])
	}
	if users, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, resources.ElasticUsersSecretName(m), metav1.GetOptions{}); err == nil {
		s.users = map[string]string{}
		for k, v := range users.Data {
			s.users[k] = string(v)
		}
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	record := func(workload string, generation int64, template corev1.PodTemplateSpec, selector map[string]string, revisions []string) {
		s.templates[workload], s.generations[workload] = template, generation
		pods, err := env.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			s.pods[workload] = append(s.pods[workload], string(p.UID))
		}
		slices.Sort(s.pods[workload])
		s.revisions[workload] = map[string]bool{}
		for _, r := range revisions {
			s.revisions[workload][r] = true
		}
	}
	for _, d := range []string{resources.APIName(m), resources.CrawlerName(m)} {
		dep, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rss, err := env.Kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(dep.Spec.Selector.MatchLabels).String()})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, rs := range rss.Items {
			names = append(names, rs.Name)
		}
		record(d, dep.Generation, dep.Spec.Template, dep.Spec.Selector.MatchLabels, names)
	}
	sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, resources.ElasticName(m), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return s
	} else if err != nil {
		t.Fatal(err)
	}
	revs, err := env.Kube.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sts.Spec.Selector.MatchLabels).String()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range revs.Items {
		names = append(names, r.Name)
	}
	record(sts.Name, sts.Generation, sts.Spec.Template, sts.Spec.Selector.MatchLabels, names)
	return s
}

// changelogRestarts returns the workloads the CHANGELOG's newest "Upgrading from <version>"
// section says the upgrade from version restarts: the names it spells `<name>-<suffix>`, as
// the suffixes ("-elastic", "-api", "-crawler").
func changelogRestarts(t *testing.T, version string) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(env.Root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	heading := "### Upgrading from " + strings.TrimPrefix(version, "v")
	named := regexp.MustCompile("`<name>(-[a-z]+)`")
	in, found := false, false
	restarts := map[string]bool{}
	for s := bufio.NewScanner(f); s.Scan(); {
		line := s.Text()
		switch {
		case strings.HasPrefix(line, heading) && !found:
			in, found = true, true
		case strings.HasPrefix(line, "#"):
			in = false
		case in:
			for _, m := range named.FindAllStringSubmatch(line, -1) {
				restarts[m[1]] = true
			}
		}
	}
	if !found {
		t.Fatalf("CHANGELOG.md has no %q section", heading)
	}
	return restarts
}

// readyWatch records, from its start, every change of the Ready condition of the Monocles of
// one namespace.
type readyWatch struct {
	mu    sync.Mutex
	ready map[string]metav1.ConditionStatus
	falls map[string][]string // Monocle → each fall from True, as "reason: message"
	stop  func()
	done  chan struct{}
}

// watchReady starts a readyWatch of ns from the Monocles' current state.
func watchReady(t *testing.T, ns string) *readyWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	list, err := env.Monocles.MonocleV1alpha1().Monocles(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := &readyWatch{ready: map[string]metav1.ConditionStatus{}, falls: map[string][]string{}, stop: cancel, done: make(chan struct{})}
	for _, m := range list.Items {
		if c := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionReady); c != nil {
			w.ready[m.Name] = c.Status
		}
	}
	watcher, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		defer watcher.Stop()
		for ev := range watcher.ResultChan() {
			m, ok := ev.Object.(*monoclev1alpha1.Monocle)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			c := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionReady)
			if c == nil {
				continue
			}
			w.mu.Lock()
			if w.ready[m.Name] == metav1.ConditionTrue && c.Status != metav1.ConditionTrue {
				w.falls[m.Name] = append(w.falls[m.Name], c.Reason+": "+c.Message)
			}
			w.ready[m.Name] = c.Status
			w.mu.Unlock()
		}
	}()
	t.Cleanup(w.end)
	return w
}

// end stops the watch; falls is then final.
func (w *readyWatch) end() {
	w.stop()
	<-w.done
}

// TestUpgradeFromPreviousRelease: the upgrade from the previous release (hack/previous-release,
// built from git) as a user makes it, then the downgrade back. With that release installed
// from its manifests and its operator running, the Monocles of every kind (upgradeMonocles and
// its sample) are made and Ready (the hibernated one Hibernated); the operator is stopped,
// deploy/ applied and this operator started. Each Monocle keeps its data PVC and keys; a
// workload's pods are replaced, by one rollout, only if the CHANGELOG's "Upgrading from" the
// previous release names the workload; Ready turns False only for a Monocle whose single
// Elasticsearch node or crawler so restarts; this operator's writes to Monocles are status
// only, and it writes no workload the changelog does not name. Then the previous release's
// manifests are applied again and its operator reads and serves every Monocle this one wrote.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	testkit.NeedCluster(t, env != nil)
	// The previous release, and the Monocles it makes.
	prev, kubeconfig, old := runPreviousRelease(t, "previous")
	restarts := changelogRestarts(t, prev.Version)
	t.Logf("the changelog's upgrade from %s restarts %v", prev.Version, slices.Sorted(maps.Keys(restarts)))
	ns := upgradeNamespace
	testkit.MustCreateNamespace(t, env.Kube, ns)
	if err := env.CreateECK(context.Background(), ns, "Ready", "green"); err != nil {
		t.Fatal(err)
	}
	for _, n := range bundledUpgradeMonocles {
		// The previous release's nodes run without security.
		env.Elastic.ServeBundledWithoutSecurity(ns, n)
	}
	env.Kubectl.Must(t, "apply", "-n", ns, "-f", filepath.Join(prev.Dir, "deploy", "samples", "monocle.yaml"))
	names := []string{sample.Name}
	for n, spec := range upgradeMonocles {
		manifest := "apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata:\n  name: " + n + "\nspec:\n  " + spec + "\n"
		if out, err := env.Kubectl.RunStdin(context.Background(), manifest, "apply", "-n", ns, "-f", "-"); err != nil {
			t.Fatalf("%s with the previous release: %v\n%s", n, err, out)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	before := map[string]upgradeState{}
	for _, n := range names {
		waitServing(t, old, ns, n)
		before[n] = takeUpgradeState(t, ns, n)
	}
	ready := watchReady(t, ns)

	// The upgrade: this operator rolls its templates out in waves of one Monocle, then two,
	// then the last; the hibernated one, whose pods it does not restart, at once.
	current, upgraded := upgradeOperator(t, old, kubeconfig, "current", upgradeRolloutFlags...)
	for _, n := range names {
		waitUpgraded(t, current, ns, n)
		if slices.Contains(bundledUpgradeMonocles, n) {
			env.Elastic.SecureBundled(ns, n)
		}
	}
	ready.end()
	changed := map[string]bool{} // the workloads whose pod template changed
	for _, n := range names {
		after, b := takeUpgradeState(t, ns, n), before[n]
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
			if apiequality.Semantic.DeepEqual(after.templates[w], tmpl) {
				if !slices.Equal(after.pods[w], b.pods[w]) || len(added) > 0 {
					t.Errorf("%s: %s's pod template did not change, yet its pods did (%v, then %v; new revisions %v)", n, w, b.pods[w], after.pods[w], added)
				}
				continue
			}
			changed[w] = true
			suffix := strings.TrimPrefix(w, n)
			if !restarts[suffix] {
				t.Errorf("%s: the pod template of %s changed, which CHANGELOG.md's upgrade from %s does not name (`<name>%s`):\n%s", n, w, prev.Version, suffix, utildiff.Diff(tmpl, after.templates[w]))
			}
			if len(added) != 1 {
				t.Errorf("%s: %s's pod template changed; it rolled %d times (new revisions %v), want once", n, w, len(added), added)
				continue
			}
			t.Logf("%s: %s rolled once to the new pod template", n, w)
		}
		single := changed[resources.ElasticName(&monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: n}})] ||
			changed[resources.CrawlerName(&monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: n}})]
		if falls := ready.falls[n]; len(falls) > 0 && !single {
			t.Errorf("%s: Ready turned False during the upgrade, though no single-pod component restarted: %v", n, falls)
		} else if len(falls) > 0 {
			t.Logf("%s: Ready False while its node or crawler restarted: %v", n, falls)
		}
	}
	writes := map[string]int{}
	for _, e := range operatorRequests(t) {
		if e.UserAgent != current.userAgent() || !e.IsWrite() || e.Received.Before(upgraded) || e.ObjectRef.Resource == "leases" || e.ObjectRef.Resource == "events" {
			continue
		}
		writes[e.Verb+" "+e.ResourcePath()]++
		switch r := e.ObjectRef.Resource; {
		case r == "monocles" && e.ObjectRef.Subresource != "status":
			t.Errorf("the new operator wrote a Monocle, not its status: %s", e.StringAt(upgraded))
		case (r == "deployments" || r == "statefulsets") && e.ObjectRef.Subresource == "" && !changed[e.ObjectRef.Name]:
			t.Errorf("the new operator wrote a workload whose pod template the changelog does not change: %s", e.StringAt(upgraded))
		}
	}
	t.Logf("the new operator's writes after the upgrade:\n%s", countLines(writes))
	checkServiceAccountOnly(t, operatorRequests(t))
	current.stop()

	// The downgrade, which docs/installation.md says 0.1.0 does not support: the previous
	// release's manifests (its CRD's schema prunes the fields it does not know) and operator.
	// It reads every Monocle and rolls back what it can (the bundled nodes' security, the
	// sidecar's liveness probe on an ECK cluster), but it cannot update the API Deployment of
	// a bundled Monocle (it keeps the proxy sidecar and drops its volumes, which the API
	// server refuses) nor delete the proxy's Secret (its RBAC lacks the verb), so those
	// Monocles report Degraded, SyncFailed, and their API pods run on.
	env.Kubectl.Must(t, "apply", "-f", prev.Manifests)
	for _, n := range bundledUpgradeMonocles {
		env.Elastic.ServeBundledWithoutSecurity(ns, n)
	}
	upgradedState := map[string]upgradeState{}
	for _, n := range names {
		upgradedState[n] = takeUpgradeState(t, ns, n)
	}
	downgraded := startReplicaOf(t, prev.Bin, "downgraded", kubeconfig, deploymentArgs(t), env.Elastic.Flag())
	waitLeader(t, time.Minute, downgraded)
	for _, n := range names {
		m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: n}}
		failed := false
		testkit.Eventually(t, 500*time.Millisecond, 2*time.Minute, n+" read by the previous release", func() error {
			if _, series := downgraded.metrics(t).Family("monocle_operator_monocle_ready", `monocle_namespace="`+ns+`"`, `monocle="`+n+`"`); series == 0 {
				return errors.New("no monocle_ready series yet")
			}
			got, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(context.Background(), n, metav1.GetOptions{})
			if err != nil {
				return err
			}
			ready := apimeta.FindStatusCondition(got.Status.Conditions, monoclev1alpha1.ConditionReady)
			degraded := apimeta.FindStatusCondition(got.Status.Conditions, monoclev1alpha1.ConditionDegraded)
			switch {
			case ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == got.Generation:
				return nil
			case degraded != nil && degraded.Status == metav1.ConditionTrue && degraded.Reason == "SyncFailed":
				failed = true
				return nil
			}
			return fmt.Errorf("neither Ready nor Degraded (SyncFailed): %+v", got.Status.Conditions)
		})
		after, was := takeUpgradeState(t, ns, n), upgradedState[n]
		if after.pvcUID != before[n].pvcUID || !maps.Equal(after.keys, before[n].keys) {
			t.Errorf("%s: the downgrade replaced the data PVC or a generated key", n)
		}
		if api := resources.APIName(m); failed && !slices.Equal(after.pods[api], was.pods[api]) {
			t.Errorf("%s: the previous release failed to sync it, yet replaced its API's pods (%v, then %v)", n, was.pods[api], after.pods[api])
		}
		t.Logf("%s after the downgrade: SyncFailed %v", n, failed)
	}
	downgraded.stop()

	// The way back: this release again, which converges every Monocle.
	env.Kubectl.Must(t, "apply", "-f", "deploy/")
	env.Kubectl.MustWaitEstablished(t, crdName)
	for _, n := range bundledUpgradeMonocles {
		env.Elastic.SecureBundled(ns, n)
	}
	again := startReplica(t, "again", kubeconfig, deploymentArgs(t), upgradeRolloutFlags...)
	waitLeader(t, time.Minute, again)
	for _, n := range names {
		waitUpgraded(t, again, ns, n)
		if users := takeUpgradeState(t, ns, n).users; !maps.Equal(users, upgradedState[n].users) {
			t.Errorf("%s: the users Secret changed across the downgrade and the upgrade back", n)
		}
	}
	again.stop()
	uninstall(t, "-f", "deploy/")
}

// upgradeRolloutFlags are the fleet rollout's flags of this release's operator in
// TestUpgradeFromPreviousRelease: its waves as by default, with a soak and a deadline that
// fit a test.
var upgradeRolloutFlags = []string{"--rollout-soak=2s", "--rollout-deadline=3m"}

// previousBuild is the previous release, built once for every test that upgrades from it.
var previousBuild struct {
	once    sync.Once
	release testkit.PreviousRelease
	err     error
}

// runPreviousRelease runs the previous release as a user installs it, on a cluster cleared
// of deploy/: it builds the release (once per run of the suite, in the work directory),
// installs ECK's CRD (deleted when the test ends), applies the release's manifests and
// starts its operator as name, with the installed Deployment's arguments and the
// ServiceAccount's kubeconfig, reading env.Elastic. It returns the release, that kubeconfig
// and the operator once it leads. It skips the test in a clone without the release's commit.
func runPreviousRelease(t *testing.T, name string) (testkit.PreviousRelease, string, *replica) {
	t.Helper()
	uninstall(t, "-f", "deploy/")
	previousBuild.once.Do(func() {
		dir := filepath.Join(env.WorkDir, "previous-release")
		if previousBuild.err = os.MkdirAll(dir, 0o755); previousBuild.err == nil {
			previousBuild.release, previousBuild.err = testkit.BuildPreviousRelease(context.Background(), env.Root, dir)
		}
	})
	prev := previousBuild.release
	if err := previousBuild.err; errors.Is(err, testkit.ErrNoHistory) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	eckCRD, err := env.InstallECK(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = env.Kubectl.Run(context.Background(), "delete", "--ignore-not-found", "-f", eckCRD) })
	env.Kubectl.Must(t, "apply", "-f", prev.Manifests)
	env.Kubectl.MustWaitEstablished(t, crdName)
	kubeconfig := serviceAccountKubeconfig(t)
	old := startReplicaOf(t, prev.Bin, name, kubeconfig, deploymentArgs(t), env.Elastic.Flag())
	waitLeader(t, time.Minute, old)
	return prev, kubeconfig, old
}

// upgradeOperator upgrades from the previous release's operator old as a user does: it
// stops old, applies deploy/ and starts this release's operator as name, with kubeconfig
// and extra flags. It returns that operator once it leads, and when deploy/ was applied.
func upgradeOperator(t *testing.T, old *replica, kubeconfig, name string, extra ...string) (*replica, time.Time) {
	t.Helper()
	old.stop()
	upgraded := time.Now()
	env.Kubectl.Must(t, "apply", "-f", "deploy/")
	env.Kubectl.MustWaitEstablished(t, crdName)
	current := startReplica(t, name, kubeconfig, deploymentArgs(t), extra...)
	waitLeader(t, time.Minute, current)
	return current, upgraded
}

// operatorRevision is the release env.OperatorBin reports, the revision its fleet rollout
// records in each Monocle's status.rollout.
var operatorRevision = sync.OnceValues(func() (string, error) {
	return testkit.BinaryVersion(context.Background(), env.OperatorBin)
})

// currentRevision is operatorRevision in a test, which it fails on an error.
func currentRevision(t *testing.T) string {
	t.Helper()
	rev, err := operatorRevision()
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// waitServing waits until operator r has synced Monocle name of ns (its monocle_ready series)
// and the Monocle is Ready, or Hibernated for one with spec.hibernate.
func waitServing(t *testing.T, r *replica, ns, name string) {
	t.Helper()
	testkit.Eventually(t, 500*time.Millisecond, 3*time.Minute, name+" synced by "+r.Name, func() error {
		if _, n := r.metrics(t).Family("monocle_operator_monocle_ready", `monocle_namespace="`+ns+`"`, `monocle="`+name+`"`); n == 0 {
			return errors.New("no monocle_ready series yet")
		}
		return nil
	})
	if upgradeMonocles[name] == "hibernate: true" {
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=jsonpath={.status.hibernation.phase}="+string(monoclev1alpha1.HibernationHibernated), "--timeout=180s", "monocle/"+name)
		return
	}
	waitReady(t, ns, name)
}

// waitUpgraded waits until operator r has synced Monocle name (waitServing), its roll to
// this release is done (status.rollout: the operator's revision, phase Rolled), every
// workload has rolled out its desired pod template with its pods ready, and a bundled node
// runs with security on (status.elasticsearchCluster.authentication Enabled).
func waitUpgraded(t *testing.T, r *replica, ns, name string) {
	t.Helper()
	ctx := context.Background()
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	rev := currentRevision(t)
	waitServing(t, r, ns, name)
	testkit.Eventually(t, 500*time.Millisecond, 3*time.Minute, name+" upgraded and rolled out", func() error {
		got, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ro := got.Status.Rollout; ro == nil || ro.Revision != rev || ro.Phase != monoclev1alpha1.RolloutRolled {
			return fmt.Errorf("status.rollout: %+v, want revision %s, phase Rolled", ro, rev)
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
		if !slices.Contains(bundledUpgradeMonocles, name) {
			return nil
		}
		sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, resources.ElasticName(m), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s := sts.Status; s.ObservedGeneration < sts.Generation || s.CurrentRevision != s.UpdateRevision || s.ReadyReplicas != ptr.Deref(sts.Spec.Replicas, 1) {
			return fmt.Errorf("StatefulSet rolling: %+v", s)
		}
		if c := got.Status.ElasticsearchCluster; c == nil || c.Authentication != monoclev1alpha1.ElasticsearchAuthenticationEnabled {
			return fmt.Errorf("status.elasticsearchCluster: %+v, want authentication Enabled", c)
		}
		return nil
	})
	if upgradeMonocles[name] != "hibernate: true" {
		waitReady(t, ns, name)
	}
}

// countLines prints counts, one "<n> <key>" per line, sorted by key.
func countLines(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%4d %s\n", counts[k], k)
	}
	return b.String()
}
