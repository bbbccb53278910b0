package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// runMain measures figures 1 to 6 on one control plane, in an order that keeps each figure's
// preconditions: the first batch of -small Monocles is the only one while figures 2 and 4 run.
func (b *bench) runMain(ctx context.Context) error {
	e, err := b.startEnv(ctx, "main")
	if err != nil {
		return err
	}
	defer func() {
		if err := b.stopEnv(e); err != nil {
			b.logf("stopping %s: %v", e.name, err)
		}
	}()
	s := b.mainSetting()
	op, err := b.startOperator(e, "main-1", s)
	if err != nil {
		return err
	}
	if err := waitReady(ctx, op, 60*time.Second); err != nil {
		return err
	}

	// Figure 3, first run: the batch figures 2, 4 and 5 use.
	var small []*scaleResult
	var references []refs
	needBatch := b.want("2") || b.want("3") || b.want("4") || b.want("5")
	var batch []string
	if needBatch {
		b.logf("figure 3: %d Monocles, run 1", b.cfg.small)
		r, nss, err := b.scaleRun(ctx, e, op, "batch-0", b.cfg.small, 3*time.Minute)
		if err != nil {
			return err
		}
		small, batch = append(small, r), nss
	}
	if b.want("2") {
		if err := b.idle(ctx, e, len(batch)); err != nil {
			return err
		}
	}
	if b.want("4") {
		if op, err = b.memory(ctx, e, op, s, len(batch)); err != nil {
			return err
		}
	}
	if b.want("5") {
		if err := b.drift(ctx, e, batch); err != nil {
			return err
		}
	}
	if b.want("1") {
		if err := b.converge(ctx, e); err != nil {
			return err
		}
	}
	if b.want("3") {
		for run := range b.cfg.runs {
			if run > 0 {
				b.logf("figure 3: %d Monocles, run %d", b.cfg.small, run+1)
				r, _, err := b.scaleRun(ctx, e, op, fmt.Sprintf("batch-%d", run), b.cfg.small, 3*time.Minute)
				if err != nil {
					return err
				}
				small = append(small, r)
			}
			r, err := b.references(ctx, e, fmt.Sprintf("ref-%d", run), b.cfg.small, small[run].ownedPerMax)
			if err != nil {
				return err
			}
			references = append(references, r)
		}
		b.addScaleRows("3a", "3b", "3c", small, b.label(s), 0.5)
		b.addRatioRows("3g", "3m", "3h", small, references)
	}
	if b.want("6") {
		if err := b.handover(ctx, e, op, s); err != nil {
			return err
		}
	}
	return nil
}

