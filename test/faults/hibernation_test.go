package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// hibernationStages are where in a hibernation (stopped components 0, 1 or 2) and in a waking
// (components started 0, 1 or 2) scenario 10 kills the operator: once a Monocle's
// status.hibernation shows that many.
var hibernationStages = [2][3]string{
	{"Hibernating, nothing stopped", "crawler stopped", "crawler and API stopped"},
	{"Waking, nothing started", "Elasticsearch started", "Elasticsearch and API started"},
}

// testHibernationCrashes is scenario 10: hibernations and wakings interrupted by operator
// SIGKILLs keep their order and lose nothing. env.size.hibernationMonocles Monocles, one per
// namespace, are hibernated at once and the operator is killed (and started again at once)
// when one of them reaches each of two seeded stages; then they are woken the same way. The
// namespaces' pods and workloads are watched throughout (testkit.HibernationRecorder): each
// Monocle must have been scaled in the order crawler, API, Elasticsearch and back in reverse,
// with no pod stopped while one of a component stopped before it existed and no pod started
// before one of the component it starts after was ready; each must end Hibernated, then Ready
// and awake, with its Secrets and ConfigMap of the same UIDs (the PVCs' UIDs are an invariant
// of the suite).
func testHibernationCrashes(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "10. operator SIGKILLed mid-hibernation and mid-wake")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 10))
	var stages [2][]int
	for dir := range stages {
		stages[dir] = rng.Perm(3)[:2]
		slices.Sort(stages[dir])
		t.Logf("%s: kills at %v (seed %d)", [2]string{"hibernation", "waking"}[dir], stages[dir], env.seed)
	}

	const name = "hib"
	opArgs := []string{"--leader-elect=false", "--elasticsearch-read-interval=2s"}
	op := env.operators.start(t, opArgs...)
	var namespaces []string
	for i := range env.size.hibernationMonocles {
		ns := fmt.Sprintf("faults-hibernate-%d", i)
		namespaces = append(namespaces, ns)
		if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
			sc.Fatal(err)
		}
		if err := createMonocle(ctx, ns, name); err != nil {
			sc.Fatal(err)
		}
	}
	if _, err := waitConverged(ctx, crashReadyBudget, namespaces, nil); err != nil {
		sc.Fatalf("the Monocles to hibernate are not Ready: %v%s", err, testBedState(ctx))
	}
	kept := map[string]string{}
	for _, ns := range namespaces {
		uids, err := keptUIDs(ctx, ns, name)
		if err != nil {
			sc.Fatal(err)
		}
		kept[ns] = uids
	}

	for dir, hibernate := range []bool{true, false} {
		recorders := map[string]*testkit.HibernationRecorder{}
		for _, ns := range namespaces {
			rec, err := testkit.RecordHibernation(ctx, env.Kube, ns)
			if err != nil {
				sc.Fatal(err)
			}
			defer rec.Stop()
			recorders[ns] = rec
		}
		for _, ns := range namespaces {
			if err := editMonocle(ctx, ns, name, func(m *monoclev1alpha1.Monocle) { m.Spec.Hibernate = hibernate }); err != nil {
				sc.Fatal(err)
			}
		}
		start := time.Now()
		var landed []string
		for _, stage := range stages[dir] {
			var at string
			if err := testkit.Poll(ctx, 10*time.Millisecond, 2*time.Minute, hibernationStages[dir][stage], func(ctx context.Context) error {
				var err error
				at, err = hibernationReached(ctx, namespaces, name, hibernate, stage)
				return err
			}); err != nil {
				sc.Fatalf("%v%s", err, testBedState(ctx))
			}
			if err := op.kill(); err != nil {
				sc.Fatal(err)
			}
			landed = append(landed, at)
			op = env.operators.start(t, opArgs...)
		}
		restarted := time.Now()

		want := []string{"stop crawler", "stop api", "stop elastic"}
		var done time.Time
		var err error
		if hibernate {
			err = testkit.Poll(ctx, 250*time.Millisecond, crashReadyBudget, "Monocles hibernated", func(ctx context.Context) error {
				return allHibernated(ctx, namespaces, name)
			})
			done = time.Now()
		} else {
			want = []string{"start elastic", "start api", "start crawler"}
			var conv convergence
			conv, err = waitConverged(ctx, crashReadyBudget, namespaces, func(ctx context.Context) error {
				return allAwake(ctx, namespaces, name)
			})
			done = conv.last()
		}
		ok := err == nil
		if err != nil {
			sc.Errorf("%s within %s of the last restart: %v%s", [2]string{"hibernated", "awake and Ready"}[dir], crashReadyBudget, err, testBedState(ctx))
		}
		for _, ns := range namespaces {
			rec := recorders[ns]
			// The watches may deliver the last change a moment after the status shows it.
			if err := testkit.Poll(ctx, 100*time.Millisecond, 10*time.Second, "order", func(context.Context) error {
				if got := rec.Order(); !slices.Equal(got, want) {
					return fmt.Errorf("%s: scaled in the order %v, want %v", ns, got, want)
				}
				return nil
			}); err != nil {
				ok = false
				sc.Error(err)
			}
			for _, p := range rec.Problems() {
				ok = false
				sc.Errorf("%s: %s", ns, p)
			}
			if uids, err := keptUIDs(ctx, ns, name); err != nil || uids != kept[ns] {
				ok = false
				sc.Errorf("%s: Secrets and ConfigMap %s (%v), were %s", ns, uids, err, kept[ns])
			}
		}
		converge := done.Sub(restarted)
		sc.note("%s of %d Monocles: killed at %s; in order and %s %s after the last restart, %s after the switch",
			[2]string{"hibernation", "waking"}[dir], len(namespaces), strings.Join(landed, "; "),
			[2]string{"hibernated", "Ready"}[dir], converge.Round(100*time.Millisecond), done.Sub(start).Round(100*time.Millisecond))
		sc.run(ok, max(converge, time.Millisecond))
	}
	checkInvariants(ctx, sc)
	if err := op.stop(); err != nil {
		sc.Error(err)
	}
}

