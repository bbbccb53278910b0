package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	informers "github.com/change-metrics/monocle-operator/pkg/generated/informers/externalversions"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/pkg/version"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// rolloutStrategies are the two rollouts of figure 8, in the order they run: in waves behind
// a canary (the operator's default) and all at once, as an operator without staged rollouts
// does.
var rolloutStrategies = []string{"waves", "all-at-once"}

// rolloutResult is one fleet rollout of figure 8: this release's templates (the bundled node
// secured, among others) reaching Monocles the previous release runs.
type rolloutResult struct {
	strategy string
	// rolled is from the operator's start until every Monocle's status.rollout showed this
	// release Rolled (Ready again for the soak time); restarted until the last new pod was
	// Ready; first until the first pod of the rollout was deleted or created (the bench's
	// watch, in seconds).
	rolled, restarted, first float64
	// waves is the last wave (status.rollout.wave) of the rollout.
	waves int32
	// maxRestarting is the most Monocles restarting at one time: each from the first of its
	// pods deleted or created in the rollout until the last of its new pods is Ready.
	maxRestarting int
	// writes are the operator's writes in the Monocles' namespaces from its start until it
	// went quiet after the rollout.
	writes []testkit.AuditEvent
}

// rollout measures figure 8: -rollout Monocles (one per namespace) that the previous release
// (hack/previous-release, built from git) runs are rolled to this release by an operator with
// --rollout-soak=-rollout-soak, once in waves (the default largest wave) and once all at once,
// each on a fresh control plane. It prints the time to roll the fleet, the most Monocles
// restarting at one time and the writes of each, and asserts nothing.
func (b *bench) rollout(ctx context.Context) error {
	dir := filepath.Join(b.workDir, "previous-release")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prev, err := testkit.BuildPreviousRelease(ctx, b.repoRoot, dir)
	if errors.Is(err, testkit.ErrNoHistory) {
		b.logf("figure 8: %v", err)
		b.results.add(row{"8a", "Fleet rollout from the previous release: " + err.Error(), "skipped", "–", "0", "–", "–"})
		return nil
	} else if err != nil {
		return err
	}
	var runs []*rolloutResult
	for _, strategy := range rolloutStrategies {
		r, err := b.rolloutRun(ctx, prev, strategy)
		if err != nil {
			return fmt.Errorf("figure 8, %s: %w", strategy, err)
		}
		runs = append(runs, r)
	}
	waves, once := runs[0], runs[1]
	n := b.cfg.rollout
	soak := b.cfg.rolloutSoak
	both := func(f func(*rolloutResult) string) string { return f(waves) + " / " + f(once) }
	ratio := func(a, b float64) string { return fmt.Sprintf("%.1f×", a/b) }
	name := fmt.Sprintf("%d Monocles of %s → this release: in waves (largest %s, %d waves, soak %s) / all at once (soak %s)",
		n, prev.Version, b.defaultMaxWave, waves.waves, soak, soak)
	b.results.add(row{"8a", name + ", operator start → every Monocle Rolled",
		both(func(r *rolloutResult) string { return seconds(r.rolled) }) + " (" + ratio(waves.rolled, once.rolled) + ")", "(1 run each)", "1+1", "–", "–"})
	b.results.add(row{"8b", "Same, operator start → the last new pod Ready (the bench's watch)",
		both(func(r *rolloutResult) string { return seconds(r.restarted) }) + " (" + ratio(waves.restarted, once.restarted) + ")", "(1 run each)", "1+1", "–", "–"})
	b.results.add(row{"8c", "Same, the most Monocles restarting at one time (from a first pod replaced to its last new pod Ready)",
		both(func(r *rolloutResult) string { return strconv.Itoa(r.maxRestarting) }), "(1 run each)", "1+1", "–", "–"})
	added := len(waves.writes) - len(once.writes)
	b.results.add(row{"8d", "Same, operator writes in the Monocles' namespaces until quiet",
		both(func(r *rolloutResult) string { return strconv.Itoa(len(r.writes)) }) +
			fmt.Sprintf(" (waves add %+d, %+.1f per Monocle)", added, float64(added)/float64(n)), "(1 run each)", "1+1", "–", "–"})
	for _, r := range runs {
		b.results.detail("Figure 8, %s: first pod replaced %s after the operator started; writes: %s.", r.strategy, seconds(r.first), writeSummary(r.writes))
	}
	return nil
}

