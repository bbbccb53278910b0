package localcluster

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestPIDFromDir checks that a pid file counts as running only while its
// pid belongs to the component it names: a pid reused by another program,
// an exited process, a missing or garbled pid file do not.
func TestPIDFromDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the program behind a pid is read from /proc")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "pids"), 0o755); err != nil {
		t.Fatal(err)
	}
	writePID := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "pids", name+".pid"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A shell (kept by the "; :" from exec'ing sleep) whose command line
	// mentions a component without being it.
	sh := exec.Command("sh", "-c", "sleep 60; :", ComponentAPIServer)
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	pid := sh.Process.Pid
	kill := func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = sh.Wait()
	}
	t.Cleanup(kill)
	// Start returns once the child is forked, maybe before it has exec'd sh: until then its
	// command line is this test binary's. Wait for the exec.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if argv0, _, _ := bytes.Cut(cmdline, []byte{0}); filepath.Base(string(argv0)) == "sh" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d has not exec'd sh after 10 s: cmdline %q", pid, cmdline)
		}
	}
	writePID("sh", strconv.Itoa(pid)+"\n")
	writePID(ComponentAPIServer, strconv.Itoa(pid)+"\n")
	writePID(ComponentEtcd, "garbage\n")

	check := func(name string, wantPID int, wantRunning bool) {
		t.Helper()
		got, running, err := PIDFromDir(dir, name)
		if err != nil || got != wantPID || running != wantRunning {
			t.Errorf("PIDFromDir(%s) = %d, %v, %v; want %d, %v, nil", name, got, running, err, wantPID, wantRunning)
		}
	}
	check("sh", pid, true)
	// The same live process, but not the program the pid file names.
	check(ComponentAPIServer, pid, false)
	if _, _, err := PIDFromDir(dir, ComponentEtcd); err == nil {
		t.Errorf("PIDFromDir(%s) with a garbled pid file: no error", ComponentEtcd)
	}
	if _, _, err := PIDFromDir(dir, ComponentKwok); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("PIDFromDir(%s) without a pid file: err = %v, want os.ErrNotExist", ComponentKwok, err)
	}
	if got := runningFromDir(dir); len(got) != 0 {
		t.Errorf("runningFromDir = %v, want none (no pid belongs to its component)", got)
	}

	kill()
	check("sh", pid, false)
}
