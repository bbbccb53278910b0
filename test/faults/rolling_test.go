package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// previousOperatorArgs are the flags of the previous release's replicas: baseOperatorArgs
// less --logging-format, which that release does not have (its logs are text).
func previousOperatorArgs() []string {
	var args []string
	base := baseOperatorArgs()
	for i := 0; i < len(base); i++ {
		if base[i] == "--logging-format" {
			i++
			continue
		}
		args = append(args, base[i])
	}
	return args
}

// testRollingUpdateAcrossReleases is scenario 12: the operator Deployment's rolling update
// from the previous release (hack/previous-release, built from git) to this one, the old
// leader SIGKILLed while replicas of both releases run. Two replicas of the previous release
// lead env.size.rollingMonocles bundled Monocles (one per namespace) to Ready, their nodes
// without security as that release runs them; then, as a rolling update with a surge of one
// does, a new replica starts, the old leader is SIGKILLed after a seeded delay, the other
// old replica gets SIGTERM, and a second new replica starts. Whichever replica leads in
// between, at no moment do two write (the audit log's Lease tenures), and every Monocle ends
// Ready under the new release with its node secured on the same PVC, the same indices, the
// users' passwords generated once, and its other Secrets and ConfigMap of the same UIDs.
func testRollingUpdateAcrossReleases(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "12. rolling update across releases, old leader SIGKILLed")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 12))
	prev := previousRelease(ctx, sc)

	const name = "roll"
	namespaces := numbered("faults-rolling", env.size.rollingMonocles)
	// Both releases watch the scenario's namespaces only: the Monocles of the earlier
	// scenarios are this release's, which the previous one would roll back, as a downgrade.
	flags := append([]string{"--namespaces=" + strings.Join(namespaces, ",")}, churnLeaseFlags...)
	// This release's replicas roll its templates out to every Monocle at once: the
	// scenario is the operator's own rolling update; scenarios 13 and 14 roll in waves.
	newFlags := append(slices.Clone(flags), "--rollout-strategy=all-at-once")
	begin := time.Now()
	ops, oldLeader := previousFleet(ctx, sc, prev, flags, namespaces, name, nil)
	kept, pvcs, err := keptForSwitch(ctx, namespaces, name)
	if err != nil {
		sc.Fatal(err)
	}

	// The rolling update: a surge replica of this release, the old leader SIGKILLed while
	// both releases run, the other old replica terminated, a second new replica.
	released := map[string]bool{}
	ops = append(ops, env.operators.start(t, newFlags...))
	delay := time.Duration(rng.IntN(3000)) * time.Millisecond
	time.Sleep(delay)
	killed := time.Now()
	if err := oldLeader.kill(); err != nil {
		sc.Error(err)
	}
	ops = slices.DeleteFunc(ops, func(o *operator) bool { return o == oldLeader })
	next, err := waitLeader(ctx, 30*time.Second, ops)
	if err != nil {
		sc.Fatal(err)
	}
	handover := time.Since(killed)
	other := ops[0] // the other replica of the previous release
	if id, err := other.identity(time.Second); err == nil && next == other {
		released[id] = true
	}
	if err := other.stop(); err != nil {
		sc.Error(err)
	}
	ops = append(ops[1:], env.operators.start(t, newFlags...))
	last, err := waitLeader(ctx, 30*time.Second, ops)
	if err != nil {
		sc.Fatal(err)
	}
	t.Logf("SIGKILL of %s %s after the surge replica started; %s led after %s, then %s", oldLeader.Name, delay, next.Name, handover.Round(time.Millisecond), last.Name)

	conv, err := waitConverged(ctx, crashReadyBudget, namespaces, func(ctx context.Context) error {
		return allSecured(ctx, namespaces, name)
	})
	ok := err == nil
	if err != nil {
		sc.Errorf("secured and Ready within %s of the SIGKILL: %v%s", crashReadyBudget, err, testBedState(ctx))
	}
	for _, ns := range namespaces {
		env.Elastic.SecureBundled(ns, name)
		if err := switchedIntact(ctx, ns, name, pvcs[ns], kept[ns]); err != nil {
			ok = false
			sc.Errorf("%s: %v", ns, err)
		}
	}
	violations, tenures, err := tenureViolations(begin, time.Now(), released)
	if err != nil {
		sc.Fatal(err)
	}
	t.Logf("lease tenures:\n  %s", joinLines(tenures))
	for _, v := range violations {
		ok = false
		sc.Errorf("two writers: %s", v)
	}
	converge := conv.last().Sub(killed)
	sc.note("%d Monocles of %s under its two replicas; its leader SIGKILLed %s after a replica of this release started, %s led after %s; secured and Ready %s after the SIGKILL; %d tenures, %d writes outside their writer's tenure",
		len(namespaces), prev.Version, delay.Round(time.Millisecond), next.Name, fmtDuration(handover), converge.Round(100*time.Millisecond), len(tenures), len(violations))
	sc.run(ok, max(converge, time.Millisecond))
	checkInvariants(ctx, sc)
	for _, o := range ops {
		if err := o.stop(); err != nil {
			sc.Error(err)
		}
	}
}

// previous is the previous release, built once for the scenarios that run it.
var previous struct {
	once    sync.Once
	release testkit.PreviousRelease
	err     error
}

// previousRelease builds the previous release (testkit.BuildPreviousRelease) into the work
// directory the first time a scenario asks for it, and skips sc when the clone lacks its
// commit.
func previousRelease(ctx context.Context, sc *scenario) testkit.PreviousRelease {
	previous.once.Do(func() {
		dir := filepath.Join(env.WorkDir, "previous-release")
		if previous.err = os.MkdirAll(dir, 0o755); previous.err == nil {
			previous.release, previous.err = testkit.BuildPreviousRelease(ctx, env.Root, dir)
		}
	})
	if errors.Is(previous.err, testkit.ErrNoHistory) {
		sc.Skip(previous.err)
	} else if previous.err != nil {
		sc.Fatal(previous.err)
	}
	return previous.release
}

// previousFleet starts two replicas of the previous release prev with flags, creates a
// bundled Monocle name in each of namespaces (edited by prepare first, when not nil), its
// node served without security as that release runs it and holding securityIndices, and
// waits until a replica leads and every Monocle is Ready. It returns the replicas and the
// leader.
func previousFleet(ctx context.Context, sc *scenario, prev testkit.PreviousRelease, flags, namespaces []string, name string, prepare func(*monoclev1alpha1.Monocle)) ([]*operator, *operator) {
	sc.Helper()
	ops := make([]*operator, 2)
	for i := range ops {
		ops[i] = env.operators.startBinary(sc.T, prev.Bin, previousOperatorArgs(), flags...)
	}
	for _, ns := range namespaces {
		if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
			sc.Fatal(err)
		}
		env.Elastic.SetIndices(ns, name, securityIndices...)
		env.Elastic.ServeBundledWithoutSecurity(ns, name)
		m := newMonocle(ns, name)
		if prepare != nil {
			prepare(m)
		}
		if _, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Create(ctx, m, metav1.CreateOptions{}); err != nil {
			sc.Fatal(err)
		}
	}
	leader, err := waitLeader(ctx, 30*time.Second, ops)
	if err != nil {
		sc.Fatal(err)
	}
	if _, err := waitConverged(ctx, crashReadyBudget, namespaces, nil); err != nil {
		sc.Fatalf("the Monocles are not Ready under %s: %v%s", prev.Version, err, testBedState(ctx))
	}
	return ops, leader
}

// numbered returns n names prefix-0, prefix-1 ...
func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}
