package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// operator is one operator process started by the suite.
type operator struct {
	name       string
	cmd        *exec.Cmd
	logPath    string
	metricsURL string
	started    time.Time
	// expectExit is set before the suite signals the process, so an exit it did not cause
	// is reported.
	expectExit atomic.Bool
	// reported is set once checkOperators has failed a test for this process, so later
	// scenarios do not fail again for it.
	reported atomic.Bool
	done     chan struct{}
	err      error // valid once done is closed
	exitedAt time.Time
}

// operatorSet starts operator processes from one locked OS thread (so Pdeathsig kills them
// if the test binary dies, as localcluster does for its components) and keeps every process
// it started, for the panic and exit checks.
type operatorSet struct {
	dir   string
	spawn chan func()
	mu    sync.Mutex
	all   []*operator
	seq   int
}

func newOperatorSet(dir string) *operatorSet {
	s := &operatorSet{dir: dir, spawn: make(chan func())}
	go func() {
		// Never unlocked: Pdeathsig fires when the thread that forked a child exits.
		runtime.LockOSThread()
		for f := range s.spawn {
			f()
		}
	}()
	return s
}

// baseOperatorArgs are the flags every operator process gets; scenarios add their own.
func baseOperatorArgs() []string {
	return []string{"--kubeconfig", env.kubeconfig, "--leader-election-namespace", "default",
		"--workers", "4", "--logging-format", "json", "-v", "2"}
}

// start starts an operator process with baseOperatorArgs and extra flags, serving /metrics
// on a free loopback port.
func (s *operatorSet) start(t *testing.T, extra ...string) *operator {
	t.Helper()
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.seq++
	o := &operator{
		name:       fmt.Sprintf("op-%02d", s.seq),
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", port),
		done:       make(chan struct{}),
	}
	s.mu.Unlock()
	o.logPath = filepath.Join(s.dir, o.name+".log")
	logFile, err := os.Create(o.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	args := append(baseOperatorArgs(), "--http-address", fmt.Sprintf("127.0.0.1:%d", port))
	args = append(args, extra...)
	fmt.Fprintf(logFile, "# %s %s\n", env.operatorBin, strings.Join(args, " "))
	o.cmd = exec.Command(env.operatorBin, args...)
	o.cmd.Stdout, o.cmd.Stderr = logFile, logFile
	o.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	res := make(chan error, 1)
	s.spawn <- func() { res <- o.cmd.Start() }
	if err := <-res; err != nil {
		t.Fatalf("starting the operator: %v", err)
	}
	o.started = time.Now()
	go func() {
		o.err = o.cmd.Wait()
		o.exitedAt = time.Now()
		close(o.done)
	}()
	s.mu.Lock()
	s.all = append(s.all, o)
	s.mu.Unlock()
	t.Logf("started %s (pid %d) %s", o.name, o.cmd.Process.Pid, strings.Join(extra, " "))
	return o
}

func (o *operator) alive() bool {
	select {
	case <-o.done:
		return false
	default:
		return true
	}
}

// kill crashes the process (SIGKILL) and waits for it to exit.
func (o *operator) kill() error {
	o.expectExit.Store(true)
	_ = o.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-o.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s did not exit after SIGKILL", o.name)
	}
}

// stop asks the process to stop (SIGTERM: a leader stops its workers and releases its
// lease) and waits up to 30s, the grace period deploy/03-operator.yaml gives it.
func (o *operator) stop() error {
	o.expectExit.Store(true)
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.done:
		if o.err != nil {
			return fmt.Errorf("%s exited with %v after SIGTERM", o.name, o.err)
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = o.cmd.Process.Signal(syscall.SIGKILL)
		<-o.done
		return fmt.Errorf("%s did not exit within 30s of SIGTERM", o.name)
	}
}

func (s *operatorSet) stopAll() {
	s.mu.Lock()
	all := append([]*operator(nil), s.all...)
	s.mu.Unlock()
	for _, o := range all {
		if o.alive() {
			_ = o.stop()
		}
	}
}

var identityPattern = regexp.MustCompile(`"identity":"([^"]+)"`)

// identity returns the leader election identity the process logged at start.
func (o *operator) identity(timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		data, err := os.ReadFile(o.logPath)
		if err == nil {
			if m := identityPattern.FindSubmatch(data); m != nil {
				return string(m[1]), nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s logged no identity within %s", o.name, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var panicPattern = regexp.MustCompile(`(?m)^(panic: |fatal error: )|Observed a panic`)

// checkOperators fails the test for every process that panicked or exited without the
// suite asking it to, with the end of its log.
func (s *operatorSet) checkOperators(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	all := append([]*operator(nil), s.all...)
	s.mu.Unlock()
	for _, o := range all {
		if o.reported.Load() {
			continue
		}
		data, err := os.ReadFile(o.logPath)
		if err != nil {
			t.Errorf("reading %s: %v", o.logPath, err)
			continue
		}
		if loc := panicPattern.FindIndex(data); loc != nil {
			from := max(0, loc[0]-2000)
			t.Errorf("operator %s panicked (log %s):\n%s", o.name, o.logPath, truncateText(string(data[from:]), 6000))
			o.reported.Store(true)
		}
		if !o.alive() && !o.expectExit.Load() {
			t.Errorf("operator %s exited on its own at %s (%v); last lines of %s:\n%s",
				o.name, o.exitedAt.Format(time.RFC3339Nano), o.err, o.logPath, tailText(data, 30))
			o.reported.Store(true)
		}
	}
}

// errorLines counts the log lines of the process that carry an error ("err" key or level
// error) after since.
func (o *operator) errorLines(since time.Time) (int, []string) {
	f, err := os.Open(o.logPath)
	if err != nil {
		return 0, nil
	}
	defer f.Close()
	n := 0
	var sample []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"err":`)) {
			continue
		}
		var entry struct {
			TS float64 `json:"ts"`
		}
		if json.Unmarshal(line, &entry) != nil {
			continue
		}
		if time.UnixMilli(int64(entry.TS)).Before(since) {
			continue
		}
		n++
		if len(sample) < 5 {
			sample = append(sample, truncateText(string(line), 400))
		}
	}
	return n, sample
}

// metrics scrapes the process's /metrics.
func (o *operator) metrics(ctx context.Context) (metricSet, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.metricsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", o.metricsURL, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return parseMetrics(body), nil
}

// metricSet maps a sample's name with its labels ("name{a=\"b\"}") to its value.
type metricSet map[string]float64

func parseMetrics(body []byte) metricSet {
	out := metricSet{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

// sum adds the samples of metric name whose labels contain every one of labels (each like
// `code="200"`).
func (m metricSet) sum(name string, labels ...string) float64 {
	total := 0.0
	for k, v := range m {
		if k != name && !strings.HasPrefix(k, name+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(k, l) {
				ok = false
				break
			}
		}
		if ok {
			total += v
		}
	}
	return total
}

// cpuSeconds is the CPU time (user+system) the process has used, from /proc/<pid>/stat,
// assuming the usual 100 clock ticks per second.
func (o *operator) cpuSeconds() (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", o.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	fields := strings.Fields(string(data[i+2:]))
	// After "pid (comm)": state is fields[0], utime fields[11], stime fields[12].
	if len(fields) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tailText(b []byte, lines int) string {
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
