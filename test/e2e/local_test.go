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
	"syscall"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestLocalStopsThroughAPipe runs `make local`'s script as `hack/run-local.sh DIR | cat`, in
// a process group of its own as a shell runs a foreground job, waits for it to say the
// sample Monocle is Ready, and sends the group SIGINT, as Ctrl-C in a terminal does. The
// reader of the pipe ends with it, so the script's cleanup must not need its stdout: every
// component of the local control plane must be stopped within a minute.
func TestLocalStopsThroughAPipe(t *testing.T) {
	testkit.NeedCluster(t, env != nil)
	dir := filepath.Join(t.TempDir(), "local")
	t.Cleanup(func() { _ = localcluster.StopFromDir(dir) })

	cmd := exec.Command("bash", "-c", `hack/run-local.sh "$0" 2>&1 | cat`, dir)
	cmd.Dir = env.Root
	cmd.Env = append(os.Environ(), "MONOCLE_OPERATOR_BIN="+env.OperatorBin, "KUBECONFIG=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	var printed strings.Builder
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			printed.WriteString(s.Text() + "\n")
			if strings.Contains(s.Text(), "Press Ctrl-C to stop everything") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(5 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("hack/run-local.sh did not get the sample Monocle Ready in 5 minutes; it printed:\n%s", printed.String())
	}

	// Ctrl-C: SIGINT to the whole foreground group (bash, the script, the operator, cat).
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	err = testkit.Poll(context.Background(), 500*time.Millisecond, time.Minute, "the local control plane is stopped", func(context.Context) error {
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
		t.Fatalf("%v\nthe script printed:\n%s\nstop.log:\n%s", err, printed.String(), stopLog)
	}
}
