package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// Lease timings of the test replicas: short so that a killed leader is replaced quickly, long
// enough that a leader on a loaded 2-core machine still renews in time.
const (
	leaseDuration = 10 * time.Second
	renewDeadline = 7 * time.Second
	retryPeriod   = time.Second
)

// replica is one operator process, run out of cluster with the shipped Deployment's
// arguments and the operator ServiceAccount's token.
type replica struct {
	*testkit.Process
	identity string
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the operator's
// ServiceAccount with a token from the TokenRequest API, valid for an hour, and returns its
// path (testkit.Env.OperatorKubeconfig).
func serviceAccountKubeconfig(t *testing.T) string {
	t.Helper()
	path, err := env.OperatorKubeconfig(t.Context(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// deploymentArgs returns the arguments of the operator container of the installed
// Deployment.
func deploymentArgs(t *testing.T) []string {
	t.Helper()
	d, err := env.Kube.AppsV1().Deployments(operatorNamespace).Get(context.Background(), operatorName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "operator" {
			return c.Args
		}
	}
	t.Fatalf("Deployment %s/%s has no container named operator", operatorNamespace, operatorName)
	return nil
}

// startReplica starts the operator with args (the Deployment's), its --http-address moved to
// a free loopback port, the test lease timings, the flag that sends its Elasticsearch reads
// to env.Elastic, and extra, and waits until it has logged its
// identity. POD_NAMESPACE is set as the Deployment's downward API sets it, so the Lease goes
// where it would in the cluster. The process is stopped when the test ends.
func startReplica(t *testing.T, name, kubeconfig string, args []string, extra ...string) *replica {
	t.Helper()
	return startReplicaOf(t, env.OperatorBin, name, kubeconfig, args, append([]string{env.Elastic.Flag()}, extra...)...)
}

// startReplicaOf is startReplica for the operator binary bin.
func startReplicaOf(t *testing.T, bin, name, kubeconfig string, args []string, extra ...string) *replica {
	t.Helper()
	httpAddr, err := testkit.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	var full []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--http-address") {
			full = append(full, a)
		}
	}
	full = append(full, "--http-address="+httpAddr, "--kubeconfig="+kubeconfig, "-v=2",
		"--leader-election-lease-duration="+leaseDuration.String(),
		"--leader-election-renew-deadline="+renewDeadline.String(),
		"--leader-election-retry-period="+retryPeriod.String())
	full = append(full, extra...)
	p, err := testkit.Start(testkit.StartOptions{
		Name: name, Path: bin, Args: full, HTTPAddr: httpAddr,
		Env:     append(withoutEnv(os.Environ(), "KUBECONFIG", "POD_NAMESPACE"), "POD_NAMESPACE="+operatorNamespace),
		LogPath: filepath.Join(env.WorkDir, "operator-"+name+".log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{Process: p}
	t.Cleanup(func() { r.stop() })
	testkit.Eventually(t, 250*time.Millisecond, time.Minute, "replica "+name+" logs its identity", func() error {
		if !r.Alive() {
			return fmt.Errorf("exited: %v\n%s", r.Err(), r.Log())
		}
		if m := testkit.IdentityPattern.FindStringSubmatch(r.Log()); m != nil {
			r.identity = m[1]
			return nil
		}
		return errors.New("no identity in its log yet")
	})
	t.Logf("replica %s: pid %d, identity %s, log %s", name, r.PID(), r.identity, r.LogPath)
	return r
}

// userAgent is the user agent the replica sends.
func (r *replica) userAgent() string { return "monocle-operator/" + r.identity }

// signal sends sig to the replica's process.
func (r *replica) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := r.Signal(sig); err != nil {
		t.Fatalf("sending %s to replica %s: %v", sig, r.Name, err)
	}
}

// waitExit waits until the process has exited and returns its exit code; it fails the test
// after timeout.
func (r *replica) waitExit(t *testing.T, timeout time.Duration) int {
	t.Helper()
	if !r.WaitExit(timeout) {
		t.Fatalf("replica %s still runs %s after being stopped", r.Name, timeout)
	}
	return r.ExitCode()
}

// stop stops the replica if it runs: SIGCONT (in case it was paused), SIGTERM, then SIGKILL
// after 20s.
func (r *replica) stop() {
	if !r.Alive() {
		return
	}
	_ = r.Signal(syscall.SIGCONT)
	r.Stop(syscall.SIGTERM, 20*time.Second)
}

// rssKiB returns the replica's resident memory from /proc, in KiB, or 0 where /proc is
// missing.
func (r *replica) rssKiB() int {
	rss, _, err := r.Memory()
	if err != nil {
		return 0
	}
	return int(rss / 1024)
}

// waitLeader waits until one of replicas holds the Lease and returns it; it fails the test
// after timeout.
func waitLeader(t *testing.T, timeout time.Duration, replicas ...*replica) *replica {
	t.Helper()
	ids := make([]string, len(replicas))
	for i, r := range replicas {
		ids[i] = r.identity
	}
	i, err := testkit.WaitLeader(t.Context(), env.Kube, operatorNamespace, operatorName, timeout, ids...)
	if err != nil {
		t.Fatal(err)
	}
	return replicas[i]
}

// withoutEnv returns environ without the variables named.
func withoutEnv(environ []string, names ...string) []string {
	var out []string
	for _, kv := range environ {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// metrics fetches the replica's /metrics; the tests sum its series with Family.
func (r *replica) metrics(t *testing.T) testkit.Metrics {
	t.Helper()
	code, body, err := r.Get(context.Background(), "/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /metrics from replica %s: %d %v", r.Name, code, err)
	}
	return testkit.ParseMetrics(body)
}
