//go:build unix && !linux

package testkit

import "syscall"

// dieWithParentAttr puts a process in its own process group. Parent-death signals are
// Linux-only: elsewhere the process outlives a test binary that is killed.
func dieWithParentAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
