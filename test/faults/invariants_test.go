package faults

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// checkInvariants asserts, after a scenario and while its operator still runs, what must hold
// after every scenario: every Monocle converges; every PVC that existed still exists
// with its UID (except in namespaces the suite deleted); every generated key keeps its first
// value; no two update-idents Jobs ran for one config; no operator panicked or exited on its
// own; the operator's writes at rest return to zero. It returns how long the writes took to
// stop.
func checkInvariants(ctx context.Context, t testing.TB) time.Duration {
	t.Helper()
	if _, err := waitConverged(ctx, 2*time.Minute, nil, nil); err != nil {
		t.Errorf("invariant: every Monocle converges: %v%s", err, testBedState(ctx))
	}
	for _, p := range env.track.checkPVCs(ctx) {
		t.Errorf("invariant: every PVC survives: %s", p)
	}
	for _, p := range env.track.checkKeys(ctx) {
		t.Errorf("invariant: generated keys unchanged: %s", p)
	}
	for _, v := range env.track.takeViolations() {
		t.Errorf("invariant violated: %s", v)
	}
	for _, d := range duplicateJobCreates() {
		t.Errorf("invariant: update-idents Job created twice: %s", d)
	}
	env.operators.checkOperators(t)
	quiet, err := waitQuiet(ctx, time.Minute)
	if err != nil {
		t.Errorf("invariant: writes at rest return to zero: %v", err)
	}
	t.Logf("invariants checked: %d PVCs, writes stopped %s after convergence", env.track.pvcCount(), quiet.Round(time.Millisecond))
	return quiet
}

// testBedState says what of the test bed (the scheduler, kube-controller-manager, kwok)
// lags behind: nodes not Ready or tainted, pods waiting for a node, scheduled pods kwok has not made Ready, and
// Deployments and StatefulSets whose controller has not observed their generation, with an
// example of each. It is "" when nothing lags or when listing fails. A Monocle not Ready with
// one of these is waiting on the test bed rather than on the operator.
func testBedState(ctx context.Context) string {
	var lags []string
	if nodes, err := env.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		for _, n := range nodes.Items {
			ready := false
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready = true
				}
			}
			if !ready || len(n.Spec.Taints) > 0 {
				lags = append(lags, fmt.Sprintf("node %s Ready=%t, taints %v", n.Name, ready, n.Spec.Taints))
			}
		}
	}
	if pods, err := env.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err == nil {
		var unscheduled, unready []string
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
				continue
			}
			if p.Spec.NodeName == "" {
				unscheduled = append(unscheduled, fmt.Sprintf("%s/%s (created %s ago)", p.Namespace, p.Name, time.Since(p.CreationTimestamp.Time).Round(time.Second)))
			} else if !podReady(p) {
				unready = append(unready, fmt.Sprintf("%s/%s (phase %q, created %s ago)", p.Namespace, p.Name, p.Status.Phase, time.Since(p.CreationTimestamp.Time).Round(time.Second)))
			}
		}
		if len(unscheduled) > 0 {
			lags = append(lags, fmt.Sprintf("%d pods are not scheduled, e.g. %s", len(unscheduled), unscheduled[0]))
		}
		if len(unready) > 0 {
			lags = append(lags, fmt.Sprintf("%d scheduled pods are not Ready (kwok), e.g. %s", len(unready), unready[0]))
		}
	}
	var behind []string
	if ds, err := env.Kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{}); err == nil {
		for _, d := range ds.Items {
			if d.Status.ObservedGeneration < d.Generation {
				behind = append(behind, "Deployment "+d.Namespace+"/"+d.Name)
			}
		}
	}
	if ss, err := env.Kube.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{}); err == nil {
		for _, s := range ss.Items {
			if s.Status.ObservedGeneration < s.Generation {
				behind = append(behind, "StatefulSet "+s.Namespace+"/"+s.Name)
			}
		}
	}
	if len(behind) > 0 {
		lags = append(lags, fmt.Sprintf("%d workloads not observed by their controller, e.g. %s", len(behind), behind[0]))
	}
	if len(lags) == 0 {
		return ""
	}
	return "\n(test bed: " + strings.Join(lags, "; ") + ")"
}

// podReady reports whether p's Ready condition is True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// duplicateJobCreates lists the Jobs the operator created more than once (by namespace and
// name: the suite never reuses a Monocle name), from the whole audit log.
func duplicateJobCreates() []string {
	events, err := auditBetween(time.Time{}, time.Now().Add(time.Hour), func(e testkit.AuditEvent) bool {
		return e.FromOperator() && e.Verb == "create" && e.ObjectRef.Resource == "jobs" && e.ResponseStatus.Code == 201
	})
	if err != nil {
		return []string{err.Error()}
	}
	count := map[string]int{}
	for _, e := range events {
		count[e.ObjectRef.Namespace+"/"+e.ObjectRef.Name]++
	}
	var out []string
	for k, n := range count {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s created %d times", k, n))
		}
	}
	sort.Strings(out)
	return out
}