// rolloutRun runs one rollout of figure 8 on a fresh control plane: the previous release
// prev brings -rollout Monocles to Ready and stops (SIGTERM), then this release starts with
// --rollout-strategy=strategy and the soak of -rollout-soak.
func (b *bench) rolloutRun(ctx context.Context, prev testkit.PreviousRelease, strategy string) (*rolloutResult, error) {
	e, err := b.startEnv(ctx, "rollout-"+strategy)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := b.stopEnv(e); err != nil {
			b.logf("stopping %s: %v", e.name, err)
		}
	}()
	n := b.cfg.rollout
	nss := names("fleet", n)
	if err := createNamespaces(ctx, e.Kube, nss); err != nil {
		return nil, err
	}
	for _, ns := range nss {
		// The previous release reads its nodes without credentials, as they ran.
		e.Elastic.ServeBundledWithoutSecurity(ns, monocleName)
	}
	old, err := b.startBinary(e, "previous-"+strategy, prev.Bin, b.mainSetting())
	if err != nil {
		return nil, err
	}
	if err := waitReady(ctx, old, time.Minute); err != nil {
		return nil, err
	}
	b.logf("figure 8, %s: %d Monocles under %s", strategy, n, prev.Version)
	t := time.Now()
	if _, err := e.createMonocles(ctx, nss); err != nil {
		return nil, err
	}
	if _, err := e.tracker.waitAllReady(ctx, nss, 15*time.Minute); err != nil {
		return nil, err
	}
	if _, err := e.waitQuiet(ctx, t, 5*time.Second, 2*time.Minute); err != nil {
		return nil, err
	}
	if !old.Stop(syscall.SIGTERM, 30*time.Second) {
		return nil, fmt.Errorf("%s did not stop", old.Name)
	}

	w, err := startRolloutWatch(ctx, e, nss, version.Version)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	op, err := b.startOperator(e, "rollout-"+strategy, b.mainSetting(),
		"--rollout-strategy="+strategy, "--rollout-soak="+b.cfg.rolloutSoak.String())
	if err != nil {
		return nil, err
	}
	t0 := op.Started
	b.logf("figure 8, %s: rolling %d Monocles to %s", strategy, n, version.Version)
	var rolledAt time.Time
	err = testkit.Poll(ctx, 100*time.Millisecond, 30*time.Minute, "every Monocle Rolled", func(context.Context) error {
		if !op.Alive() {
			return fmt.Errorf("operator exited; see %s", op.LogPath)
		}
		var rolled int
		rolled, rolledAt = w.rolledAll()
		if rolled < n {
			return fmt.Errorf("%d of %d Rolled, wave %d", rolled, n, w.lastWave())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	quiet, err := e.waitQuiet(ctx, t0, 5*time.Second, 2*time.Minute, nss...)
	if err != nil {
		return nil, err
	}
	writes, err := e.operatorWritesAfter(t0, nss...)
	if err != nil {
		return nil, err
	}
	var in []testkit.AuditEvent
	for _, ev := range writes {
		if !ev.Completed.After(quiet) {
			in = append(in, ev)
		}
	}
	first, restarted, maxRestarting := w.restarts()
	r := &rolloutResult{strategy: strategy, rolled: since(t0, rolledAt), restarted: since(t0, restarted), first: since(t0, first),
		waves: w.lastWave(), maxRestarting: maxRestarting, writes: in}
	b.logf("figure 8, %s: %d Monocles Rolled in %s (%d waves), last new pod Ready at %s, at most %d restarting at once; %d writes: %s",
		strategy, n, seconds(r.rolled), r.waves, seconds(r.restarted), r.maxRestarting, len(in), writeSummary(in))
	return r, nil
}

// rolloutWatch watches the Monocles and pods of a fleet's namespaces during a rollout: when
// each Monocle was first seen Rolled under the revision, the last wave, and for each Monocle
// when its restart began (the first of its pods that existed at the start seen deleting, or
// the first new pod seen) and when the last of its new pods was seen Ready. Times are the
// bench's, when the watch delivered each event.
type rolloutWatch struct {
	revision string
	in       map[string]bool
	cancel   context.CancelFunc

	mu sync.Mutex
	// live is set once the caches have synced; old are the pods that existed then.
	live   bool
	old    map[types.UID]bool
	ready  map[types.UID]bool
	begin  map[string]time.Time
	end    map[string]time.Time
	rolled map[string]time.Time
	wave   int32
}

// startRolloutWatch starts a rolloutWatch of namespaces' rollout to revision and returns once
// its caches have synced: the pods it holds then are the fleet's before the rollout.
func startRolloutWatch(ctx context.Context, e *env, namespaces []string, revision string) (*rolloutWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &rolloutWatch{revision: revision, in: map[string]bool{}, cancel: cancel, old: map[types.UID]bool{},
		ready: map[types.UID]bool{}, begin: map[string]time.Time{}, end: map[string]time.Time{}, rolled: map[string]time.Time{}}
	for _, ns := range namespaces {
		w.in[ns] = true
	}
	pods := kubeinformers.NewSharedInformerFactory(e.Kube, 0).Core().V1().Pods().Informer()
	monocles := informers.NewSharedInformerFactory(e.Monocles, 0).Monocle().V1alpha1().Monocles().Informer()
	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandlerFuncs
	}{
		{pods, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.pod(obj, false) },
			UpdateFunc: func(_, obj any) { w.pod(obj, false) },
			DeleteFunc: func(obj any) { w.pod(obj, true) },
		}},
		{monocles, cache.ResourceEventHandlerFuncs{
			AddFunc:    w.monocle,
			UpdateFunc: func(_, obj any) { w.monocle(obj) },
		}},
	}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			cancel()
			return nil, err
		}
		go h.informer.Run(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, monocles.HasSynced) {
		cancel()
		return nil, errors.New("the rollout watch's caches did not sync")
	}
	w.mu.Lock()
	w.live = true
	w.mu.Unlock()
	return w, nil
}