// hibernationReached returns where the first Monocle name of namespaces that has reached
// stage of a hibernation (hibernate) or a waking stands, or an error while none has.
func hibernationReached(ctx context.Context, namespaces []string, name string, hibernate bool, stage int) (string, error) {
	for _, ns := range namespaces {
		m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		h := m.Status.Hibernation
		if h == nil {
			continue
		}
		at := fmt.Sprintf("%s %s, stopped %v", ns, h.Phase, h.Stopped)
		switch {
		case hibernate && h.Phase != monoclev1alpha1.HibernationWaking && len(h.Stopped) >= stage:
			return at, nil
		case !hibernate && h.Phase == monoclev1alpha1.HibernationWaking && len(h.Stopped) <= 3-stage:
			return at, nil
		}
	}
	return "", fmt.Errorf("no Monocle at the stage yet")
}

// allHibernated returns nil once every Monocle name of namespaces is Hibernated, with Ready
// False for that reason and not Degraded.
func allHibernated(ctx context.Context, namespaces []string, name string) error {
	return everyMonocle(ctx, namespaces, name, func(m *monoclev1alpha1.Monocle) error {
		if h := m.Status.Hibernation; h == nil || h.Phase != monoclev1alpha1.HibernationHibernated {
			return fmt.Errorf("status.hibernation %+v", h)
		}
		for typ, want := range map[string]string{monoclev1alpha1.ConditionReady: "False/Hibernated", monoclev1alpha1.ConditionDegraded: "False/AsExpected"} {
			if got := conditionOf(m, typ); got != want {
				return fmt.Errorf("%s %s, want %s", typ, got, want)
			}
		}
		return nil
	})
}

// allAwake returns nil once no Monocle name of namespaces has status.hibernation.
func allAwake(ctx context.Context, namespaces []string, name string) error {
	return everyMonocle(ctx, namespaces, name, func(m *monoclev1alpha1.Monocle) error {
		if h := m.Status.Hibernation; h != nil {
			return fmt.Errorf("status.hibernation %+v", h)
		}
		return nil
	})
}

// conditionOf is "Status/Reason" of m's condition typ, "" without one.
func conditionOf(m *monoclev1alpha1.Monocle, typ string) string {
	for _, c := range m.Status.Conditions {
		if c.Type == typ {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

// keptUIDs are the UIDs of the Secrets and the ConfigMap of Monocle ns/name, in one string.
func keptUIDs(ctx context.Context, ns, name string) (string, error) {
	var uids []string
	for _, s := range []string{name + "-api", name + "-api-keys"} {
		secret, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, s, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		uids = append(uids, "secret/"+s+"="+string(secret.UID))
	}
	cm, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, name+"-api", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return strings.Join(append(uids, "configmap/"+cm.Name+"="+string(cm.UID)), " "), nil
}
