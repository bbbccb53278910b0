package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// The references figure 3's targets are ratios to, measured in the same run on the
// same control plane as the operator's batch:
//   - the ceiling: how long the API server itself takes to create as many plain objects as
//     the batch's Monocles own, sent by 16 parallel writers (as createMonocles sends);
//   - the floor: the objects the operator makes for the batch's Monocles (Secrets, ConfigMap,
//     Services, NetworkPolicy, StatefulSet, Deployments), created directly by as many
//     parallel writers, without the operator: how long their creates take while
//     kube-controller-manager, the scheduler and kwok react to the first workloads (the
//     direct create time, which no operator can beat on this control plane), and how long
//     those take to bring the workloads up.

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

// floorObjects are the objects the operator makes for the bench's Monocle in ns, without
// owner (nothing owns them, so nothing else acts on them), in the operator's order: the keys'
// Secrets first, the workloads last.
func floorObjects(ns string) []object {
	m := newMonocle(ns)
	keys := map[string][]byte{}
	for _, k := range resources.GeneratedKeys {
		keys[k] = []byte(strings.Repeat("k", 64))
	}
	in := resources.Inputs{ConfigHash: resources.ConfigHash(resources.DefaultConfig), SecretHash: resources.SecretHash(keys, "")}
	passwords, hashes := map[string][]byte{}, map[string]string{}
	for _, u := range resources.ElasticUsers {
		passwords[u] = []byte(strings.Repeat("p", 64))
		hashes[u] = "$2a$04$" + strings.Repeat("h", 53)
	}
	proxy, err := resources.NewProxySecret(m, resources.BundledTarget(m).WithBundledUsers(passwords))
	if err != nil {
		panic("the bench's proxy Secret: " + err.Error())
	}
	objects := []object{
		resources.NewKeysBackupSecret(m, keys), resources.NewAPISecret(m, keys),
		resources.NewElasticUsersSecret(m, passwords, hashes), proxy,
		resources.NewConfigMap(m, resources.DefaultConfig), resources.NewElasticService(m), resources.NewAPIService(m),
		resources.NewNetworkPolicy(m, ""), resources.NewElasticStatefulSet(m, resources.ElasticDataVolume, false, ""),
		resources.NewAPIDeployment(m, in), resources.NewCrawlerDeployment(m, in),
	}
	for _, o := range objects {
		o.SetOwnerReferences(nil)
	}
	return objects
}

// object is a typed API object the floor creates.
type object interface {
	metav1.Object
	runtime.Object
}

// createObject creates o with the bench's typed client.
func (e *env) createObject(ctx context.Context, o object) error {
	opts := metav1.CreateOptions{}
	var err error
	switch o := o.(type) {
	case *corev1.Secret:
		_, err = e.Kube.CoreV1().Secrets(o.Namespace).Create(ctx, o, opts)
	case *corev1.ConfigMap:
		_, err = e.Kube.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, opts)
	case *corev1.Service:
		_, err = e.Kube.CoreV1().Services(o.Namespace).Create(ctx, o, opts)
	case *networkingv1.NetworkPolicy:
		_, err = e.Kube.NetworkingV1().NetworkPolicies(o.Namespace).Create(ctx, o, opts)
	case *appsv1.StatefulSet:
		_, err = e.Kube.AppsV1().StatefulSets(o.Namespace).Create(ctx, o, opts)
	case *appsv1.Deployment:
		_, err = e.Kube.AppsV1().Deployments(o.Namespace).Create(ctx, o, opts)
	default:
		err = fmt.Errorf("the floor cannot create a %T", o)
	}
	return err
}

