package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Cross-namespace references. A Monocle's elasticsearchRef may name an ECK Elasticsearch of
// another namespace only where the owner of that namespace grants it, with a Gateway API
// ReferenceGrant (gateway.networking.k8s.io/v1beta1; sigs.k8s.io/gateway-api v1.6.0,
// apis/v1/referencegrant_types.go): a grant in the Elasticsearch's namespace whose `from`
// names Monocles of the Monocle's namespace and whose `to` names ECK's Elasticsearch kind,
// that one by name or every one (no name). Until then the operator reads nothing of that
// namespace for the Monocle (neither the Elasticsearch's status nor a Secret), and once a
// grant is gone it stops using the cluster, as the ReferenceGrant's contract asks of
// implementations ("MUST respond to the removal of a grant by revoking the access that the
// grant allowed"). Across namespaces the Monocle also brings its own credentials
// (credentialsSecretRef, in its own namespace): the `elastic` superuser's Secret ECK makes is
// never read there. The operator's admin may turn cross-namespace references off entirely
// (Options.RefuseCrossNamespaceReferences).

// refNamespaceIndex indexes Monocles by the namespace of an ECK Elasticsearch they reference
// in another namespace than theirs, so that a ReferenceGrant's event there enqueues them.
const refNamespaceIndex = "elasticsearchRefNamespace"

func indexByRefNamespace(obj any) ([]string, error) {
	m, ok := obj.(*monoclev1alpha1.Monocle)
	if !ok {
		return nil, nil
	}
	if crossNamespaceRef(m) {
		return []string{resources.ECKNamespace(m)}, nil
	}
	return nil, nil
}

// crossNamespaceRef reports whether m's elasticsearchRef names an Elasticsearch of another
// namespace than m's.
func crossNamespaceRef(m *monoclev1alpha1.Monocle) bool {
	ref := m.Spec.Elasticsearch.ElasticsearchRef
	return ref != nil && ref.Namespace != "" && ref.Namespace != m.Namespace
}