func (w *rolloutWatch) stop() { w.cancel() }

// pod records a pod event; before the caches have synced, the pods of the initial list: the
// fleet's before the rollout.
func (w *rolloutWatch) pod(obj any, deleted bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok || !w.in[p.Namespace] {
		return
	}
	switch p.Labels[resources.ComponentLabel] {
	case resources.ComponentAPI, resources.ComponentCrawler, resources.ComponentElastic:
	default:
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.live {
		w.old[p.UID] = true
		return
	}
	if w.old[p.UID] && !deleted && p.DeletionTimestamp == nil {
		return
	}
	if _, ok := w.begin[p.Namespace]; !ok {
		w.begin[p.Namespace] = now
	}
	if !w.old[p.UID] && !w.ready[p.UID] && podReady(p) {
		w.ready[p.UID] = true
		w.end[p.Namespace] = now
	}
}

func (w *rolloutWatch) monocle(obj any) {
	m, ok := obj.(*monoclev1alpha1.Monocle)
	if !ok || !w.in[m.Namespace] {
		return
	}
	r := m.Status.Rollout
	if r == nil || r.Revision != w.revision {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.Cause == monoclev1alpha1.RolloutCauseWave {
		w.wave = max(w.wave, r.Wave)
	}
	if _, ok := w.rolled[m.Namespace]; !ok && r.Phase == monoclev1alpha1.RolloutRolled {
		w.rolled[m.Namespace] = time.Now()
	}
}

// rolled returns how many Monocles have been seen Rolled, and when the last was.
func (w *rolloutWatch) rolledAll() (int, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, at := range w.rolled {
		if at.After(last) {
			last = at
		}
	}
	return len(w.rolled), last
}

func (w *rolloutWatch) lastWave() int32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wave
}

// restarts returns when the first Monocle began to restart, when the last new pod was
// Ready, and the most Monocles restarting at one time; a Monocle none of whose new pods is
// Ready yet restarts until now.
func (w *rolloutWatch) restarts() (first, last time.Time, most int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	type span struct{ from, to time.Time }
	var spans []span
	for ns, from := range w.begin {
		to, ok := w.end[ns]
		if !ok || to.Before(from) {
			to = now
		}
		spans = append(spans, span{from, to})
		if first.IsZero() || from.Before(first) {
			first = from
		}
		if to.After(last) {
			last = to
		}
	}
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if !o.from.After(s.from) && !o.to.Before(s.from) {
				n++
			}
		}
		most = max(most, n)
	}
	return first, last, most
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
