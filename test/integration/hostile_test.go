package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	clientset "github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// hostileAPI are clients for the cases' many concurrent reads, with a rate limit above the
// client-go default (5 requests per second) that env's clients have.
var hostileAPI struct {
	kube     kubernetes.Interface
	monocles clientset.Interface
}

// hostileControlNamespace holds the healthy control Monocle "control", which must stay Ready and
// keep its data whatever the hostile cases do.
const hostileControlNamespace = "hostile-control"

// TestHostileMonocles applies malformed and hostile Monocles (hostileCases) with kubectl and
// checks that each is either refused at admission with an error naming the field, or
// accepted and reported in a condition. For every case the operator must not panic, and a
// good Monocle that receives a hostile update keeps its PVC, its generated keys and the
// user's Secret. At the end the control Monocle must still be Ready, unchanged, and
// reconciled (a deleted Deployment comes back).
//
// The cases run concurrently (the test's -parallel is GOMAXPROCS, too few for cases that
// mostly wait) and each reports in its own subtest.
func TestHostileMonocles(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := context.Background()
	start := time.Now()
	cfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	hostileAPI.kube = kubernetes.NewForConfigOrDie(cfg)
	hostileAPI.monocles = clientset.NewForConfigOrDie(cfg)

	testkit.MustCreateNamespace(t, env.Kube, hostileControlNamespace)
	if out, err := env.Kubectl.RunStdin(context.Background(), hostileTokensSecret+"---\n"+hostileManifest("control", hostileBaseSpec), "apply", "-n", hostileControlNamespace, "-f", "-"); err != nil {
		t.Fatalf("creating the control Monocle: %v: %s", err, out)
	}
	if err := hostileWaitReady(ctx, hostileControlNamespace, "control", 120*time.Second); err != nil {
		t.Fatal(err)
	}
	controlBefore, err := takeHostileState(ctx, hostileControlNamespace, "control")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control Monocle Ready after %s", time.Since(start).Round(time.Second))

	cases := hostileCases()
	testkit.MustCreateNamespace(t, env.Kube, hostileNamespace)
	namespaces := make([]string, len(cases))
	for i, c := range cases {
		switch {
		case c.namespace != "":
			namespaces[i] = c.namespace
		case c.objects == "" && c.base == "" && len(c.rejected) > 0:
			namespaces[i] = hostileNamespace
		default:
			ns := fmt.Sprintf("hostile-%02d", i)
			namespaces[i] = ns
			t.Cleanup(func() { _, _ = env.Kubectl.Run(context.Background(), "delete", "namespace", ns, "--wait=false") })
		}
	}
	results := make([]*hostileResult, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runHostileCase(ctx, namespaces[i], namespaces[i] != c.namespace && namespaces[i] != hostileNamespace, c)
		}()
	}
	wg.Wait()
	t.Logf("%d cases ran in %s", len(cases), time.Since(start).Round(time.Second))

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := results[i]
			for _, l := range r.logs {
				t.Log(l)
			}
			for _, f := range r.failures {
				t.Error(f)
			}
			if p := hostileOperatorPanic(); p != "" {
				t.Errorf("the operator panicked: %s", p)
			}
		})
	}

	t.Run("control Monocle is still reconciled", func(t *testing.T) {
		if err := hostileWaitReady(ctx, hostileControlNamespace, "control", 60*time.Second); err != nil {
			t.Fatal(err)
		}
		env.Kubectl.Must(t, "delete", "-n", hostileControlNamespace, "deployment/control-crawler", "--wait=false")
		err := testkit.Poll(ctx, time.Second, 60*time.Second, "the crawler Deployment is recreated", func(context.Context) error {
			d, err := hostileAPI.kube.AppsV1().Deployments(hostileControlNamespace).Get(ctx, "control-crawler", metav1.GetOptions{})
			if err == nil && d.DeletionTimestamp != nil {
				return errors.New("the old Deployment is still being deleted")
			}
			return err
		})
		if err != nil {
			t.Fatalf("the deleted crawler Deployment was not recreated: %v", err)
		}
		if err := hostileWaitReady(ctx, hostileControlNamespace, "control", 60*time.Second); err != nil {
			t.Fatal(err)
		}
		after, err := takeHostileState(ctx, hostileControlNamespace, "control")
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range controlBefore.diff(after) {
			t.Errorf("control Monocle: %s", d)
		}
		if p := hostileOperatorPanic(); p != "" {
			t.Errorf("the operator panicked: %s", p)
		}
	})

	hostileQuiesce(t, namespaces)
}

