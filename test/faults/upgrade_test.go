package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// The images of scenario 9's upgrades.
const (
	upgradeFrom = "quay.io/change-metrics/monocle:1.11.1"
	upgradeTo   = "quay.io/change-metrics/monocle:1.11.2"
)

// upgradePhases are the phases of an upgrade with backups, in order.
var upgradePhases = []monoclev1alpha1.UpgradePhase{
	monoclev1alpha1.UpgradeBackingUp, monoclev1alpha1.UpgradeStoppingCrawler, monoclev1alpha1.UpgradeReplacingAPI,
	monoclev1alpha1.UpgradeStartingCrawler, monoclev1alpha1.UpgradeSucceeded,
}

// testUpgradeCrashes is scenario 9: a Monocle version upgrade interrupted by
// operator SIGKILLs ends upgraded once, with one API version at a time throughout. Each run
// upgrades a Monocle with backups and two API replicas from 1.11.1 to 1.11.2 and kills the
// operator once the status shows each of one or two seeded phases, restarting it at once.
// The pods are watched through the run (testkit.UpgradeRecorder). Every run must end Ready
// and Succeeded with never API pods of two images at once, no new crawler pod before a new
// API pod was ready, one pre-upgrade snapshot, one ReplicaSet of the API on the new image,
// and the API's strategy back to RollingUpdate.
func testUpgradeCrashes(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "9. operator SIGKILLed mid-upgrade")
	defer sc.finish()
	rng := rand.New(rand.NewPCG(uint64(env.seed), 9))
	kills := make([][]monoclev1alpha1.UpgradePhase, env.size.upgradeRuns)
	for r := range kills {
		// One or two kills, at distinct phases before Succeeded, in order.
		picked := rng.Perm(len(upgradePhases) - 1)[:1+rng.IntN(2)]
		slices.Sort(picked)
		for _, i := range picked {
			kills[r] = append(kills[r], upgradePhases[i])
		}
		t.Logf("run %d: kills at %v (seed %d)", r, kills[r], env.seed)
	}

	opArgs := []string{"--leader-elect=false", "--elasticsearch-read-interval=2s"}
	op := env.operators.start(t, opArgs...)
	for r, phases := range kills {
		ns := fmt.Sprintf("faults-upgrade-%d", r)
		const name = "upgrade"
		if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
			sc.Fatal(err)
		}
		env.Elastic.SetIndices(ns, name, "monocle.config", "monocle.changes.1.demo")
		m := newMonocle(ns, name)
		m.Spec.Image = upgradeFrom
		m.Spec.Backup = &monoclev1alpha1.BackupSpec{}
		m.Spec.API.Replicas = ptr.To[int32](2)
		if _, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Create(ctx, m, metav1.CreateOptions{}); err != nil {
			sc.Fatal(err)
		}
		if _, err := waitConverged(ctx, crashReadyBudget, []string{ns}, nil); err != nil {
			sc.Fatalf("run %d: the Monocle to upgrade is not Ready: %v", r, err)
		}
		rec, err := testkit.RecordUpgrade(ctx, env.Kube, ns)
		if err != nil {
			sc.Fatal(err)
		}
		if err := editMonocle(ctx, ns, name, func(m *monoclev1alpha1.Monocle) { m.Spec.Image = upgradeTo }); err != nil {
			sc.Fatal(err)
		}
		start := time.Now()
		var landed []string
		for _, phase := range phases {
			var at monoclev1alpha1.UpgradePhase
			if err := testkit.Poll(ctx, 10*time.Millisecond, 2*time.Minute, "upgrade phase "+string(phase), func(ctx context.Context) error {
				var err error
				at, err = upgradePhase(ctx, ns, name)
				if err != nil {
					return err
				}
				if slices.Index(upgradePhases, at) < slices.Index(upgradePhases, phase) {
					return fmt.Errorf("phase %q", at)
				}
				return nil
			}); err != nil {
				sc.Fatalf("run %d: %v%s", r, err, testBedState(ctx))
			}
			if err := op.kill(); err != nil {
				sc.Fatal(err)
			}
			landed = append(landed, string(at))
			op = env.operators.start(t, opArgs...)
		}
		restarted := time.Now()

		conv, err := waitConverged(ctx, crashReadyBudget, []string{ns}, func(ctx context.Context) error {
			return upgradedOnce(ctx, ns, name)
		})
		ok := err == nil
		if err != nil {
			sc.Errorf("run %d: upgraded and Ready within %s of the last restart: %v%s", r, crashReadyBudget, err, testBedState(ctx))
		}
		rec.Stop()
		for _, p := range rec.Problems(upgradeTo) {
			ok = false
			sc.Errorf("run %d: %s", r, p)
		}
		var snapshots []string
		for _, s := range env.Elastic.Snapshots(ns, name, resources.BackupRepositoryName) {
			if strings.HasPrefix(s.Name, "pre-upgrade-") {
				snapshots = append(snapshots, s.Name+" "+s.State)
			}
		}
		if len(snapshots) != 1 {
			ok = false
			sc.Errorf("run %d: pre-upgrade snapshots %v, want one", r, snapshots)
		}
		converge := conv.last().Sub(restarted)
		sc.note("run %d, %s: killed at phases %s (planned %v); upgraded once and Ready %s after the last restart, %s after the image change",
			r, ns, strings.Join(landed, ", "), phases, converge.Round(100*time.Millisecond), conv.last().Sub(start).Round(100*time.Millisecond))
		sc.run(ok, max(converge, time.Millisecond))
	}
	checkInvariants(ctx, sc)
	if err := op.stop(); err != nil {
		sc.Error(err)
	}
}

// upgradePhase is the phase status.upgrade of Monocle ns/name shows, "" without one.
func upgradePhase(ctx context.Context, ns, name string) (monoclev1alpha1.UpgradePhase, error) {
	m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if m.Status.Upgrade == nil || m.Status.Upgrade.To != upgradeTo {
		return "", nil
	}
	return m.Status.Upgrade.Phase, nil
}

// upgradedOnce returns nil once Monocle ns/name is upgraded to upgradeTo as an upgrade must end:
// status.upgrade Succeeded, the API and the crawler on the new image, the API's strategy
// RollingUpdate again, and one ReplicaSet of the API on the new image.
func upgradedOnce(ctx context.Context, ns, name string) error {
	if phase, err := upgradePhase(ctx, ns, name); err != nil || phase != monoclev1alpha1.UpgradeSucceeded {
		return fmt.Errorf("upgrade phase %q (%v)", phase, err)
	}
	for _, d := range []string{name + "-api", name + "-crawler"} {
		dep, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if img := dep.Spec.Template.Spec.Containers[0].Image; img != upgradeTo {
			return fmt.Errorf("Deployment %s runs %s", d, img)
		}
		if d == name+"-api" && dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
			return fmt.Errorf("Deployment %s has strategy %s", d, dep.Spec.Strategy.Type)
		}
	}
	rss, err := env.Kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: resources.ComponentLabel + "=" + resources.ComponentAPI})
	if err != nil {
		return err
	}
	n := 0
	for _, rs := range rss.Items {
		if rs.Spec.Template.Spec.Containers[0].Image == upgradeTo {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%d ReplicaSets of the API on %s, want 1", n, upgradeTo)
	}
	return nil
}
