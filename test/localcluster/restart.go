package localcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Kill sends SIGKILL to a running component's process group (a crash, as
// opposed to a clean shutdown) and waits until the process has exited. The
// component keeps its ports, flags and data: StartComponent brings it back.
// Killing a component that has already exited is a no-op. It fails for an
// unknown component or one that does not exit within 10s.
func (c *Cluster) Kill(component string) error {
	_, p, err := c.findProcess(component)
	if err != nil {
		return err
	}
	if exited(p) {
		return nil
	}
	c.logf("killing %s (pid %d)", component, p.cmd.Process.Pid)
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("localcluster: %s (pid %d) did not exit after SIGKILL", component, p.cmd.Process.Pid)
	}
}

// StopComponent stops a running component cleanly: SIGTERM, then SIGKILL if
// it has not exited after a few seconds, as Stop does for the whole cluster.
func (c *Cluster) StopComponent(component string) error {
	_, p, err := c.findProcess(component)
	if err != nil {
		return err
	}
	return terminate(component, p.cmd.Process.Pid, func() bool { return exited(p) })
}

// StartComponent starts again a component that Kill or StopComponent
// stopped (or that exited on its own), with the same binary, flags,
// environment and ports, its output appended to logs/<component>.log, and
// waits until it is healthy again: etcd's /health, the API server's /readyz,
// the other components' /healthz. etcd keeps its data directory and the API
// server its certificates, so clients and the kubeconfig keep working. It
// fails when the component is still running, does not become healthy within
// Options.Timeout, or ctx ends.
func (c *Cluster) StartComponent(ctx context.Context, component string) error {
	i, old, err := c.findProcess(component)
	if err != nil {
		return err
	}
	if !exited(old) {
		return fmt.Errorf("localcluster: %s (pid %d) is still running", component, old.cmd.Process.Pid)
	}
	logFile, err := os.OpenFile(old.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor
	fmt.Fprintf(logFile, "# %s: restarting after %v\n", time.Now().Format(time.RFC3339Nano), old.err)

	cmd := exec.Command(old.cmd.Path, old.cmd.Args[1:]...)
	cmd.Dir = old.cmd.Dir
	cmd.Env = old.cmd.Env
	// Replaced in place, so that Stop keeps the reverse start order.
	p := &process{name: component, logPath: old.logPath, pidPath: old.pidPath}
	if err := c.launch(cmd, logFile, p, i); err != nil {
		return fmt.Errorf("localcluster: starting %s: %w", component, err)
	}
	c.logf("restarted %s (pid %d)", component, cmd.Process.Pid)
	if err := c.waitFor(ctx, component+" healthy after restart", c.healthCheck(component)); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	return nil
}

// Restart crashes a component with Kill and starts it again with
// StartComponent; it returns once the component is healthy.
func (c *Cluster) Restart(ctx context.Context, component string) error {
	if err := c.Kill(component); err != nil {
		return err
	}
	return c.StartComponent(ctx, component)
}

// findProcess returns the index in c.procs and the process of a component.
func (c *Cluster) findProcess(component string) (int, *process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.procs {
		if p.name == component {
			return i, p, nil
		}
	}
	return 0, nil, fmt.Errorf("localcluster: no component %q in this cluster", component)
}

func exited(p *process) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// healthCheck returns the readiness check of a component, for waitFor.
func (c *Cluster) healthCheck(component string) func(context.Context) (bool, error) {
	insecure := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	switch component {
	case ComponentEtcd:
		url := fmt.Sprintf("http://127.0.0.1:%d/health", c.ports["etcd-client"])
		plain := &http.Client{Timeout: 2 * time.Second}
		return func(ctx context.Context) (bool, error) {
			code, body, err := httpGet(ctx, plain, url, "")
			if err != nil {
				return false, err
			}
			return code == http.StatusOK && bytes.Contains(body, []byte(`"health":"true"`)), fmt.Errorf("etcd /health: %d %s", code, body)
		}
	case ComponentAPIServer:
		return func(ctx context.Context) (bool, error) {
			code, body, err := httpGet(ctx, insecure, c.apiURL+"/readyz", AdminToken)
			if err != nil {
				return false, err
			}
			return code == http.StatusOK, fmt.Errorf("/readyz: %d %s", code, lastLines(string(body), 5))
		}
	default:
		scheme := "https"
		if component == ComponentKwok {
			scheme = "http"
		}
		url := fmt.Sprintf("%s://127.0.0.1:%d/healthz", scheme, c.ports[component])
		return func(ctx context.Context) (bool, error) {
			code, body, err := httpGet(ctx, insecure, url, "")
			if err != nil {
				return false, err
			}
			return code == http.StatusOK, fmt.Errorf("/healthz: %d %s", code, lastLines(string(body), 5))
		}
	}
}
