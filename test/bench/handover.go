package main

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/change-metrics/monocle-operator/test/testkit"
)

// Leader election timing: the operator's defaults (cmd/monocle-operator's
// --leader-election-lease-duration and --leader-election-retry-period), which the bench
// leaves in place.
const (
	leaseDuration = 15 * time.Second
	retryPeriod   = time.Second
	// maxRetryInterval is the longest wait between a standby's attempts: client-go's
	// leaderelection adds up to JitterFactor (1.2) times the retry period.
	maxRetryInterval = retryPeriod + retryPeriod*12/10
)

// handover measures leader hand-over between two replicas, -runs times for SIGTERM and for
// SIGKILL: a standby is started and its caches synced, the leader is signalled, a Monocle is
// created in a new namespace right away, and the figure runs until the operator's first
// create there (audit). The standby's log must show that it made that create.
func (b *bench) handover(ctx context.Context, e *env, leader *testkit.Process, s setting) error {
	results := map[syscall.Signal][]float64{}
	exits := map[syscall.Signal][]float64{}
	signalName := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGKILL: "SIGKILL"}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		for run := range b.cfg.runs {
			name := fmt.Sprintf("%s-%d", strings.ToLower(signalName[sig][3:]), run)
			standby, err := b.startOperator(e, "standby-"+name, s)
			if err != nil {
				return err
			}
			if err := waitReady(ctx, standby, time.Minute); err != nil {
				return err
			}
			// The standby has read the lease and found it held.
			if err := testkit.Poll(ctx, 100*time.Millisecond, 30*time.Second, "the standby to see the leader", func(context.Context) error {
				return logHas(standby, "Another replica leads")
			}); err != nil {
				return err
			}
			ns := "handover-" + name
			if err := createNamespaces(ctx, e.Kube, []string{ns}); err != nil {
				return err
			}
			// The standby logged its first attempt just now and tries again every 2-4.4 s:
			// signalling right away would always land early in that cycle. A random wait
			// over two cycles gives the random phase of a real rolling update.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(rand.N(2 * maxRetryInterval)):
			}
			t0 := time.Now()
			_ = leader.Signal(sig) // it is waited for below
			if _, err := e.createMonocles(ctx, []string{ns}); err != nil {
				return err
			}
			var at time.Time
			if err := testkit.Poll(ctx, 20*time.Millisecond, 2*leaseDuration+30*time.Second, "the new leader to reconcile "+ns, func(context.Context) error {
				evs, err := e.operatorWritesAfter(t0, ns)
				for _, ev := range evs {
					if ownedCreate(ev) {
						at = ev.Completed
						return nil
					}
				}
				return cmp.Or(err, errNotInAudit)
			}); err != nil {
				return err
			}
			select {
			case <-leader.Done():
			case <-time.After(15 * time.Second):
				return fmt.Errorf("the old leader %s did not exit after %s", leader.Name, sig)
			}
			// klog flushes every 5 s: wait for the standby's line.
			if err := testkit.Poll(ctx, 200*time.Millisecond, 15*time.Second, "the standby's log of "+ns, func(context.Context) error {
				return logHas(standby, `object="`+ns+`/`)
			}); err != nil {
				return fmt.Errorf("%s: the standby did not make the first create (the old leader did?): %w", ns, err)
			}
			d := since(t0, at)
			results[sig] = append(results[sig], d)
			exits[sig] = append(exits[sig], since(t0, leader.ExitedAt()))
			b.logf("figure 6: %s of the leader → the standby reconciled %s after %s (the old leader exited after %s)",
				signalName[sig], ns, seconds(d), seconds(since(t0, leader.ExitedAt())))
			leader = standby
		}
	}
	term, kill := results[syscall.SIGTERM], results[syscall.SIGKILL]
	b.results.detail("Figure 6: after SIGTERM the old leader released the lease and exited within %s (median %s); the standby takes it at its next attempt, which client-go makes every retry period plus up to 1.2× jitter (%s–%s): 0–%s. After SIGKILL the lease must expire first: %s plus 0–%s. Worst cases measured: %s and %s.",
		seconds(slices.Max(exits[syscall.SIGTERM])), seconds(median(exits[syscall.SIGTERM])),
		seconds(retryPeriod.Seconds()), seconds(maxRetryInterval.Seconds()), seconds(maxRetryInterval.Seconds()),
		seconds(leaseDuration.Seconds()), seconds(maxRetryInterval.Seconds()),
		seconds(slices.Max(term)), seconds(slices.Max(kill)))
	n := strconv.Itoa(len(term))
	b.results.add(row{"6a", "Leader hand-over: SIGTERM of the leader → the standby reconciles a new Monocle",
		seconds(median(term)), spread(term, seconds), n, "≤ 3 s", verdict(median(term), 3)})
	killLimit := (leaseDuration + 2*time.Second).Seconds()
	b.results.add(row{"6b", fmt.Sprintf("Leader hand-over: SIGKILL of the leader → the same (%s lease, 10 s renew deadline, %s retry)", seconds(leaseDuration.Seconds()), seconds(retryPeriod.Seconds())),
		seconds(median(kill)), spread(kill, seconds), strconv.Itoa(len(kill)), "≤ " + seconds(killLimit), verdict(median(kill), killLimit)})
	return nil
}
