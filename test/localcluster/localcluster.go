// Package localcluster starts a real Kubernetes control plane on loopback,
// without a container engine: etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler run as plain processes, and kwok plays a single fake
// node that turns scheduled pods Running and Ready, completes Job pods and
// provisions PersistentVolumeClaims.
//
// Everything except the kubelet is real: admission (including Pod Security),
// RBAC, the workload controllers, the garbage collector and the scheduler.
// Containers never start, so probes and in-container behaviour are not
// exercised.
//
// The binaries are built from Go modules by hack/build-control-plane.sh (see
// EnsureBinaries). This package uses the standard library only, so it adds
// nothing to the operator's go.mod.
package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// KubernetesVersion is the version of the control-plane components that
// hack/build-control-plane.sh builds.
const KubernetesVersion = "v1.36.3"

// AdminToken is the static bearer token of the "admin" user (a member of
// system:masters) written to the cluster's token-auth file and kubeconfig.
const AdminToken = "admin-token"

// NodeName is the name of the fake node managed by kwok.
const NodeName = "kwok-node-0"

// StorageClassName is the default StorageClass whose claims kwok provisions.
const StorageClassName = "kwok-volume"

// FakeNodeAnnotation is the annotation (key=value) that makes kwok manage a
// node.
const FakeNodeAnnotation = "kwok.x-k8s.io/node=fake"

// Component names, used for binaries, log files (logs/<name>.log) and pid
// files (pids/<name>.pid).
const (
	// ComponentEtcd is the etcd server.
	ComponentEtcd = "etcd"
	// ComponentAPIServer is kube-apiserver.
	ComponentAPIServer = "kube-apiserver"
	// ComponentControllerManager is kube-controller-manager.
	ComponentControllerManager = "kube-controller-manager"
	// ComponentScheduler is kube-scheduler.
	ComponentScheduler = "kube-scheduler"
	// ComponentKwok is kwok, which simulates the node and volume provisioning.
	ComponentKwok = "kwok"
)

// Components lists the components in start order; they are stopped in the
// reverse order.
var Components = []string{
	ComponentEtcd,
	ComponentAPIServer,
	ComponentControllerManager,
	ComponentScheduler,
	ComponentKwok,
}

// requiredStages are kwok Stage files (in Options.StagesDir) without which
// the cluster would not behave like a real one.
var requiredStages = []string{
	"node-initialize.yaml",
	"node-heartbeat.yaml",
	"pod-ready.yaml",
	"pod-complete.yaml",
	"pod-delete.yaml",
	"pvc-provision.yaml",
}

// storageClassFile is the kwok file holding the StorageClass; it is not a
// Stage, so it is not passed to kwok.
const storageClassFile = "storage-class.yaml"

// DefaultAuditPolicy is the audit policy used unless Options.AuditPolicy is
// set: every request is logged at Metadata level (who, what, user agent,
// response code, no bodies) when it completes (a watch also when it starts),
// except reads of Events and Leases, which are noise for counting an
// operator's API calls.
const DefaultAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
- RequestReceived
rules:
- level: None
  verbs: ["get", "list", "watch"]
  resources:
  - group: ""
    resources: ["events"]
  - group: "events.k8s.io"
    resources: ["events"]
  - group: "coordination.k8s.io"
    resources: ["leases"]
