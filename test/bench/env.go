package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// leaseNamespace holds the operators' leader election Lease.
const leaseNamespace = "bench-lease"

// extraNodes is how many kwok nodes the bench adds to localcluster's one. A Monocle's pods
// request 250m CPU and 1.4 GiB, so one 32-CPU node holds 128 Monocles; 5 hold the 220 of a
// scale run and the 200 Monocles' workloads its floor creates (see floor.go), with room to
// spare.
const extraNodes = 4

// env is one running local control plane with the CRD installed, clients for the bench, and
// the audit log reader.
type env struct {
	*testkit.Env
	name    string
	audit   *testkit.AuditLog
	tracker *readyTracker
	cancel  context.CancelFunc
}

// startEnv starts a cluster in the work directory's subdirectory name, adds the extra nodes,
// installs the CRD and creates the lease namespace.
func (b *bench) startEnv(ctx context.Context, name string) (*env, error) {
	dir := filepath.Join(b.workDir, name)
	b.logf("starting control plane %q in %s", name, dir)
	te, err := testkit.StartEnv(ctx, testkit.EnvOptions{
		Suite: "bench", WorkDir: dir, InstallCRD: true,
		// The bench must never be what limits a figure: no client-side throttling.
		QPS: 5000, Burst: 10000, UserAgent: benchUserAgent,
	})
	if err != nil {
		return nil, err
	}
	e := &env{Env: te, name: name}
	b.envs = append(b.envs, e)
	e.audit = newAuditLog(e.Cluster.AuditLogPath())
	if err := e.audit.Refresh(); err != nil {
		return nil, err
	}
	for i := 1; i <= extraNodes; i++ {
		if err := addNode(ctx, e.Kube, fmt.Sprintf("kwok-node-%d", i)); err != nil {
			return nil, err
		}
	}
	if err := createNamespaces(ctx, e.Kube, []string{leaseNamespace}); err != nil {
		return nil, err
	}
	// The API server's first writes of a new custom resource wait about 2 s; take that wait
	// here, before any operator runs, rather than in the first figure.
	warm := e.Monocles.MonocleV1alpha1().Monocles(leaseNamespace)
	if _, err := warm.Create(ctx, newMonocle(leaseNamespace), metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("warming up: %w", err)
	}
	if err := warm.Delete(ctx, monocleName, metav1.DeleteOptions{}); err != nil {
		return nil, fmt.Errorf("warming up: %w", err)
	}
	trackerCtx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	if e.tracker, err = startReadyTracker(trackerCtx, e.Monocles); err != nil {
		return nil, err
	}
	return e, nil
}

// stop stops the cluster and keeps its files (the bench removes its whole work directory);
// the operators must be stopped first.
func (e *env) stop() error {
	if e.cancel != nil {
		e.cancel()
	}
	if e.audit != nil {
		_ = e.audit.Close()
	}
	return e.Stop()
}

// addNode creates a node that kwok manages (like localcluster's own), lifts the not-ready
// taint that admission puts on new nodes, and waits until it is Ready.
func addNode(ctx context.Context, kube kubernetes.Interface, name string) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("32"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("1000"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	key, value, _ := strings.Cut(localcluster.FakeNodeAnnotation, "=")
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{key: value, "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
				"kubernetes.io/hostname": name, "type": "kwok",
			},
		},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			NodeInfo: corev1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux"},
		},
	}
	if _, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	return testkit.Poll(ctx, 200*time.Millisecond, 60*time.Second, "node "+name+" Ready", func(ctx context.Context) error {
		n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var keep []corev1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != "node.kubernetes.io/not-ready" {
				keep = append(keep, t)
			}
		}
		if len(keep) != len(n.Spec.Taints) {
			n.Spec.Taints = keep
			if _, err := kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				return err
			}
			return errors.New("not-ready taint removed, not yet Ready")
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return errors.New("not Ready")
	})
}

// createNamespaces creates namespaces (enforcing the restricted Pod Security Standard, as the
// integration tests do) in parallel and waits until each has its "default" ServiceAccount, so
// the pods of a Monocle created there are not refused while kube-controller-manager catches up.
func createNamespaces(ctx context.Context, kube kubernetes.Interface, names []string) error {
	err := parallel(ctx, len(names), 16, func(i int) error {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names[i], Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted",
		}}}
		_, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("creating namespaces: %w", err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	return testkit.Poll(ctx, 200*time.Millisecond, 120*time.Second, "default ServiceAccounts", func(ctx context.Context) error {
		list, err := kube.CoreV1().ServiceAccounts("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=default"})
		if err != nil {
			return err
		}
		found := 0
		for _, sa := range list.Items {
			if want[sa.Namespace] {
				found++
			}
		}
		if found != len(want) {
			return fmt.Errorf("%d of %d namespaces have one", found, len(want))
		}
		return nil
	})
}

// parallel runs fn(0..n-1) on up to workers goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				stop := i >= n || first != nil || ctx.Err() != nil
				mu.Unlock()
				if stop {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// startOperator starts an operator against e with the client setting s plus extra flags, serving
// /metrics on a free loopback port, electing its leader in leaseNamespace.
func (b *bench) startOperator(e *env, name string, s setting, extra ...string) (*testkit.Process, error) {
	return b.startBinary(e, name, b.operatorBin, s, extra...)
}

// startBinary is startOperator with the operator binary bin, such as the previous release's.
func (b *bench) startBinary(e *env, name, bin string, s setting, extra ...string) (*testkit.Process, error) {
	httpAddr, err := testkit.FreeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"--kubeconfig", e.Kubeconfig, "--http-address", httpAddr,
		"--leader-election-namespace", leaseNamespace, "-v", "2", "--profiling", e.Elastic.Flag()}
	if s.qps > 0 {
		args = append(args, "--kube-api-qps", strconv.FormatFloat(s.qps, 'f', -1, 64), "--kube-api-burst", strconv.Itoa(s.burst))
	}
	if s.workers > 0 {
		args = append(args, "--workers", strconv.Itoa(s.workers))
	}
	args = append(args, extra...)
	o, err := testkit.Start(testkit.StartOptions{
		Name: name, Path: bin, Args: args, HTTPAddr: httpAddr, DieWithParent: true,
		LogPath: filepath.Join(e.Cluster.WorkDir(), "logs", "operator-"+name+".log"),
	})
	if err != nil {
		return nil, fmt.Errorf("starting operator %s: %w", name, err)
	}
	b.mu.Lock()
	b.operators = append(b.operators, o)
	b.mu.Unlock()
	b.logf("started operator %s (pid %d), log %s", name, o.PID(), o.LogPath)
	return o, nil
}

// waitReady waits until op's /readyz answers 200 (every informer cache synced).
func waitReady(ctx context.Context, op *testkit.Process, timeout time.Duration) error {
	return testkit.Poll(ctx, 50*time.Millisecond, timeout, "operator "+op.Name+" /readyz", func(ctx context.Context) error {
		if !op.Alive() {
			return errors.New("operator exited; see " + op.LogPath)
		}
		code, _, err := op.Get(ctx, "/readyz")
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("HTTP %d", code)
		}
		return err
	})
}

// errNotInAudit is why a poll for an operator's write goes on: the audit log does not hold it yet.
var errNotInAudit = errors.New("not in the audit log yet")

// logHas returns nil when op's log holds s, and why not otherwise.
func logHas(op *testkit.Process, s string) error {
	if !strings.Contains(op.Log(), s) {
		return fmt.Errorf("%s's log does not hold %q", op.Name, s)
	}
	return nil
}
