//go:build linux

package testkit

import "syscall"

// dieWithParentAttr puts a process in its own process group (so a terminal's Ctrl-C does not
// hit it) and has the kernel SIGKILL it when the thread that started it exits.
func dieWithParentAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
