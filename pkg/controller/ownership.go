package controller

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Ownership of a cluster of elasticsearchRef or external. Monocle's index names are fixed
// (monocle.config, monocle.changes.1.<workspace>; Monocle 1.11.2,
// src/Monocle/Backend/Index.hs), so one cluster serves one Monocle: the one the cluster
// records as the owner of its Monocle indices, in the _meta of index monocle-operator.owner
// (elastic.OwnerIndex). The operand worker writes and reads that record with the Monocle's
// own credentials (operand.ClaimRequest) before the API and crawler start and before any
// other request of the operator's to the cluster; the sync reads only the worker's last
// result. The record, not the URL, decides: two spellings of one cluster's URL (a trailing
// dot, an IP address, an ECK Service given as external) find the same record. Within one
// namespace, the Monocle created first among those naming the same cluster
// (resources.Identity) keeps it before any claim, as clusterHolder says.
//
// A recorded owner that no Monocle of a namespace this controller watches has the UID of
// (deleted, or deleted and created again) is replaced by the next claimant. A cluster with
// Monocle indices and no record (used under an operator that kept none) goes to the Monocle
// created first among those of the same identity this controller sees: the one that
// operator let use it. With reading off (operand.Off) the operator claims nothing, and only
// the rule of the namespace holds.

// claimCluster asks the operand worker to claim target, m's resolved cluster, for m, and
// returns the condition that holds the Monocle until the cluster records it as the owner, or
// nil when it does (or the worker does not read).
func (c *Controller) claimCluster(ctx context.Context, m *monoclev1alpha1.Monocle, target resources.ElasticsearchTarget) *metav1.Condition {
	last, reading := c.operand.Claim(ctx, m, operand.ClaimRequest{Target: target, Adopt: c.adopts(m), OwnerGone: c.ownerGone})
	if !reading || last.Owned {
		return nil
	}
	cond := &metav1.Condition{Type: monoclev1alpha1.ConditionElasticsearchHealthy, Status: metav1.ConditionFalse, Reason: reasons.ElasticsearchInUse}
	const wait = "Monocle's index names are fixed, so two Monocles cannot share a cluster: the API and crawler of this one do not start until it uses another cluster"
	switch {
	case last.AddressRefused:
		cond.Reason = reasons.ElasticsearchAddressRefused
		cond.Message = fmt.Sprintf("The operator sent no request to Elasticsearch of spec.elasticsearch (%s): %s; name the cluster by a host that resolves to another address: the API and crawler wait, since the operator cannot record this Monocle as the owner of the cluster's Monocle indices",
			resources.Identity(m), last.Err)
	case last.Owner.UID != "" || last.Owner.Name != "":
		owner := "another Monocle"
		if last.Owner.Namespace == m.Namespace && last.Owner.Name != "" {
			owner = fmt.Sprintf("Monocle %s of this namespace", last.Owner.Name)
		}
		cond.Message = fmt.Sprintf("The cluster's Monocle indices belong to %s (recorded in index %s of the cluster): %s, or that Monocle is deleted",
			owner, elastic.OwnerIndex, wait)
	case last.Unrecorded:
		cond.Message = fmt.Sprintf("The cluster holds Monocle indices but no record of their owner (index %s): the Monocle created first among those using this cluster takes them; %s, or the cluster records this one",
			elastic.OwnerIndex, wait)
	default:
		cond.Status, cond.Reason = metav1.ConditionUnknown, reasons.ElasticsearchUnclaimed
		cond.Message = fmt.Sprintf("Recording this Monocle as the owner of the cluster's Monocle indices (index %s of the cluster): the API and crawler wait until it is",
			elastic.OwnerIndex)
		if last.Err != "" {
			cond.Message = fmt.Sprintf("Recording this Monocle as the owner of the cluster's Monocle indices (index %s of the cluster) failed: %s; the operator tries again, and the API and crawler wait (the credentials need the privileges create_index, view_index_metadata and manage on %s)",
				elastic.OwnerIndex, last.Err, elastic.OwnerIndex)
		}
	}
	return cond
}

// adopts reports whether m may take a cluster that holds Monocle indices and no owner record:
// no Monocle of the same identity (resources.Identity) was created before it.
func (c *Controller) adopts(m *monoclev1alpha1.Monocle) bool {
	objs, err := c.monocleIndexer.ByIndex(identityIndex, resources.Identity(m))
	if err != nil {
		utilruntime.HandleError(err)
		return false
	}
	for _, obj := range objs {
		if o, ok := obj.(*monoclev1alpha1.Monocle); ok && o.UID != m.UID && createdBefore(o, m) {
			return false
		}
	}
	return true
}

// ownerGone reports whether the recorded owner o no longer exists: no Monocle in this
// controller's cache has its UID, and the controller watches o's namespace (a Monocle of a
// namespace it does not watch may well exist). A record without a UID has no owner.
func (c *Controller) ownerGone(o elastic.Owner) bool {
	if o.UID == "" {
		return true
	}
	if c.watchNamespace != "" && o.Namespace != c.watchNamespace {
		return false
	}
	for _, obj := range c.monocleIndexer.List() {
		if m, ok := obj.(*monoclev1alpha1.Monocle); ok && string(m.UID) == o.UID {
			return false
		}
	}
	return true
}
