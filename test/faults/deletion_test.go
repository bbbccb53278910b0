package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// holdNamespace and the namespaces namespaceDeletionPrefix-<i> are in heldNamespaces: kwok
// never completes a Job pod there.
const (
	holdNamespace           = "faults-hold"
	namespaceDeletionPrefix = "faults-nsdel"
)

// deletionBudget bounds how long the garbage collector (or the namespace controller) may
// take to remove everything; a stuck finalizer would hold it forever.
const deletionBudget = 90 * time.Second

// testDeletions is scenario 6. A Monocle is deleted while its update-idents Job runs (kwok
// holds Job pods Running in these namespaces, so "running" is deterministic: the Job only
// ends by being deleted), with background and foreground propagation in turn: the Monocle,
// its Job, the Job's pods and every other object it owned must go, its PVC must stay, and
// the operator must log no error. Then a namespace holding Monocles with running Jobs is
// deleted: it must disappear (no stuck finalizer), and the operator's failing syncs must
// stop once it is gone (no error loop).
func testDeletions(t *testing.T) {
	ctx := context.Background()
	sc := beginScenario(t, "6. deletions: Monocle with a running Job, namespace")
	defer sc.finish()
	if err := testkit.CreateNamespace(ctx, env.Kube, holdNamespace); err != nil {
		sc.Fatal(err)
	}
	op := env.operators.start(t)
	if _, err := waitLeader(ctx, 60*time.Second, []*operator{op}); err != nil {
		sc.Fatal(err)
	}

	failedSyncs := 0.0
	for r := range env.size.deletionRuns {
		nm := fmt.Sprintf("del-%02d", r)
		if err := createMonocle(ctx, holdNamespace, nm); err != nil {
			sc.Fatal(err)
		}
		job, err := runningJob(ctx, holdNamespace, nm)
		if err != nil {
			sc.Fatal(err)
		}
		pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(holdNamespace).Get(ctx, "data-"+nm+"-elastic-0", metav1.GetOptions{})
		if err != nil {
			sc.Fatal(err)
		}
		propagation := metav1.DeletePropagationBackground
		if r%2 == 1 {
			propagation = metav1.DeletePropagationForeground
		}
		before, err := op.Metrics(ctx)
		if err != nil {
			sc.Fatal(err)
		}
		deletedAt := time.Now()
		if err := env.Monocles.MonocleV1alpha1().Monocles(holdNamespace).Delete(ctx, nm, metav1.DeleteOptions{PropagationPolicy: &propagation}); err != nil {
			sc.Fatal(err)
		}
		err = testkit.Poll(ctx, 200*time.Millisecond, deletionBudget, "Monocle "+nm+" and all it owned gone", func(ctx context.Context) error {
			_, err := env.Monocles.MonocleV1alpha1().Monocles(holdNamespace).Get(ctx, nm, metav1.GetOptions{})
			if err == nil {
				return fmt.Errorf("the Monocle still exists")
			}
			if !apierrors.IsNotFound(err) {
				return err
			}
			return orphans(ctx, holdNamespace, nm)
		})
		cleanup := time.Since(deletedAt)
		ok := err == nil
		if err != nil {
			sc.Errorf("deleting %s (%s) while Job %s runs: %v", nm, propagation, job, err)
		}
		if got, err := env.Kube.CoreV1().PersistentVolumeClaims(holdNamespace).Get(ctx, pvc.Name, metav1.GetOptions{}); err != nil || got.UID != pvc.UID {
			ok = false
			sc.Errorf("PVC %s did not survive the deletion of %s: %v", pvc.Name, nm, err)
		}
		errorsDuring, noLoop := checkNoErrorLoop(ctx, t, op, before, deletedAt.Add(cleanup), nm)
		ok = ok && noLoop
		if errorsDuring > 0 {
			_, sample := op.errorLines(deletedAt)
			t.Logf("%s: %.0f failed syncs while it was deleted:\n%s", nm, errorsDuring, strings.Join(sample, "\n"))
		}
		failedSyncs += errorsDuring
		t.Logf("%s deleted (%s propagation) while Job %s ran: all it owned gone in %s, PVC kept", nm, propagation, job, cleanup.Round(time.Millisecond))
		sc.run(ok, cleanup)
	}

	sc.note("%d Monocles deleted while their update-idents Job ran (background and foreground propagation): no orphan, PVC kept, %.0f failed syncs in all while they went, none after",
		env.size.deletionRuns, failedSyncs)

	for r := range env.size.namespaceRuns {
		ns := fmt.Sprintf("%s-%d", namespaceDeletionPrefix, r)
		if err := testkit.CreateNamespace(ctx, env.Kube, ns); err != nil {
			sc.Fatal(err)
		}
		var jobs []string
		for i := range 3 {
			nm := fmt.Sprintf("nsdel-%d-%d", r, i)
			if err := createMonocle(ctx, ns, nm); err != nil {
				sc.Fatal(err)
			}
			job, err := runningJob(ctx, ns, nm)
			if err != nil {
				sc.Fatal(err)
			}
			jobs = append(jobs, job)
		}
		before, err := op.Metrics(ctx)
		if err != nil {
			sc.Fatal(err)
		}
		env.track.namespaceDeleted(ns)
		deletedAt := time.Now()
		if err := env.Kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			sc.Fatal(err)
		}
		err = testkit.Poll(ctx, 200*time.Millisecond, deletionBudget, "namespace "+ns+" gone", func(ctx context.Context) error {
			n, err := env.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("namespace is %s: %v", n.Status.Phase, n.Status.Conditions)
		})
		cleanup := time.Since(deletedAt)
		ok := err == nil
		if err != nil {
			sc.Error(err)
		}
		errorsDuring, noLoop := checkNoErrorLoop(ctx, t, op, before, deletedAt.Add(cleanup), "namespace "+ns)
		ok = ok && noLoop
		_, sample := op.errorLines(deletedAt)
		t.Logf("namespace %s with 3 Monocles and running Jobs %v deleted in %s; %.0f failed syncs meanwhile, e.g.:\n%s",
			ns, jobs, cleanup.Round(time.Millisecond), errorsDuring, strings.Join(sample, "\n"))
		sc.note("namespace %s (3 Monocles, Jobs running) gone in %s; %.0f failed syncs while it terminated, none after",
			ns, cleanup.Round(100*time.Millisecond), errorsDuring)
		sc.run(ok, cleanup)
	}

	checkInvariants(ctx, sc)
	if err := op.stop(); err != nil {
		sc.Error(err)
	}
}

