package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

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

func exited(p *process) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

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
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	for _, p := range procs {
		if exited(p) {
			return fmt.Errorf("%s exited early (%v); last lines of %s:\n%s", p.name, p.err, p.logPath, tailFile(p.logPath, 40))
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
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	var errs []error
	for _, p := range slices.Backward(procs) {
		if !exited(p) {
			c.logf("stopping %s (pid %d)", p.name, p.cmd.Process.Pid)
		}
		if err := terminate(p.name, p.cmd.Process.Pid, func() bool { return exited(p) }); err != nil {
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
	// Unknown names first, then known components in reverse start order.
	var order []string
	present := map[string]bool{}
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".pid"); ok && !e.IsDir() {
			present[n] = true
			if !slices.Contains(Components, n) {
				order = append(order, n)
			}
		}
	}
	for _, name := range slices.Backward(Components) {
		if present[name] {
			order = append(order, name)
		}
	}

	var errs []error
	for _, name := range order {
		pid, running, err := PIDFromDir(workDir, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if running {
			if err := terminate(name, pid, func() bool { return !pidRunning(pid) }); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := os.Remove(filepath.Join(pidDir, name+".pid")); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("localcluster: %w", errors.Join(errs...))
	}
	return nil
}

// PIDFromDir reads the pid of a component from workDir's
// pids/<component>.pid and reports whether that process still runs as that
// component. A pid that the system has since given to another program (after
// the component exited) is not running; on Linux this is told from the
// process's command line in /proc, elsewhere it cannot be. The error wraps
// os.ErrNotExist when there is no pid file.
func PIDFromDir(workDir, component string) (pid int, running bool, err error) {
	path := filepath.Join(workDir, "pids", component+".pid")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false, err
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false, fmt.Errorf("bad pid file %s: %q", path, b)
	}
	return pid, pidMatches(pid, component), nil
}

// runningFromDir lists the components of workDir's pid files that are still
// running.
func runningFromDir(workDir string) []string {
	var running []string
	for _, name := range Components {
		if pid, ok, _ := PIDFromDir(workDir, name); ok {
			running = append(running, fmt.Sprintf("%s pid %d", name, pid))
		}
	}
	return running
}

// terminate sends SIGTERM to the process group of pid (falling back to the
// process), waits up to termGrace for gone to report true, then sends
// SIGKILL and waits up to killGrace.
func terminate(name string, pid int, gone func() bool) error {
	const (
		termGrace = 8 * time.Second
		killGrace = 5 * time.Second
	)
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
	signalGroup(pid, syscall.SIGTERM)
	if waitGone(termGrace) {
		return nil
	}
	signalGroup(pid, syscall.SIGKILL)
	if waitGone(killGrace) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", name, pid)
}

// signalGroup signals the process group of pid, or pid alone if that fails.
func signalGroup(pid int, sig syscall.Signal) {
	if err := syscall.Kill(-pid, sig); err != nil {
		_ = syscall.Kill(pid, sig)
	}
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

// startProcess starts a component with extra environment variables, its
// output in logs/<name>.log (the first line is its command line) and its pid
// in pids/<name>.pid.
func (c *Cluster) startProcess(name string, env []string, args ...string) error {
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
	p := &process{name: name, logPath: logPath, pidPath: c.path("pids", name+".pid")}
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
	signalGroup(p.cmd.Process.Pid, syscall.SIGKILL)
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
// waits until it passes the health check Start used: etcd's /health, the API
// server's /readyz, the other components' /healthz. etcd keeps its data
// directory and the API server its certificates, so clients and the
// kubeconfig keep working. It fails when the component is still running,
// does not become healthy within Options.Timeout, or ctx ends.
func (c *Cluster) StartComponent(ctx context.Context, component string) error {
	i, old, err := c.findProcess(component)
	if err != nil {
		return err
	}
	comp, _ := findComponent(component)
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
	if err := c.waitFor(ctx, component+" healthy after restart", c.healthCheck(comp)); err != nil {
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
