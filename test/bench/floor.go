package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// The references figure 3's targets are ratios to (issue 19), measured in the same run on the
// same control plane as the operator's batch:
//   - the ceiling: how long the API server itself takes to create as many plain objects as
//     the batch's Monocles own, sent by 16 parallel writers (as createMonocles sends);
//   - the floor: how long kube-controller-manager, the scheduler and kwok take to bring up
//     the batch's workloads when they are created directly, without the operator.

// writers is how many requests the bench keeps in flight.
const writers = 16

// ceiling creates objects ConfigMaps of one key in nss (round robin), writers at a time, and
// returns the seconds from the first request to the last response.
func (e *env) ceiling(ctx context.Context, nss []string, objects int) (float64, error) {
	t0 := time.Now()
	err := parallel(ctx, objects, writers, func(i int) error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ceiling-%05d", i), Namespace: nss[i%len(nss)]},
			Data:       map[string]string{"k": "v"},
		}
		_, err := e.Kube.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
	return time.Since(t0).Seconds(), err
}

// floorWorkloads are the workloads the operator makes for the bench's Monocle in ns, without
// owner (nothing owns them, so nothing else acts on them).
func floorWorkloads(ns string) (*appsv1.StatefulSet, []*appsv1.Deployment) {
	m := newMonocle(ns)
	in := resources.Inputs{ConfigHash: resources.ConfigHash(resources.DefaultConfig), SecretHash: "floor"}
	sts := resources.NewElasticStatefulSet(m, resources.ElasticDataVolume)
	deps := []*appsv1.Deployment{resources.NewAPIDeployment(m, in), resources.NewCrawlerDeployment(m, in)}
	sts.OwnerReferences = nil
	for _, d := range deps {
		d.OwnerReferences = nil
	}
	return sts, deps
}

// floorRun creates, in n new namespaces, the StatefulSet and the two Deployments of a
// Monocle directly, writers at a time, and returns the seconds until the last create returned
// and until every workload was ready (NaN-free: an error when some were not within timeout).
func (b *bench) floorRun(ctx context.Context, e *env, prefix string, n int, timeout time.Duration) (created, ready float64, err error) {
	nss := names(prefix, n)
	if err := createNamespaces(ctx, e.Kube, nss); err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	err = parallel(ctx, 3*n, writers, func(i int) error {
		ns := nss[i/3]
		sts, deps := floorWorkloads(ns)
		var err error
		if i%3 == 0 {
			_, err = e.Kube.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{})
		} else {
			_, err = e.Kube.AppsV1().Deployments(ns).Create(ctx, deps[i%3-1], metav1.CreateOptions{})
		}
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	created = time.Since(t0).Seconds()
	in := map[string]bool{}
	for _, ns := range nss {
		in[ns] = true
	}
	err = testkit.Poll(ctx, 50*time.Millisecond, timeout, "the floor's workloads ready", func(ctx context.Context) error {
		ready := 0
		stss, err := e.Kube.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{LabelSelector: resources.ManagedByLabel})
		if err != nil {
			return err
		}
		for _, s := range stss.Items {
			if in[s.Namespace] && s.Status.ReadyReplicas == ptr.Deref(s.Spec.Replicas, 1) {
				ready++
			}
		}
		deps, err := e.Kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: resources.ManagedByLabel})
		if err != nil {
			return err
		}
		for _, d := range deps.Items {
			if in[d.Namespace] && d.Status.ReadyReplicas == ptr.Deref(d.Spec.Replicas, 1) && d.Status.UpdatedReplicas == d.Status.ReadyReplicas {
				ready++
			}
		}
		if ready < 3*n {
			return fmt.Errorf("%d of %d workloads ready", ready, 3*n)
		}
		return nil
	})
	return created, time.Since(t0).Seconds(), err
}