// floorRun creates, in n new namespaces, the objects the operator makes for a Monocle
// directly, writers at a time, and returns the seconds until the last create returned (the
// direct create time) and until every workload was ready (an error when some were not
// within timeout).
func (b *bench) floorRun(ctx context.Context, e *env, prefix string, n int, timeout time.Duration) (created, ready float64, err error) {
	nss := names(prefix, n)
	if err := createNamespaces(ctx, e.Kube, nss); err != nil {
		return 0, 0, err
	}
	var objects []object
	for _, ns := range nss {
		objects = append(objects, floorObjects(ns)...)
	}
	t0 := time.Now()
	err = parallel(ctx, len(objects), writers, func(i int) error {
		return e.createObject(ctx, objects[i])
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

// refs are the references of one batch (see the top of this file), in seconds.
type refs struct {
	// ceiling is the API server's own create time for as many plain objects.
	ceiling float64
	// direct is the create time of the same objects the operator makes, made directly.
	direct float64
	// floor is the time until the workloads made directly are all ready.
	floor float64
}

// references measures the references for n Monocles' owned objects, logs them, and returns
// them.
func (b *bench) references(ctx context.Context, e *env, prefix string, n, ownedPerMonocle int) (refs, error) {
	var r refs
	nss := names(prefix+"-ceiling", n)
	if err := createNamespaces(ctx, e.Kube, nss); err != nil {
		return r, err
	}
	var err error
	if r.ceiling, err = e.ceiling(ctx, nss, n*ownedPerMonocle); err != nil {
		return r, fmt.Errorf("ceiling: %w", err)
	}
	if r.direct, r.floor, err = b.floorRun(ctx, e, prefix+"-floor", n, 10*time.Minute); err != nil {
		return r, fmt.Errorf("floor: %w", err)
	}
	// The references' objects go before the next measure, which they would otherwise load.
	if err := deleteNamespaces(ctx, e, append(nss, names(prefix+"-floor", n)...)); err != nil {
		return r, err
	}
	b.logf("%s: the API server created %d plain objects in %s (%.0f/s); %d Monocles' objects created directly were sent in %s, their workloads ready in %s",
		prefix, n*ownedPerMonocle, seconds(r.ceiling), float64(n*ownedPerMonocle)/r.ceiling, n, seconds(r.direct), seconds(r.floor))
	return r, nil
}

// addRatioRows adds the rows of figure 3 that compare a batch size's runs to their references
// (one per run, in the order of runs): every owned object existing against the ceiling (target
// ≤ 2.5×) and against the direct create time of the same objects (no target: it says how
// much of the ceiling ratio the operator's own work explains), every Monocle Ready against the
// floor (target ≤ 2×).
func (b *bench) addRatioRows(ownedID, directID, readyID string, runs []*scaleResult, rs []refs) {
	var owned, direct, ready, ceils, directs, floors []float64
	for i, r := range runs {
		owned = append(owned, r.owned/rs[i].ceiling)
		direct = append(direct, r.owned/rs[i].direct)
		if r.notReady == 0 {
			ready = append(ready, r.ready/rs[i].floor)
		}
		ceils, directs, floors = append(ceils, rs[i].ceiling), append(directs, rs[i].direct), append(floors, rs[i].floor)
	}
	ratio := func(x float64) string { return fmt.Sprintf("%.2f×", x) }
	n := runs[0].n
	b.results.add(row{ownedID, fmt.Sprintf("%d Monocles: owned objects exist / the API server's own create time for as many plain objects (ceiling, median %s)", n, seconds(median(ceils))),
		ratio(median(owned)), spread(owned, ratio), fmt.Sprint(len(owned)), "≤ 2.5×", verdict(median(owned), 2.5)})
	b.results.add(row{directID, fmt.Sprintf("%d Monocles: owned objects exist / the same objects created directly by %d writers (direct, median %s)", n, writers, seconds(median(directs))),
		ratio(median(direct)), spread(direct, ratio), fmt.Sprint(len(direct)), "–", "–"})
	b.results.add(row{readyID, fmt.Sprintf("%d Monocles: all Ready / the same objects created directly, workloads all ready (floor, median %s)", n, seconds(median(floors))),
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
// RSS once total Monocles exist and the batch is Ready (target maxRSSMB).
func (b *bench) addCostRows(large *scaleResult, total int) {
	mb := func(x float64) string { return fmt.Sprintf("%.1f MB", x/1e6) }
	b.results.add(row{"3k", fmt.Sprintf("Operator CPU seconds per 100 Monocles, from the first create of %d until all Ready", large.n),
		fmt.Sprintf("%.2f s", 100*large.usage.cpu["monocle-operator"]/float64(large.n)), "(1 run)", "1", "–", "–"})
	b.results.add(row{"3l", fmt.Sprintf("Operator RSS (VmRSS) once %d Monocles are Ready (peak VmHWM %s)", total, mb(float64(large.peak))),
		mb(float64(large.rss)), "(1 run)", "1", fmt.Sprintf("≤ %d MB", maxRSSMB), verdict(float64(large.rss)/1e6, maxRSSMB)})
}

// maxRSSMB is the target of the operator's RSS with the large batch (200 Monocles) and the
// small one, in MB (10^6 bytes).
const maxRSSMB = 50
