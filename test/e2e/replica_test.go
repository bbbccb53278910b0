package e2e

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	name     string
	cmd      *exec.Cmd
	logPath  string
	httpAddr string
	identity string
	done     chan struct{}
	waitErr  error // valid once done is closed
}

// identityPattern finds the identity in the "Starting" line, in the text (identity="x") and
// the JSON ("identity":"x") formats.
var identityPattern = regexp.MustCompile(`"?identity"?[=:]"([^"]+)"`)

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the operator's
// ServiceAccount with a token from the TokenRequest API, and returns its path.
func serviceAccountKubeconfig(t *testing.T) string {
	t.Helper()
	token := strings.TrimSpace(mustKubectl(t, "create", "token", operatorName, "-n", operatorNamespace, "--duration=1h"))
	tlsLine := "insecure-skip-tls-verify: true"
	if ca := env.cluster.CACertPEM(); ca != nil {
		tlsLine = "certificate-authority-data: " + base64.StdEncoding.EncodeToString(ca)
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    %s
users:
- name: operator
  user:
    token: %s
contexts:
- name: e2e
  context:
    cluster: e2e
    user: operator
current-context: e2e
`, env.cluster.APIServerURL(), tlsLine, token)
	path := filepath.Join(t.TempDir(), "operator.kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// deploymentArgs returns the arguments of the operator container of the installed
// Deployment.
func deploymentArgs(t *testing.T) []string {
	t.Helper()
	d, err := env.kube.AppsV1().Deployments(operatorNamespace).Get(context.Background(), operatorName, metav1.GetOptions{})
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
// a free loopback port, the test lease timings and extra, and waits until it has logged its
// identity. POD_NAMESPACE is set as the Deployment's downward API sets it, so the Lease goes
// where it would in the cluster. The process is stopped when the test ends.
func startReplica(t *testing.T, name, kubeconfig string, args []string, extra ...string) *replica {
	t.Helper()
	r := &replica{name: name, done: make(chan struct{}), logPath: filepath.Join(env.workDir, "operator-"+name+".log")}
	r.httpAddr = "127.0.0.1:" + strconv.Itoa(freePort(t))
	var full []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--http-address") {
			full = append(full, a)
		}
	}
	full = append(full, "--http-address="+r.httpAddr, "--kubeconfig="+kubeconfig, "-v=2",
		"--leader-election-lease-duration="+leaseDuration.String(),
		"--leader-election-renew-deadline="+renewDeadline.String(),
		"--leader-election-retry-period="+retryPeriod.String())
	full = append(full, extra...)
	logFile, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(env.operator, full...)
	r.cmd.Env = append(withoutEnv(os.Environ(), "KUBECONFIG", "POD_NAMESPACE"), "POD_NAMESPACE="+operatorNamespace)
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	if err := r.cmd.Start(); err != nil {
		logFile.Close()
		t.Fatal(err)
	}
	go func() {
		r.waitErr = r.cmd.Wait()
		logFile.Close()
		close(r.done)
	}()
	t.Cleanup(func() { r.stop() })
	eventually(t, time.Minute, "replica "+name+" logs its identity", func() error {
		if r.exited() {
			return fmt.Errorf("exited: %v\n%s", r.waitErr, r.log())
		}
		if m := identityPattern.FindStringSubmatch(r.log()); m != nil {
			r.identity = m[1]
			return nil
		}
		return errors.New("no identity in its log yet")
	})
	t.Logf("replica %s: pid %d, identity %s, log %s", name, r.cmd.Process.Pid, r.identity, r.logPath)
	return r
}

// userAgent is the user agent the replica sends.
func (r *replica) userAgent() string { return "monocle-operator/" + r.identity }

func (r *replica) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the replica's process.
func (r *replica) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("sending %s to replica %s: %v", sig, r.name, err)
	}
}

// waitExit waits until the process has exited and returns its exit code; it fails the test
// after timeout.
func (r *replica) waitExit(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(timeout):
		t.Fatalf("replica %s still runs %s after being stopped", r.name, timeout)
	}
	var exitErr *exec.ExitError
	if errors.As(r.waitErr, &exitErr) {
		return exitErr.ExitCode()
	}
	return 0
}

// stop stops the replica if it runs: SIGCONT (in case it was paused), SIGTERM, then SIGKILL.
func (r *replica) stop() {
	if r.exited() {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGCONT)
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

func (r *replica) log() string {
	b, _ := os.ReadFile(r.logPath)
	return string(b)
}

// get fetches path from the replica's HTTP endpoint.
func (r *replica) get(path string) (int, string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + r.httpAddr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// rssKiB returns the replica's resident memory from /proc, in KiB, or 0 where /proc is
// missing.
func (r *replica) rssKiB() int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return n
		}
	}
	return 0
}

// leaseHolder returns the holder of the operator's leader election Lease ("" when released
// or missing).
func leaseHolder() (string, error) {
	lease, err := env.kube.CoordinationV1().Leases(operatorNamespace).Get(context.Background(), operatorName, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

// waitLeader waits until one of replicas holds the Lease and returns it.
func waitLeader(t *testing.T, timeout time.Duration, replicas ...*replica) *replica {
	t.Helper()
	var leader *replica
	eventually(t, timeout, "a replica leads", func() error {
		holder, err := leaseHolder()
		if err != nil {
			return err
		}
		for _, r := range replicas {
			if r.identity == holder {
				leader = r
				return nil
			}
		}
		return fmt.Errorf("the Lease is held by %q", holder)
	})
	return leader
}

// freePort returns a TCP port free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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

// metrics fetches the replica's /metrics and returns each series ("name{labels}") with its
// value.
func (r *replica) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	code, body, err := r.get("/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /metrics from replica %s: %d %v", r.name, code, err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// family sums the series of one metric family whose labels contain every one of labels
// (`name="monocle"`), and counts them.
func family(m map[string]float64, name string, labels ...string) (sum float64, series int) {
	for k, v := range m {
		if k != name && !strings.HasPrefix(k, name+"{") {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(k, l) {
				match = false
			}
		}
		if match {
			sum += v
			series++
		}
	}
	return sum, series
}
