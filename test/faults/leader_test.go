package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// churnLeaseFlags shorten the lease (15s/10s/2s by default) so a SIGKILLed leader is
// replaced in seconds; the ratios stay those of the defaults.
var churnLeaseFlags = []string{
	"--leader-election-lease-duration=8s",
	"--leader-election-renew-deadline=6s",
	"--leader-election-retry-period=1s",
}

// testLeaderChurn is scenario 2: two replicas run; in each round Monocles are created,
// edited and deleted, then the leader is stopped (SIGKILL and SIGTERM in turn) and a new
// replica started, so two always run. The audit log must show that at no moment did two
// replicas write: every write of a replica falls in its tenure of the Lease (from its first
// Lease write until the next replica's, or until its release on SIGTERM), and the writes of
// two replicas never interleave.
func testLeaderChurn(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "2. leader churn, two replicas")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 2))
	ns := "faults-leader"
	if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
		sc.Fatal(err)
	}

	begin := time.Now()
	ops := []*operator{env.operators.start(t, churnLeaseFlags...), env.operators.start(t, churnLeaseFlags...)}
	released := map[string]bool{}
	var live, deleted []string
	seq := 0
	newName := func() string {
		seq++
		return fmt.Sprintf("lead-%02d", seq)
	}
	for range env.size.leaderMonocles {
		nm := newName()
		if err := createMonocle(ctx, ns, nm); err != nil {
			sc.Fatal(err)
		}
		live = append(live, nm)
	}
	if _, err := waitLeader(ctx, 30*time.Second, ops); err != nil {
		sc.Fatal(err)
	}
	if _, err := waitConverged(ctx, 2*time.Minute, []string{ns}, nil); err != nil {
		sc.Fatal(err)
	}

	var handovers []time.Duration
	for r := range env.size.leaderRounds {
		// The workload: one Monocle created, one edited (a config change, so an update-idents
		// Job is due), one deleted; the leader is stopped while they are being reconciled.
		created := newName()
		if err := createMonocle(ctx, ns, created); err != nil {
			sc.Fatal(err)
		}
		edited := live[rng.IntN(len(live))]
		variant := r + 1
		if err := editMonocle(ctx, ns, edited, func(m *monoclev1alpha1.Monocle) { m.Spec.Config = configFor(variant) }); err != nil {
			sc.Fatal(err)
		}
		var gone string
		if len(live) > 2 {
			i := rng.IntN(len(live))
			if live[i] == edited {
				i = (i + 1) % len(live)
			}
			gone = live[i]
			if err := env.Monocles.MonocleV1alpha1().Monocles(ns).Delete(ctx, gone, metav1.DeleteOptions{}); err != nil {
				sc.Fatal(err)
			}
			live = slices.Delete(live, i, i+1)
			deleted = append(deleted, gone)
		}
		live = append(live, created)
		time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)

		leader, err := waitLeader(ctx, 30*time.Second, ops)
		if err != nil {
			sc.Fatal(err)
		}
		id, _ := leader.identity(time.Second)
		graceful := r%2 == 1
		stoppedAt := time.Now()
		if graceful {
			released[id] = true
			err = leader.stop()
		} else {
			err = leader.kill()
		}
		if err != nil {
			sc.Error(err)
		}
		i := slices.Index(ops, leader)
		ops[i] = env.operators.start(t, churnLeaseFlags...)
		next, err := waitLeader(ctx, 30*time.Second, ops)
		if err != nil {
			sc.Fatal(err)
		}
		handover := time.Since(stoppedAt)
		handovers = append(handovers, handover)

		conv, err := waitConverged(ctx, 2*time.Minute, []string{ns}, func(ctx context.Context) error {
			if err := configApplied(ctx, ns, edited, variant, true); err != nil {
				return err
			}
			for _, d := range deleted {
				if err := orphans(ctx, ns, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			sc.Errorf("round %d: %v", r+1, err)
		}
		how := "SIGKILL"
		if graceful {
			how = "SIGTERM"
		}
		t.Logf("round %d: created %s, edited %s, deleted %q; %s of %s, %s leads after %s; converged after %s",
			r+1, created, edited, gone, how, leader.Name, next.Name, handover.Round(time.Millisecond), conv.last().Sub(stoppedAt).Round(time.Millisecond))
		sc.run(err == nil, conv.last().Sub(stoppedAt))
	}

	violations, tenures, err := tenureViolations(begin, time.Now(), released)
	if err != nil {
		sc.Fatal(err)
	}
	t.Logf("lease tenures:\n  %s", joinLines(tenures))
	for _, v := range violations {
		sc.Errorf("two writers: %s", v)
	}
	sc.note("%d leader changes (SIGKILL and SIGTERM in turn), hand-over p50 %s, max %s; %d tenures in the audit log, %d writes outside their writer's tenure",
		len(handovers), fmtDuration(percentile(handovers, 50)), fmtDuration(percentile(handovers, 100)), len(tenures), len(violations))

	checkInvariants(ctx, sc)
	for _, o := range ops {
		if err := o.stop(); err != nil {
			sc.Error(err)
		}
	}
}

func joinLines(lines []string) string {
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "\n  "
		}
		out += l
	}
	return out
}
