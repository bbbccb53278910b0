package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// scaleResult is one batch of Monocles created at once, one per namespace.
type scaleResult struct {
	n int
	// created is how long the bench took to send the creates (seconds from t0, the first).
	created float64
	// owned is from t0 until the operator's last create of an owned object in the batch.
	owned float64
	// ready is from t0 until the bench saw the last Monocle Ready; NaN when some never were.
	ready    float64
	notReady int
	// perMonocle is, for each Monocle, from its create (audit) to the operator's last create
	// of one of its objects.
	perMonocle []float64
	// queue is the workqueue_queue_duration_seconds histogram of the batch, and queueBelow1s
	// the share of items that waited at most 1 s.
	queue        []bucket
	queueBelow1s float64
	// clientWait is the time the operator's requests spent in its client-side rate limiter
	// (rest_client_rate_limiter_duration_seconds_sum) during the batch, summed over requests.
	clientWait float64
	// requestLatency is the mean latency of the operator's API requests, and syncs and
	// syncTime the count and mean duration of its syncs, during the batch.
	requestLatency, syncs, syncTime float64
	// writes counts the operator's writes in the batch's namespaces, by kind.
	writes      []testkit.AuditEvent
	conflicts   int
	ownedPerMin int
	ownedPerMax int
	// usage is the CPU time and component throttling from t0 until every Monocle was Ready.
	usage usage
	// rss and peak are the operator's VmRSS and VmHWM, in bytes, once the batch was Ready.
	rss, peak int64
}

// scaleRun creates n Monocles at once in new namespaces prefix-000..., waits until every one
// is Ready (or timeout) and measures the batch from the audit log, the bench's watch and the
// operator's metrics.
func (b *bench) scaleRun(ctx context.Context, e *env, op *testkit.Process, prefix string, n int, timeout time.Duration) (*scaleResult, []string, error) {
	nss := names(prefix, n)
	if err := createNamespaces(ctx, e.Kube, nss); err != nil {
		return nil, nil, err
	}
	before, err := op.Metrics(ctx)
	if err != nil {
		return nil, nil, err
	}
	res := &scaleResult{n: n, ready: math.NaN()}
	startUsage := e.snapshot(ctx, op)
	t0 := time.Now()
	createdAt, err := e.createMonocles(ctx, nss)
	if err != nil {
		return nil, nil, fmt.Errorf("creating Monocles: %w", err)
	}
	res.created = since(t0, createdAt)
	lastReady, readyErr := e.tracker.waitAllReady(ctx, nss, timeout)
	if readyErr == nil {
		res.ready = since(t0, lastReady)
	} else {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		for _, ns := range nss {
			if _, ok := e.tracker.readyAt(ns); !ok {
				res.notReady++
			}
		}
		b.logf("%s: %v", prefix, readyErr)
	}
	res.usage = e.snapshot(ctx, op).since(startUsage)
	res.rss, res.peak, _ = op.Memory()
	// Every create precedes Ready; a short quiet period lets the audit log catch up.
	_, _ = e.waitQuiet(ctx, t0, time.Second, 20*time.Second, nss...)
	after, err := op.Metrics(ctx)
	if err != nil {
		return nil, nil, err
	}
	res.queue = histogram(after, before, "workqueue_queue_duration_seconds", `name="monocle"`)
	res.queueBelow1s = fractionBelow(1, res.queue)
	delta := func(name string) float64 { return after.Sum(name) - before.Sum(name) }
	res.clientWait = delta("rest_client_rate_limiter_duration_seconds_sum")
	res.requestLatency = delta("rest_client_request_duration_seconds_sum") / delta("rest_client_request_duration_seconds_count")
	res.syncs = delta("monocle_operator_sync_duration_seconds_count")
	res.syncTime = delta("monocle_operator_sync_duration_seconds_sum") / res.syncs

	in := map[string]bool{}
	for _, ns := range nss {
		in[ns] = true
	}
	events, err := e.audit.Between(t0, time.Time{}, func(ev testkit.AuditEvent) bool { return in[ev.ObjectRef.Namespace] })
	if err != nil {
		return nil, nil, err
	}
	created := map[string]time.Time{}
	lastOwned := map[string]time.Time{}
	ownedCount := map[string]int{}
	for _, ev := range events {
		ns := ev.ObjectRef.Namespace
		switch {
		case !ev.FromOperator():
			if ev.Verb == "create" && ev.ObjectRef.Resource == "monocles" {
				created[ns] = ev.Completed
			}
		default:
			res.writes = append(res.writes, ev)
			if ev.ResponseStatus.Code == 409 {
				res.conflicts++
			}
			if ownedCreate(ev) {
				ownedCount[ns]++
				if ev.Completed.After(lastOwned[ns]) {
					lastOwned[ns] = ev.Completed
				}
			}
		}
	}
	res.ownedPerMin, res.ownedPerMax = math.MaxInt, 0
	var last time.Time
	for _, ns := range nss {
		res.ownedPerMin = min(res.ownedPerMin, ownedCount[ns])
		res.ownedPerMax = max(res.ownedPerMax, ownedCount[ns])
		if lastOwned[ns].After(last) {
			last = lastOwned[ns]
		}
		if c, ok := created[ns]; ok && !lastOwned[ns].IsZero() {
			res.perMonocle = append(res.perMonocle, lastOwned[ns].Sub(c).Seconds())
		}
	}
	res.owned = since(t0, last)
	b.logf("%s: %d Monocles: sent in %s, owned objects in %s, Ready in %s (%d not Ready), queue ≤ 1 s %.0f%%, %d owned creates per Monocle (min %d), writes: %s; client-side wait %s, mean request %s, %.0f syncs of mean %s",
		prefix, n, seconds(res.created), seconds(res.owned), seconds(res.ready), res.notReady, 100*res.queueBelow1s,
		res.ownedPerMax, res.ownedPerMin, writeSummary(res.writes), seconds(res.clientWait), seconds(res.requestLatency), res.syncs, seconds(res.syncTime))
	b.logf("%s: %s", prefix, res.usage)
	if code, body, err := op.Get(ctx, "/debug/pprof/heap"); err == nil && code == 200 {
		path := filepath.Join(b.workDir, prefix+"-heap.pprof")
		if err := os.WriteFile(path, []byte(body), 0o644); err == nil {
			b.logf("%s: operator heap profile in %s (go tool pprof -sample_index=inuse_space -top %s)", prefix, path, path)
		}
	}
	mib := func(name string) string { return fmt.Sprintf("%.1f MiB", after.Sum(name)/(1<<20)) }
	b.logf("%s: operator memory: RSS %.1f MiB; Go heap in use %s, idle not released %.1f MiB, stacks %s, runtime other %s",
		prefix, float64(res.rss)/(1<<20), mib("go_memstats_heap_inuse_bytes"),
		(after.Sum("go_memstats_heap_idle_bytes")-after.Sum("go_memstats_heap_released_bytes"))/(1<<20),
		mib("go_memstats_stack_inuse_bytes"), mib("go_memstats_other_sys_bytes"))
	return res, nss, nil
}

