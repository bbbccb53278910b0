package day2

import (
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Operand health: what the operand worker last read of a Monocle's Elasticsearch (its
// cluster health and disk use) and of its API's /health, as the conditions
// ElasticsearchHealthy, DiskPressure and APIHealthy.

// APICondition is the APIHealthy condition for the last read r; apiReady says whether the
// API has a ready pod. Until this process has asked the API, the condition m's status has
// stands, as for Elasticsearch's (HealthConditions).
func APICondition(m *monoclev1alpha1.Monocle, r contract.Result, apiReady bool) metav1.Condition {
	cond := metav1.Condition{Type: monoclev1alpha1.ConditionAPIHealthy, Status: metav1.ConditionUnknown}
	switch {
	case !apiReady:
		cond.Reason, cond.Message = reasons.APINotReady, "The API has no ready pod to ask for its health"
	case !r.APIRead:
		if APIHealthRead(m) {
			return *apimeta.FindStatusCondition(m.Status.Conditions, cond.Type)
		}
		cond.Reason, cond.Message = reasons.APINotReady, "The API's health was not read yet"
	case r.APIErr != "":
		cond.Status, cond.Reason = metav1.ConditionFalse, reasons.APIUnreachable
		cond.Message = Truncate(fmt.Sprintf("The API does not answer its health check through Service %s (the NetworkPolicy %s must admit the operator's pods to port %d): %s",
			resources.APIName(m), resources.NetworkPolicyName(m), resources.APIPort, r.APIErr))
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, reasons.APIAnswers,
			fmt.Sprintf("The API answers GET /health through Service %s", resources.APIName(m))
	}
	return cond
}

// HealthConditions are the ElasticsearchHealthy and DiskPressure conditions for the last
// read r of m's Elasticsearch; elasticReady says whether Elasticsearch has a ready pod. Until
// this process has read it (an operator that just started, or one whose reads wait for a
// slot), the conditions an earlier read left in m's status stand: "not read yet" is no news,
// and writing it would flap every Monocle's status at each start.
func HealthConditions(m *monoclev1alpha1.Monocle, r contract.Result, elasticReady bool) []metav1.Condition {
	healthy := metav1.Condition{Type: monoclev1alpha1.ConditionElasticsearchHealthy, Status: metav1.ConditionUnknown}
	disk := metav1.Condition{Type: monoclev1alpha1.ConditionDiskPressure, Status: metav1.ConditionUnknown}
	if elasticReady && r.Done.IsZero() {
		if was := EarlierHealth(m); was != nil {
			return was
		}
	}
	switch {
	case !elasticReady:
		healthy.Reason, healthy.Message = reasons.ElasticsearchNotReady, "Elasticsearch has no ready pod to read its health from"
		disk.Reason, disk.Message = reasons.ElasticsearchNotReady, "Elasticsearch has no ready pod to read its disk use from"
		return []metav1.Condition{healthy, disk}
	case r.AddressRefused:
		healthy.Status, healthy.Reason = metav1.ConditionFalse, reasons.ElasticsearchAddressRefused
		where := "at " + resources.BundledTarget(m).URL
		if !resources.BundledElasticsearch(m) {
			where = "of spec.elasticsearch (" + resources.Identity(m) + ")"
		}
		healthy.Message = Truncate(fmt.Sprintf("The operator sent no request to Elasticsearch %s: %s; name the cluster by a host that resolves to another address",
			where, r.Err))
		disk.Reason, disk.Message = reasons.ElasticsearchUnreachable, "Cannot read the disk use of Elasticsearch; see ElasticsearchHealthy"
		return []metav1.Condition{healthy, disk}
	case r.Err != "" || r.Health == nil:
		why := r.Err
		if why == "" {
			why = "not read yet"
		}
		healthy.Reason = reasons.ElasticsearchUnreachable
		healthy.Message = Truncate(fmt.Sprintf("Cannot read the health of Elasticsearch %s: %s", readFrom(m), why))
		disk.Reason, disk.Message = reasons.ElasticsearchUnreachable, "Cannot read the disk use of Elasticsearch; see ElasticsearchHealthy"
		return []metav1.Condition{healthy, disk}
	}
	h := r.Health
	switch elastic.HealthStatus(h.Status) {
	case elastic.HealthGreen:
		healthy.Status, healthy.Reason = metav1.ConditionTrue, reasons.Green
		healthy.Message = "Elasticsearch reports green: every shard is assigned"
	case elastic.HealthYellow:
		healthy.Status, healthy.Reason = metav1.ConditionTrue, reasons.Yellow
		healthy.Message = "Elasticsearch reports yellow: a replica shard is unassigned, as on any single node whose indices ask for replicas; every document can be read and written"
	default:
		healthy.Status, healthy.Reason = metav1.ConditionFalse, reasons.Red
		healthy.Message = "Elasticsearch reports red: a primary shard is unassigned, so some indices cannot be read or written; " + redAdvice(m)
	}
	used := ptr.Deref(h.DiskUsedPercent, 0)
	if len(h.ReadOnlyIndices) > 0 {
		disk.Status, disk.Reason = metav1.ConditionTrue, reasons.IndicesReadOnly
		disk.Message = Truncate(fmt.Sprintf("Elasticsearch's data volume is %d%% full and Elasticsearch made %d indices read-only at its flood-stage watermark (%s): Monocle drops what it crawls until they are writable; %s, and the operator clears the block once the disk is under the high watermark",
			used, len(h.ReadOnlyIndices), strings.Join(h.ReadOnlyIndices, ", "), diskAdvice(m)))
		return []metav1.Condition{healthy, disk}
	}
	disk.Status, disk.Reason = metav1.ConditionFalse, reasons.VolumeHasRoom
	disk.Message = fmt.Sprintf("Elasticsearch's data volume is %d%% full (at most %d%%)", used, monoclev1alpha1.DiskPressurePercent)
	if used > monoclev1alpha1.DiskPressurePercent {
		disk.Status, disk.Reason = metav1.ConditionTrue, reasons.VolumeAlmostFull
		disk.Message = fmt.Sprintf("Elasticsearch's data volume is %d%% full (over %d%%): at its flood-stage watermark (95%% by default) Elasticsearch makes the indices read-only and Monocle drops crawled documents; %s",
			used, monoclev1alpha1.DiskPressurePercent, diskAdvice(m))
	}
	return []metav1.Condition{healthy, disk}
}

// redAdvice and diskAdvice say what to do about a red Elasticsearch and a full disk: on the
// bundled node, its logs and spec.storageSize; on a cluster of elasticsearchRef or external,
// which the operator does not run, that cluster's own.
func redAdvice(m *monoclev1alpha1.Monocle) string {
	if !resources.BundledElasticsearch(m) {
		return "see the cluster's own health and logs (GET _cluster/allocation/explain tells why a shard is unassigned)"
	}
	return "see its logs (kubectl logs " + resources.ElasticName(m) + "-0)"
}

func diskAdvice(m *monoclev1alpha1.Monocle) string {
	if !resources.BundledElasticsearch(m) {
		return "free or add disk on the cluster's data nodes, which the operator does not run"
	}
	return "raise spec.storageSize (the volume grows in place when its StorageClass allows expansion)"
}

// readFrom says where the operator reads m's Elasticsearch, for the message of a failed read:
// the bundled node through its Service, which m's NetworkPolicy must open to the operator,
// or the cluster of elasticsearchRef or external (resources.Identity), which it does not run.
func readFrom(m *monoclev1alpha1.Monocle) string {
	if !resources.BundledElasticsearch(m) {
		return "of spec.elasticsearch (" + resources.Identity(m) + ")"
	}
	return fmt.Sprintf("at %s (the NetworkPolicy %s must admit the operator's pods to port %d)",
		resources.BundledTarget(m).URL, resources.NetworkPolicyName(m), resources.ElasticPort)
}

// APIHealthRead reports whether m's status has an APIHealthy condition that a read of the
// API made (not one that says the API has no ready pod or was not read yet).
func APIHealthRead(m *monoclev1alpha1.Monocle) bool {
	c := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionAPIHealthy)
	return c != nil && c.Reason != reasons.APINotReady
}

// EarlierHealth returns the ElasticsearchHealthy and DiskPressure conditions of m's status
// when a read made them (not while Elasticsearch had no ready pod, nor while the sync found
// the cluster of elasticsearchRef or external missing, in use or not yet claimed), else nil.
func EarlierHealth(m *monoclev1alpha1.Monocle) []metav1.Condition {
	var out []metav1.Condition
	for _, typ := range []string{monoclev1alpha1.ConditionElasticsearchHealthy, monoclev1alpha1.ConditionDiskPressure} {
		c := apimeta.FindStatusCondition(m.Status.Conditions, typ)
		if c == nil || c.Reason == reasons.ElasticsearchNotReady || c.Reason == reasons.ElasticsearchNotFound || c.Reason == reasons.ElasticsearchInUse ||
			c.Reason == reasons.ElasticsearchUnclaimed {
			return nil
		}
		out = append(out, *c)
	}
	return out
}
