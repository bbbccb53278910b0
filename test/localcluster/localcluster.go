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
// EnsureBinaries). The components, their flags and health checks are the
// table in components.go; process.go starts, stops and restarts them, and
// kubeconfig.go writes the admin kubeconfig and talks to the API server with
// client-go.
package localcluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// KubernetesVersion is the version of the control-plane components that
// hack/build-control-plane.sh builds by default, the newest the tests run on.
const KubernetesVersion = "v1.36.3"

// OldestKubernetesVersion is the version hack/build-control-plane.sh oldest builds, the
// oldest the operator supports (pkg/version.MinKubernetes).
const OldestKubernetesVersion = "v1.30.14"

// Build is the control plane the tests run on: "oldest" when $MONOCLE_KUBERNETES says so,
// else "newest"; it is hack/build-control-plane.sh's argument.
func Build() string {
	if os.Getenv("MONOCLE_KUBERNETES") == "oldest" {
		return "oldest"
	}
	return "newest"
}

// RunningVersion is the Kubernetes version of Build.
func RunningVersion() string {
	if Build() == "oldest" {
		return OldestKubernetesVersion
	}
	return KubernetesVersion
}

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

// DefaultAuditPolicy is the audit policy used unless Options.AuditPolicy is
// set: every request is logged at Metadata level (who, what, user agent,
// response code, no bodies) when it completes (a watch also when it starts),
// except reads of Events and Leases, which are noise for counting an
// operator's API calls.
const DefaultAuditPolicy = auditPolicyHead + auditPolicyCatchAll

// auditPolicyHead is DefaultAuditPolicy up to its last rule, the catch-all
// auditPolicyCatchAll.
const auditPolicyHead = `apiVersion: audit.k8s.io/v1
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
`

const auditPolicyCatchAll = `- level: Metadata
`

// AuditPolicyWith returns DefaultAuditPolicy with rules (YAML list items of
// audit.k8s.io/v1 PolicyRules, each line ending in a newline) inserted before
// its catch-all Metadata rule, so that they apply first.
func AuditPolicyWith(rules string) string {
	return auditPolicyHead + rules + auditPolicyCatchAll
}

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
	ports         map[string]int // by component name, and etcdPeerPort
	client        kubernetes.Interface

	mu     sync.Mutex
	procs  []*process
	spawn  chan spawnRequest
	closed bool

	stopOnce sync.Once
	stopErr  error
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
	return c.path("logs", component+".log")
}

// CACertPEM returns the PEM bundle that verifies the API server's serving
// certificate, or nil if the kubeconfig had to skip TLS verification.
func (c *Cluster) CACertPEM() []byte { return c.caPEM }

func (c *Cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.opts.Log, "[localcluster] "+format+"\n", args...)
}

// freePorts returns a distinct free loopback TCP port for each name. All
// listeners are held until every port is picked, so the ports are distinct.
func freePorts(names []string) (map[string]int, error) {
	ports := make(map[string]int, len(names))
	for _, name := range names {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports[name] = l.Addr().(*net.TCPAddr).Port
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

// start starts the components of the table in order, writes the kubeconfig
// once the API server is ready, then creates the StorageClass and the fake
// node and waits for what Start promises.
func (c *Cluster) start(ctx context.Context) error {
	begin := time.Now()
	var err error
	c.ports, err = freePorts(append(slices.Clone(Components), etcdPeerPort))
	if err != nil {
		return fmt.Errorf("picking free ports: %w", err)
	}
	c.apiURL = c.localURL("https", ComponentAPIServer)
	if err := writeRSAKey(c.path(serviceAccountKey)); err != nil {
		return fmt.Errorf("service-account key: %w", err)
	}
	if err := os.WriteFile(c.path("config", "tokens.csv"), []byte(AdminToken+",admin,admin,system:masters\n"), 0o600); err != nil {
		return err
	}

	// Components without wait start one after the other and are checked
	// together, before the next component with wait or once all are started.
	var unchecked []component
	checkHealth := func() error {
		for _, comp := range unchecked {
			if err := c.waitFor(ctx, comp.name+" "+comp.health.path, c.healthCheck(comp)); err != nil {
				return err
			}
		}
		unchecked = nil
		return nil
	}
	for _, comp := range components {
		args, env, err := comp.flags(c)
		if err != nil {
			return fmt.Errorf("%s: %w", comp.name, err)
		}
		if err := c.startProcess(comp.name, env, args...); err != nil {
			return err
		}
		unchecked = append(unchecked, comp)
		if comp.wait {
			if err := checkHealth(); err != nil {
				return err
			}
		}
		// The components after the API server (healthy by now, as it has
		// wait) need the kubeconfig.
		if comp.name == ComponentAPIServer {
			if err := c.connect(ctx); err != nil {
				return fmt.Errorf("kubeconfig: %w", err)
			}
		}
	}
	if err := checkHealth(); err != nil {
		return err
	}

	if err := c.waitFor(ctx, "StorageClass "+StorageClassName+" created", func(ctx context.Context) (bool, error) {
		return created(c.client.StorageV1().StorageClasses().Create(ctx, storageClass(), metav1.CreateOptions{}))
	}); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "Node "+NodeName+" created", func(ctx context.Context) (bool, error) {
		return created(c.client.CoreV1().Nodes().Create(ctx, fakeNode(), metav1.CreateOptions{}))
	}); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "node "+NodeName+" Ready and untainted", c.nodeReady); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "ServiceAccount default/default", func(ctx context.Context) (bool, error) {
		_, err := c.client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	}); err != nil {
		return err
	}
	c.logf("cluster ready in %s: %s, kubeconfig %s", time.Since(begin).Round(time.Millisecond), c.apiURL, c.kubeconfig)
	return nil
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

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
