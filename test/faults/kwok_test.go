package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	_, err = env.kube.CoreV1().Nodes().Patch(ctx, localcluster.NodeName, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}