// converge creates one Monocle per run in a new namespace, waits until it is Ready and the
// operator has been quiet for 2 s, and counts the operator's writes in that namespace.
func (b *bench) converge(ctx context.Context, e *env) error {
	var creates, status, events, total, other, ready []float64
	for run := range b.cfg.runs {
		ns := fmt.Sprintf("converge-%d", run)
		if err := createNamespaces(ctx, e.Kube, []string{ns}); err != nil {
			return err
		}
		t0 := time.Now()
		if _, err := e.createMonocles(ctx, []string{ns}); err != nil {
			return err
		}
		readyAt, err := e.tracker.waitAllReady(ctx, []string{ns}, time.Minute)
		if err != nil {
			return err
		}
		if _, err := e.waitQuiet(ctx, t0, 2*time.Second, 30*time.Second, ns); err != nil {
			return err
		}
		writes, err := e.operatorWritesAfter(t0, ns)
		if err != nil {
			return err
		}
		var c, st, ev, o float64
		for _, w := range writes {
			switch {
			case w.ObjectRef.Resource == "events":
				ev++
			case ownedCreate(w):
				c++
			case statusWrite(w):
				st++
			default:
				o++
			}
		}
		creates, status, events, other = append(creates, c), append(status, st), append(events, ev), append(other, o)
		total = append(total, c+st+ev)
		ready = append(ready, since(t0, readyAt))
		b.logf("figure 1 run %d: Ready in %s; %s", run+1, seconds(since(t0, readyAt)), writeSummary(writes))
		if run == 0 {
			b.results.detail("Figure 1, one Monocle, operator writes in order: %s.", writeList(writes))
		}
	}
	n := strconv.Itoa(len(creates))
	// Nine owned objects: two Secrets, the ConfigMap, two Services, the NetworkPolicy, the
	// StatefulSet and two Deployments; two status writes (seen, Ready with the health of
	// Elasticsearch and of the API) and one Event listing the nine objects, although the API
	// Deployment is created by a later sync, once Elasticsearch has a ready pod (Monocle's API
	// exits without it). The target is on the three kinds together (1f).
	b.results.add(row{"1a", "Converge one new Monocle: creates of owned objects", count(median(creates)), spread(creates, count), n, "–", "–"})
	b.results.add(row{"1b", "Converge one new Monocle: status writes", count(median(status)), spread(status, count), n, "–", "–"})
	b.results.add(row{"1c", "Converge one new Monocle: Event creates", count(median(events)), spread(events, count), n, "–", "–"})
	b.results.add(row{"1f", "Converge one new Monocle: creates + status writes + Event creates", count(median(total)), spread(total, count), n,
		fmt.Sprintf("≤ %d", maxWritesPerMonocle), verdict(median(total), maxWritesPerMonocle)})
	b.results.add(row{"1d", "Converge one new Monocle: other writes", count(median(other)), spread(other, count), n, "–", "–"})
	b.results.add(row{"1e", "One new Monocle → Ready (end to end)", seconds(median(ready)), spread(ready, seconds), n, "–", "–"})
	return nil
}

// maxWritesPerMonocle is the target of the writes that converge one new Monocle: creates of
// owned objects, status writes and Event creates together. 14: the 11 objects of a bundled
// Monocle (with the bundled Elasticsearch's users Secret and the proxy Secret through which
// Monocle's pods reach it with their user), 2 status writes and 1 Event.
const maxWritesPerMonocle = 14

// writeList abbreviates a write sequence: "create secrets, create events, ...".
func writeList(writes []testkit.AuditEvent) string {
	parts := make([]string, 0, len(writes))
	for _, w := range writes {
		parts = append(parts, w.Verb+" "+w.ResourcePath())
	}
	return strings.Join(parts, ", ")
}

// idle counts the operator's writes (leases excluded) over the idle window, once the batch is
// converged and the operator has been quiet for 5 s.
func (b *bench) idle(ctx context.Context, e *env, monocles int) error {
	b.logf("figure 2: waiting for the operator to go quiet, then %s idle", b.cfg.idle)
	if _, err := e.waitQuiet(ctx, time.Now().Add(-time.Minute), 5*time.Second, 2*time.Minute); err != nil {
		return err
	}
	t0 := time.Now()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.cfg.idle):
	}
	end := time.Now()
	writes, err := e.operatorWritesAfter(t0)
	if err != nil {
		return err
	}
	var in []testkit.AuditEvent
	for _, w := range writes {
		if !w.Completed.After(end) {
			in = append(in, w)
		}
	}
	if len(in) > 0 {
		b.results.detail("Figure 2: writes while idle: %s.", writeSummary(in))
	}
	b.results.add(row{"2", fmt.Sprintf("API writes in %s by the operator, %d converged untouched Monocles (leases excluded)", b.cfg.idle, monocles),
		strconv.Itoa(len(in)), "(1 window)", "1", "0", verdict(float64(len(in)), 0)})
	return nil
}

