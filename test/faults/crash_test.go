package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// crashReadyBudget is the suite's bound on recovery from crashes: every Monocle ends Ready
// within 90 s of the last restart. Measured on 2 cores at full size, scenario 1's 100
// Monocles took 38 s on an idle machine and 58 s with a CPU-bound process holding one of the
// two cores (docs/fault-suite.md, "Budgets under load"): the bound is the loaded figure
// and half again.
const crashReadyBudget = 90 * time.Second

// testOperatorCrashes is scenario 1: Monocles are created across several namespaces, and a
// quarter of them get a config change, while the operator is SIGKILLed at seeded random
// moments and started again each time. The operator runs without leader election here, so a
// restart resumes at once instead of waiting for the dead replica's lease to expire (the
// leader churn scenario covers that); what is tested is that a crash at any point of a sync
// loses nothing.
func testOperatorCrashes(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "1. operator SIGKILLed during a rollout")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 1))
	n, nsCount, kills := env.size.crashMonocles, env.size.crashNamespaces, env.size.crashKills

	var namespaces []string
	for i := range nsCount {
		ns := fmt.Sprintf("faults-crash-%d", i)
		if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
			sc.Fatal(err)
		}
		namespaces = append(namespaces, ns)
	}

	// The schedule comes from the seed: the gaps between kills, when each Monocle is created
	// (spread over the kill schedule, so work is left after any kill) and which ones get a
	// config change when.
	gaps := make([]time.Duration, kills)
	var total time.Duration
	for i := range gaps {
		gaps[i] = 500*time.Millisecond + time.Duration(rng.IntN(2500))*time.Millisecond
		total += gaps[i]
	}
	createAt := make([]time.Duration, n)
	for i := range createAt {
		createAt[i] = total * 9 / 10 * time.Duration(i) / time.Duration(n)
	}
	type edit struct {
		index int
		at    time.Duration
	}
	var edits []edit
	for _, i := range rng.Perm(n)[:n/4] {
		from := createAt[i] + time.Second
		edits = append(edits, edit{index: i, at: from + time.Duration(rng.Int64N(int64(max(total-from, time.Millisecond))))})
	}
	sort.Slice(edits, func(a, b int) bool { return edits[a].at < edits[b].at })
	name := func(i int) (string, string) { return namespaces[i%nsCount], fmt.Sprintf("crash-%03d", i) }
	sc.note("%d Monocles in %d namespaces, %d config changes, %d SIGKILLs at gaps %v (seed %d)",
		n, nsCount, len(edits), kills, roundAll(gaps), env.seed)

	op := env.operators.start(t, "--leader-elect=false")
	begin := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	// hadConfig records, per edited Monocle, whether the operator had applied a config when
	// the change came: only then is an update-idents Job due.
	hadConfig := map[int]bool{}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range n {
			time.Sleep(time.Until(begin.Add(createAt[i])))
			ns, nm := name(i)
			if err := createMonocle(ctx, ns, nm); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for _, e := range edits {
			time.Sleep(time.Until(begin.Add(e.at)))
			ns, nm := name(e.index)
			err := editMonocle(ctx, ns, nm, func(m *monoclev1alpha1.Monocle) {
				mu.Lock()
				hadConfig[e.index] = m.Status.ConfigHash != ""
				mu.Unlock()
				m.Spec.Config = configFor(1)
			})
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("editing %s/%s: %w", ns, nm, err))
				mu.Unlock()
			}
		}
	}()

	var lastRestart time.Time
	for i, gap := range gaps {
		time.Sleep(gap)
		if err := op.kill(); err != nil {
			sc.Fatal(err)
		}
		op = env.operators.start(t, "--leader-elect=false")
		lastRestart = time.Now()
		t.Logf("kill %d/%d at %s", i+1, kills, lastRestart.Sub(begin).Round(time.Millisecond))
	}
	wg.Wait()
	for _, err := range errs {
		sc.Errorf("workload: %v", err)
	}

	conv, err := waitConverged(ctx, crashReadyBudget-time.Since(lastRestart), namespaces, func(ctx context.Context) error {
		for _, e := range edits {
			ns, nm := name(e.index)
			mu.Lock()
			wantJob := hadConfig[e.index]
			mu.Unlock()
			if err := configApplied(ctx, ns, nm, 1, wantJob); err != nil {
				return err
			}
		}
		return nil
	})
	ok := err == nil
	if err != nil {
		sc.Errorf("every Monocle Ready within %s of the last restart: %v", crashReadyBudget, err)
	}
	durations := conv.durations(lastRestart)
	for range kills {
		sc.run(ok, 0)
	}
	sc.res.converge = durations
	sc.note("all %d Monocles Ready %s after the last restart (p50 %s, p99 %s of each Monocle's time to Ready)",
		n, conv.last().Sub(lastRestart).Round(100*time.Millisecond),
		fmtDuration(percentile(durations, 50)), fmtDuration(percentile(durations, 99)))

	checkInvariants(ctx, sc)
	if err := op.stop(); err != nil {
		sc.Error(err)
	}
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(10 * time.Millisecond)
	}
	return out
}