// runSweep measures the scale figures once per client QPS/burst setting, each on a fresh
// control plane: a small batch, then a large one, then (on the first setting) start-up with the
// large batch existing.
func (b *bench) runSweep(ctx context.Context) error {
	settings, err := b.parseSweep(b.cfg.sweep)
	if err != nil {
		return err
	}
	for i, s := range settings {
		if err := b.sweepOne(ctx, i, s); err != nil {
			return err
		}
	}
	return nil
}

func (b *bench) sweepOne(ctx context.Context, i int, s setting) error {
	label := b.label(s)
	e, err := b.startEnv(ctx, fmt.Sprintf("scale-%d", i))
	if err != nil {
		return err
	}
	defer func() {
		if err := b.stopEnv(e); err != nil {
			b.logf("stopping %s: %v", e.name, err)
		}
	}()
	op, err := b.startOperator(e, fmt.Sprintf("scale-%d", i), s)
	if err != nil {
		return err
	}
	if err := waitReady(ctx, op, 60*time.Second); err != nil {
		return err
	}
	row := sweepRow{setting: label}
	defer func() {
		b.results.mu.Lock()
		b.results.sweep = append(b.results.sweep, row)
		b.results.mu.Unlock()
	}()
	b.logf("scale sweep %s: %d Monocles", label, b.cfg.small)
	small, _, err := b.scaleRun(ctx, e, op, fmt.Sprintf("q%d-small", i), b.cfg.small, 3*time.Minute)
	if err != nil {
		row.smallErr = err.Error()
		return err
	}
	row.small = small
	b.logf("scale sweep %s: %d Monocles", label, b.cfg.large)
	large, largeNS, err := b.scaleRun(ctx, e, op, fmt.Sprintf("q%d-large", i), b.cfg.large, 10*time.Minute)
	if err != nil {
		row.largeErr = err.Error()
		return err
	}
	row.large = large
	row.writesPerMonocleLarge = perMonocleSummary(large)
	b.results.detail("Scale %s, %d Monocles: sent in %s; per Monocle, create to last owned object p50 %s, p99 %s; queue ≤ 1 s: %.1f%%; %d write conflicts (409); owned creates per Monocle %d–%d.",
		label, large.n, seconds(large.created), seconds(quantile(large.perMonocle, 0.5)), seconds(p99(large.perMonocle)),
		100*large.queueBelow1s, large.conflicts, large.ownedPerMin, large.ownedPerMax)
	b.results.detail("Scale %s, %d Monocles, from the first create until all Ready: %s; the operator's requests waited %s in its own client-side limiter, %s on average per request; %.0f syncs of %s on average.",
		label, large.n, large.usage, seconds(large.clientWait), seconds(large.requestLatency), large.syncs, seconds(large.syncTime))
	if i == 0 {
		if b.want("3") {
			b.addScaleRows("3d", "3e", "3f", []*scaleResult{large}, label, 10)
			r, err := b.references(ctx, e, fmt.Sprintf("q%d-ref", i), large.n, large.ownedPerMax)
			if err != nil {
				return err
			}
			b.addRatioRows("3i", "3n", "3j", []*scaleResult{large}, []refs{r})
			b.addCostRows(large, large.n+b.cfg.small)
		}
		if b.want("7") {
			if err := b.startup(ctx, e, op, s, len(largeNS)+b.cfg.small); err != nil {
				return err
			}
		}
	}
	return nil
}