// memory restarts the operator so its memory reflects only the existing batch, samples it,
// creates 2,000 Secrets and 2,000 ConfigMaps of 10 KB in unrelated namespaces, and samples it
// again. It returns the operator now running.
func (b *bench) memory(ctx context.Context, e *env, op *testkit.Process, s setting, monocles int) (*testkit.Process, error) {
	const (
		perKind    = 2000
		namespaces = 20
		size       = 10 << 10
	)
	b.logf("figure 4: restarting the operator")
	op.Stop(syscall.SIGTERM, 10*time.Second)
	op, err := b.startOperator(e, "main-2", s)
	if err != nil {
		return nil, err
	}
	if err := waitReady(ctx, op, time.Minute); err != nil {
		return nil, err
	}
	if err := testkit.Poll(ctx, 100*time.Millisecond, time.Minute, "every Monocle synced", func(ctx context.Context) error {
		m, err := op.Metrics(ctx)
		if err == nil && m.Sum("monocle_operator_syncs_total") < float64(monocles) {
			err = fmt.Errorf("%v syncs", m.Sum("monocle_operator_syncs_total"))
		}
		return err
	}); err != nil {
		return nil, err
	}
	base, err := sampleMemory(ctx, op, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_, hwmBefore, _ := op.Memory()

	nss := names("unrelated", namespaces)
	if err := createNamespaces(ctx, e.Kube, nss); err != nil {
		return nil, err
	}
	text := strings.Repeat("x", size)
	t0 := time.Now()
	err = parallel(ctx, 2*perKind, 16, func(i int) error {
		ns := nss[i%namespaces]
		name := fmt.Sprintf("noise-%04d", i/2)
		if i%2 == 0 {
			data := make([]byte, size)
			_, _ = rand.Read(data)
			_, err := e.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"data": data},
			}, metav1.CreateOptions{})
			return err
		}
		_, err := e.Kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Data:       map[string]string{"data": text},
		}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating Secrets and ConfigMaps: %w", err)
	}
	b.logf("figure 4: created %d Secrets and %d ConfigMaps of 10 KB in %s", perKind, perKind, time.Since(t0).Round(time.Millisecond))
	// The live heap is measured by a garbage collection: wait for one after the creates.
	gcs := func() float64 {
		m, err := op.Metrics(ctx)
		if err != nil {
			return -1
		}
		return m.Sum("go_gc_cycles_total_gc_cycles_total")
	}
	cycles := gcs()
	if err := testkit.Poll(ctx, 500*time.Millisecond, 150*time.Second, "a garbage collection", func(context.Context) error {
		if gcs() <= cycles {
			return errors.New("no new cycle")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	after, err := sampleMemory(ctx, op, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_, hwm, _ := op.Memory()
	label := fmt.Sprintf(", %d Monocles → after 2,000 Secrets + 2,000 ConfigMaps of 10 KB elsewhere", monocles)
	samples := strconv.Itoa(len(base.heap)) + "+" + strconv.Itoa(len(after.heap)) + " samples"
	growthRow := func(id, what string, before, after []float64) {
		growth := median(after) - median(before)
		b.results.add(row{id, what, mib(median(before)) + " → " + mib(median(after)) + " (" + signedMiB(growth) + ")",
			spread(before, mib) + " → " + spread(after, mib), samples, "growth ≤ 5 MiB", verdict(growth, 5<<20)})
	}
	growthRow("4a", "Go heap in use (go_memstats_heap_inuse_bytes)"+label, base.heap, after.heap)
	growthRow("4b", "Go live heap at the last GC (go_gc_heap_live_bytes)"+label, base.live, after.live)
	growthRow("4c", "RSS (VmRSS)"+label, base.rss, after.rss)
	b.results.add(row{"4d", "Peak RSS (VmHWM), same", mib(float64(hwmBefore)) + " → " + mib(float64(hwm)), "–", "1+1", "–", "–"})
	return op, nil
}

// memorySamples are samples of the operator's memory, in bytes.
type memorySamples struct {
	heap, live, rss []float64
}

// sampleMemory samples the operator's heap in use and live heap (/metrics) and RSS (/proc)
// every 500 ms for d (wait.PollUntilContextTimeout: d ends the sampling, not a sample). Its
// error is a failed sample's, or ctx's.
func sampleMemory(ctx context.Context, op *testkit.Process, d time.Duration) (memorySamples, error) {
	var s memorySamples
	// A sample runs on ctx: the end of d does not cut the last one short.
	sample := func() error {
		m, err := op.Metrics(ctx)
		if err != nil {
			return err
		}
		rss, _, err := op.Memory()
		if err != nil {
			return err
		}
		s.heap = append(s.heap, m.Sum("go_memstats_heap_inuse_bytes"))
		s.live = append(s.live, m.Sum("go_gc_heap_live_bytes"))
		s.rss = append(s.rss, float64(rss))
		return nil
	}
	var err error
	// The poll always ends with an error (a failed sample's, ctx's or d's timeout): only the
	// first two are sampleMemory's.
	_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, d, true, func(context.Context) (bool, error) {
		err = sample()
		return false, err
	})
	if err == nil {
		err = ctx.Err() // nil when d has passed
	}
	return s, err
}

// drift deletes the API Deployment of -drift Monocles and scales the crawler Deployment of
// as many to 0, one at a time, and measures until the operator's create or update of it
// (audit stageTimestamp) from just before the bench's request.
func (b *bench) drift(ctx context.Context, e *env, batch []string) error {
	n := min(b.cfg.drift, len(batch))
	b.logf("figure 5: %d deletions and %d scale-downs", n, n)
	var deleted, scaled []float64
	missed := 0
	awaitRepair := func(t0 time.Time, ns, name, verb string) (float64, error) {
		var at time.Time
		err := testkit.Poll(ctx, 10*time.Millisecond, 10*time.Second, verb+" of "+ns+"/"+name, func(context.Context) error {
			evs, err := e.operatorWritesAfter(t0, ns)
			for _, ev := range evs {
				if ev.ObjectRef.Resource == "deployments" && ev.ObjectRef.Name == name && ev.Verb == verb && ev.ResponseStatus.Code < 300 {
					at = ev.Completed
					return nil
				}
			}
			return cmp.Or(err, errNotInAudit)
		})
		return since(t0, at), err
	}
	for _, ns := range batch[:n] {
		name := monocleName + "-api"
		t0 := time.Now()
		if err := e.Kube.AppsV1().Deployments(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return err
		}
		d, err := awaitRepair(t0, ns, name, "create")
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			missed++
			b.logf("figure 5: %v", err)
		} else {
			deleted = append(deleted, d)
		}
		name = monocleName + "-crawler"
		t0 = time.Now()
		if _, err := e.Kube.AppsV1().Deployments(ns).UpdateScale(ctx, name, &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 0},
		}, metav1.UpdateOptions{}); err != nil {
			return err
		}
		d, err = awaitRepair(t0, ns, name, "update")
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			missed++
			b.logf("figure 5: %v", err)
		} else {
			scaled = append(scaled, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
	add := func(id, what string, xs []float64) {
		value := seconds(median(xs))
		if len(xs) < n {
			value += fmt.Sprintf(" (%d of %d not repaired in 10 s)", n-len(xs), n)
		}
		lo, hi := minMax(xs)
		b.results.add(row{id, what + " (median; spread min – max)", value, seconds(lo) + " – " + seconds(hi),
			strconv.Itoa(len(xs)), "p99 ≤ 1 s (p99 = " + seconds(p99(xs)) + ")", verdict(p99WithMisses(xs, n), 1)})
	}
	add("5a", "Drift: owned Deployment deleted → back", deleted)
	add("5b", "Drift: owned Deployment scaled to 0 → back", scaled)
	return nil
}

// p99WithMisses is the p99 of xs, or +Inf when samples are missing (not repaired at all).
func p99WithMisses(xs []float64, want int) float64 {
	if len(xs) < want {
		return 1e18
	}
	return p99(xs)
}
