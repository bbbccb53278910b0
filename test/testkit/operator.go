package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// BuildOperator builds ./cmd/monocle-operator of the module at repoRoot into the binary out
// with the go command on $PATH. Its error includes go build's output.
func BuildOperator(ctx context.Context, repoRoot, out string) error {
	return BuildCommand(ctx, repoRoot, "./cmd/monocle-operator", out)
}

// BuildCommand builds the main package pkg (such as "./cmd/kubectl-monocle") of the module
// at repoRoot into the binary out with the go command on $PATH. Its error includes go
// build's output.
func BuildCommand(ctx context.Context, repoRoot, pkg, out string) error {
	build := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	build.Dir = repoRoot
	if output, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v: %s", pkg, err, output)
	}
	return nil
}

// FreeAddr returns "127.0.0.1:<port>" with a TCP port that was free a moment ago, for a
// process's --http-address. Another process may take the port before it is used.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// StartOptions describes a process for Start.
type StartOptions struct {
	// Name names the process in messages, e.g. "op-03".
	Name string
	// Path is the binary to run, looked up in $PATH when it has no slash.
	Path string
	// Args are the binary's arguments, without the binary itself.
	Args []string
	// Env is the process's environment; nil inherits the test's.
	Env []string
	// LogPath is created, or truncated, and receives the process's stdout and stderr.
	LogPath string
	// LogCommand writes "# <Path> <Args joined by spaces>" as the first line of the log.
	LogCommand bool
	// HTTPAddr is the host:port the process serves HTTP on (the operator's --http-address,
	// which the caller passes in Args), for Get and Metrics. Empty when unused.
	HTTPAddr string
	// DieWithParent starts the process in its own process group, from an OS thread that
	// never exits, with a parent-death signal (SIGKILL, Linux only): it dies with the test
	// binary even when that is killed, as test/localcluster's components do.
	DieWithParent bool
}

// Process is a process started by Start. Its exit is collected in the background: Done is
// closed once it has exited, and Err, ExitCode and ExitedAt tell how and when.
type Process struct {
	// Name is StartOptions.Name.
	Name string
	// LogPath is StartOptions.LogPath, the file that receives stdout and stderr.
	LogPath string
	// HTTPAddr is StartOptions.HTTPAddr, the host:port Get and Metrics address.
	HTTPAddr string
	// Started is when Start was about to start the process.
	Started time.Time

	cmd      *exec.Cmd
	done     chan struct{}
	err      error     // valid once done is closed
	exitedAt time.Time // valid once done is closed
}

// Start starts the process opts describes and returns at once. Its error is that of
// creating the log or of starting the binary, unwrapped.
func Start(opts StartOptions) (*Process, error) {
	logFile, err := os.Create(opts.LogPath)
	if err != nil {
		return nil, err
	}
	// The child has its own copy of the descriptor.
	defer logFile.Close()
	if opts.LogCommand {
		if _, err := fmt.Fprintf(logFile, "# %s %s\n", opts.Path, strings.Join(opts.Args, " ")); err != nil {
			return nil, err
		}
	}
	p := &Process{Name: opts.Name, LogPath: opts.LogPath, HTTPAddr: opts.HTTPAddr, done: make(chan struct{})}
	p.cmd = exec.Command(opts.Path, opts.Args...)
	p.cmd.Env = opts.Env
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.Started = time.Now()
	if opts.DieWithParent {
		err = startFromLockedThread(p.cmd)
	} else {
		err = p.cmd.Start()
	}
	if err != nil {
		return nil, err
	}
	go func() {
		p.err = p.cmd.Wait()
		p.exitedAt = time.Now()
		close(p.done)
	}()
	return p, nil
}

// spawner starts the DieWithParent processes from one OS thread, locked and never released:
// the parent-death signal fires when the thread that forked the child exits, which a
// goroutine's thread may do at any time.
var spawner struct {
	once sync.Once
	reqs chan func()
}

func startFromLockedThread(cmd *exec.Cmd) error {
	cmd.SysProcAttr = dieWithParentAttr()
	spawner.once.Do(func() {
		spawner.reqs = make(chan func())
		go func() {
			runtime.LockOSThread()
			for f := range spawner.reqs {
				f()
			}
		}()
	})
	res := make(chan error, 1)
	spawner.reqs <- func() { res <- cmd.Start() }
	return <-res
}

