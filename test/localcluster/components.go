package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

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

// Components lists the components in start order (the order of the
// components table); they are stopped in the reverse order.
var Components = componentNames()

// etcdPeerPort names etcd's peer port in Cluster.ports; every component's
// own port is under its name.
const etcdPeerPort = "etcd-peer"

// component is one entry of the control plane: the binary <BinDir>/<name>,
// its command line, its health check, and whether Start waits for it before
// starting the next one.
type component struct {
	name string
	// flags returns the command-line flags and extra environment variables,
	// writing any file they name. Start calls it once; a restart reuses the
	// command line.
	flags func(c *Cluster) (args, env []string, err error)
	// health is a GET of <scheme>://127.0.0.1:<port><path>, port being
	// c.ports[name], that answers 200 (and a body containing want, if set)
	// once the component is healthy; Start and StartComponent use it.
	health healthCheck
	// wait makes Start wait until this component is healthy before starting
	// the next; the others are checked later, together: before the next
	// component with wait, or once all are started.
	wait bool
}

// healthCheck describes a component's health endpoint.
type healthCheck struct {
	scheme, path string
	token        bool // send the admin bearer token
	want         string
}

// components is the control plane, in start order.
var components = []component{
	{
		name: ComponentEtcd,
		flags: func(c *Cluster) ([]string, []string, error) {
			client, peer := c.localURL("http", ComponentEtcd), c.localURL("http", etcdPeerPort)
			return []string{
				"--name=localcluster",
				"--data-dir=" + filepath.Join(c.workDir, "etcd-data"),
				"--listen-client-urls=" + client,
				"--advertise-client-urls=" + client,
				"--listen-peer-urls=" + peer,
				"--initial-advertise-peer-urls=" + peer,
				"--initial-cluster=localcluster=" + peer,
				"--initial-cluster-state=new",
				// Throw-away test data: durability is not worth the fsync latency.
				"--unsafe-no-fsync=true",
				"--log-level=warn",
			}, nil, nil
		},
		health: healthCheck{scheme: "http", path: "/health", want: `"health":"true"`},
		wait:   true,
	},
	{
		name: ComponentAPIServer,
		flags: func(c *Cluster) ([]string, []string, error) {
			args := []string{
				"--etcd-servers=" + c.localURL("http", ComponentEtcd),
				"--bind-address=127.0.0.1",
				// Otherwise the API server advertises the address of the host's
				// default route (and fails on a host without one). A loopback
				// address is not valid in Endpoints, so the "kubernetes" Service
				// gets no endpoints at all: nothing in-cluster ever dials it here.
				"--advertise-address=127.0.0.1",
				"--endpoint-reconciler-type=none",
				fmt.Sprintf("--secure-port=%d", c.ports[ComponentAPIServer]),
				"--cert-dir=" + c.path("certs"),
				"--token-auth-file=" + c.path("config", "tokens.csv"),
				"--authorization-mode=Node,RBAC",
				"--service-account-key-file=" + c.path(serviceAccountKey),
				"--service-account-signing-key-file=" + c.path(serviceAccountKey),
				"--service-account-issuer=https://kubernetes.default.svc",
				"--service-cluster-ip-range=10.96.0.0/16",
				"--profiling=false",
			}
			if c.opts.DisableAudit {
				return args, nil, nil
			}
			policy := c.path("config", "audit-policy.yaml")
			if err := os.WriteFile(policy, []byte(c.opts.AuditPolicy), 0o644); err != nil {
				return nil, nil, err
			}
			c.auditLog = c.path("audit.log")
			return append(args,
				"--audit-policy-file="+policy,
				"--audit-log-path="+c.auditLog,
				"--audit-log-format=json",
				"--audit-log-maxsize=0",
			), nil, nil
		},
		health: healthCheck{scheme: "https", path: "/readyz", token: true},
		wait:   true,
	},
	{
		name: ComponentControllerManager,
		flags: func(c *Cluster) ([]string, []string, error) {
			return append(c.clientFlags(ComponentControllerManager),
				"--service-account-private-key-file="+c.path(serviceAccountKey),
				"--root-ca-file="+c.path(apiServerCert),
				"--controllers=*,-node-ipam-controller,-node-lifecycle-controller,-cloud-node-lifecycle-controller,-node-route-controller,-service-lb-controller",
			), nil, nil
		},
		health: healthCheck{scheme: "https", path: "/healthz"},
	},
	{
		name: ComponentScheduler,
		flags: func(c *Cluster) ([]string, []string, error) {
			return c.clientFlags(ComponentScheduler), nil, nil
		},
		health: healthCheck{scheme: "https", path: "/healthz"},
	},
	{
		name: ComponentKwok,
		flags: func(c *Cluster) ([]string, []string, error) {
			args := []string{
				"--kubeconfig=" + c.kubeconfig,
				"--manage-all-nodes=false",
				"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation,
				"--cidr=10.0.0.1/16",
				"--node-ip=10.0.0.1",
				fmt.Sprintf("--server-address=127.0.0.1:%d", c.ports[ComponentKwok]),
			}
			// Every Stage file; storage-class.yaml is an object, not a Stage:
			// Start creates it.
			stages, err := filepath.Glob(filepath.Join(c.opts.StagesDir, "*.yaml"))
			if err != nil {
				return nil, nil, err
			}
			for _, s := range stages {
				if base := filepath.Base(s); base != storageClassFile && base != "kustomization.yaml" {
					args = append(args, "--config="+s)
				}
			}
			// kwok also loads ~/.kwok/kwok.yaml if it exists: give it a HOME of
			// its own so a developer's kwok/kwokctl settings cannot leak in.
			home := c.path("config", "kwok-home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return nil, nil, err
			}
			return args, []string{"HOME=" + home}, nil
		},
		health: healthCheck{scheme: "http", path: "/healthz"},
	},
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

// Files under the work directory that several components use.
const (
	serviceAccountKey = "certs/service-account.key"
	// apiServerCert is the API server's self-signed serving certificate,
	// written by the API server into its --cert-dir.
	apiServerCert = "certs/apiserver.crt"
)

// componentNames returns the names of the components table, in order.
func componentNames() []string {
	names := make([]string, len(components))
	for i, comp := range components {
		names[i] = comp.name
	}
	return names
}

// clientFlags are the flags that kube-controller-manager and kube-scheduler
// share: the admin kubeconfig, no leader election, their own secure port.
func (c *Cluster) clientFlags(name string) []string {
	return []string{
		"--kubeconfig=" + c.kubeconfig,
		"--authentication-kubeconfig=" + c.kubeconfig,
		"--authorization-kubeconfig=" + c.kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports[name]),
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
	}
}

// localURL returns <scheme>://127.0.0.1:<port> for a port of c.ports.
func (c *Cluster) localURL(scheme, port string) string {
	return fmt.Sprintf("%s://127.0.0.1:%d", scheme, c.ports[port])
}

// path joins elements to the work directory.
func (c *Cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.workDir}, elem...)...)
}

// healthClient reaches every health endpoint: the self-signed serving
// certificates are not verified, as the endpoints carry no secrets.
var healthClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
}

// healthCheck returns a component's health check, for waitFor.
func (c *Cluster) healthCheck(comp component) func(context.Context) (bool, error) {
	h := comp.health
	url := c.localURL(h.scheme, comp.name) + h.path
	return func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		if h.token {
			req.Header.Set("Authorization", "Bearer "+AdminToken)
		}
		req.Header.Set("User-Agent", userAgent)
		resp, err := healthClient.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		ok := err == nil && resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte(h.want))
		return ok, fmt.Errorf("%s %s: %d %s", comp.name, h.path, resp.StatusCode, lastLines(string(body), 5))
	}
}

// findComponent returns the table entry of a component name.
func findComponent(name string) (component, bool) {
	for _, comp := range components {
		if comp.name == name {
			return comp, true
		}
	}
	return component{}, false
}
