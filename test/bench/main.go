// Command bench measures the Monocle operator on a real local control plane (see
// test/localcluster: etcd, kube-apiserver with a Metadata-level audit log,
// kube-controller-manager, kube-scheduler and kwok nodes), with the operator running as its own
// process, and prints its figures (docs/benchmarks.md) as a markdown table, each with its
// target: the size of the stripped operator binary, API writes to converge a Monocle and while
// idle, time to converge 20 and 200 Monocles, queue latency, memory against unrelated Secrets
// and ConfigMaps, drift repair, leader hand-over, start-up, and a fleet rollout from the
// previous release in waves against all at once.
//
// API calls are counted from the audit log by user agent ("monocle-operator"), times from the
// audit log's stageTimestamp and the bench's own watch, memory from the operator's /metrics
// (go_memstats_heap_inuse_bytes) and /proc/<pid>/status. Machines here are shared and noisy:
// each figure is repeated (-runs) and printed as a median with its spread. Nothing here asserts
// a timing; `make test` does not run it.
//
//	go run ./test/bench            # full run, 20-25 minutes on 2 cores (figure 8: 10)
//	go run ./test/bench -quick     # fewer repeats, one setting at scale, 50 Monocles rolled: about 9 minutes
//
// Containers never start under kwok: Ready means kwok reported the pods ready, so the
// end-to-end figures measure the control plane, not Monocle or Elasticsearch.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/change-metrics/monocle-operator/test/localcluster"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// config holds the command-line flags.
type config struct {
	quick        bool
	runs         int
	qps          float64
	burst        int
	workers      int
	sweep        string
	small, large int
	idle         time.Duration
	drift        int
	rollout      int
	rolloutSoak  time.Duration
	operator     string
	only         string
	keep         bool
	out          string
}

// bench is one benchmark run: its environment, the processes it started and its results.
type bench struct {
	cfg         config
	repoRoot    string
	workDir     string
	operatorBin string
	defaultQPS  string
	// defaultWorkers is the operator's default --workers, read from its -h output.
	defaultWorkers string
	// defaultMaxWave is the operator's default --rollout-max-wave, read from its -h output.
	defaultMaxWave string
	log            io.Writer

	mu        sync.Mutex
	operators []*testkit.Process
	envs      []*env

	results results
}