- level: Metadata
`

// Options configures Start.
type Options struct {
	// BinDir holds the etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler and kwok binaries. Required; see EnsureBinaries.
	BinDir string
	// StagesDir holds the kwok Stage YAML files and storage-class.yaml.
	// Defaults to the kwok-stages directory next to BinDir.
	StagesDir string
	// WorkDir receives the kubeconfig, certificates, etcd data, audit log,
	// logs/<component>.log and pids/<component>.pid. It is created if
	// needed. If empty, a temporary directory is created and Stop removes it.
	WorkDir string
	// DisableAudit turns the API server's audit log off (it is on by
	// default).
	DisableAudit bool
	// AuditPolicy is the audit policy YAML; DefaultAuditPolicy if empty.
	AuditPolicy string
	// Detach starts the components so that they outlive the calling process
	// (for a CLI); stop them later with StopFromDir. When false, on Linux the
	// components are killed by the kernel if the calling process dies.
	Detach bool
	// Timeout bounds each wait during Start (etcd health, API server
	// readiness, component health, node readiness, default ServiceAccount).
	// Defaults to 60s.
	Timeout time.Duration
	// Log receives progress lines. Nil discards them.
	Log io.Writer
}

// Cluster is a running local control plane started by Start.
type Cluster struct {
	opts          Options
	workDir       string
	removeWorkDir bool
	apiURL        string
	kubeconfig    string
	auditLog      string
	caPEM         []byte
	ports         map[string]int
	httpClient    *http.Client

	mu     sync.Mutex
	procs  []*process
	spawn  chan spawnRequest
	closed bool

	stopOnce sync.Once
	stopErr  error
}

// process is one started component.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	pidPath string
	done    chan struct{}
	err     error // valid once done is closed
}

type spawnRequest struct {
	cmd *exec.Cmd
	res chan error
}

// Start starts a local cluster and returns once the API server is ready, the
// fake node is Ready and schedulable, the default StorageClass exists and
// the "default" ServiceAccount of namespace "default" exists, so workloads
// can be created right away. ctx bounds only the start-up; the cluster runs
// until Stop (or StopFromDir). On failure, everything Start started is
// stopped again and the error includes the tail of the failing component's
// log.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if opts.BinDir == "" {
		return nil, errors.New("localcluster: Options.BinDir is required")
	}
	if opts.StagesDir == "" {
		opts.StagesDir = filepath.Join(filepath.Dir(filepath.Clean(opts.BinDir)), "kwok-stages")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.AuditPolicy == "" {
		opts.AuditPolicy = DefaultAuditPolicy
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	for _, name := range Components {
		if _, err := os.Stat(filepath.Join(opts.BinDir, name)); err != nil {
			return nil, fmt.Errorf("localcluster: missing binary (run hack/build-control-plane.sh): %w", err)
		}
	}
	for _, name := range append([]string{storageClassFile}, requiredStages...) {
		if _, err := os.Stat(filepath.Join(opts.StagesDir, name)); err != nil {
			return nil, fmt.Errorf("localcluster: missing kwok stage file (run hack/build-control-plane.sh): %w", err)
		}
	}

	c := &Cluster{opts: opts}
	if opts.WorkDir == "" {
		dir, err := os.MkdirTemp("", "localcluster-")
		if err != nil {
			return nil, fmt.Errorf("localcluster: %w", err)
		}
		c.workDir, c.removeWorkDir = dir, true
	} else {
		dir, err := filepath.Abs(opts.WorkDir)
		if err != nil {
			return nil, fmt.Errorf("localcluster: %w", err)
		}
		c.workDir = dir
	}
	if running := runningFromDir(c.workDir); len(running) > 0 {
		return nil, fmt.Errorf("localcluster: a cluster is already running in %s (%s); stop it first", c.workDir, strings.Join(running, ", "))
	}
	// A fresh cluster every time: drop state a previous run may have left.
	for _, sub := range []string{"etcd-data", "certs", "logs", "pids", "config", "audit.log", "kubeconfig"} {
		if err := os.RemoveAll(filepath.Join(c.workDir, sub)); err != nil {
			return nil, fmt.Errorf("localcluster: %w", err)
		}
	}
	for _, sub := range []string{"certs", "logs", "pids", "config"} {
		if err := os.MkdirAll(filepath.Join(c.workDir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("localcluster: %w", err)
		}
	}

	if !opts.Detach {
		c.startSpawner()
	}
	defer func() {
		if err != nil {
			if stopErr := c.Stop(); stopErr != nil {
				err = fmt.Errorf("%w (and stopping: %v)", err, stopErr)
			}
		}
	}()
	if err := c.start(ctx); err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	return c, nil
}

// Kubeconfig returns the path of the admin kubeconfig (<workdir>/kubeconfig).
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// APIServerURL returns the API server's URL, https://127.0.0.1:<port>.
func (c *Cluster) APIServerURL() string { return c.apiURL }

// AuditLogPath returns the path of the API server's audit log (JSON lines),
// or "" when Options.DisableAudit was set.
func (c *Cluster) AuditLogPath() string { return c.auditLog }

// WorkDir returns the cluster's working directory.
func (c *Cluster) WorkDir() string { return c.workDir }

// LogPath returns the path of a component's combined stdout/stderr log.
func (c *Cluster) LogPath(component string) string {
	return filepath.Join(c.workDir, "logs", component+".log")
}

// CACertPEM returns the PEM bundle that verifies the API server's serving
// certificate, or nil if the kubeconfig had to skip TLS verification.
func (c *Cluster) CACertPEM() []byte { return c.caPEM }

// PIDs returns the process id of every component started, by component name.
func (c *Cluster) PIDs() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	pids := make(map[string]int, len(c.procs))
	for _, p := range c.procs {
		pids[p.name] = p.cmd.Process.Pid
	}
	return pids
}

// Alive returns nil if every component is still running, or an error naming
// the first one that exited, with the tail of its log.
func (c *Cluster) Alive() error {
	c.mu.Lock()
	procs := append([]*process(nil), c.procs...)
	c.mu.Unlock()
	for _, p := range procs {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited early (%v); last lines of %s:\n%s", p.name, p.err, p.logPath, tailFile(p.logPath, 40))
		default:
		}
	}
	return nil
}

// Stop stops the components in reverse start order: SIGTERM to each
// process group, then SIGKILL if it has not exited after a few seconds. It
// waits for every process to exit and removes the pid files (and the work
// directory if Start created it). It is safe to call more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	c.mu.Lock()
	procs := append([]*process(nil), c.procs...)
	c.mu.Unlock()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		gone := func() bool {
			select {
			case <-p.done:
				return true
			default:
				return false
			}
		}
		if !gone() {
			c.logf("stopping %s (pid %d)", p.name, p.cmd.Process.Pid)
		}
		if err := terminate(p.name, p.cmd.Process.Pid, gone); err != nil {
			errs = append(errs, err)
			continue
		}
		_ = os.Remove(p.pidPath)
	}
	c.mu.Lock()
	if c.spawn != nil && !c.closed {
		// The spawner's thread exits with this; every child is gone already.
		close(c.spawn)
	}
	c.closed = true
	c.mu.Unlock()
	if len(errs) == 0 && c.removeWorkDir {
		if err := os.RemoveAll(c.workDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// StopFromDir stops a cluster started (typically detached, by another
// process) in workDir, using its pids/<component>.pid files: components are
// signalled in reverse start order, SIGTERM then SIGKILL, and waited for. A
// pid file whose process is gone, or now belongs to an unrelated program, is
// just removed. Nothing else in workDir is touched.
func StopFromDir(workDir string) error {
	pidDir := filepath.Join(workDir, "pids")
	entries, err := os.ReadDir(pidDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".pid"); ok && !e.IsDir() {
			names[n] = true
		}
	}
	// Known components in reverse start order, then anything else.
	var order []string
	for i := len(Components) - 1; i >= 0; i-- {
		if names[Components[i]] {
			order = append(order, Components[i])
			delete(names, Components[i])
		}
	}
	var rest []string
	for n := range names {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	order = append(rest, order...)

	var errs []error
	for _, name := range order {
		path := filepath.Join(pidDir, name+".pid")
		pid, err := readPID(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if pid > 0 && pidMatches(pid, name) {
			if err := terminate(name, pid, func() bool { return !pidRunning(pid) }); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("localcluster: %w", errors.Join(errs...))
	}
	return nil
}

// runningFromDir lists the components of workDir's pid files that are still
// running.
func runningFromDir(workDir string) []string {
	var running []string
	for _, name := range Components {
		pid, err := readPID(filepath.Join(workDir, "pids", name+".pid"))
		if err == nil && pid > 0 && pidMatches(pid, name) {
			running = append(running, fmt.Sprintf("%s pid %d", name, pid))
		}
	}
	return running
}

func readPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("bad pid file %s: %w", path, err)
	}
	return pid, nil
}

// terminate sends SIGTERM to the process group of pid (falling back to the
// process), waits up to termGrace for gone to report true, then sends
// SIGKILL and waits up to killGrace.
func terminate(name string, pid int, gone func() bool) error {
	const (
		termGrace = 8 * time.Second
		killGrace = 5 * time.Second
	)
	signal := func(sig syscall.Signal) {
		if err := syscall.Kill(-pid, sig); err != nil {
			_ = syscall.Kill(pid, sig)
		}
	}
	waitGone := func(d time.Duration) bool {
		deadline := time.Now().Add(d)
		for {
			if gone() {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if gone() {
		return nil
	}
	signal(syscall.SIGTERM)
	if waitGone(termGrace) {
		return nil
	}
	signal(syscall.SIGKILL)
	if waitGone(killGrace) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", name, pid)
}

// startSpawner starts the goroutine that forks every component. It keeps its
// OS thread for the cluster's lifetime: Pdeathsig fires when the *thread*
// that forked a child exits, and Go may otherwise retire threads at will.
func (c *Cluster) startSpawner() {
	c.spawn = make(chan spawnRequest)
	go func() {
		runtime.LockOSThread()
		// Deliberately never unlocked: the thread exits with this goroutine,
		// which happens only after Stop has stopped every child.
		for req := range c.spawn {
			req.res <- req.cmd.Start()
		}
	}()
}

func (c *Cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.opts.Log, "[localcluster] "+format+"\n", args...)
}

// startProcess starts a component with its output in logs/<name>.log and its
// pid in pids/<name>.pid.
func (c *Cluster) startProcess(name string, args ...string) error {
	return c.startProcessEnv(name, nil, args...)
}

// startProcessEnv is startProcess with extra environment variables.
func (c *Cluster) startProcessEnv(name string, env []string, args ...string) error {
	bin := filepath.Join(c.opts.BinDir, name)
	logPath := c.LogPath(name)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own descriptor
	fmt.Fprintf(logFile, "# %s %s\n", bin, strings.Join(args, " "))

	cmd := exec.Command(bin, args...)
	cmd.Dir = c.workDir
	cmd.Env = append(os.Environ(), env...)
	p := &process{name: name, logPath: logPath, pidPath: filepath.Join(c.workDir, "pids", name+".pid")}
	if err := c.launch(cmd, logFile, p, -1); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	c.logf("started %s (pid %d), log %s", name, cmd.Process.Pid, logPath)
	return nil
}

// launch starts cmd, with its output in logFile, as the process p describes (name and
// paths): through spawnLocked, then recorded in c.procs at index i, or appended when i is
// negative. It collects the exit in the background and writes the pid file.
func (c *Cluster) launch(cmd *exec.Cmd, logFile *os.File, p *process, i int) error {
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr(c.opts.Detach)
	c.mu.Lock()
	if err := c.spawnLocked(cmd); err != nil {
		c.mu.Unlock()
		return err
	}
	p.cmd, p.done = cmd, make(chan struct{})
	if i < 0 {
		c.procs = append(c.procs, p)
	} else {
		c.procs[i] = p
	}
	c.mu.Unlock()
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return os.WriteFile(p.pidPath, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
}

// spawnLocked starts cmd, through the spawner goroutine when there is one (so the child
// dies with that thread's parent), unless the cluster is stopping. c.mu must be held.
func (c *Cluster) spawnLocked(cmd *exec.Cmd) error {
	if c.closed {
		return errors.New("cluster is stopping")
	}
	if c.spawn != nil {
		req := spawnRequest{cmd: cmd, res: make(chan error, 1)}
		c.spawn <- req
		return <-req.res
	}
	return cmd.Start()
}

// freePorts returns n distinct free loopback TCP ports. All listeners are
// held until every port is picked, so the ports are distinct.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitFor polls check every interval until it returns true, the step's
// timeout passes, ctx ends or a component exits.
func (c *Cluster) waitFor(parent context.Context, what string, check func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(parent, c.opts.Timeout)
	defer cancel()
	start := time.Now()
	var lastErr error
	for {
		if err := c.Alive(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		ok, err := check(ctx)
		if ok {
			c.logf("%s after %s", what, time.Since(start).Round(time.Millisecond))
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("waiting for %s: %w", what, parent.Err())
			}
			msg := fmt.Sprintf("timed out after %s waiting for %s", time.Since(start).Round(time.Millisecond), what)
			if lastErr != nil {
				msg += " (last error: " + lastErr.Error() + ")"
			}
			return errors.New(msg)
		case <-time.After(150 * time.Millisecond):
		}
	}
}

func (c *Cluster) start(ctx context.Context) error {
	begin := time.Now()
	ports, err := freePorts(6)
	if err != nil {
		return fmt.Errorf("picking free ports: %w", err)
	}
	c.ports = map[string]int{
		"etcd-client":              ports[0],
		"etcd-peer":                ports[1],
		ComponentAPIServer:         ports[2],
		ComponentControllerManager: ports[3],
		ComponentScheduler:         ports[4],
		ComponentKwok:              ports[5],
	}
	c.apiURL = fmt.Sprintf("https://127.0.0.1:%d", c.ports[ComponentAPIServer])

	certDir := filepath.Join(c.workDir, "certs")
	configDir := filepath.Join(c.workDir, "config")
	saKey := filepath.Join(certDir, "service-account.key")
	if err := writeRSAKey(saKey); err != nil {
		return fmt.Errorf("service-account key: %w", err)
	}
	tokenFile := filepath.Join(configDir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(AdminToken+",admin,admin,system:masters\n"), 0o600); err != nil {
		return err
	}

	// etcd
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", c.ports["etcd-client"])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", c.ports["etcd-peer"])
	if err := c.startProcess(ComponentEtcd,
		"--name=localcluster",
		"--data-dir="+filepath.Join(c.workDir, "etcd-data"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=localcluster="+peerURL,
		"--initial-cluster-state=new",
		// Throw-away test data: durability is not worth the fsync latency.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	); err != nil {
		return err
	}
	plain := &http.Client{Timeout: 2 * time.Second}
	if err := c.waitFor(ctx, "etcd healthy", func(ctx context.Context) (bool, error) {
		code, body, err := httpGet(ctx, plain, etcdURL+"/health", "")
		if err != nil {
			return false, err
		}
		return code == http.StatusOK && bytes.Contains(body, []byte(`"health":"true"`)), fmt.Errorf("etcd /health: %d %s", code, body)
	}); err != nil {
		return err
	}

	// kube-apiserver
	apiArgs := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		// Otherwise the API server advertises the address of the host's
		// default route (and fails on a host without one). A loopback
		// address is not valid in Endpoints, so the "kubernetes" Service
		// gets no endpoints at all: nothing in-cluster ever dials it here.
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		fmt.Sprintf("--secure-port=%d", c.ports[ComponentAPIServer]),
		"--cert-dir=" + certDir,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--profiling=false",
	}
	if !c.opts.DisableAudit {
		policy := filepath.Join(configDir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(c.opts.AuditPolicy), 0o644); err != nil {
			return err
		}
		c.auditLog = filepath.Join(c.workDir, "audit.log")
		apiArgs = append(apiArgs,
			"--audit-policy-file="+policy,
			"--audit-log-path="+c.auditLog,
			"--audit-log-format=json",
			"--audit-log-maxsize=0",
		)
	}
	if err := c.startProcess(ComponentAPIServer, apiArgs...); err != nil {
		return err
	}
	insecure := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	if err := c.waitFor(ctx, "kube-apiserver /readyz", func(ctx context.Context) (bool, error) {
		code, body, err := httpGet(ctx, insecure, c.apiURL+"/readyz", AdminToken)
		if err != nil {
			return false, err
		}
		return code == http.StatusOK, fmt.Errorf("/readyz: %d %s", code, lastLines(string(body), 5))
	}); err != nil {
		return err
	}
	c.httpClient = c.verifiedClient(ctx, filepath.Join(certDir, "apiserver.crt"), insecure)
	if err := c.writeKubeconfig(); err != nil {
		return err
	}

	// kube-controller-manager and kube-scheduler
	if err := c.startProcess(ComponentControllerManager,
		"--kubeconfig="+c.kubeconfig,
		"--authentication-kubeconfig="+c.kubeconfig,
		"--authorization-kubeconfig="+c.kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports[ComponentControllerManager]),
		"--service-account-private-key-file="+saKey,
		"--root-ca-file="+filepath.Join(certDir, "apiserver.crt"),
		"--controllers=*,-node-ipam-controller,-node-lifecycle-controller,-cloud-node-lifecycle-controller,-node-route-controller,-service-lb-controller",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
	); err != nil {
		return err
	}
	if err := c.startProcess(ComponentScheduler,
		"--kubeconfig="+c.kubeconfig,
		"--authentication-kubeconfig="+c.kubeconfig,
		"--authorization-kubeconfig="+c.kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports[ComponentScheduler]),
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
	); err != nil {
		return err
	}

	// kwok, with every Stage file (storage-class.yaml is an object, not a
	// Stage: it is created below).
	stages, err := filepath.Glob(filepath.Join(c.opts.StagesDir, "*.yaml"))
	if err != nil {
		return err
	}
	kwokArgs := []string{
		"--kubeconfig=" + c.kubeconfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation,
		"--cidr=10.0.0.1/16",
		"--node-ip=10.0.0.1",
		fmt.Sprintf("--server-address=127.0.0.1:%d", c.ports[ComponentKwok]),
	}
	for _, s := range stages {
		if base := filepath.Base(s); base != storageClassFile && base != "kustomization.yaml" {
			kwokArgs = append(kwokArgs, "--config="+s)
		}
	}
	// kwok also loads ~/.kwok/kwok.yaml if it exists: give it a HOME of its
	// own so a developer's kwok/kwokctl settings cannot leak in.
	kwokHome := filepath.Join(configDir, "kwok-home")
	if err := os.MkdirAll(kwokHome, 0o755); err != nil {
		return err
	}
	if err := c.startProcessEnv(ComponentKwok, []string{"HOME=" + kwokHome}, kwokArgs...); err != nil {
		return err
	}

	for _, comp := range []string{ComponentControllerManager, ComponentScheduler, ComponentKwok} {
		url := fmt.Sprintf("https://127.0.0.1:%d/healthz", c.ports[comp])
		if comp == ComponentKwok {
			url = fmt.Sprintf("http://127.0.0.1:%d/healthz", c.ports[comp])
		}
		if err := c.waitFor(ctx, comp+" /healthz", func(ctx context.Context) (bool, error) {
			code, body, err := httpGet(ctx, insecure, url, "")
			if err != nil {
				return false, err
			}
			return code == http.StatusOK, fmt.Errorf("/healthz: %d %s", code, lastLines(string(body), 5))
		}); err != nil {
			return err
		}
	}

	if err := c.createObject(ctx, "/apis/storage.k8s.io/v1/storageclasses", storageClass()); err != nil {
		return fmt.Errorf("creating StorageClass %s: %w", StorageClassName, err)
	}
	if err := c.createObject(ctx, "/api/v1/nodes", fakeNode()); err != nil {
		return fmt.Errorf("creating Node %s: %w", NodeName, err)
	}
	if err := c.waitFor(ctx, "node "+NodeName+" Ready and untainted", c.nodeReady); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "ServiceAccount default/default", func(ctx context.Context) (bool, error) {
		code, body, err := c.api(ctx, http.MethodGet, "/api/v1/namespaces/default/serviceaccounts/default", "", nil)
		if err != nil {
			return false, err
		}
		return code == http.StatusOK, fmt.Errorf("%d %s", code, lastLines(string(body), 3))
	}); err != nil {
		return err
	}
	c.logf("cluster ready in %s: %s, kubeconfig %s", time.Since(begin).Round(time.Millisecond), c.apiURL, c.kubeconfig)
	return nil
}

// verifiedClient returns a client that verifies the API server against the
// self-signed bundle in certFile, if that works; otherwise fallback.
func (c *Cluster) verifiedClient(ctx context.Context, certFile string, fallback *http.Client) *http.Client {
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		c.logf("no CA bundle (%v): kubeconfig skips TLS verification", err)
		return fallback
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		c.logf("no certificate in %s: kubeconfig skips TLS verification", certFile)
		return fallback
	}
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	if _, _, err := httpGet(ctx, client, c.apiURL+"/readyz", AdminToken); err != nil {
		c.logf("serving certificate does not verify (%v): kubeconfig skips TLS verification", err)
		return fallback
	}
	c.caPEM = pemBytes
	return client
}

func (c *Cluster) writeKubeconfig() error {
	var tlsLine string
	if c.caPEM != nil {
		tlsLine = "certificate-authority-data: " + base64.StdEncoding.EncodeToString(c.caPEM)
	} else {
		tlsLine = "insecure-skip-tls-verify: true"
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: localcluster
  cluster:
    server: %s
    %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: localcluster
  context:
    cluster: localcluster
    user: admin
    namespace: default
current-context: localcluster
`, c.apiURL, tlsLine, AdminToken)
	c.kubeconfig = filepath.Join(c.workDir, "kubeconfig")
	return os.WriteFile(c.kubeconfig, []byte(kubeconfig), 0o600)
}

