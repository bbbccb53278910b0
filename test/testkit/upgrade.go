package testkit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// UpgradeRecorder follows the API and crawler pods of a namespace with a watch and records
// what a Monocle upgrade must never show: API pods of two images at once, and a
// crawler pod of an image before an API pod of that image was ready. It reads the component
// from each pod's app.kubernetes.io/component label and the image from its first container.
type UpgradeRecorder struct {
	mu sync.Mutex
	// pods are the pods that exist, by namespace/name: component and image.
	pods map[string][2]string
	// apiReady is when an API pod of each image was first seen ready; crawlerSeen when a
	// crawler pod of each image was first seen.
	apiReady, crawlerSeen map[string]time.Time
	// overlaps are the times API pods of two images existed at once.
	overlaps []string
	stop     func()
}

// RecordUpgrade starts an UpgradeRecorder on the pods of namespace; Stop ends it. The watch
// is not resumed if the API server ends it (as a restart does): Gaps reports that.
func RecordUpgrade(ctx context.Context, kube kubernetes.Interface, namespace string) (*UpgradeRecorder, error) {
	w, err := kube.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("watching the pods of %s: %w", namespace, err)
	}
	r := &UpgradeRecorder{pods: map[string][2]string{}, apiReady: map[string]time.Time{}, crawlerSeen: map[string]time.Time{}, stop: w.Stop}
	go func() {
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && len(pod.Spec.Containers) > 0 {
				r.observe(ev.Type, pod)
			}
		}
	}()
	return r, nil
}

// Stop ends the watch.
func (r *UpgradeRecorder) Stop() { r.stop() }

func (r *UpgradeRecorder) observe(typ watch.EventType, pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := pod.Namespace + "/" + pod.Name
	component, image := pod.Labels[resources.ComponentLabel], pod.Spec.Containers[0].Image
	if typ == watch.Deleted {
		delete(r.pods, key)
		return
	}
	r.pods[key] = [2]string{component, image}
	now := time.Now()
	switch component {
	case resources.ComponentAPI:
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				if _, seen := r.apiReady[image]; !seen {
					r.apiReady[image] = now
				}
			}
		}
	case resources.ComponentCrawler:
		if _, seen := r.crawlerSeen[image]; !seen {
			r.crawlerSeen[image] = now
		}
	}
	var images []string
	for _, p := range r.pods {
		if p[0] == resources.ComponentAPI && !slices.Contains(images, p[1]) {
			images = append(images, p[1])
		}
	}
	if len(images) > 1 {
		slices.Sort(images)
		r.overlaps = append(r.overlaps, fmt.Sprintf("%s: API pods of %s at once", now.Format("15:04:05.000"), strings.Join(images, " and ")))
	}
}

// Problems lists what the upgrade to image did wrong: each moment API pods of two images
// existed together, no ready API pod or no crawler pod of image seen, or a crawler pod of
// image seen before an API pod of image was ready. Empty means none.
func (r *UpgradeRecorder) Problems(image string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.overlaps)
	ready, ok := r.apiReady[image]
	crawler, started := r.crawlerSeen[image]
	switch {
	case !ok || !started:
		out = append(out, fmt.Sprintf("no ready API pod (%v) or no crawler pod (%v) of %s seen", ok, started, image))
	case crawler.Before(ready):
		out = append(out, fmt.Sprintf("a crawler pod of %s appeared at %s, before an API pod of %s was ready at %s",
			image, crawler.Format("15:04:05.000"), image, ready.Format("15:04:05.000")))
	}
	return out
}