// hostileQuiesce deletes the cases' Monocles and waits for the operator to fall quiet, so
// the next test does not share the operator with the work of this one (the namespaces are
// deleted afterwards, by cleanup).
func hostileQuiesce(t *testing.T, namespaces []string) {
	var wg sync.WaitGroup
	for _, ns := range append(slices.Compact(slices.Sorted(slices.Values(namespaces))), hostileControlNamespace) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := hostileKubectl("", "delete", "monocles", "--all", "-n", ns, "--wait=true", "--timeout=60s"); err != nil {
				t.Logf("deleting the Monocles of %s: %v: %s", ns, err, out)
			}
		}()
	}
	wg.Wait()
	err := testkit.Poll(context.Background(), time.Second, 60*time.Second, "the operator is quiet", func(context.Context) error {
		writes, err := operatorWrites(time.Now().Add(-3*time.Second), "")
		if err == nil && len(writes) > 0 {
			err = fmt.Errorf("%d operator writes in the last 3s, e.g. %s", len(writes), writes[0])
		}
		return err
	})
	if err != nil {
		t.Logf("the operator is not quiet: %v", err)
	}
}

// hostileResult collects what one case found, for its subtest to report.
type hostileResult struct {
	failures, logs []string
}

func (r *hostileResult) errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *hostileResult) logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

// runHostileCase runs c in namespace ns, creating it first when own is set. It makes no
// testing.T call, so it can run on any goroutine.
func runHostileCase(ctx context.Context, ns string, own bool, c hostileCase) *hostileResult {
	r := &hostileResult{}
	if own {
		if out, err := hostileKubectl("", "create", "namespace", ns); err != nil {
			r.errorf("creating namespace %s: %v: %s", ns, err, out)
			return r
		}
		if out, err := hostileKubectl("", "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted"); err != nil {
			r.errorf("labelling namespace %s: %v: %s", ns, err, out)
			return r
		}
	}
	// run runs kubectl as the case's author: the namespace's tenant, or the admin.
	run := hostileKubectl
	if c.tenant {
		tenant, err := hostileTenant(ctx, ns)
		if err != nil {
			r.errorf("%v", err)
			return r
		}
		run = func(stdin string, args ...string) (string, error) { return hostileKubectlAs(tenant, stdin, args...) }
	}
	if c.objects != "" {
		if out, err := run(c.objects, "apply", "-n", ns, "-f", "-"); err != nil {
			r.errorf("creating the case's objects: %v: %s", err, out)
			return r
		}
	}
	var before hostileState
	if c.base != "" {
		if out, err := hostileKubectl(hostileManifest("m", c.base), "apply", "-n", ns, "-f", "-"); err != nil {
			r.errorf("creating the good Monocle: %v: %s", err, out)
			return r
		}
		if err := hostileWaitReady(ctx, ns, "m", 150*time.Second); err != nil {
			r.errorf("the good Monocle: %v", err)
			return r
		}
		var err error
		if before, err = takeHostileState(ctx, ns, "m"); err != nil {
			r.errorf("reading the good Monocle's state: %v", err)
			return r
		}
	}

	var out string
	var err error
	switch {
	case c.patch != "":
		out, err = run("", "patch", "-n", ns, "monocle/m", "--type=merge", "-p", c.patch)
	case c.base != "":
		out, err = run(c.manifest, "apply", "-n", ns, "-f", "-")
	default:
		out, err = run(c.manifest, "create", "-n", ns, "-f", "-")
	}
	r.logf("kubectl: %v\n%s", err, hostileCut(out, 2000))

	switch {
	case len(c.rejected) > 0:
		if err == nil {
			r.errorf("accepted; want it refused at admission with %q", c.rejected)
		}
		for _, s := range c.rejected {
			if !strings.Contains(out, s) {
				r.errorf("the error does not say %q", s)
			}
		}
		if c.base == "" {
			if got, gerr := hostileKubectl(c.manifest, "get", "-n", ns, "-f", "-", "-o", "name"); gerr == nil {
				r.errorf("the refused Monocle exists: %s", got)
			}
		}
	case err != nil:
		r.errorf("refused (%v); want it accepted", err)
	}
	for _, s := range c.warned {
		if !strings.Contains(out, s) {
			r.errorf("kubectl did not warn %q", s)
		}
	}

	if c.condition != nil {
		want := *c.condition
		if want.monocle == "" {
			want.monocle = "m"
		}
		if err := waitHostileCondition(ctx, ns, want, 90*time.Second); err != nil {
			r.errorf("%v", err)
		} else {
			r.logf("reported: %s", hostileConditionOf(ctx, ns, want.monocle, want.typ))
		}
	}
	if c.check != nil {
		if err := c.check(ns); err != nil {
			r.errorf("%v", err)
		}
	}

	if c.base != "" {
		after, err := takeHostileState(ctx, ns, "m")
		if err != nil {
			r.errorf("reading the Monocle's state after the hostile step: %v", err)
			return r
		}
		for _, d := range before.diff(after) {
			r.errorf("the good Monocle lost data: %s", d)
		}
		if (len(c.rejected) > 0 || len(c.warned) > 0) && after.generation != before.generation {
			r.errorf("the Monocle's generation went from %d to %d: the refused change was stored", before.generation, after.generation)
		}
	}
	return r
}

