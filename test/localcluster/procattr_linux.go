//go:build linux

package localcluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// sysProcAttr puts every component in its own process group (so it can be
// signalled as a group and is not hit by a terminal's Ctrl-C). Unless the
// cluster is detached, the kernel also kills the component when the thread
// that started it exits, so a crashed or timed-out test leaks nothing.
func sysProcAttr(detach bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if !detach {
		attr.Pdeathsig = syscall.SIGKILL
	}
	return attr
}

// pidMatches reports whether pid is still a live (non-zombie) process whose
// program is name: the base name of its argv[0], which is <BinDir>/<name> for
// a component. It keeps StopFromDir from signalling, and PIDFromDir from
// reporting as running, an unrelated process that reused a stale pid.
func pidMatches(pid int, name string) bool {
	if !pidRunning(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return filepath.Base(string(argv0)) == name
}

// pidRunning reports whether pid exists and is not a zombie.
func pidRunning(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// Format: "pid (comm) state ..."; comm may contain spaces or parens.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}