// nodeReady reports whether the fake node is Ready; it also removes the
// node.kubernetes.io/not-ready taint that admission adds to new nodes (the
// node-lifecycle controller that would lift it is disabled).
func (c *Cluster) nodeReady(ctx context.Context) (bool, error) {
	code, body, err := c.api(ctx, http.MethodGet, "/api/v1/nodes/"+NodeName, "", nil)
	if err != nil {
		return false, err
	}
	if code != http.StatusOK {
		return false, fmt.Errorf("get node: %d %s", code, lastLines(string(body), 3))
	}
	var node struct {
		Spec struct {
			Taints []map[string]any `json:"taints"`
		} `json:"spec"`
		Status struct {
			Conditions []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
			} `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &node); err != nil {
		return false, err
	}
	keep := []map[string]any{}
	for _, t := range node.Spec.Taints {
		if t["key"] == "node.kubernetes.io/not-ready" {
			continue
		}
		keep = append(keep, t)
	}
	if len(keep) != len(node.Spec.Taints) {
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"taints": keep}})
		code, body, err := c.api(ctx, http.MethodPatch, "/api/v1/nodes/"+NodeName, "application/merge-patch+json", patch)
		if err != nil {
			return false, err
		}
		if code != http.StatusOK {
			return false, fmt.Errorf("removing not-ready taint: %d %s", code, lastLines(string(body), 3))
		}
		return false, nil // look again
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == "Ready" && cond.Status == "True" {
			return true, nil
		}
	}
	return false, errors.New("node not Ready yet (is kwok managing it?)")
}

// createObject POSTs obj to path; an existing object is fine.
func (c *Cluster) createObject(ctx context.Context, path string, obj any) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	for {
		code, resp, err := c.api(ctx, http.MethodPost, path, "application/json", body)
		switch {
		case err == nil && (code == http.StatusCreated || code == http.StatusOK || code == http.StatusConflict):
			return nil
		case err == nil && code != http.StatusTooManyRequests && code < 500:
			return fmt.Errorf("%d %s", code, lastLines(string(resp), 5))
		}
		// Retry transient failures until the step's timeout.
		select {
		case <-ctx.Done():
			return fmt.Errorf("%v (last: %d %v)", ctx.Err(), code, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func storageClass() map[string]any {
	// The same object as kwok's kustomize/stage/volume/fast/storage-class.yaml.
	return map[string]any{
		"apiVersion": "storage.k8s.io/v1",
		"kind":       "StorageClass",
		"metadata": map[string]any{
			"name": StorageClassName,
			"annotations": map[string]string{
				"storageclass.kubernetes.io/is-default-class": "true",
			},
		},
		"provisioner":       "kwok.x-k8s.io/volume",
		"reclaimPolicy":     "Delete",
		"volumeBindingMode": "Immediate",
	}
}

func fakeNode() map[string]any {
	resources := map[string]string{
		"cpu":               "32",
		"memory":            "256Gi",
		"pods":              "1000",
		"ephemeral-storage": "1Ti",
	}
	key, value, _ := strings.Cut(FakeNodeAnnotation, "=")
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Node",
		"metadata": map[string]any{
			"name": NodeName,
			"annotations": map[string]string{
				key:                            value,
				"node.alpha.kubernetes.io/ttl": "0",
			},
			"labels": map[string]string{
				"kubernetes.io/arch":            "amd64",
				"kubernetes.io/hostname":        NodeName,
				"kubernetes.io/os":              "linux",
				"kubernetes.io/role":            "agent",
				"node-role.kubernetes.io/agent": "",
				"type":                          "kwok",
			},
		},
		"spec": map[string]any{},
		// Nodes keep their status on create; kwok fills in the rest.
		"status": map[string]any{
			"allocatable": resources,
			"capacity":    resources,
			"nodeInfo": map[string]string{
				"architecture":    "amd64",
				"operatingSystem": "linux",
			},
		},
	}
}

// api sends an authenticated request to the API server.
func (c *Cluster) api(ctx context.Context, method, path, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.apiURL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "localcluster")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	return resp.StatusCode, data, err
}

func httpGet(ctx context.Context, client *http.Client, url, token string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("User-Agent", "localcluster")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, data, err
}

// writeRSAKey writes a new 2048-bit RSA private key (PKCS#1 PEM) to path.
func writeRSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}
	return os.WriteFile(path, pem.EncodeToMemory(block), 0o600)
}

// tailFile returns the last n lines of a file (read from its last 64 KiB).
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	const maxTail = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxTail {
		_, _ = f.Seek(st.Size()-maxTail, io.SeekStart)
	}
	data, _ := io.ReadAll(f)
	return lastLines(string(data), n)
}

func lastLines(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
