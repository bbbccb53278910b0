package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// localPhases are the phases of `make local`'s script, each named by a line it prints when the
// phase begins: the control plane starting, the operator running, the sample Monocle waiting
// to be Ready, and everything up.
var localPhases = []struct{ name, marker string }{
	{"control plane starting", "[localcluster]"},
	{"operator running", "Operator running"},
	{"sample applied", "monocle.monocle.monocle.change-metrics.io/monocle created"},
	{"Ready", "Press Ctrl-C to stop everything"},
}

// TestLocalStopsThroughAPipe runs `make local`'s script as `hack/run-local.sh DIR | cat`, in
// a process group of its own as a shell runs a foreground job, waits for it to print the
// marker of each phase in turn (localPhases), and sends the group SIGINT, as Ctrl-C in a
// terminal does. The reader of the pipe ends with it, so the script's cleanup must not need
// its stdout: the script must exit and every component of the local control plane be
// stopped within a minute, whatever the phase.
func TestLocalStopsThroughAPipe(t *testing.T) {
	testkit.NeedCluster(t, env != nil)
	for _, phase := range localPhases {
		t.Run(phase.name, func(t *testing.T) { interruptLocal(t, phase.marker) })
	}
}

// foregroundJob is a command run as a shell runs a foreground job, in a process group of its
// own, with its output (one pipe) read line by line until marker shows.
type foregroundJob struct {
	cmd     *exec.Cmd
	marker  string
	mu      sync.Mutex
	printed strings.Builder
	seen    chan struct{} // closed once a line holds marker
}

// startForeground starts cmd with its stdout, or its stderr, read by the job.
func startForeground(t *testing.T, cmd *exec.Cmd, stderr bool, marker string) *foregroundJob {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe := cmd.StdoutPipe
	if stderr {
		pipe = cmd.StderrPipe
	}
	out, err := pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	j := &foregroundJob{cmd: cmd, marker: marker, seen: make(chan struct{})}
	go func() {
		var once sync.Once
		for s := bufio.NewScanner(out); s.Scan(); {
			j.mu.Lock()
			j.printed.WriteString(s.Text() + "\n")
			j.mu.Unlock()
			if strings.Contains(s.Text(), marker) {
				once.Do(func() { close(j.seen) })
			}
		}
	}()
	return j
}

// output is what the job has printed so far.
func (j *foregroundJob) output() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.printed.String()
}

// waitMarker waits up to timeout for the marker; it kills the job and fails the test if it
// does not show.
func (j *foregroundJob) waitMarker(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-j.seen:
	case <-time.After(timeout):
		_ = syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("%v did not print %q in %s; it printed:\n%s", j.cmd.Args, j.marker, timeout, j.output())
	}
}

// interrupt sends the job's group SIGINT, as Ctrl-C in a terminal does, and reports whether
// the job exited within timeout; if not, it kills the group.
func (j *foregroundJob) interrupt(t *testing.T, timeout time.Duration) bool {
	t.Helper()
	if err := syscall.Kill(-j.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = j.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
		return true
	case <-time.After(timeout):
		_ = syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
		return false
	}
}

// interruptLocal runs hack/run-local.sh through a pipe, sends its group SIGINT once it has
// printed marker, and checks that everything it started stops.
func interruptLocal(t *testing.T, marker string) {
	dir := filepath.Join(t.TempDir(), "local")
	t.Cleanup(func() { _ = localcluster.StopFromDir(dir) })
	cmd := exec.Command("bash", "-c", `hack/run-local.sh "$0" 2>&1 | cat`, dir)
	cmd.Dir = env.Root
	cmd.Env = append(os.Environ(), "MONOCLE_OPERATOR_BIN="+env.OperatorBin, "KUBECONFIG=")
	job := startForeground(t, cmd, false, marker)
	job.waitMarker(t, 5*time.Minute)
	// Ctrl-C: SIGINT to the whole foreground group (bash, the script, its children, cat).
	if !job.interrupt(t, time.Minute) {
		t.Errorf("hack/run-local.sh still ran a minute after SIGINT at %q", marker)
	}
	err := testkit.Poll(context.Background(), 500*time.Millisecond, time.Minute, "the local control plane is stopped", func(context.Context) error {
		var running []string
		for _, c := range localcluster.Components {
			pid, alive, err := localcluster.PIDFromDir(dir, c)
			if errors.Is(err, os.ErrNotExist) {
				continue
			} else if err != nil {
				return err
			}
			if alive {
				running = append(running, fmt.Sprintf("%s (pid %d)", c, pid))
			}
		}
		if len(running) > 0 {
			return fmt.Errorf("still running: %s", strings.Join(running, ", "))
		}
		return nil
	})
	if err != nil {
		stopLog, _ := os.ReadFile(filepath.Join(dir, "stop.log"))
		t.Fatalf("%v\nthe script printed:\n%s\nstop.log:\n%s", err, job.output(), stopLog)
	}
}

// TestLocalStopsDuringTheControlPlaneBuild runs hack/build-control-plane.sh, the first build of
// `make local` and `make test`, into an empty cache with an empty Go build cache, in a process
// group of its own, and sends the group SIGINT once it builds its first binary, as Ctrl-C in
// a terminal does: it must exit within 10 s, leaving no binary, no partial one and no
// compiler behind.
func TestLocalStopsDuringTheControlPlaneBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go code: not with -short")
	}
	root := repoRoot(t)
	cache := t.TempDir()
	cmd := exec.Command("bash", "hack/build-control-plane.sh")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "MONOCLE_CONTROL_PLANE_CACHE="+cache, "GOCACHE="+t.TempDir())
	job := startForeground(t, cmd, true, ": building ")
	job.waitMarker(t, 2*time.Minute)
	time.Sleep(2 * time.Second) // the compilers are running
	if !job.interrupt(t, 10*time.Second) {
		t.Fatalf("hack/build-control-plane.sh still ran 10 s after SIGINT; it printed:\n%s", job.output())
	}
	// No process of the group is left: kill with signal 0 finds none once the compilers that
	// died with the build, orphaned, have been reaped by init (a second or two).
	if err := testkit.Poll(context.Background(), 250*time.Millisecond, 10*time.Second, "no process of the build left", func(context.Context) error {
		if err := syscall.Kill(-cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill -0 of its group: %v", err)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	left, _ := filepath.Glob(filepath.Join(cache, "bin", "*"))
	if len(left) > 0 {
		t.Errorf("the interrupted build left %v", left)
	}
}