func main() {
	var c config
	flag.BoolVar(&c.quick, "quick", false, "Fewer repeats (2), a 20 s idle window, 10 drift repairs, one setting at scale and 50 Monocles in figure 8 (about 9 minutes).")
	flag.IntVar(&c.runs, "runs", 0, "Repeats of each repeated figure (default 5, or 2 with -quick).")
	flag.Float64Var(&c.qps, "kube-api-qps", 0, "--kube-api-qps of the operator for figures 1-6; 0 keeps the operator's default.")
	flag.IntVar(&c.burst, "kube-api-burst", 0, "--kube-api-burst of the operator, with -kube-api-qps.")
	flag.IntVar(&c.workers, "workers", 0, "--workers of the operator; 0 keeps the operator's default.")
	flag.StringVar(&c.sweep, "sweep", "", `Operator settings for the scale figures (3d-f, 7 and the sweep table), each on a fresh control plane: comma-separated "main" (the -kube-api-qps/-workers setting), "default" (the operator's defaults), QPS/BURST or QPS/BURST/WORKERS. Default "main,100/200,200/400,200/400/4", or "main" with -quick.`)
	flag.IntVar(&c.small, "small", 20, "Monocles in the small batch (figures 2-5).")
	flag.IntVar(&c.large, "large", 200, "Monocles in the large batch (figures 3 and 7).")
	flag.DurationVar(&c.idle, "idle", 0, "Window of figure 2 (default 60s, 20s with -quick).")
	flag.IntVar(&c.drift, "drift", 0, "Drift repairs per kind in figure 5 (default -small, 10 with -quick).")
	flag.IntVar(&c.rollout, "rollout", 0, "Monocles in figure 8's fleet rollout (default -large, or 50 with -quick).")
	flag.DurationVar(&c.rolloutSoak, "rollout-soak", 5*time.Second, "--rollout-soak of the operator in figure 8: how long each Monocle of a wave stays Ready before the next.")
	flag.StringVar(&c.operator, "operator", "", "Operator binary to measure; empty builds ./cmd/monocle-operator from the working tree.")
	flag.StringVar(&c.only, "only", "", `Comma-separated figures to run ("1,2,3,4,5,6,7,8", "sweep"); empty runs them all.`)
	flag.BoolVar(&c.keep, "keep", false, "Keep the work directory (cluster and operator logs, audit logs) after a successful run.")
	flag.StringVar(&c.out, "o", "", "Also write the report to this file.")
	flag.Parse()
	if c.runs <= 0 {
		c.runs = map[bool]int{false: 5, true: 2}[c.quick]
	}
	if c.idle <= 0 {
		c.idle = map[bool]time.Duration{false: 60 * time.Second, true: 20 * time.Second}[c.quick]
	}
	if c.drift <= 0 {
		c.drift = map[bool]int{false: c.small, true: 10}[c.quick]
	}
	if c.rollout <= 0 {
		c.rollout = map[bool]int{false: c.large, true: 50}[c.quick]
	}
	if c.sweep == "" {
		c.sweep = "main,100/200,200/400,200/400/4"
		if c.quick {
			c.sweep = "main"
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	b := &bench{cfg: c, log: os.Stderr}
	err := b.run(ctx)
	stop() // a second Ctrl-C during the tear-down kills at once; children die with us
	if err != nil {
		b.logf("error: %v", err)
	}
	cleanupErr := b.cleanup(err == nil && !c.keep)
	b.results.machine.loadAfter = loadAverage()
	report := b.results.render(b)
	fmt.Print(report)
	if c.out != "" {
		if werr := os.WriteFile(c.out, []byte(report), 0o644); werr != nil {
			b.logf("writing %s: %v", c.out, werr)
		}
	}
	if err != nil || cleanupErr != nil {
		if b.workDir != "" {
			b.logf("logs kept in %s", b.workDir)
		}
		os.Exit(1)
	}
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "[bench %s] %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// want reports whether figure (a number or "sweep") was selected with -only.
func (b *bench) want(figure string) bool {
	if b.cfg.only == "" {
		return true
	}
	for _, f := range strings.Split(b.cfg.only, ",") {
		if strings.TrimSpace(f) == figure {
			return true
		}
	}
	return false
}

func (b *bench) run(ctx context.Context) error {
	var err error
	if b.repoRoot, err = localcluster.FindRepoRoot(""); err != nil {
		return err
	}
	if b.workDir, err = os.MkdirTemp("", "monocle-bench-"); err != nil {
		return err
	}
	b.results.machine = describeMachine(b.repoRoot)
	b.logf("work directory %s", b.workDir)
	if err := b.buildOperator(ctx); err != nil {
		return err
	}
	b.results.settings = b.settings()

	if b.want("1") || b.want("2") || b.want("3") || b.want("4") || b.want("5") || b.want("6") {
		if err := b.runMain(ctx); err != nil {
			return err
		}
	}
	if b.want("3") || b.want("7") || b.want("sweep") {
		if err := b.runSweep(ctx); err != nil {
			return err
		}
	}
	if b.want("8") {
		if err := b.rollout(ctx); err != nil {
			return err
		}
	}
	return nil
}

// buildOperator builds the operator from the working tree as `make build` does (stripped,
// -trimpath, no cgo), unless -operator names a binary; records the binary's size (figure 0);
// and reads its default client QPS and burst from its -h output.
func (b *bench) buildOperator(ctx context.Context) error {
	b.operatorBin = b.cfg.operator
	built := "stripped (-trimpath -ldflags \"-s -w\", as make build)"
	if b.operatorBin == "" {
		b.operatorBin = filepath.Join(b.workDir, "monocle-operator")
		b.logf("building the operator")
		build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", b.operatorBin, "./cmd/monocle-operator")
		build.Dir = b.repoRoot
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("building the operator: %v: %s", err, out)
		}
	} else {
		built = "as given by -operator"
	}
	info, err := os.Stat(b.operatorBin)
	if err != nil {
		return err
	}
	b.results.add(row{"0", "Operator binary size, " + built, fmt.Sprintf("%.1f MB", float64(info.Size())/1e6), "–", "1",
		fmt.Sprintf("≤ %d MB", maxBinaryMB), verdict(float64(info.Size())/1e6, maxBinaryMB)})
	if err := b.electionFloor(ctx); err != nil {
		return err
	}
	out, _ := exec.CommandContext(ctx, b.operatorBin, "-h").CombinedOutput()
	qps := flagDefault(string(out), "kube-api-qps")
	burst := flagDefault(string(out), "kube-api-burst")
	b.defaultQPS = qps + "/" + burst
	b.defaultWorkers = flagDefault(string(out), "workers")
	b.defaultMaxWave = flagDefault(string(out), "rollout-max-wave")
	return nil
}

// maxBinaryMB is the target size of the stripped operator binary, in MB (10^6 bytes).
const maxBinaryMB = 30

// electionFloor builds ./test/bench/electionfloor as the operator is built and adds its size
// (figure 0b): what client-go's leader election alone links, every API group of Kubernetes
// among it, below which no operator that uses it can go.
func (b *bench) electionFloor(ctx context.Context) error {
	bin := filepath.Join(b.workDir, "electionfloor")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./test/bench/electionfloor")
	build.Dir = b.repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the leader election floor: %v: %s", err, out)
	}
	info, err := os.Stat(bin)
	if err != nil {
		return err
	}
	b.results.add(row{"0b", "A program that runs only client-go's leader election, built the same way", fmt.Sprintf("%.1f MB", float64(info.Size())/1e6),
		"–", "1", "–", "–"})
	return nil
}

// flagDefault finds "(default X)" in the usage text of a Go flag.
func flagDefault(usage, name string) string {
	re := regexp.MustCompile(`(?s)-` + regexp.QuoteMeta(name) + `\s[^\n]*\n[^\n]*\(default ([^)]+)\)`)
	if m := re.FindStringSubmatch(usage); m != nil {
		return m[1]
	}
	return "?"
}

// setting is one operator setting: client QPS and burst, and workers; zero values keep the
// operator's defaults.
type setting struct {
	qps     float64
	burst   int
	workers int
}

// mainSetting is the setting of figures 1 to 6, from -kube-api-qps, -kube-api-burst and
// -workers.
func (b *bench) mainSetting() setting {
	return setting{b.cfg.qps, b.cfg.burst, b.cfg.workers}
}

// label names a setting: "50/100, 2 workers", with "(default)" after a value left at the
// operator's default.
func (b *bench) label(s setting) string {
	client := b.defaultQPS + " (default)"
	if s.qps > 0 {
		client = strconv.FormatFloat(s.qps, 'f', -1, 64) + "/" + strconv.Itoa(s.burst)
	}
	workers := b.defaultWorkers + " workers (default)"
	if s.workers > 0 {
		workers = strconv.Itoa(s.workers) + " workers"
	}
	return client + ", " + workers
}

// parseSweep reads the -sweep list: "default" (the operator's defaults), "main" (the setting
// of figures 1 to 6), QPS/BURST or QPS/BURST/WORKERS entries.
func (b *bench) parseSweep(s string) ([]setting, error) {
	var out []setting
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		switch part {
		case "", "default":
			out = append(out, setting{})
			continue
		case "main":
			out = append(out, b.mainSetting())
			continue
		}
		fields := strings.Split(part, "/")
		var st setting
		var err error
		if len(fields) < 2 || len(fields) > 3 {
			return nil, fmt.Errorf("bad -sweep entry %q: want QPS/BURST[/WORKERS]", part)
		}
		if st.qps, err = strconv.ParseFloat(fields[0], 64); err != nil || st.qps <= 0 {
			return nil, fmt.Errorf("bad QPS in -sweep entry %q", part)
		}
		if st.burst, err = strconv.Atoi(fields[1]); err != nil || st.burst <= 0 {
			return nil, fmt.Errorf("bad burst in -sweep entry %q", part)
		}
		if len(fields) == 3 {
			if st.workers, err = strconv.Atoi(fields[2]); err != nil || st.workers <= 0 {
				return nil, fmt.Errorf("bad workers in -sweep entry %q", part)
			}
		}
		out = append(out, st)
	}
	return out, nil
}

