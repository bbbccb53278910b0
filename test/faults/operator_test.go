package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// operator is one operator process started by the suite.
type operator struct {
	*testkit.Process
	// expectExit is set before the suite signals the process, so an exit it did not cause
	// is reported.
	expectExit atomic.Bool
	// reported is set once checkOperators has failed a test for this process, so later
	// scenarios do not fail again for it.
	reported atomic.Bool
}

// operatorSet starts operator processes so that they die with the test binary (see
// testkit.StartOptions.DieWithParent, as localcluster does for its components) and keeps
// every process it started, for the panic and exit checks.
type operatorSet struct {
	dir string
	mu  sync.Mutex
	all []*operator
	seq int
}

func newOperatorSet(dir string) *operatorSet { return &operatorSet{dir: dir} }

// baseOperatorArgs are the flags every operator process gets; scenarios add their own.
func baseOperatorArgs() []string {
	return []string{"--kubeconfig", env.Kubeconfig, "--leader-election-namespace", "default", env.Elastic.Flag(),
		"--workers", "4", "--logging-format", "json", "-v", "2"}
}

// start starts an operator process with baseOperatorArgs and extra flags, serving /metrics
// on a free loopback port.
func (s *operatorSet) start(t *testing.T, extra ...string) *operator {
	t.Helper()
	return s.startBinary(t, env.OperatorBin, baseOperatorArgs(), extra...)
}

// startBinary starts the operator binary bin with the flags base and extra and --http-address
// on a free loopback port.
func (s *operatorSet) startBinary(t *testing.T, bin string, base []string, extra ...string) *operator {
	t.Helper()
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	addr, err := testkit.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.seq++
	name := fmt.Sprintf("op-%02d", s.seq)
	s.mu.Unlock()
	args := append(append(append([]string(nil), base...), extra...), "--http-address", addr)
	p, err := testkit.Start(testkit.StartOptions{
		Name: name, Path: bin, Args: args, HTTPAddr: addr,
		LogPath: filepath.Join(s.dir, name+".log"), LogCommand: true, DieWithParent: true,
	})
	if err != nil {
		t.Fatalf("starting the operator: %v", err)
	}
	o := &operator{Process: p}
	s.mu.Lock()
	s.all = append(s.all, o)
	s.mu.Unlock()
	t.Logf("started %s (pid %d, %s) %s", o.Name, o.PID(), filepath.Base(bin), strings.Join(extra, " "))
	return o
}

// kill crashes the process (SIGKILL) and waits for it to exit.
func (o *operator) kill() error {
	o.expectExit.Store(true)
	_ = o.Signal(syscall.SIGKILL)
	if !o.WaitExit(10 * time.Second) {
		return fmt.Errorf("%s did not exit after SIGKILL", o.Name)
	}
	return nil
}

// stop asks the process to stop (SIGTERM: a leader stops its workers and releases its
// lease) and waits up to 30s, the grace period deploy/03-operator.yaml gives it.
func (o *operator) stop() error {
	o.expectExit.Store(true)
	if !o.Stop(syscall.SIGTERM, 30*time.Second) {
		return fmt.Errorf("%s did not exit within 30s of SIGTERM", o.Name)
	}
	if err := o.Err(); err != nil {
		return fmt.Errorf("%s exited with %v after SIGTERM", o.Name, err)
	}
	return nil
}

func (s *operatorSet) stopAll() {
	s.mu.Lock()
	all := append([]*operator(nil), s.all...)
	s.mu.Unlock()
	for _, o := range all {
		if o.Alive() {
			_ = o.stop()
		}
	}
}

// identity returns the leader election identity the process logged at start.
func (o *operator) identity(timeout time.Duration) (string, error) {
	return o.identityPolling(timeout, 100*time.Millisecond)
}

// identityPolling is identity, reading the log every interval.
func (o *operator) identityPolling(timeout, interval time.Duration) (string, error) {
	var id string
	err := testkit.Poll(context.Background(), interval, timeout, o.Name+" logs its identity", func(context.Context) error {
		data, err := os.ReadFile(o.LogPath)
		if err != nil {
			return err
		}
		m := testkit.IdentityPattern.FindSubmatch(data)
		if m == nil {
			return errors.New("no identity in the log")
		}
		id = string(m[1])
		return nil
	})
	return id, err
}

var panicPattern = regexp.MustCompile(`(?m)^(panic: |fatal error: )|Observed a panic`)

// checkOperators fails the test for every process that panicked or exited without the
// suite asking it to, with the end of its log.
func (s *operatorSet) checkOperators(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	all := append([]*operator(nil), s.all...)
	s.mu.Unlock()
	for _, o := range all {
		if o.reported.Load() {
			continue
		}
		data, err := os.ReadFile(o.LogPath)
		if err != nil {
			t.Errorf("reading %s: %v", o.LogPath, err)
			continue
		}
		if loc := panicPattern.FindIndex(data); loc != nil {
			from := max(0, loc[0]-2000)
			t.Errorf("operator %s panicked (log %s):\n%s", o.Name, o.LogPath, truncateText(string(data[from:]), 6000))
			o.reported.Store(true)
		}
		if !o.Alive() && !o.expectExit.Load() {
			t.Errorf("operator %s exited on its own at %s (%v); last lines of %s:\n%s",
				o.Name, o.ExitedAt().Format(time.RFC3339Nano), o.Err(), o.LogPath, testkit.Tail(string(data), 30))
			o.reported.Store(true)
		}
	}
}

// errorLines counts the log lines of the process that carry an error ("err" key or level
// error) after since.
func (o *operator) errorLines(since time.Time) (int, []string) {
	f, err := os.Open(o.LogPath)
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

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