// perMonocleSummary gives the operator's writes per Monocle of a batch, by kind.
func perMonocleSummary(r *scaleResult) string {
	var creates, status, events, other int
	for _, w := range r.writes {
		switch {
		case w.ObjectRef.Resource == "events":
			events++
		case ownedCreate(w):
			creates++
		case statusWrite(w):
			status++
		default:
			other++
		}
	}
	n := float64(r.n)
	return fmt.Sprintf("%.1f creates, %.1f status, %.1f events, %.1f other", float64(creates)/n, float64(status)/n, float64(events)/n, float64(other)/n)
}

// addScaleRows adds the rows of figure 3 for one batch size from its runs.
func (b *bench) addScaleRows(ownedID, readyID, queueID string, runs []*scaleResult, setting string, limit float64) {
	var owned, ready, below []float64
	var queues [][]bucket
	notReady := 0
	for _, r := range runs {
		owned = append(owned, r.owned)
		if r.notReady == 0 {
			ready = append(ready, r.ready)
		}
		notReady += r.notReady
		below = append(below, r.queueBelow1s)
		queues = append(queues, r.queue)
	}
	queue := mergeBuckets(queues...)
	percent := func(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }
	n := runs[0].n
	b.results.add(row{ownedID, fmt.Sprintf("%d Monocles at once → every owned object exists (operator), client %s", n, setting),
		seconds(median(owned)), spread(owned, seconds), strconv.Itoa(len(owned)), "≤ " + seconds(limit), verdict(median(owned), limit)})
	readyName := fmt.Sprintf("%d Monocles at once → all Ready (end to end)", n)
	readyValue := seconds(median(ready))
	if notReady > 0 {
		readyValue += fmt.Sprintf(" (%d never Ready)", notReady)
	}
	b.results.add(row{readyID, readyName, readyValue, spread(ready, seconds), strconv.Itoa(len(ready)), "–", "–"})
	queueMet := "yes"
	if fractionBelow(1, queue) < 0.99 {
		queueMet = "**no**"
	}
	b.results.add(row{queueID, fmt.Sprintf("%d Monocles: workqueue queue latency p99 (all runs' items; spread: share ≤ 1 s per run)", n),
		bucketText(quantileBucket(0.99, queue)) + fmt.Sprintf(" (%s ≤ 1 s)", percent(fractionBelow(1, queue))),
		spread(below, percent), strconv.Itoa(len(below)), "< 1 s", queueMet})
}

