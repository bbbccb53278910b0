package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// Bounds on the operator's writes against another writer. They are ratios, so they hold on
// a slow machine as on a fast one.
const (
	// maxAttemptsPerChange bounds the operator's update attempts (including those refused
	// with 409 Conflict) per successful update while a bystander bumps the same objects:
	// each conflict is retried when the cache has the newer object, not in a loop.
	maxAttemptsPerChange = 3.0
	// maxRepairsPerRevert bounds the operator's writes per write of a writer that reverts
	// an owned field: one repair per revert, plus retries of the ones that conflicted.
	maxRepairsPerRevert = 1.5
)

// testConflicts is scenario 5. First bystanders update annotations (not owned by the
// operator) of each Monocle's API Deployment and ConfigMap in a tight loop while the
// Monocles' title and config change every few seconds: the operator's updates meet 409
// Conflicts and must retry on a fresh cache without hot-looping. Then a writer reverts an
// owned field (the API Deployment's replicas) every 200ms: the operator repairs the first
// reverts once each, then contests the field and backs off (Degraded FieldContested), and
// converges once the writer stops. API calls per minute are printed.
func testConflicts(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "5. conflicting writers")
	defer sc.finish()
	ns := "faults-conflict"
	if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
		sc.Fatal(err)
	}
	op := env.operators.start(t)
	var names []string
	for i := range env.size.conflictMonocles {
		nm := fmt.Sprintf("conflict-%02d", i)
		if err := createMonocle(ctx, ns, nm); err != nil {
			sc.Fatal(err)
		}
		names = append(names, nm)
	}
	if _, err := waitConverged(ctx, 2*time.Minute, []string{ns}, nil); err != nil {
		sc.Fatal(err)
	}
	writerCfg := rest.CopyConfig(env.Config)
	writerCfg.UserAgent = testUserAgent + "-writer"
	writerCfg.QPS, writerCfg.Burst = 500, 1000
	writer, err := kubernetes.NewForConfig(writerCfg)
	if err != nil {
		sc.Fatal(err)
	}
	contested := func(e testkit.AuditEvent) bool {
		return e.ObjectRef.Namespace == ns && (e.Verb == "update" || e.Verb == "patch") &&
			(e.ObjectRef.Resource == "deployments" || e.ObjectRef.Resource == "configmaps") && e.ObjectRef.Subresource == ""
	}

	// Part 1: bystanders.
	bystanders, stopBystanders := context.WithCancel(ctx)
	defer stopBystanders()
	var wg sync.WaitGroup
	var bumps atomic.Int64
	for _, nm := range names {
		wg.Add(2)
		go func() {
			defer wg.Done()
			bystander(bystanders, &bumps, func(i int) error {
				d, err := writer.AppsV1().Deployments(ns).Get(ctx, nm+"-api", metav1.GetOptions{})
				if err != nil {
					return err
				}
				metav1.SetMetaDataAnnotation(&d.ObjectMeta, "faults.example.com/touch", fmt.Sprint(i))
				_, err = writer.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
				return err
			})
		}()
		go func() {
			defer wg.Done()
			bystander(bystanders, &bumps, func(i int) error {
				cm, err := writer.CoreV1().ConfigMaps(ns).Get(ctx, nm+"-api", metav1.GetOptions{})
				if err != nil {
					return err
				}
				metav1.SetMetaDataAnnotation(&cm.ObjectMeta, "faults.example.com/touch", fmt.Sprint(i))
				_, err = writer.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
				return err
			})
		}()
	}
	start := time.Now()
	changes := 0
	title, variant := "", 0
	for time.Since(start) < env.size.conflictWindow {
		changes++
		if changes%2 == 1 {
			title = fmt.Sprintf("Title %d", changes)
		} else {
			variant = 100 + changes
		}
		for _, nm := range names {
			if err := editMonocle(ctx, ns, nm, func(m *monoclev1alpha1.Monocle) {
				m.Spec.API.Title = title
				if variant > 0 {
					m.Spec.Config = configFor(variant)
				}
			}); err != nil {
				sc.Fatal(err)
			}
		}
		time.Sleep(3 * time.Second)
	}
	lastChange := time.Now()
	// The operator's part of the last change must go through while the bystanders still run:
	// the Monocles converged, the title and the config in the objects it writes. The rest is
	// kube-controller-manager's: the API's rollout to the new config, which the update-idents
	// Job waits for, copies each annotation bump of a Deployment to its ReplicaSet and
	// conflicts with the ReplicaSet controller's own writes, and the controllers' queues back
	// off exponentially on such conflicts; one rollout stalled past two minutes in a run (the
	// controller manager's log: a conflict on the ReplicaSet every few seconds). So the Jobs
	// are checked once the bystanders stop. Two minutes each, as the other checks allow.
	conv, err := waitConverged(ctx, 2*time.Minute, []string{ns}, func(ctx context.Context) error {
		for _, nm := range names {
			if err := titleApplied(ctx, ns, nm, title); err != nil {
				return err
			}
			if err := configApplied(ctx, ns, nm, variant, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		sc.Errorf("with bystanders writing: %v", err)
	}
	stopBystanders()
	wg.Wait()
	end := time.Now()
	if _, err := waitConverged(ctx, 2*time.Minute, []string{ns}, func(ctx context.Context) error {
		for _, nm := range names {
			if err := configApplied(ctx, ns, nm, variant, variant > 0); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		sc.Errorf("once the bystanders stopped: %v", err)
	}
	events, err := auditBetween(start, end, func(e testkit.AuditEvent) bool { return e.FromOperator() && contested(e) })
	if err != nil {
		sc.Fatal(err)
	}
	attempts, conflicts := len(events), 0
	for _, e := range events {
		if e.ResponseStatus.Code == 409 {
			conflicts++
		}
	}
	successes := attempts - conflicts
	calls, _, _ := callCount(start, end)
	minutes := end.Sub(start).Minutes()
	ok := err == nil
	if successes == 0 || float64(attempts) > maxAttemptsPerChange*float64(successes) {
		ok = false
		sc.Errorf("bystanders: the operator made %d update attempts (%d conflicts) for %d successful updates: more than %.0f attempts per update",
			attempts, conflicts, successes, maxAttemptsPerChange)
	}
	sc.note("bystanders: %d changes of %d Monocles while %d bystander writes (%.0f/min) hit the same objects; operator: %d updates, %d of them 409 Conflict, %.0f API calls/min",
		changes, len(names), bumps.Load(), float64(bumps.Load())/minutes, attempts, conflicts, float64(calls)/minutes)
	sc.run(ok, conv.last().Sub(lastChange))

	// Part 2: a writer that reverts an owned field.
	var reverts atomic.Int64
	fight, stopFight := context.WithCancel(ctx)
	fightStart := time.Now()
	for _, nm := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait.NonSlidingUntilWithContext(fight, func(context.Context) {
				d, err := writer.AppsV1().Deployments(ns).Get(ctx, nm+"-api", metav1.GetOptions{})
				if err != nil || ptr.Deref(d.Spec.Replicas, 1) == 2 {
					return
				}
				d.Spec.Replicas = ptr.To[int32](2)
				if _, err := writer.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{}); err == nil {
					reverts.Add(1)
				}
			}, 200*time.Millisecond)
		}()
	}
	time.Sleep(env.size.conflictWindow / 2)
	stopFight()
	wg.Wait()
	fightEnd := time.Now()
	// The writer sets back replicas after each repair: the operator contests it and leaves the
	// Deployment for a back-off (owned.Contests: 30 s, then 1 min if the first retry meets the
	// writer still at work), so convergence takes up to that back-off after the writer stops.
	conv, convErr := waitConverged(ctx, 2*time.Minute, []string{ns}, func(ctx context.Context) error {
		for _, nm := range names {
			d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, nm+"-api", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if ptr.Deref(d.Spec.Replicas, 1) != 1 {
				return fmt.Errorf("Deployment %s-api has %d replicas", nm, ptr.Deref(d.Spec.Replicas, 1))
			}
		}
		return nil
	})
	if convErr != nil {
		sc.Errorf("after the reverting writer stopped: %v", convErr)
	}
	repairs, err := auditBetween(fightStart, fightEnd.Add(time.Second), func(e testkit.AuditEvent) bool {
		return e.FromOperator() && contested(e) && e.ObjectRef.Resource == "deployments"
	})
	if err != nil {
		sc.Fatal(err)
	}
	ok = convErr == nil
	if float64(len(repairs)) > maxRepairsPerRevert*float64(reverts.Load())+float64(len(names)) {
		ok = false
		sc.Errorf("reverting writer: %d operator writes for %d reverts: more than %.1f per revert, it hot-loops", len(repairs), reverts.Load(), maxRepairsPerRevert)
	}
	calls, _, _ = callCount(fightStart, fightEnd)
	sc.note("reverting writer: %d reverts of replicas in %s; operator: %d repairs, %.0f API calls/min; converged %s after the writer stopped",
		reverts.Load(), fightEnd.Sub(fightStart).Round(time.Second), len(repairs), float64(calls)/fightEnd.Sub(fightStart).Minutes(),
		conv.last().Sub(fightEnd).Round(time.Millisecond))
	sc.run(ok, conv.last().Sub(fightEnd))

	checkInvariants(ctx, sc)
	if err := op.stop(); err != nil {
		sc.Error(err)
	}
}

// bystander calls write with 0, 1, 2... every 10ms (a pause that leaves the 2-core machine
// some air) until ctx ends, counting the writes that succeeded.
func bystander(ctx context.Context, count *atomic.Int64, write func(int) error) {
	i := 0
	wait.UntilWithContext(ctx, func(context.Context) {
		if write(i) == nil {
			count.Add(1)
		}
		i++
	}, 10*time.Millisecond)
}

// titleApplied checks the API Deployment's MONOCLE_WEBAPP_TITLE.
func titleApplied(ctx context.Context, ns, name, title string) error {
	d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, name+"-api", metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "MONOCLE_WEBAPP_TITLE" && e.Value == title {
			return nil
		}
	}
	return fmt.Errorf("Deployment %s-api does not have the title %q", name, title)
}
