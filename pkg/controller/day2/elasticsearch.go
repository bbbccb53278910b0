package day2

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// supportedElasticsearchMajor is the Elasticsearch major version Monocle 1.11.2 talks to: its
// docker-compose file and k8s manifests run 7.17.16, and its client speaks the 7.x API.
const supportedElasticsearchMajor = 7

// maxHeapShare is the largest share of the Elasticsearch memory limit a javaOpts heap may
// take: the JVM needs memory beyond its heap (Elasticsearch's "Heap size settings" advises
// half), and a pod past its limit is OOM-killed.
const maxHeapShare = 0.75

// ElasticSpecCondition is the SpecAccepted condition of m's Elasticsearch settings, which
// admission cannot check, against live, the StatefulSet as it runs (nil for a new Monocle):
//   - an image of another major version than Monocle supports is refused;
//   - so is an image older than the running one: Elasticsearch cannot read data a newer
//     version wrote (ECK refuses downgrades for the same reason). A tag that is not a release
//     version (latest, a digest) cannot be compared and is accepted;
//   - a javaOpts -Xmx heap above maxHeapShare of the memory limit is refused.
//
// While it is False the StatefulSet is left as it is.
func ElasticSpecCondition(m *monoclev1alpha1.Monocle, live *appsv1.StatefulSet) metav1.Condition {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionSpecAccepted, Status: metav1.ConditionTrue,
		Reason: reasons.SpecAccepted, Message: "The operator accepts every part of the spec"}
	refuse := func(reason, format string, args ...any) metav1.Condition {
		cond.Status, cond.Reason = metav1.ConditionFalse, reason
		cond.Message = fmt.Sprintf(format, args...) + "; the StatefulSet is left as it is"
		return cond
	}
	image := resources.ElasticImage(m)
	if want, ok := resources.ImageVersion(image); ok {
		if want[0] != supportedElasticsearchMajor {
			return refuse(reasons.ElasticsearchVersionUnsupported, "elasticsearch.image %s is Elasticsearch %d: Monocle 1.11.2 supports Elasticsearch %d only",
				image, want[0], supportedElasticsearchMajor)
		}
		if live != nil && len(live.Spec.Template.Spec.Containers) > 0 {
			running := live.Spec.Template.Spec.Containers[0].Image
			if have, ok := resources.ImageVersion(running); ok && older(want, have) {
				return refuse(reasons.ElasticsearchDowngrade, "elasticsearch.image %s is older than the running %s: Elasticsearch cannot read data a newer version wrote, so downgrades are refused",
					image, running)
			}
		}
	}
	limits := resources.ElasticResources(m).Limits
	limit := limits.Memory()
	if heap, text, ok := maxHeap(m.Spec.Elasticsearch.JavaOpts); ok && !limit.IsZero() && float64(heap) > maxHeapShare*float64(limit.Value()) {
		return refuse(reasons.HeapAboveLimit, "elasticsearch.javaOpts sets a heap of %s (%d MiB) for a memory limit of %s (%d MiB): keep the heap at most %d%% of the limit, half is advised, or the pod is OOM-killed",
			text, heap>>20, limit.String(), limit.Value()>>20, int(maxHeapShare*100))
	}
	return cond
}

// xmx matches the JVM's maximum heap option: -Xmx<size>[k|K|m|M|g|G|t|T].
var xmx = regexp.MustCompile(`^-Xmx([0-9]+)([kKmMgGtT]?)$`)

// maxHeap returns the heap of the last -Xmx option of javaOpts (the JVM takes the last) in
// bytes (saturating at 4 EiB) and as written, and false when there is none.
func maxHeap(javaOpts string) (int64, string, bool) {
	var last []string
	for _, opt := range strings.Fields(javaOpts) {
		if sub := xmx.FindStringSubmatch(opt); sub != nil {
			last = sub
		}
	}
	if last == nil {
		return 0, "", false
	}
	shift := map[string]uint{"": 0, "k": 10, "K": 10, "m": 20, "M": 20, "g": 30, "G": 30, "t": 40, "T": 40}[last[2]]
	n, err := strconv.ParseInt(last[1], 10, 64)
	if err != nil || n > (1<<62)>>shift {
		n = (1 << 62) >> shift
	}
	return n << shift, last[1] + last[2], true
}

