package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/change-metrics/monocle-operator/test/localcluster"
)

// row is one line of the results table.
type row struct {
	figure string // "1a"
	name   string
	value  string // the median (or the single figure)
	spread string
	n      string
	target string
	met    string // "yes", "**no**" or "–" (no target)
}

// sweepRow is one client QPS/burst setting of the scale sweep.
type sweepRow struct {
	setting               string
	small, large          *scaleResult
	smallErr, largeErr    string
	writesPerMonocleLarge string
}

// results collects the rows and details of a run; figures add to it as they finish, so a
// failed or interrupted run still prints what it measured.
type results struct {
	mu       sync.Mutex
	machine  machine
	settings string
	rows     []row
	sweep    []sweepRow
	details  []string
}

func (r *results) add(x row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, x)
}

func (r *results) detail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.details = append(r.details, fmt.Sprintf(format, args...))
}

// verdict compares a figure with its upper limit.
func verdict(value, limit float64) string {
	switch {
	case math.IsNaN(value):
		return "–"
	case value <= limit:
		return "yes"
	default:
		return "**no**"
	}
}

// machine describes where the bench ran.
type machine struct {
	cpus       int
	cpuModel   string
	memory     string
	kernel     string
	goVersion  string
	tree       string
	started    time.Time
	loadBefore string
	loadAfter  string
}

func describeMachine(repoRoot string) machine {
	m := machine{cpus: runtime.NumCPU(), goVersion: runtime.Version(), started: time.Now(), loadBefore: loadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpuModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k == "MemTotal" {
				var kb float64
				fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
				m.memory = fmt.Sprintf("%.1f GiB", kb/(1<<20))
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(b))
	}
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = repoRoot
	if out, err := cmd.Output(); err == nil {
		m.tree = strings.TrimSpace(string(out))
	}
	return m
}

// loadAverage returns the 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func (r *results) render(b *bench) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s strings.Builder
	m := r.machine
	fmt.Fprintf(&s, "\n## monocle-operator benchmark, %s\n\n", m.started.UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&s, "Machine: %d CPUs (%s), %s RAM, Linux %s, %s; load average %s before, %s after (1/5/15 min).\n",
		m.cpus, m.cpuModel, m.memory, m.kernel, m.goVersion, m.loadBefore, m.loadAfter)
	fmt.Fprintf(&s, "Tree: %s. Control plane: Kubernetes %s components and kwok on loopback (3 fake nodes).\n",
		m.tree, localcluster.KubernetesVersion)
	if r.settings != "" {
		fmt.Fprintf(&s, "Settings: %s.\n", r.settings)
	}
	s.WriteString("\n| # | Figure | Median | Spread | n | Target | Met |\n|---|---|---|---|---|---|---|\n")
	rows := append([]row(nil), r.rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].figure < rows[j].figure })
	for _, x := range rows {
		fmt.Fprintf(&s, "| %s | %s | %s | %s | %s | %s | %s |\n", x.figure, x.name, x.value, x.spread, x.n, x.target, x.met)
	}
	if len(r.sweep) > 0 {
		s.WriteString("\nScale by the operator's client QPS/burst (one run each, a fresh control plane per setting; " +
			"\"owned\" is until every owned object exists, \"Ready\" until every Monocle reports Ready):\n\n")
		fmt.Fprintf(&s, "| QPS/burst | %d: owned | %d: Ready | %d: owned | %d: Ready | %d: queue p99 | %d: client-side wait | operator writes per Monocle (%d) |\n",
			b.cfg.small, b.cfg.small, b.cfg.large, b.cfg.large, b.cfg.large, b.cfg.large, b.cfg.large)
		s.WriteString("|---|---|---|---|---|---|---|---|\n")
		for _, x := range r.sweep {
			cell := func(res *scaleResult, errText string, f func(*scaleResult) string) string {
				if res == nil {
					if errText != "" {
						return "failed"
					}
					return "–"
				}
				return f(res)
			}
			owned := func(res *scaleResult) string { return seconds(res.owned) }
			ready := func(res *scaleResult) string {
				if res.notReady > 0 {
					return fmt.Sprintf("%d not Ready", res.notReady)
				}
				return seconds(res.ready)
			}
			fmt.Fprintf(&s, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", x.setting,
				cell(x.small, x.smallErr, owned), cell(x.small, x.smallErr, ready),
				cell(x.large, x.largeErr, owned), cell(x.large, x.largeErr, ready),
				cell(x.large, x.largeErr, func(res *scaleResult) string {
					return bucketText(quantileBucket(0.99, res.queue))
				}),
				cell(x.large, x.largeErr, func(res *scaleResult) string { return seconds(res.clientWait) }),
				x.writesPerMonocleLarge)
		}
	}
	if len(r.details) > 0 {
		s.WriteString("\nDetails:\n")
		for _, d := range r.details {
			s.WriteString("- " + d + "\n")
		}
	}
	return s.String()
}