func (b *bench) settings() string {
	return fmt.Sprintf("operator %s; runs %d; idle window %s", b.label(b.mainSetting()), b.cfg.runs, b.cfg.idle)
}

// cleanup stops every operator, then every cluster, and removes the work directory when
// remove is set.
func (b *bench) cleanup(remove bool) error {
	b.mu.Lock()
	ops := append([]*testkit.Process(nil), b.operators...)
	envs := append([]*env(nil), b.envs...)
	b.mu.Unlock()
	for _, o := range ops {
		o.Stop(syscall.SIGTERM, 5*time.Second)
	}
	var errs []error
	for _, e := range envs {
		if err := e.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		b.logf("stopping: %v", err)
		return err
	}
	if remove && b.workDir != "" {
		_ = os.RemoveAll(b.workDir)
		b.workDir = ""
	}
	return nil
}

// stopEnv stops the operators of e, then e.
func (b *bench) stopEnv(e *env) error {
	b.mu.Lock()
	ops := append([]*testkit.Process(nil), b.operators...)
	b.mu.Unlock()
	for _, o := range ops {
		if strings.HasPrefix(o.LogPath, e.Cluster.WorkDir()) {
			o.Stop(syscall.SIGTERM, 5*time.Second)
		}
	}
	return e.stop()
}