// waitQuiet waits for a window of env.size.quietWindow without any counted operator write
// and returns how long that took; after timeout it fails with the last writes seen.
func waitQuiet(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	var last []testkit.AuditEvent
	for time.Since(start) < timeout && ctx.Err() == nil {
		from := time.Now()
		time.Sleep(env.size.quietWindow)
		writes, err := operatorWrites(from, time.Now())
		if err != nil {
			return 0, err
		}
		if len(writes) == 0 {
			return from.Sub(start), nil
		}
		last = writes
	}
	lines := make([]string, 0, 10)
	for i, e := range last {
		if i == 10 {
			lines = append(lines, fmt.Sprintf("... and %d more", len(last)-10))
			break
		}
		lines = append(lines, describe(e))
	}
	return 0, fmt.Errorf("the operator still wrote %d times in the last %s window after %s:\n  %s",
		len(last), env.size.quietWindow, timeout, strings.Join(lines, "\n  "))
}

// scenarioResult is one row of the summary table.
type scenarioResult struct {
	name string
	// runs counts the faults injected (kills, restarts, rounds); passed those after which
	// the scenario's own checks held.
	runs, passed int
	// converge are the times from a fault to convergence.
	converge []time.Duration
	// calls and writes are the operator's API calls during the scenario (leases and events
	// excluded), from the audit log.
	calls, writes int
	elapsed       time.Duration
	notes         []string
	failed        bool
	// errors are the scenario's failures, as its checks reported them, so that the summary
	// printed at the end of the suite (often all a CI log keeps) says why.
	errors []string
}

type summary struct {
	mu      sync.Mutex
	results []scenarioResult
}

// scenario records one scenario's row; finish adds it to the summary. It is the scenario's
// testing.TB: its Error, Errorf, Fatal and Fatalf also keep the message for the summary.
type scenario struct {
	*testing.T
	start time.Time
	res   scenarioResult
}

func beginScenario(t *testing.T, name string) *scenario {
	t.Logf("scenario %q (%s variant, seed %d)", name, env.size.name, env.seed)
	return &scenario{T: t, start: time.Now(), res: scenarioResult{name: name}}
}

// maxSummaryErrors bounds the failures a scenario keeps for the summary.
const maxSummaryErrors = 5

func (s *scenario) keep(msg string) {
	if len(s.res.errors) == maxSummaryErrors {
		msg = "(more failures in the test log)"
	} else if len(s.res.errors) > maxSummaryErrors {
		return
	}
	s.res.errors = append(s.res.errors, truncateText(msg, 1500))
}

// Error is testing.T's Error, kept for the summary.
func (s *scenario) Error(args ...any) { s.T.Helper(); s.keep(fmt.Sprint(args...)); s.T.Error(args...) }

// Errorf is testing.T's Errorf, kept for the summary.
func (s *scenario) Errorf(format string, args ...any) {
	s.T.Helper()
	s.keep(fmt.Sprintf(format, args...))
	s.T.Errorf(format, args...)
}

// Fatal is testing.T's Fatal, kept for the summary.
func (s *scenario) Fatal(args ...any) { s.T.Helper(); s.keep(fmt.Sprint(args...)); s.T.Fatal(args...) }

// Fatalf is testing.T's Fatalf, kept for the summary.
func (s *scenario) Fatalf(format string, args ...any) {
	s.T.Helper()
	s.keep(fmt.Sprintf(format, args...))
	s.T.Fatalf(format, args...)
}

// run records one injected fault: whether its checks held and how long convergence took.
func (s *scenario) run(ok bool, converge time.Duration) {
	s.res.runs++
	if ok {
		s.res.passed++
	}
	if converge > 0 {
		s.res.converge = append(s.res.converge, converge)
	}
}

func (s *scenario) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.T.Log(msg)
	s.res.notes = append(s.res.notes, msg)
}

func (s *scenario) finish() {
	s.res.elapsed = time.Since(s.start)
	calls, writes, err := callCount(s.start, time.Now())
	if err != nil {
		s.Errorf("counting API calls: %v", err)
	}
	s.res.calls, s.res.writes = calls, writes
	s.res.failed = s.T.Failed()
	env.summary.mu.Lock()
	env.summary.results = append(env.summary.results, s.res)
	env.summary.mu.Unlock()
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(float64(len(s))*p/100+0.999999) - 1
	rank = max(0, min(rank, len(s)-1))
	return s[rank]
}

func (s *summary) markdown() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	b.WriteString("| scenario | runs | passed | converge p50 | converge p99 | operator API calls (writes) | time | result |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range s.results {
		result := "ok"
		if r.failed {
			result = "FAILED"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %d (%d) | %s | %s |\n", r.name, r.runs, r.passed,
			fmtDuration(percentile(r.converge, 50)), fmtDuration(percentile(r.converge, 99)),
			r.calls, r.writes, r.elapsed.Round(time.Second), result)
	}
	for _, r := range s.results {
		for _, n := range r.notes {
			fmt.Fprintf(&b, "\n- %s: %s", r.name, n)
		}
		for _, e := range r.errors {
			fmt.Fprintf(&b, "\n- %s: FAILED: %s", r.name, e)
		}
	}
	b.WriteString("\n")
	return b.String()
}

func fmtDuration(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