// hostileKubectlSlots bounds concurrent kubectl processes: each costs a noticeable share of the
// machine's CPU while it starts.
var hostileKubectlSlots = make(chan struct{}, 6)

// hostileKubectl is env.Kubectl.RunStdin within hostileKubectlSlots, with a 60 s timeout.
func hostileKubectl(stdin string, args ...string) (string, error) {
	return hostileKubectlAs(env.Kubectl, stdin, args...)
}

// hostileKubectlAs is k.RunStdin within hostileKubectlSlots, with a 60 s timeout.
func hostileKubectlAs(k testkit.Kubectl, stdin string, args ...string) (string, error) {
	hostileKubectlSlots <- struct{}{}
	defer func() { <-hostileKubectlSlots }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return k.RunStdin(ctx, stdin, args...)
}

// hostileTenants are the tenants of the cases' namespaces, each bound once (cases share
// hostileNamespace).
var hostileTenants struct {
	sync.Mutex
	of map[string]testkit.Kubectl
}

// hostileTenant returns the tenant of namespace ns (testkit.Tenant), binding it the first
// time; the suite's set-up installed deploy/'s roles, which extend edit to Monocles.
func hostileTenant(ctx context.Context, ns string) (testkit.Kubectl, error) {
	hostileTenants.Lock()
	defer hostileTenants.Unlock()
	if k, ok := hostileTenants.of[ns]; ok {
		return k, nil
	}
	k, err := testkit.Tenant(ctx, env.Kubectl, ns)
	if err != nil {
		return k, err
	}
	if hostileTenants.of == nil {
		hostileTenants.of = map[string]testkit.Kubectl{}
	}
	hostileTenants.of[ns] = k
	return k, nil
}

// hostileWaitReady waits for the Monocle's Ready condition to be True for its current generation.
func hostileWaitReady(ctx context.Context, ns, name string, timeout time.Duration) error {
	return waitHostileCondition(ctx, ns, hostileCondition{monocle: name, typ: "Ready", status: "True"}, timeout)
}

// waitHostileCondition waits until the Monocle reports want for its current generation.
func waitHostileCondition(ctx context.Context, ns string, want hostileCondition, timeout time.Duration) error {
	err := testkit.Poll(ctx, time.Second, timeout, fmt.Sprintf("%s/%s reports %s=%s", ns, want.monocle, want.typ, want.status), func(context.Context) error {
		m, err := hostileAPI.monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, want.monocle, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if m.Status.ObservedGeneration != m.Generation {
			return fmt.Errorf("status is of generation %d, the Monocle is at %d", m.Status.ObservedGeneration, m.Generation)
		}
		cond := apimeta.FindStatusCondition(m.Status.Conditions, want.typ)
		if cond == nil {
			return fmt.Errorf("no %s condition; conditions: %s", want.typ, hostileConditions(m.Status.Conditions))
		}
		if string(cond.Status) != want.status || (want.reason != "" && cond.Reason != want.reason) {
			return fmt.Errorf("%s is %s (%s: %s), want %s (%s)", want.typ, cond.Status, cond.Reason, hostileCut(cond.Message, 300), want.status, want.reason)
		}
		for _, s := range want.message {
			if !strings.Contains(cond.Message, s) {
				return fmt.Errorf("the %s message %q does not say %q", want.typ, hostileCut(cond.Message, 500), s)
			}
		}
		for _, s := range want.notMessage {
			if strings.Contains(cond.Message, s) {
				return fmt.Errorf("the %s message repeats %q", want.typ, s)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("Monocle %s/%s: %w", ns, want.monocle, err)
	}
	return nil
}

func hostileConditions(conds []metav1.Condition) string {
	var parts []string
	for _, c := range conds {
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Reason))
	}
	return strings.Join(parts, ", ")
}

// hostileConditionOf returns a condition of a Monocle as "Type=Status Reason: message".
func hostileConditionOf(ctx context.Context, ns, name, typ string) string {
	m, err := hostileAPI.monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	c := apimeta.FindStatusCondition(m.Status.Conditions, typ)
	if c == nil {
		return "no " + typ + " condition"
	}
	return fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, hostileCut(c.Message, 300))
}

