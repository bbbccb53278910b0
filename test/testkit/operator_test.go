package testkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		text string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc\n\n", 1, "c"},
		{"a\nb", 5, "a\nb"},
		{"", 3, ""},
	} {
		if got := Tail(tc.text, tc.n); got != tc.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", tc.text, tc.n, got, tc.want)
		}
	}
}

func TestParseProc(t *testing.T) {
	// A command name with spaces and parentheses; utime 250 and stime 50 clock ticks.
	stat := []byte("4242 (monocle (op) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 1000000 2000\n")
	if got, err := parseProcStatCPU(stat); err != nil || got != 3 {
		t.Errorf("parseProcStatCPU = %v, %v; want 3 s", got, err)
	}
	if _, err := parseProcStatCPU([]byte("4242 (x) S 1 2")); err == nil {
		t.Error("parseProcStatCPU of a short stat: no error")
	}
	status := []byte("Name:\tmonocle-operator\nVmPeak:\t  900000 kB\nVmHWM:\t   61440 kB\nVmRSS:\t   40960 kB\nThreads:\t12\n")
	rss, peak, err := parseProcStatusMemory(status)
	if err != nil || rss != 40960*1024 || peak != 61440*1024 {
		t.Errorf("parseProcStatusMemory = %d, %d, %v; want %d, %d", rss, peak, err, 40960*1024, 61440*1024)
	}
	if rss, peak, err := parseProcStatusMemory([]byte("Name:\tkthreadd\n")); rss != 0 || peak != 0 || err != nil {
		t.Errorf("parseProcStatusMemory without Vm lines = %d, %d, %v; want zeros", rss, peak, err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if cpu, err := ProcCPUSeconds(os.Getpid()); err != nil || cpu < 0 {
		t.Errorf("ProcCPUSeconds(self) = %v, %v", cpu, err)
	}
	if rss, peak, err := ProcMemory(os.Getpid()); err != nil || rss <= 0 || peak < rss {
		t.Errorf("ProcMemory(self) = %d, %d, %v", rss, peak, err)
	}
}

func TestFreeAddr(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") || strings.HasSuffix(addr, ":0") {
		t.Fatalf("FreeAddr() = %q", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on %s: %v", addr, err)
	}
	l.Close()
}

func start(t *testing.T, opts StartOptions) *Process {
	t.Helper()
	if opts.LogPath == "" {
		opts.LogPath = filepath.Join(t.TempDir(), opts.Name+".log")
	}
	p, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(syscall.SIGKILL, time.Second) })
	return p
}

func TestStartAndExit(t *testing.T) {
	p := start(t, StartOptions{
		Name: "echo", Path: "/bin/sh", Args: []string{"-c", `echo "out $GREETING"; echo err >&2; exit 3`},
		Env: []string{"GREETING=hello"}, LogCommand: true,
	})
	if !p.WaitExit(10 * time.Second) {
		t.Fatal("the process did not exit")
	}
	if p.Alive() || p.ExitCode() != 3 || p.Err() == nil || p.ExitedAt().Before(p.Started) {
		t.Errorf("after exit 3: Alive %v, ExitCode %d, Err %v, ExitedAt %s, Started %s", p.Alive(), p.ExitCode(), p.Err(), p.ExitedAt(), p.Started)
	}
	want := "# /bin/sh -c echo \"out $GREETING\"; echo err >&2; exit 3\nout hello\nerr\n"
	if got := p.Log(); got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
	if err := p.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal after exit = %v, want os.ErrProcessDone", err)
	}
	if _, err := Start(StartOptions{Path: "/nonexistent/binary", LogPath: filepath.Join(t.TempDir(), "x.log")}); err == nil {
		t.Error("Start of a missing binary: no error")
	}
}

func TestStop(t *testing.T) {
	for _, dieWithParent := range []bool{false, true} {
		t.Run(fmt.Sprintf("DieWithParent=%v", dieWithParent), func(t *testing.T) {
			p := start(t, StartOptions{Name: "sleep", Path: "sleep", Args: []string{"60"}, DieWithParent: dieWithParent})
			if !p.Alive() || p.Err() != nil || p.ExitCode() != 0 || !p.ExitedAt().IsZero() {
				t.Errorf("while it runs: Alive %v, Err %v, ExitCode %d, ExitedAt %s", p.Alive(), p.Err(), p.ExitCode(), p.ExitedAt())
			}
			if pgid, err := syscall.Getpgid(p.PID()); err != nil || (pgid == p.PID()) != dieWithParent {
				t.Errorf("process group %d (pid %d, err %v): own group should be %v", pgid, p.PID(), err, dieWithParent)
			}
			if !p.Stop(syscall.SIGTERM, 10*time.Second) {
				t.Error("sleep did not exit on SIGTERM")
			}
			if p.Alive() || p.ExitCode() != -1 {
				t.Errorf("after SIGTERM: Alive %v, ExitCode %d; want a signal exit (-1)", p.Alive(), p.ExitCode())
			}
			if !p.Stop(syscall.SIGTERM, time.Second) {
				t.Error("Stop of an exited process reported a SIGKILL")
			}
		})
	}

	// A process that ignores SIGTERM is killed after the grace period.
	p := start(t, StartOptions{Name: "stubborn", Path: "/bin/sh", Args: []string{"-c", `trap "" TERM; echo ready; while :; do sleep 0.05; done`}})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.Log(), "ready") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	begin := time.Now()
	if p.Stop(syscall.SIGTERM, 300*time.Millisecond) {
		t.Error("Stop of a process ignoring SIGTERM reported a graceful exit")
	}
	if p.Alive() || time.Since(begin) < 300*time.Millisecond {
		t.Errorf("after Stop: Alive %v after %s", p.Alive(), time.Since(begin))
	}
}

func TestGetAndMetrics(t *testing.T) {
	var unhealthy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/metrics" && !unhealthy.Load():
			fmt.Fprint(w, exposition)
		case r.URL.Path == "/metrics":
			http.Error(w, "not yet", http.StatusServiceUnavailable)
		case r.URL.Path == "/healthz":
			fmt.Fprint(w, "ok")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	p := &Process{Name: "fake", HTTPAddr: strings.TrimPrefix(srv.URL, "http://")}
	ctx := context.Background()
	if code, body, err := p.Get(ctx, "/healthz"); err != nil || code != 200 || body != "ok" {
		t.Errorf("Get(/healthz) = %d, %q, %v", code, body, err)
	}
	m, err := p.Metrics(ctx)
	if err != nil || m.Sum("monocle_operator_syncs_total") != 15 {
		t.Errorf("Metrics() = %v, %v; want 15 syncs", m, err)
	}
	unhealthy.Store(true)
	want := "GET " + srv.URL + "/metrics: 503 Service Unavailable"
	if _, err := p.Metrics(ctx); err == nil || err.Error() != want {
		t.Errorf("Metrics() on a 503 = %v, want %q", err, want)
	}
}