// startup restarts the operator with existing Monocles (and one created while it was down)
// -runs times, and measures from process start to /readyz, to the first Monocle synced, to the
// new Monocle's first owned object, and to every Monocle synced.
func (b *bench) startup(ctx context.Context, e *env, op *testkit.Process, s setting, existing int) error {
	var toReady, toFirst, toNew, toAll, writes []float64
	var heap []float64
	for run := range b.cfg.runs {
		op.Stop(syscall.SIGTERM, 10*time.Second)
		ns := fmt.Sprintf("startup-%d", run)
		if err := createNamespaces(ctx, e.Kube, []string{ns}); err != nil {
			return err
		}
		if _, err := e.createMonocles(ctx, []string{ns}); err != nil {
			return err
		}
		total := existing + run + 1
		next, err := b.startOperator(e, fmt.Sprintf("startup-%d", run), s)
		if err != nil {
			return err
		}
		op = next
		t0 := op.Started
		var ready, first, all time.Time
		err = testkit.Poll(ctx, 25*time.Millisecond, 3*time.Minute, "start-up", func(ctx context.Context) error {
			if !op.Alive() {
				return fmt.Errorf("operator exited; see %s", op.LogPath)
			}
			now := time.Now()
			if ready.IsZero() {
				if code, _, err := op.Get(ctx, "/readyz"); err == nil && code == 200 {
					ready = now
				}
				return errors.New("not ready")
			}
			m, err := op.Metrics(ctx)
			if err != nil {
				return err
			}
			synced := m.Sum("monocle_operator_syncs_total")
			if synced >= 1 && first.IsZero() {
				first = now
			}
			if synced >= float64(total) && all.IsZero() {
				all = now
			}
			if all.IsZero() {
				return fmt.Errorf("%v of %d Monocles synced", synced, total)
			}
			return nil
		})
		if err != nil {
			return err
		}
		var newAt time.Time
		if err := testkit.Poll(ctx, 50*time.Millisecond, time.Minute, "the new Monocle's objects", func(context.Context) error {
			evs, err := e.operatorWritesAfter(t0, ns)
			for _, ev := range evs {
				if ownedCreate(ev) {
					newAt = ev.Completed
					return nil
				}
			}
			return cmp.Or(err, errNotInAudit)
		}); err != nil {
			return err
		}
		// Writes to the Monocles that were converged before the restart, while it started.
		quietEnd, _ := e.waitQuiet(ctx, t0, 2*time.Second, 30*time.Second)
		old, err := e.audit.Between(t0, time.Time{}, func(ev testkit.AuditEvent) bool {
			return ev.FromOperator() && ev.ObjectRef.Resource != "leases" && ev.ObjectRef.Namespace != ns &&
				!ev.Completed.After(quietEnd) && ev.ObjectRef.Namespace != leaseNamespace
		})
		if err != nil {
			return err
		}
		if len(old) > 0 {
			b.results.detail("Start-up run %d: %d writes to already converged Monocles: %s", run+1, len(old), writeSummary(old))
		}
		if m, err := op.Metrics(ctx); err == nil {
			heap = append(heap, m.Sum("go_memstats_heap_inuse_bytes"))
		}
		toReady = append(toReady, since(t0, ready))
		toFirst = append(toFirst, since(t0, first))
		toNew = append(toNew, since(t0, newAt))
		toAll = append(toAll, since(t0, all))
		writes = append(writes, float64(len(old)))
		b.logf("start-up %d with %d Monocles: /readyz %s, first sync %s, new Monocle's first object %s, all synced %s, %d writes to old ones",
			run+1, total, seconds(since(t0, ready)), seconds(since(t0, first)), seconds(since(t0, newAt)), seconds(since(t0, all)), len(old))
	}
	n := strconv.Itoa(len(toReady))
	label := fmt.Sprintf("%d existing Monocles", existing)
	b.results.add(row{"7a", "Start-up with " + label + ": process start → /readyz (caches synced)", seconds(median(toReady)), spread(toReady, seconds), n, "–", "–"})
	b.results.add(row{"7b", "Start-up: process start → first Monocle reconciled", seconds(median(toFirst)), spread(toFirst, seconds), n, "–", "–"})
	b.results.add(row{"7c", "Start-up: process start → first object of a Monocle created while down", seconds(median(toNew)), spread(toNew, seconds), n, "–", "–"})
	b.results.add(row{"7d", "Start-up: process start → every Monocle synced once", seconds(median(toAll)), spread(toAll, seconds), n, "–", "–"})
	b.results.add(row{"7e", "Start-up: writes to already converged Monocles", count(median(writes)), spread(writes, count), n, "0", verdict(median(writes), 0)})
	b.results.add(row{"7f", fmt.Sprintf("Go heap in use after start-up, %d Monocles", existing+1), mib(median(heap)), spread(heap, mib), strconv.Itoa(len(heap)), "–", "–"})
	return nil
}