// hostileMessageAtMost checks that the condition's message is at most max bytes.
func hostileMessageAtMost(ns, name, typ string, max int) error {
	m, err := hostileAPI.monocles.MonocleV1alpha1().Monocles(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cond := apimeta.FindStatusCondition(m.Status.Conditions, typ); cond == nil || len(cond.Message) > max {
		return fmt.Errorf("%s message missing or longer than %d bytes", typ, max)
	}
	return nil
}

// hostileConfigMapHolds checks that a ConfigMap's key holds value.
func hostileConfigMapHolds(ns, name, key, value string) error {
	cm, err := hostileAPI.kube.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if cm.Data[key] != value {
		return fmt.Errorf("ConfigMap %s holds %q under %s, want %q", name, hostileCut(cm.Data[key], 200), key, value)
	}
	return nil
}

// hostileSecretHolds checks that a Secret's key holds value.
func hostileSecretHolds(ns, name, key, value string) error {
	s, err := hostileAPI.kube.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if string(s.Data[key]) != value {
		return fmt.Errorf("Secret %s changed: %s is no longer the user's value", name, key)
	}
	return nil
}

// hostileState is what a hostile update must never change for a good Monocle: its
// Elasticsearch volume, its generated keys and the user's Secret.
type hostileState struct {
	generation int64
	pvc        string
	keys       map[string]string
	userSecret string
}

// takeHostileState reads the state of Monocle name, whose user Secret is "tokens".
func takeHostileState(ctx context.Context, ns, name string) (hostileState, error) {
	var s hostileState
	m, err := hostileAPI.monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return s, err
	}
	s.generation = m.Generation
	pvcName := resources.ElasticPVCName(m, resources.ElasticDataVolume)
	pvc, err := hostileAPI.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvcName, metav1.GetOptions{})
	if err != nil {
		return s, fmt.Errorf("PVC %s: %w", pvcName, err)
	}
	s.pvc = fmt.Sprintf("uid %s, %s requested, class %q, volume %q", pvc.UID, pvc.Spec.Resources.Requests.Storage(),
		hostileDeref(pvc.Spec.StorageClassName), pvc.Spec.VolumeName)
	secret, err := hostileAPI.kube.CoreV1().Secrets(ns).Get(ctx, resources.SecretName(m), metav1.GetOptions{})
	if err != nil {
		return s, fmt.Errorf("generated Secret: %w", err)
	}
	s.keys = map[string]string{}
	for _, k := range resources.GeneratedKeys {
		s.keys[k] = string(secret.Data[k])
	}
	user, err := hostileAPI.kube.CoreV1().Secrets(ns).Get(ctx, "tokens", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		s.userSecret = "absent"
	case err != nil:
		return s, err
	default:
		s.userSecret = fmt.Sprintf("resourceVersion %s, uid %s, data %v", user.ResourceVersion, user.UID, user.Data)
	}
	return s, nil
}

// diff lists what changed from s to after, without printing key values.
func (s hostileState) diff(after hostileState) []string {
	var out []string
	if s.pvc != after.pvc {
		out = append(out, fmt.Sprintf("PVC was %s, is %s", s.pvc, after.pvc))
	}
	for k, v := range s.keys {
		if after.keys[k] != v {
			out = append(out, "generated key "+k+" changed")
		}
	}
	if s.userSecret != after.userSecret {
		out = append(out, "the user's Secret changed")
	}
	return out
}

func hostileDeref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func hostileCut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// hostileOperatorPanic returns the operator log around the first mention of a panic, or "".
func hostileOperatorPanic() string {
	b, err := os.ReadFile(env.operatorLog)
	if err != nil {
		return "cannot read the operator log: " + err.Error()
	}
	log := string(b)
	i := strings.Index(strings.ToLower(log), "panic")
	if i < 0 {
		return ""
	}
	from, to := max(0, i-200), min(len(log), i+1000)
	return log[from:to]
}
