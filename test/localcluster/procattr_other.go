//go:build unix && !linux

package localcluster

import "syscall"

// sysProcAttr puts every component in its own process group. Parent-death
// signals are Linux-only, so a detached and an attached cluster are started
// alike here.
func sysProcAttr(detach bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// pidMatches reports whether pid is still running. Without /proc the command
// line cannot be checked cheaply, so name is not verified.
func pidMatches(pid int, name string) bool {
	return pidRunning(pid)
}

// pidRunning reports whether pid exists.
func pidRunning(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
