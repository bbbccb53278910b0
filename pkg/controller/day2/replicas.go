package day2

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Index replicas. Monocle 1.11.2 creates its indices with 1 shard and 0 replicas
// (src/Monocle/Backend/Index.hs, indexSettings); spec.elasticsearch.indexReplicas asks for more on a cluster of several data
// nodes. With each read of Elasticsearch the operand worker reads index.number_of_replicas of
// Monocle's indices and, when one differs, sets the number on all of them, a new workspace's
// index included by the read after its creation; it does so only when the cluster's data
// nodes, read in the same read, can hold that many copies (operand.ReplicasFit). A sync
// refuses a number the data nodes cannot hold (SpecAccepted False) and reports the data
// nodes and the replicas in status.elasticsearchCluster.

// PlanIndexReplicas is the replicas plan of m: spec.elasticsearch.indexReplicas, kept when
// set; unset leaves the replicas as they are.
func PlanIndexReplicas(m *monoclev1alpha1.Monocle) operand.ReplicasPlan {
	n := m.Spec.Elasticsearch.IndexReplicas
	if n == nil {
		return operand.ReplicasPlan{}
	}
	return operand.ReplicasPlan{Keep: true, N: *n}
}

// ClusterStatus is status.elasticsearchCluster of m, whose cluster is target, from the
// status m has (was; nil before one) and the last read (last): kind and URL from target
// (without credentials), phase and health as was has them, the data nodes of the last read
// that found them and, while indexReplicas is set, the replicas of Monocle's indices when
// every one has the same. Until a read finds them, was's are kept, as an operator that has
// just started finds them again.
func ClusterStatus(m *monoclev1alpha1.Monocle, target resources.ElasticsearchTarget, was *monoclev1alpha1.ElasticsearchClusterStatus, last operand.Result) *monoclev1alpha1.ElasticsearchClusterStatus {
	out := &monoclev1alpha1.ElasticsearchClusterStatus{Kind: target.Kind, URL: target.URL}
	if was != nil {
		out.Phase, out.Health, out.DataNodes, out.IndexReplicas = was.Phase, was.Health, was.DataNodes, was.IndexReplicas
	}
	if last.DataNodes > 0 {
		out.DataNodes = ptr.To(int32(last.DataNodes))
	}
	switch {
	case m.Spec.Elasticsearch.IndexReplicas == nil:
		out.IndexReplicas = nil
	case last.Replicas != nil:
		out.IndexReplicas = sameReplicas(last.Replicas)
	}
	return out
}

// sameReplicas is the number of replicas every index of replicas has; nil when they differ
// or there is no index.
func sameReplicas(replicas map[string]int) *int32 {
	var same *int32
	for _, n := range replicas {
		if same != nil && *same != int32(n) {
			return nil
		}
		same = ptr.To(int32(n))
	}
	return same
}

// ReplicasCondition is the SpecAccepted condition of spec.elasticsearch.indexReplicas given
// cluster, the status of m's cluster (ClusterStatus): nil when indexReplicas is unset, when
// its data nodes can hold that many replicas (operand.ReplicasFit), or while no read has
// found them (the bundled Elasticsearch is known to be one node); otherwise False with reason
// IndexReplicasTooHigh, and the worker leaves the indices' replicas as they are.
func ReplicasCondition(m *monoclev1alpha1.Monocle, cluster *monoclev1alpha1.ElasticsearchClusterStatus) *metav1.Condition {
	want := m.Spec.Elasticsearch.IndexReplicas
	if want == nil {
		return nil
	}
	var nodes *int32
	if cluster != nil {
		nodes = cluster.DataNodes
	}
	if nodes == nil && cluster != nil && cluster.Kind == monoclev1alpha1.ElasticsearchBundled {
		nodes = ptr.To[int32](1)
	}
	if nodes == nil || operand.ReplicasFit(*want, int(*nodes)) {
		return nil
	}
	return &metav1.Condition{Type: monoclev1alpha1.ConditionSpecAccepted, Status: metav1.ConditionFalse, Reason: reasons.IndexReplicasTooHigh,
		Message: fmt.Sprintf("elasticsearch.indexReplicas is %d but the cluster has %d data nodes: Elasticsearch never puts two copies of a shard on one node, so %d replicas need %d data nodes; set at most %d; the indices keep their replicas",
			*want, *nodes, *want, *want+1, max(*nodes-1, 0))}
}
