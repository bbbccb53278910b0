package testkit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// HibernationRecorder follows a namespace's pods, Deployments and StatefulSets with watches
// through a hibernation or a waking, and records what they must never show:
//
//   - a pod of the API starting to terminate while a crawler pod exists, or one of
//     Elasticsearch while an API or crawler pod exists (the stops go crawler, API,
//     Elasticsearch, each once the one before has no pod);
//   - an API pod created while no Elasticsearch pod is ready, or a crawler pod while no API
//     pod is (the starts go the other way).
//
// It also records the order the workloads' spec.replicas went to zero and back (Order). It
// reads the component from the app.kubernetes.io/component label. Record one hibernation or
// one waking at a time: a restore or an upgrade stops the API and the crawler otherwise.
type HibernationRecorder struct {
	mu sync.Mutex
	// pods are the pods that exist, by name.
	pods map[string]podSeen
	// scales are the workloads' replica changes, with the resourceVersion they were seen at.
	scales   []scaleSeen
	replicas map[string]int32
	problems []string
	stops    []func()
}

type podSeen struct {
	component          string
	ready, terminating bool
}

type scaleSeen struct {
	rv   int64
	what string
}

// RecordHibernation starts a HibernationRecorder on namespace; Stop ends it. Each watch
// starts at the resourceVersion of a list, whose objects are the starting state.
func RecordHibernation(ctx context.Context, kube kubernetes.Interface, namespace string) (*HibernationRecorder, error) {
	r := &HibernationRecorder{pods: map[string]podSeen{}, replicas: map[string]int32{}}
	pods, err := kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s: %w", namespace, err)
	}
	for i := range pods.Items {
		r.pods[pods.Items[i].Name] = seenPod(&pods.Items[i])
	}
	deployments, err := kube.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the Deployments of %s: %w", namespace, err)
	}
	for _, d := range deployments.Items {
		r.replicas[d.Labels[resources.ComponentLabel]] = ptr.Deref(d.Spec.Replicas, 1)
	}
	sets, err := kube.AppsV1().StatefulSets(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the StatefulSets of %s: %w", namespace, err)
	}
	for _, s := range sets.Items {
		r.replicas[s.Labels[resources.ComponentLabel]] = ptr.Deref(s.Spec.Replicas, 1)
	}
	watches := []func() (watch.Interface, error){
		func() (watch.Interface, error) {
			return kube.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: pods.ResourceVersion})
		},
		func() (watch.Interface, error) {
			return kube.AppsV1().Deployments(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: deployments.ResourceVersion})
		},
		func() (watch.Interface, error) {
			return kube.AppsV1().StatefulSets(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: sets.ResourceVersion})
		},
	}
	for _, start := range watches {
		w, err := start()
		if err != nil {
			r.Stop()
			return nil, fmt.Errorf("watching %s: %w", namespace, err)
		}
		r.stops = append(r.stops, w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				r.observe(ev)
			}
		}()
	}
	return r, nil
}

// Stop ends the watches.
func (r *HibernationRecorder) Stop() {
	for _, stop := range r.stops {
		stop()
	}
}

func seenPod(p *corev1.Pod) podSeen {
	s := podSeen{component: p.Labels[resources.ComponentLabel], terminating: p.DeletionTimestamp != nil}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			s.ready = true
		}
	}
	return s
}

func (r *HibernationRecorder) observe(ev watch.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o := ev.Object.(type) {
	case *corev1.Pod:
		r.observePod(ev.Type, o)
	case *appsv1.Deployment:
		r.observeScale(o.Labels[resources.ComponentLabel], ptr.Deref(o.Spec.Replicas, 1), o.ResourceVersion)
	case *appsv1.StatefulSet:
		r.observeScale(o.Labels[resources.ComponentLabel], ptr.Deref(o.Spec.Replicas, 1), o.ResourceVersion)
	}
}

// observeScale records a component's replicas going to zero ("stop api") or from zero
// ("start api").
func (r *HibernationRecorder) observeScale(component string, replicas int32, rv string) {
	was, known := r.replicas[component]
	r.replicas[component] = replicas
	if !known || (was == 0) == (replicas == 0) {
		return
	}
	what := "start " + component
	if replicas == 0 {
		what = "stop " + component
	}
	// kube-apiserver's resourceVersions are etcd revisions: they order the changes of the
	// three watches against each other.
	n, _ := strconv.ParseInt(rv, 10, 64)
	r.scales = append(r.scales, scaleSeen{n, what})
}

func (r *HibernationRecorder) observePod(typ watch.EventType, p *corev1.Pod) {
	now := seenPod(p)
	was, existed := r.pods[p.Name]
	if typ == watch.Deleted {
		delete(r.pods, p.Name)
		if !was.terminating {
			r.checkStop(p.Name, now.component)
		}
		return
	}
	r.pods[p.Name] = now
	switch {
	case !existed && !now.terminating:
		r.checkStart(p.Name, now.component)
	case now.terminating && !was.terminating:
		r.checkStop(p.Name, now.component)
	}
}

// checkStop records a problem when pod of component starts terminating while a pod of a
// component stopped before it exists.
func (r *HibernationRecorder) checkStop(pod, component string) {
	before := map[string][]string{
		resources.ComponentAPI:     {resources.ComponentCrawler},
		resources.ComponentElastic: {resources.ComponentCrawler, resources.ComponentAPI},
	}[component]
	for name, p := range r.pods {
		if slices.Contains(before, p.component) {
			r.problems = append(r.problems, fmt.Sprintf("%s pod %s stopped while %s pod %s exists", component, pod, p.component, name))
		}
	}
}

// checkStart records a problem when pod of component is created while no pod of the
// component it starts after is ready.
func (r *HibernationRecorder) checkStart(pod, component string) {
	after := map[string]string{resources.ComponentAPI: resources.ComponentElastic, resources.ComponentCrawler: resources.ComponentAPI}[component]
	if after == "" {
		return
	}
	for _, p := range r.pods {
		if p.component == after && p.ready && !p.terminating {
			return
		}
	}
	r.problems = append(r.problems, fmt.Sprintf("%s pod %s created while no %s pod is ready", component, pod, after))
}

// Order is the order the workloads were scaled to zero and back, "stop crawler", "start
// elastic" and so on.
func (r *HibernationRecorder) Order() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	scales := slices.Clone(r.scales)
	slices.SortStableFunc(scales, func(a, b scaleSeen) int { return cmp.Compare(a.rv, b.rv) })
	var out []string
	for _, s := range scales {
		out = append(out, s.what)
	}
	return out
}

// Problems lists what the pods showed out of order; empty means nothing.
func (r *HibernationRecorder) Problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.problems)
}