// checkNoErrorLoop waits 5s after gone, the moment what was gone, and fails t when the
// operator had failed syncs in that window (an error loop). It returns the failed syncs
// between before (a scrape taken before the deletion) and the start of the window, and
// whether there were none in it.
func checkNoErrorLoop(ctx context.Context, t *testing.T, op *operator, before testkit.Metrics, gone time.Time, what string) (during float64, ok bool) {
	t.Helper()
	done, err := op.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	later, err := op.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after := failedSyncs(later) - failedSyncs(done); after > 0 {
		lines, sample := op.errorLines(gone)
		t.Errorf("%s: %.0f failed syncs in the 5s after it was gone (an error loop); %d error log lines, e.g.:\n%s",
			what, after, lines, strings.Join(sample, "\n"))
		return failedSyncs(done) - failedSyncs(before), false
	}
	return failedSyncs(done) - failedSyncs(before), true
}

// runningJob waits for Monocle ns/name to be Ready, changes its config, and waits for the
// update-idents Job of the new config to run (its pod Running, the status saying so). It
// returns the Job's name.
func runningJob(ctx context.Context, ns, name string) (string, error) {
	if err := testkit.Poll(ctx, 200*time.Millisecond, 2*time.Minute, name+" Ready", func(ctx context.Context) error {
		m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return converged(m)
	}); err != nil {
		return "", err
	}
	if err := editMonocle(ctx, ns, name, func(m *monoclev1alpha1.Monocle) { m.Spec.Config = configFor(1) }); err != nil {
		return "", err
	}
	var job string
	err := testkit.Poll(ctx, 200*time.Millisecond, time.Minute, name+"'s update-idents Job running", func(ctx context.Context) error {
		m, err := env.Monocles.MonocleV1alpha1().Monocles(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		u := m.Status.UpdateIdents
		if u == nil || u.Phase != monoclev1alpha1.JobRunning {
			return fmt.Errorf("status.updateIdents is %+v", u)
		}
		job = u.Name
		pods, err := env.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				return nil
			}
		}
		return fmt.Errorf("no Running pod of Job %s", job)
	})
	return job, err
}

// ownedResources are the kinds a Monocle's objects (and their pods) come in.
var ownedResources = []schema.GroupVersionResource{
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "pods"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
}

// orphans returns an error naming the objects of Monocle ns/name (by its instance label)
// that still exist, its Elasticsearch PVC aside, which is kept by design.
func orphans(ctx context.Context, ns, name string) error {
	sel := metav1.ListOptions{LabelSelector: resources.InstanceLabel + "=" + name}
	var left []string
	for _, gvr := range ownedResources {
		l, err := env.Meta.Resource(gvr).Namespace(ns).List(ctx, sel)
		if err != nil {
			return err
		}
		for _, o := range l.Items {
			left = append(left, gvr.Resource+"/"+o.Name)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("objects of %s/%s left: %s", ns, name, strings.Join(left, ", "))
	}
	return nil
}