// references measures the ceiling for n Monocles' owned objects and the floor for their
// workloads, logs them, and returns them.
func (b *bench) references(ctx context.Context, e *env, prefix string, n, ownedPerMonocle int) (ceil, floor float64, err error) {
	nss := names(prefix+"-ceiling", n)
	if err := createNamespaces(ctx, e.Kube, nss); err != nil {
		return 0, 0, err
	}
	if ceil, err = e.ceiling(ctx, nss, n*ownedPerMonocle); err != nil {
		return 0, 0, fmt.Errorf("ceiling: %w", err)
	}
	floorCreated, floor, err := b.floorRun(ctx, e, prefix+"-floor", n, 10*time.Minute)
	if err != nil {
		return 0, 0, fmt.Errorf("floor: %w", err)
	}
	// The references' objects go before the next measure, which they would otherwise load.
	if err := deleteNamespaces(ctx, e, append(nss, names(prefix+"-floor", n)...)); err != nil {
		return 0, 0, err
	}
	b.logf("%s: the API server created %d plain objects in %s (%.0f/s); %d Monocles' workloads created directly were sent in %s, ready in %s",
		prefix, n*ownedPerMonocle, seconds(ceil), float64(n*ownedPerMonocle)/ceil, n, seconds(floorCreated), seconds(floor))
	return ceil, floor, nil
}

// addRatioRows adds the rows of figure 3 that compare a batch size's runs to their references:
// every owned object existing against the ceiling (target ≤ 2.5×), every Monocle Ready against
// the floor (target ≤ 2×). ceils and floors are per run, in the order of runs.
func (b *bench) addRatioRows(ownedID, readyID string, runs []*scaleResult, ceils, floors []float64) {
	var owned, ready []float64
	for i, r := range runs {
		owned = append(owned, r.owned/ceils[i])
		if r.notReady == 0 {
			ready = append(ready, r.ready/floors[i])
		}
	}
	ratio := func(x float64) string { return fmt.Sprintf("%.2f×", x) }
	n := runs[0].n
	b.results.add(row{ownedID, fmt.Sprintf("%d Monocles: owned objects exist / the API server's own create time for as many objects (ceiling, median %s)", n, seconds(median(ceils))),
		ratio(median(owned)), spread(owned, ratio), fmt.Sprint(len(owned)), "≤ 2.5×", verdict(median(owned), 2.5)})
	b.results.add(row{readyID, fmt.Sprintf("%d Monocles: all Ready / the same workloads created directly, all ready (floor, median %s)", n, seconds(median(floors))),
		ratio(median(ready)), spread(ready, ratio), fmt.Sprint(len(ready)), "≤ 2×", verdict(median(ready), 2)})
}

// deleteNamespaces deletes nss and waits until they are gone.
func deleteNamespaces(ctx context.Context, e *env, nss []string) error {
	err := parallel(ctx, len(nss), writers, func(i int) error {
		err := e.Kube.CoreV1().Namespaces().Delete(ctx, nss[i], metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("deleting namespaces: %w", err)
	}
	return testkit.Poll(ctx, 250*time.Millisecond, 5*time.Minute, "namespaces deleted", func(ctx context.Context) error {
		left := 0
		for _, ns := range nss {
			if _, err := e.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left++
			}
		}
		if left > 0 {
			return fmt.Errorf("%d of %d namespaces left", left, len(nss))
		}
		return nil
	})
}

// addCostRows adds the operator's CPU seconds per 100 Monocles during a large batch, and its
// RSS once total Monocles exist and the batch is Ready (target ≤ 60 MB, issue 19).
func (b *bench) addCostRows(large *scaleResult, total int) {
	mb := func(x float64) string { return fmt.Sprintf("%.1f MB", x/1e6) }
	b.results.add(row{"3k", fmt.Sprintf("Operator CPU seconds per 100 Monocles, from the first create of %d until all Ready", large.n),
		fmt.Sprintf("%.2f s", 100*large.usage.cpu["monocle-operator"]/float64(large.n)), "(1 run)", "1", "–", "–"})
	b.results.add(row{"3l", fmt.Sprintf("Operator RSS (VmRSS) once %d Monocles are Ready (peak VmHWM %s)", total, mb(float64(large.peak))),
		mb(float64(large.rss)), "(1 run)", "1", "≤ 60 MB", verdict(float64(large.rss)/1e6, 60)})
}
