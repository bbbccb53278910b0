package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/change-metrics/monocle-operator/test/localcluster"
)

// heldNamespaces are the namespaces where kwok never completes a Job's pod: an update-idents
// Job there stays running until it is deleted, so the deletion scenario can delete a Monocle
// (or a namespace) while its Job runs, deterministically. Elsewhere kwok completes Job pods
// at once, as hack/build-control-plane.sh's stages do.
var heldNamespaces = func() []string {
	out := []string{holdNamespace}
	for i := range 10 {
		out = append(out, fmt.Sprintf("%s-%d", namespaceDeletionPrefix, i))
	}
	return out
}()

// writeStages copies kwok's Stage files from src to dst, with pod-complete.yaml restricted
// to pods outside heldNamespaces, and returns dst.
func writeStages(src, dst string) (string, error) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	found := false
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return "", err
		}
		if e.Name() == "pod-complete.yaml" {
			found = true
			const anchor = "    matchExpressions:\n"
			if !strings.Contains(string(data), anchor) {
				return "", fmt.Errorf("kwok stage %s has no %q to extend", e.Name(), strings.TrimSpace(anchor))
			}
			var held strings.Builder
			held.WriteString(anchor + "    - key: '.metadata.namespace'\n      operator: 'NotIn'\n      values:\n")
			for _, ns := range heldNamespaces {
				fmt.Fprintf(&held, "      - '%s'\n", ns)
			}
			data = []byte(strings.Replace(string(data), anchor, held.String(), 1))
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return "", err
		}
	}
	if !found {
		return "", fmt.Errorf("no pod-complete.yaml in %s", src)
	}
	return dst, nil
}

// growNode raises the fake node's capacity. localcluster's node has 32 CPUs and 256Gi,
// which the pods of about 128 default Monocles (250m CPU, 1.4Gi memory requested each)
// fill; the full variant runs more, and pods that cannot be scheduled would pass for an
// operator that does not converge. kwok keeps a node's capacity once initialised.
func growNode(ctx context.Context) error {
	resources := map[string]string{"cpu": "256", "memory": "2Ti", "pods": "2000"}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"capacity": resources, "allocatable": resources}})
	if err != nil {
		return err
	}
	_, err = env.Kube.CoreV1().Nodes().Patch(ctx, localcluster.NodeName, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// kwokRetryPeriod is how often retryKwokStages looks for pods kwok left behind. A kubelet
// syncs each pod's status about every 10s.
const kwokRetryPeriod = 10 * time.Second

// retryKwokStages stands in, until ctx ends, for the retries a kubelet makes and kwok does
// not: kwok drops a pod's stage when its patch fails with an error it does not classify as
// retriable, such as the 500 "rpc error: code = Unavailable ... connection reset by peer"
// the API server returns while etcd restarts (sigs.k8s.io/kwok v0.8.0
// pkg/kwok/controllers/utils.go shouldRetry), and tries again only when its pod watch next
// relists, minutes later. Every kwokRetryPeriod this touches an annotation on each pod in ns
// that is not finished (not Succeeded or Failed) and either not Ready or being deleted, which
// gives kwok a watch event and so another try; it does the same for PersistentVolumeClaims
// still Pending after kwokRetryPeriod, which kwok binds. It returns how many touches it made.
func retryKwokStages(ctx context.Context, ns string) int {
	touches := 0
	ticker := time.NewTicker(kwokRetryPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return touches
		case <-ticker.C:
		}
		now := time.Now()
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"faults.monocle-operator/kwok-retry":%q}}}`, now.Format(time.RFC3339Nano)))
		if pods, err := env.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
			for i := range pods.Items {
				if !kwokLeftBehind(&pods.Items[i], now) {
					continue
				}
				if _, err := env.Kube.CoreV1().Pods(ns).Patch(ctx, pods.Items[i].Name, types.MergePatchType, patch, metav1.PatchOptions{}); err == nil {
					touches++
				}
			}
		}
		if claims, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{}); err == nil {
			for _, pvc := range claims.Items {
				if pvc.Status.Phase != corev1.ClaimPending || now.Sub(pvc.CreationTimestamp.Time) <= kwokRetryPeriod {
					continue
				}
				if _, err := env.Kube.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, pvc.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err == nil {
					touches++
				}
			}
		}
	}
}

// kwokLeftBehind reports whether pod p, at now, waits for kwok: it is scheduled and
// unfinished, and being deleted or, more than kwokRetryPeriod after its creation, not Ready.
func kwokLeftBehind(p *corev1.Pod, now time.Time) bool {
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	if p.DeletionTimestamp != nil {
		// kwok deletes a pod as soon as it sees the deletion; the timestamp is in the future
		// by the grace period, so it tells nothing here.
		return true
	}
	return !podReady(p) && now.Sub(p.CreationTimestamp.Time) > kwokRetryPeriod
}