// refuseReference returns the ElasticsearchHealthy condition that refuses m's cross-namespace
// elasticsearchRef, or nil when m may use it (or it is in m's namespace). It reads only m's
// spec and the ReferenceGrants of the Elasticsearch's namespace, in this order:
//   - CrossNamespaceReferencesDisabled: the operator's admin turned them off;
//   - ReferenceNotGranted: no ReferenceGrant there grants it, or the cluster does not serve
//     the ReferenceGrant API;
//   - CredentialsRequired: no credentialsSecretRef (the `elastic` user is never used across
//     namespaces).
func (c *Controller) refuseReference(m *monoclev1alpha1.Monocle) *metav1.Condition {
	if !crossNamespaceRef(m) {
		return nil
	}
	ref := m.Spec.Elasticsearch.ElasticsearchRef
	refused := func(reason, format string, args ...any) *metav1.Condition {
		return &metav1.Condition{Type: monoclev1alpha1.ConditionElasticsearchHealthy, Status: metav1.ConditionFalse,
			Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	if c.refuseCrossNamespace {
		return refused(reasons.CrossNamespaceReferencesDisabled,
			"spec.elasticsearch.elasticsearchRef names Elasticsearch %s in namespace %s, but the operator's admin turned cross-namespace references off (--cross-namespace-references=false): use an Elasticsearch of namespace %s, or spec.elasticsearch.external; the API and crawler wait",
			ref.Name, ref.Namespace, m.Namespace)
	}
	grantHint := fmt.Sprintf(`the owner of namespace %s can grant it with a ReferenceGrant (gateway.networking.k8s.io/v1beta1) there: from {group: %s, kind: Monocle, namespace: %s}, to {group: %s, kind: %s, name: %s}`,
		ref.Namespace, monoclev1alpha1.GroupName, m.Namespace, resources.ECKElasticsearchResource.Group, resources.ECKElasticsearchKind, ref.Name)
	granted, served := c.referenceGranted(ref.Namespace, m.Namespace, ref.Name)
	switch {
	case !served:
		return refused(reasons.ReferenceNotGranted,
			"spec.elasticsearch.elasticsearchRef names Elasticsearch %s in namespace %s, which needs a ReferenceGrant there, and the cluster does not serve the ReferenceGrant API (%s; the Gateway API's CRDs): %s; the API and crawler wait",
			ref.Name, ref.Namespace, resources.ReferenceGrantResource.GroupResource(), grantHint)
	case !granted:
		return refused(reasons.ReferenceNotGranted,
			"spec.elasticsearch.elasticsearchRef names Elasticsearch %s in namespace %s, and no ReferenceGrant there grants Monocles of namespace %s its use: %s; the API and crawler wait",
			ref.Name, ref.Namespace, m.Namespace, grantHint)
	}
	if ref.CredentialsSecretRef == nil {
		return refused(reasons.CredentialsRequired,
			"spec.elasticsearch.elasticsearchRef names Elasticsearch %s in namespace %s without credentialsSecretRef: across namespaces the operator never uses the elastic superuser ECK generates; set credentialsSecretRef to a kubernetes.io/basic-auth Secret of namespace %s with a user of that cluster; the API and crawler wait",
			ref.Name, ref.Namespace, m.Namespace)
	}
	return nil
}

// referenceGranted reports whether a ReferenceGrant of namespace grants Monocles of
// fromNamespace the ECK Elasticsearch name (grants), and whether the cluster serves the
// ReferenceGrant API at all (served false: nothing is granted). Grants are read from the
// informer's cache.
func (c *Controller) referenceGranted(namespace, fromNamespace, name string) (granted, served bool) {
	kind, served := c.optional.Kind(resources.ReferenceGrantResource)
	if !served {
		return false, false
	}
	objs, err := kind.List(namespace, labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return false, true
	}
	for _, obj := range objs {
		g, err := referenceGrantOf(obj)
		if err != nil {
			// One the API server accepted, but that does not decode: it grants nothing.
			utilruntime.HandleError(fmt.Errorf("ReferenceGrant %s/%s: %w", obj.GetNamespace(), obj.GetName(), err))
			continue
		}
		if grants(g, fromNamespace, name) {
			return true, true
		}
	}
	return false, true
}

// referenceGrantOf converts an unstructured ReferenceGrant to its type.
func referenceGrantOf(u *unstructured.Unstructured) (*gatewayv1beta1.ReferenceGrant, error) {
	g := &gatewayv1beta1.ReferenceGrant{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, g); err != nil {
		return nil, err
	}
	return g, nil
}

// grants reports whether g, a ReferenceGrant of an ECK Elasticsearch's namespace, lets the
// Monocles of fromNamespace reference the Elasticsearch name: one of its `from` entries is
// {group: monocle.monocle.change-metrics.io, kind: Monocle, namespace: fromNamespace}, and one
// of its `to` entries is {group: elasticsearch.k8s.elastic.co, kind: Elasticsearch} with no
// name or that name. The entries of each list combine with OR, and a `to` without a name
// covers every object of its group and kind in the namespace (ReferenceGrantSpec,
// ReferenceGrantTo.Name).
func grants(g *gatewayv1beta1.ReferenceGrant, fromNamespace, name string) bool {
	from, to := false, false
	for _, f := range g.Spec.From {
		if string(f.Group) == monoclev1alpha1.GroupName && f.Kind == "Monocle" && string(f.Namespace) == fromNamespace {
			from = true
		}
	}
	for _, t := range g.Spec.To {
		if string(t.Group) == resources.ECKElasticsearchResource.Group && t.Kind == resources.ECKElasticsearchKind &&
			(t.Name == nil || *t.Name == "" || string(*t.Name) == name) {
			to = true
		}
	}
	return from && to
}

// handleReferenceGrant enqueues the Monocles that reference an ECK Elasticsearch of the
// namespace of a ReferenceGrant (obj) that was created, changed or deleted: each may gain or
// lose the use of its cluster.
func (c *Controller) handleReferenceGrant(obj any) {
	object, err := objectMeta(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.enqueueIndexed(refNamespaceIndex, object.GetNamespace())
}

// handleReferenceGrantUpdate is handleReferenceGrant for an update, skipping the periodic
// resyncs that carry no change.
func (c *Controller) handleReferenceGrantUpdate(oldObj, newObj any) {
	if changed(oldObj, newObj) {
		c.handleReferenceGrant(newObj)
	}
}