// older reports whether version a comes before b.
func older(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// Index replicas. Monocle 1.11.2 creates its indices with 1 shard and 0 replicas
// (src/Monocle/Backend/Index.hs, indexSettings); spec.elasticsearch.indexReplicas asks for more on a cluster of several data
// nodes. With each read of Elasticsearch the operand worker reads index.number_of_replicas of
// Monocle's indices and, when one differs, sets the number on all of them, a new workspace's
// index included by the read after its creation; it does so only when the cluster's data
// nodes, read in the same read, can hold that many copies (contract.ReplicasFit). A sync
// refuses a number the data nodes cannot hold (SpecAccepted False) and reports the data
// nodes and the replicas in status.elasticsearchCluster.

// PlanIndexReplicas is the replicas plan of m: spec.elasticsearch.indexReplicas, kept when
// set; unset leaves the replicas as they are.
func PlanIndexReplicas(m *monoclev1alpha1.Monocle) contract.ReplicasPlan {
	n := m.Spec.Elasticsearch.IndexReplicas
	if n == nil {
		return contract.ReplicasPlan{}
	}
	return contract.ReplicasPlan{Keep: true, N: *n}
}

// ClusterStatus is status.elasticsearchCluster of m, whose cluster is target, from the
// status m has (was; nil before one or when it is not to be kept) and the last read (last):
// kind and URL from target (without credentials), phase and health from eck (the ECK
// Elasticsearch's, empty for the other kinds and while none was read), the data nodes
// of the last read that found them and, while indexReplicas is set, the replicas of Monocle's
// indices when every one has the same. Until a read finds them, was's are kept, as an
// operator that has just started finds them again. For the bundled Elasticsearch, node is
// its StatefulSet (nil: none), which gives the authentication (Authentication).
func ClusterStatus(m *monoclev1alpha1.Monocle, target resources.ElasticsearchTarget, eck resources.ECKElasticsearch, node *appsv1.StatefulSet, was *monoclev1alpha1.ElasticsearchClusterStatus, last contract.Result) *monoclev1alpha1.ElasticsearchClusterStatus {
	out := &monoclev1alpha1.ElasticsearchClusterStatus{Kind: target.Kind, URL: target.URL, Phase: eck.Phase, Health: eck.Health}
	if target.Bundled() {
		out.Authentication = Authentication(node)
	}
	if was != nil {
		out.DataNodes, out.IndexReplicas = was.DataNodes, was.IndexReplicas
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

// Authentication is the bundled Elasticsearch's authentication given node, its StatefulSet
// (nil: none yet): Enabled once the node's template runs with security on
// (resources.ElasticSecured) and every pod runs that template (StatefulSetRolledOut, which a
// stopped node's StatefulSet is once it has none), Enabling otherwise.
func Authentication(node *appsv1.StatefulSet) monoclev1alpha1.ElasticsearchAuthentication {
	if node != nil && resources.ElasticSecured(&node.Spec.Template.Spec) && StatefulSetRolledOut(node) {
		return monoclev1alpha1.ElasticsearchAuthenticationEnabled
	}
	return monoclev1alpha1.ElasticsearchAuthenticationEnabling
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
// its data nodes can hold that many replicas (contract.ReplicasFit), or while no read has
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
	if nodes == nil || contract.ReplicasFit(*want, int(*nodes)) {
		return nil
	}
	return &metav1.Condition{Type: monoclev1alpha1.ConditionSpecAccepted, Status: metav1.ConditionFalse, Reason: reasons.IndexReplicasTooHigh,
		Message: fmt.Sprintf("elasticsearch.indexReplicas is %d but the cluster has %d data nodes: Elasticsearch never puts two copies of a shard on one node, so %d replicas need %d data nodes; set at most %d; the indices keep their replicas",
			*want, *nodes, *want, *want+1, max(*nodes-1, 0))}
}
