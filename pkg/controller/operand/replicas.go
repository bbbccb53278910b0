package operand

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// monoclePattern matches every index of Monocle's (elastic.IsMonocleIndex), a new
// workspace's included.
const monoclePattern = "monocle*"

// keepReplicas reads index.number_of_replicas of Monocle's indices with client and, when p
// keeps them and one differs from p.N, sets p.N on all of them (hidden and closed ones
// included) provided contract.ReplicasFit(p.N, dataNodes), dataNodes being what the same read
// found. It returns the replicas as they are after, and why reading or setting them failed
// ("" when it did not). An index created after this read, such as a new workspace's, is
// caught by the next read.
func keepReplicas(ctx context.Context, logger klog.Logger, client elastic.Client, p ReplicasPlan, dataNodes int) (map[string]int, string) {
	if !p.Keep {
		return nil, ""
	}
	replicas, err := client.IndexReplicas(ctx, monoclePattern)
	if err != nil {
		logger.V(2).Info("Reading the replicas of Monocle's indices failed", "err", err)
		return nil, err.Error()
	}
	differ := false
	for _, n := range replicas {
		differ = differ || n != int(p.N)
	}
	if !differ || !contract.ReplicasFit(p.N, dataNodes) {
		return replicas, ""
	}
	if err := client.SetIndexReplicas(ctx, monoclePattern, int(p.N)); err != nil {
		logger.V(2).Info("Setting the replicas of Monocle's indices failed", "replicas", p.N, "err", err)
		return replicas, fmt.Sprintf("setting index.number_of_replicas to %d: %v", p.N, err)
	}
	logger.Info("Set the replicas of Monocle's indices", "replicas", p.N, "was", replicas)
	after := make(map[string]int, len(replicas))
	for ix := range replicas {
		after[ix] = int(p.N)
	}
	return after, ""
}
