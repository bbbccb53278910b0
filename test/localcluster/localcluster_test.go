package localcluster

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// startCluster builds the binaries if needed and starts a cluster whose work
// directory is a test temp dir.
func startCluster(t *testing.T, detach bool) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok); skipped with -short")
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Fatalf("kubectl is needed on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	binDir, stagesDir, err := EnsureBinaries(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c, err := Start(ctx, Options{
		BinDir:    binDir,
		StagesDir: stagesDir,
		WorkDir:   t.TempDir(),
		Detach:    detach,
		Log:       t.Output(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	t.Logf("cluster started in %s", time.Since(start).Round(time.Millisecond))
	return c
}

// kubectl runs kubectl against c, with stdin if not empty, and fails the
// test on error.
func kubectl(t *testing.T, c *Cluster, stdin string, args ...string) string {
	t.Helper()
	out, err := tryKubectl(c, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s\n%s", strings.Join(args, " "), err, out, c.Alive())
	}
	return out
}

func tryKubectl(c *Cluster, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", c.Kubeconfig()}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// waitKubectl runs kubectl args against c every 200ms, for up to a minute
// (wait.PollUntilContextTimeout), until it succeeds and prints want, and
// otherwise fails the test with what and kubectl's last output.
func waitKubectl(t *testing.T, c *Cluster, what, want string, args ...string) {
	t.Helper()
	start, last := time.Now(), ""
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		out, err := tryKubectl(c, "", args...)
		last = out
		return err == nil && out == want, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s: %s", what, last)
	}
	t.Logf("%s after %s", what, time.Since(start).Round(time.Millisecond))
}

// A pod template that passes the "restricted" Pod Security level, so it
// passes the namespace's enforced "baseline" level too. kwok reports it
// Running/Ready; the container never actually runs.
const podSpec = `
      securityContext:
        runAsNonRoot: true
        runAsUser: 65534
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: main
        image: busybox:1.36
        command: ["sleep", "3600"]
        resources:
          requests:
            cpu: 10m
            memory: 16Mi
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
`

const manifests = `apiVersion: v1
kind: Namespace
metadata:
  name: lc-test
  labels:
    pod-security.kubernetes.io/enforce: baseline
    pod-security.kubernetes.io/warn: restricted
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: lc-test
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:` + podSpec + `---
apiVersion: v1
kind: Service
metadata:
  name: db
  namespace: lc-test
spec:
  clusterIP: None
  selector:
    app: db
  ports:
  - port: 5432
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: lc-test
spec:
  serviceName: db
  replicas: 1
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:` + podSpec + `        volumeMounts:
        - name: data
          mountPath: /data
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi
---
apiVersion: batch/v1
kind: Job
metadata:
  name: once
  namespace: lc-test
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never` + podSpec

// TestWorkloads starts a cluster and checks that a Deployment becomes
// Ready, a StatefulSet's PVC binds, a Job completes and deleting a
// Deployment garbage-collects its ReplicaSet (all simulated by kwok, since
// no container runs), then stops the cluster and checks no process is left.
func TestWorkloads(t *testing.T) {
	c := startCluster(t, false)

	nodes := kubectl(t, c, "", "get", "nodes", "-o", "wide")
	t.Logf("nodes:\n%s", nodes)
	if !strings.Contains(nodes, NodeName) || !strings.Contains(nodes, " Ready ") {
		t.Fatalf("node %s is not Ready:\n%s", NodeName, nodes)
	}
	if sc := kubectl(t, c, "", "get", "storageclass", StorageClassName); !strings.Contains(sc, "(default)") {
		t.Fatalf("StorageClass %s is not the default:\n%s", StorageClassName, sc)
	}

	out := kubectl(t, c, manifests, "apply", "-f", "-")
	if strings.Contains(strings.ToLower(out), "warning") {
		t.Errorf("apply printed warnings (Pod Security?):\n%s", out)
	}

	kubectl(t, c, "", "-n", "lc-test", "wait", "--for=jsonpath={.status.readyReplicas}=1", "deployment/web", "--timeout=60s")
	ready := kubectl(t, c, "", "-n", "lc-test", "get", "deployment", "web", "-o", "jsonpath={.status.readyReplicas}/{.spec.replicas}")
	if ready != "1/1" {
		t.Fatalf("deployment web: ready %s, want 1/1", ready)
	}

	waitKubectl(t, c, "PVC data-db-0 Bound", "Bound", "-n", "lc-test", "get", "pvc", "data-db-0", "-o", "jsonpath={.status.phase}")
	kubectl(t, c, "", "-n", "lc-test", "wait", "--for=jsonpath={.status.readyReplicas}=1", "statefulset/db", "--timeout=60s")

	kubectl(t, c, "", "-n", "lc-test", "wait", "--for=condition=Complete", "job/once", "--timeout=60s")

	if rs := kubectl(t, c, "", "-n", "lc-test", "get", "replicasets", "-l", "app=web", "-o", "name"); rs == "" {
		t.Fatal("deployment web has no ReplicaSet")
	}
	kubectl(t, c, "", "-n", "lc-test", "delete", "deployment", "web", "--wait=true", "--timeout=60s")
	waitKubectl(t, c, "ReplicaSet and pods of web garbage-collected", "", "-n", "lc-test", "get", "replicasets,pods", "-l", "app=web", "-o", "name")

	if err := c.Alive(); err != nil {
		t.Fatal(err)
	}
	audit, err := os.ReadFile(c.AuditLogPath())
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	if !bytes.Contains(audit, []byte(`"userAgent":"kubectl`)) {
		t.Errorf("audit log %s has no kubectl request", c.AuditLogPath())
	}

	pids := c.PIDs()
	if len(pids) != len(Components) {
		t.Fatalf("PIDs() = %v, want one per component", pids)
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after Stop (kill -0: %v)", name, pid, err)
		}
		if _, err := os.Stat(filepath.Join(c.WorkDir(), "pids", name+".pid")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("pid file of %s left after Stop (%v)", name, err)
		}
	}
}

// TestStopFromDir starts a detached cluster, as the CLI does, and stops it
// through its pid files only.
func TestStopFromDir(t *testing.T) {
	c := startCluster(t, true)
	if out := kubectl(t, c, "", "get", "serviceaccount", "default", "-o", "name"); out != "serviceaccount/default" {
		t.Fatalf("default ServiceAccount: %q", out)
	}
	if _, err := Start(context.Background(), Options{BinDir: c.opts.BinDir, StagesDir: c.opts.StagesDir, WorkDir: c.WorkDir()}); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second Start in the same dir: err = %v, want 'already running'", err)
	}
	pids := c.PIDs()
	if err := StopFromDir(c.WorkDir()); err != nil {
		t.Fatalf("StopFromDir: %v", err)
	}
	for name, pid := range pids {
		if pidRunning(pid) {
			t.Errorf("%s (pid %d) still running after StopFromDir", name, pid)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(c.WorkDir(), "pids")); len(entries) != 0 {
		t.Errorf("pid files left: %v", entries)
	}
}