// PID is the process's id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Alive reports whether the process has not exited yet.
func (p *Process) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Err is what waiting for the process returned: nil while it runs and after a zero exit
// status, an *exec.ExitError after another status or a signal.
func (p *Process) Err() error {
	if p.Alive() {
		return nil
	}
	return p.err
}

// ExitCode is the process's exit status: 0 while it runs, -1 when a signal ended it.
func (p *Process) ExitCode() int {
	var exitErr *exec.ExitError
	if errors.As(p.Err(), &exitErr) {
		return exitErr.ExitCode()
	}
	return 0
}

// ExitedAt is when the process's exit was collected; zero while it runs.
func (p *Process) ExitedAt() time.Time {
	if p.Alive() {
		return time.Time{}
	}
	return p.exitedAt
}

// Signal sends sig to the process (not to its group). After the exit it returns
// os.ErrProcessDone.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// WaitExit waits up to timeout for the process to exit and reports whether it has.
func (p *Process) WaitExit(timeout time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Stop sends sig to a process that still runs and waits up to grace for it to exit; past
// grace it sends SIGKILL and waits for the exit. It reports whether the process exited
// without SIGKILL (true when it had exited already).
func (p *Process) Stop(sig os.Signal, grace time.Duration) bool {
	if !p.Alive() {
		return true
	}
	_ = p.Signal(sig)
	if p.WaitExit(grace) {
		return true
	}
	_ = p.Signal(syscall.SIGKILL)
	<-p.done
	return false
}

// Log is the content of the process's log so far; "" when it cannot be read.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.LogPath)
	return string(b)
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// Get fetches http://<HTTPAddr><path>, e.g. "/healthz", and returns the status code and
// the body. A request gives up after 5 s.
func (p *Process) Get(ctx context.Context, path string) (code int, body string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.HTTPAddr+path, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Metrics scrapes the process's /metrics (see Get). A status other than 200 is an error:
// "GET http://<HTTPAddr>/metrics: 503 Service Unavailable".
func (p *Process) Metrics(ctx context.Context) (Metrics, error) {
	code, body, err := p.Get(ctx, "/metrics")
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET http://%s/metrics: %d %s", p.HTTPAddr, code, http.StatusText(code))
	}
	return ParseMetrics(body), nil
}

// CPUSeconds is the CPU time the process has used so far, user and system, in seconds (see
// ProcCPUSeconds).
func (p *Process) CPUSeconds() (float64, error) { return ProcCPUSeconds(p.PID()) }

// Memory is the process's resident memory and its peak, in bytes (see ProcMemory).
func (p *Process) Memory() (rss, peak int64, err error) { return ProcMemory(p.PID()) }

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// ProcCPUSeconds reads the CPU time process pid has used, user plus system, in seconds, from
// /proc/<pid>/stat. It fails where /proc is missing (not Linux) and once the process has
// been reaped.
func ProcCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s, err := parseProcStatCPU(b)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return s, nil
}

// parseProcStatCPU reads utime+stime, in seconds, from the content of /proc/<pid>/stat.
func parseProcStatCPU(stat []byte) (float64, error) {
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses; the fields after
	// the last ')' start with state, and utime and stime are the 12th and 13th of them.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0, errors.New("no command name")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("too few fields")
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("utime or stime is not a number")
	}
	return (utime + stime) / clockTicks, nil
}

// ProcMemory reads the resident memory of process pid (VmRSS) and its peak (VmHWM), in
// bytes, from /proc/<pid>/status; a value missing there is 0. It fails where /proc is
// missing (not Linux) and once the process has been reaped.
func ProcMemory(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseProcStatusMemory(b)
}

// parseProcStatusMemory reads VmRSS and VmHWM, in bytes, from the content of
// /proc/<pid>/status.
func parseProcStatusMemory(status []byte) (rss, peak int64, err error) {
	for _, line := range strings.Split(string(status), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		fields := strings.Fields(value) // "12345 kB"
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", key, err)
		}
		if key == "VmRSS" {
			rss = kb * 1024
		} else {
			peak = kb * 1024
		}
	}
	return rss, peak, nil
}

// Tail returns the last n lines of text, without its trailing newlines; all of it when it
// has n lines or fewer.
func Tail(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// IdentityPattern finds the leader election identity in the operator's "Starting" log line,
// in the text (identity="x") and the JSON ("identity":"x") formats; its first group is the
// identity.
var IdentityPattern = regexp.MustCompile(`"?identity"?[=:]"([^"]+)"`)
