package controller

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// The Elasticsearch target: which cluster a Monocle uses, where and as whom the operator and
// Monocle's pods reach it (resources.ElasticsearchTarget, built by resources.NewTarget). The
// bundled cluster needs nothing read; an ECK Elasticsearch of elasticsearchRef is read from the informer of ECK's optional
// API (never written), and the credentials and CA of either kind from Secrets, whose data is
// read on demand (readSecret). Monocle's index names are fixed (monocle.config,
// monocle.changes.1.<workspace>; Monocle 1.11.2, src/Monocle/Backend/Index.hs), so one
// cluster serves one Monocle: the one the cluster records as their owner (ownership.go).

// Keys of the Secrets a credentialsSecretRef names (type kubernetes.io/basic-auth,
// corev1.BasicAuthUsernameKey and corev1.BasicAuthPasswordKey) and of a caSecretRef's.
const (
	usernameKey = corev1.BasicAuthUsernameKey
	passwordKey = corev1.BasicAuthPasswordKey
	caKey       = resources.ECKCAKey
)

// targetSecretKeys are the only keys the controller keeps of a Secret the target reads.
var targetSecretKeys = []string{usernameKey, passwordKey, resources.ECKElasticUser, caKey}

// secretKey is one value the target reads from a Secret.
type secretKey struct {
	secret types.NamespacedName
	key    string
	// what the value is, as a condition's message names it.
	what string
	// optional is set when a missing key means none (a CA: the system's roots).
	optional bool
}

// targetPlan is where the credentials and CA of a target come from.
type targetPlan struct {
	// target is resources.NewTarget's, with Username set when it is a fixed user's name.
	target resources.ElasticsearchTarget
	// user names the Secret key holding the user's name when it is not fixed.
	user, password, ca *secretKey
}

// planTarget returns m's target and where its credentials and CA come from, m using
// elasticsearchRef or external; tls says whether an ECK Elasticsearch serves HTTPS.
func planTarget(m *monoclev1alpha1.Monocle, tls bool) targetPlan {
	in := func(name, key, what string) *secretKey {
		return &secretKey{secret: types.NamespacedName{Namespace: m.Namespace, Name: name}, key: key, what: what}
	}
	es := m.Spec.Elasticsearch
	p := targetPlan{target: resources.NewTarget(m, tls)}
	var creds *monoclev1alpha1.SecretReference
	var field string
	if ref := es.ElasticsearchRef; ref != nil {
		ns := resources.ECKNamespace(m)
		creds, field = ref.CredentialsSecretRef, "spec.elasticsearch.elasticsearchRef.credentialsSecretRef"
		if creds == nil && ns == m.Namespace {
			// The elastic user's Secret of another namespace is never read
			// (refuseReference).
			p.target.Username = resources.ECKElasticUser
			p.password = &secretKey{secret: types.NamespacedName{Namespace: ns, Name: resources.ECKElasticUserSecret(ref.Name)},
				key: resources.ECKElasticUser, what: "the password of the elastic user ECK generates"}
		}
		if tls {
			p.ca = &secretKey{secret: types.NamespacedName{Namespace: ns, Name: resources.ECKPublicCertsSecret(ref.Name)},
				key: caKey, what: "the CA of the cluster's HTTP certificate", optional: true}
		}
	} else {
		creds, field = es.External.CredentialsSecretRef, "spec.elasticsearch.external.credentialsSecretRef"
		if ca := es.External.CASecretRef; ca != nil {
			p.ca = in(ca.Name, caKey, "the CA of spec.elasticsearch.external.caSecretRef")
		}
	}
	if creds != nil {
		p.user = in(creds.Name, usernameKey, "the user name of "+field)
		p.password = in(creds.Name, passwordKey, "the password of "+field)
	}
	return p
}

// targetSecrets are the Secrets m's target may read, for secretRefIndex: an ECK
// Elasticsearch's CA Secret whether or not it serves HTTPS.
func targetSecrets(m *monoclev1alpha1.Monocle) []types.NamespacedName {
	if resources.BundledElasticsearch(m) {
		return nil
	}
	p := planTarget(m, true)
	var out []types.NamespacedName
	for _, k := range []*secretKey{p.user, p.password, p.ca} {
		if k != nil && !slices.Contains(out, k.secret) {
			out = append(out, k.secret)
		}
	}
	return out
}

// keepTargetKeys keeps the values of targetSecretKeys of a Secret.
func keepTargetKeys(s *corev1.Secret) map[string][]byte {
	out := map[string][]byte{}
	for _, k := range targetSecretKeys {
		if v, ok := s.Data[k]; ok {
			out[k] = v
		}
	}
	return out
}

// clusterTarget is what the resolve phase decides of the Elasticsearch cluster a Monocle
// uses.
type clusterTarget struct {
	// target is the cluster (resources.NewTarget), with its credentials and CA once resolved:
	// at once for the bundled cluster; for another, once the ECK Elasticsearch and the Secrets
	// were there.
	target   resources.ElasticsearchTarget
	resolved bool
	// ready is set when the API and crawler may start against a cluster of elasticsearchRef
	// or external: resolved, Ready (ECK) and used by no other Monocle. The bundled cluster's
	// readiness is its StatefulSet's (elasticServes).
	ready bool
	// refused is set when the Monocle may not use the cluster of its elasticsearchRef at all
	// (refuseReference: another namespace's, not granted): nothing of it is read, and what the
	// Monocle had of it (the proxy Secret, the worker's reads) goes.
	refused bool
	// eck is what was read of an ECK Elasticsearch: its phase and health go to
	// status.elasticsearchCluster (readOperand).
	eck resources.ECKElasticsearch
	// usersHash is the bundled node's resources.ElasticUsersHash, stamped on its pod template.
	usersHash string
}

// resolveElasticsearch is the phase of the Elasticsearch target, before the foundation: it
// returns the cluster m uses (clusterTarget). The bundled cluster is resolved and ready at
// once. What keeps the Monocle from using a cluster of elasticsearchRef or external is pinned
// (pinCondition), and the API and crawler then wait (elasticServes):
//   - ElasticsearchHealthy False ElasticsearchNotFound: ECK's API is not served, or the
//     Elasticsearch does not exist (or is in a namespace this controller does not watch);
//   - ElasticsearchHealthy Unknown ElasticsearchNotReady: the ECK Elasticsearch's phase is not
//     Ready;
//   - SecretsReady False SecretNotFound or SecretKeyMissing: a Secret of the credentials or
//     the CA is missing, or lacks its key;
//   - ElasticsearchHealthy False ElasticsearchInUse: a Monocle of the namespace created
//     earlier uses the same cluster (resources.Identity), or the cluster's owner record names
//     another Monocle (ownership.go);
//   - ElasticsearchHealthy Unknown ElasticsearchUnclaimed: the cluster does not record the
//     Monocle as its owner yet.
//
// An elasticsearchRef to another namespace is first checked by refuseReference (refgrant.go:
// ElasticsearchHealthy False ReferenceNotGranted, CrossNamespaceReferencesDisabled or
// CredentialsRequired): refused, the status says nothing of that cluster but its kind and
// the URL the spec implies, as the operator reads nothing of it: neither the ECK
// Elasticsearch nor a Secret, nor the worker's reads it had.
func (c *Controller) resolveElasticsearch(ctx context.Context, st *syncState) clusterTarget {
	m := st.m
	// Until an ECK Elasticsearch is read, its URL is the HTTPS one ECK serves by default.
	r := clusterTarget{target: resources.NewTarget(m, true)}
	if r.target.Bundled() {
		// The node's users are kept here (elasticusers.go), before the node and the pods
		// that reach it are built; it is ready as its StatefulSet serves (elasticServes).
		users, err := c.ensureElasticUsers(ctx, m)
		if err != nil {
			st.fail(err)
			return r
		}
		r.target, r.resolved, r.ready = r.target.WithBundledUsers(users.secret.Data), true, true
		r.usersHash = resources.ElasticUsersHash(users.secret.Data)
		return r
	}
	tls := true
	var held *metav1.Condition
	if es := m.Spec.Elasticsearch; es.ElasticsearchRef != nil {
		if refused := c.refuseReference(m); refused != nil {
			r.refused = true
			st.pinCondition(*refused)
			return r
		}
		eck, cond := c.readECK(m)
		if eck == nil {
			st.pinCondition(*cond)
			return r
		}
		r.eck = resources.ReadECK(eck)
		tls = r.eck.TLS
		if !r.eck.Ready() {
			held = &metav1.Condition{Type: monoclev1alpha1.ConditionElasticsearchHealthy, Status: metav1.ConditionUnknown,
				Reason: reasons.ElasticsearchNotReady,
				Message: fmt.Sprintf("ECK Elasticsearch %s/%s is in phase %q with health %q, not %s: the API and crawler wait until it is",
					eck.GetNamespace(), eck.GetName(), r.eck.Phase, r.eck.Health, resources.ECKReadyPhase)}
		}
	}
	plan := planTarget(m, tls)
	r.target = plan.target
	target, secrets, err := c.readTarget(ctx, plan)
	if err != nil {
		st.fail(err)
		return r
	}
	if secrets != nil {
		st.pinCondition(*secrets)
	} else {
		r.target, r.resolved = target, true
	}
	if holder := c.clusterHolder(m); holder != nil {
		held = &metav1.Condition{Type: monoclev1alpha1.ConditionElasticsearchHealthy, Status: metav1.ConditionFalse,
			Reason: reasons.ElasticsearchInUse,
			Message: fmt.Sprintf("Monocle %s of this namespace, created earlier, uses the same Elasticsearch (%s): Monocle's index names are fixed, so two Monocles cannot share a cluster; the API and crawler of this one do not start until it uses another cluster",
				holder.Name, r.target.Identity)}
	} else if held == nil && r.resolved {
		// The cluster's own record decides across namespaces (ownership.go).
		held = c.claimCluster(ctx, m, r.target)
	}
	if held != nil {
		st.pinCondition(*held)
	}
	r.ready = r.resolved && held == nil
	return r
}

// readECK returns m's ECK Elasticsearch from the informer's cache, or nil and the
// ElasticsearchHealthy condition that says why not.
func (c *Controller) readECK(m *monoclev1alpha1.Monocle) (*unstructured.Unstructured, *metav1.Condition) {
	ns, name := resources.ECKNamespace(m), m.Spec.Elasticsearch.ElasticsearchRef.Name
	cond := &metav1.Condition{Type: monoclev1alpha1.ConditionElasticsearchHealthy, Status: metav1.ConditionFalse,
		Reason: reasons.ElasticsearchNotFound}
	kind, served := c.optional.Kind(resources.ECKElasticsearchResource)
	if !served {
		cond.Message = fmt.Sprintf("The cluster does not serve ECK's API (%s), so Elasticsearch %s/%s of spec.elasticsearch.elasticsearchRef cannot be found: install ECK, or name the cluster by spec.elasticsearch.external; the API and crawler wait",
			resources.ECKElasticsearchResource.GroupResource(), ns, name)
		return nil, cond
	}
	eck, err := kind.Get(ns, name)
	if err != nil {
		cond.Message = fmt.Sprintf("ECK Elasticsearch %s/%s of spec.elasticsearch.elasticsearchRef does not exist (or is in a namespace the operator does not watch): the API and crawler wait until it does",
			ns, name)
		if !apierrors.IsNotFound(err) {
			utilruntime.HandleError(err)
		}
		return nil, cond
	}
	return eck, nil
}

// readTarget reads the Secrets of plan and returns its target with its credentials and CA;
// when a Secret is missing or lacks a key, the SecretsReady condition naming each instead.
func (c *Controller) readTarget(ctx context.Context, plan targetPlan) (resources.ElasticsearchTarget, *metav1.Condition, error) {
	t := plan.target
	reason := ""
	var problems []string
	read := func(k *secretKey) ([]byte, error) {
		if k == nil {
			return nil, nil
		}
		data, ok, err := readSecret(ctx, c, c.targetSecrets, k.secret, keepTargetKeys)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			reason = reasons.SecretNotFound
			problems = append(problems, fmt.Sprintf("Secret %s of namespace %s, with %s, does not exist", k.secret.Name, k.secret.Namespace, k.what))
		case len(data[k.key]) == 0 && !k.optional:
			reason = cmp.Or(reason, reasons.SecretKeyMissing)
			problems = append(problems, fmt.Sprintf("Secret %s of namespace %s has no key %s (%s)", k.secret.Name, k.secret.Namespace, k.key, k.what))
		}
		return data[k.key], nil
	}
	user, err := read(plan.user)
	if err != nil {
		return t, nil, err
	}
	password, err := read(plan.password)
	if err != nil {
		return t, nil, err
	}
	ca, err := read(plan.ca)
	if err != nil {
		return t, nil, err
	}
	if len(problems) > 0 {
		return t, &metav1.Condition{Type: monoclev1alpha1.ConditionSecretsReady, Status: metav1.ConditionFalse, Reason: reason,
			Message: strings.Join(problems, "; ") + ": the API and crawler wait until Elasticsearch's credentials and CA are there"}, nil
	}
	if plan.user != nil {
		t.Username = string(user)
	}
	t.Password, t.CA = string(password), ca
	return t, nil, nil
}

// identityIndex indexes Monocles by the identity of the Elasticsearch cluster they use
// (resources.Identity); the bundled ones, whose identity is "", are not indexed.
const identityIndex = "elasticsearchIdentity"

func indexByIdentity(obj any) ([]string, error) {
	m, ok := obj.(*monoclev1alpha1.Monocle)
	if !ok {
		return nil, nil
	}
	if id := resources.Identity(m); id != "" {
		return []string{id}, nil
	}
	return nil, nil
}

// clusterHolder returns the Monocle of m's namespace that uses m's cluster before m, or nil
// when m is the first there: of the Monocles of the namespace with the same identity, the
// one created first, ties broken by name. Across namespaces the cluster's owner record
// decides instead (ownership.go), which no Monocle of another namespace can take by being
// created first. A Monocle being deleted still holds its cluster until it is gone (its pods
// may still write to it); its deletion then enqueues the next (handleMonocleDelete).
func (c *Controller) clusterHolder(m *monoclev1alpha1.Monocle) *monoclev1alpha1.Monocle {
	objs, err := c.monocleIndexer.ByIndex(identityIndex, resources.Identity(m))
	if err != nil {
		utilruntime.HandleError(err)
		return nil
	}
	first := m
	for _, obj := range objs {
		o, ok := obj.(*monoclev1alpha1.Monocle)
		if ok && o.Namespace == m.Namespace && createdBefore(o, first) {
			first = o
		}
	}
	if first.Namespace == m.Namespace && first.Name == m.Name {
		return nil
	}
	return first
}

// createdBefore reports whether a was created before b: by creationTimestamp, then
// namespace and name.
func createdBefore(a, b *monoclev1alpha1.Monocle) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name)) < 0
}

// handleMonocleDelete enqueues a deleted Monocle and the others of its cluster's identity:
// the next of them may now use the cluster.
func (c *Controller) handleMonocleDelete(obj any) {
	c.enqueueMonocle(obj)
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	c.enqueueIdentity(obj)
}

// enqueueIdentity enqueues the Monocles whose cluster has the identity of obj's: a Monocle's
// (resources.Identity), or "eck/<namespace>/<name>" of an ECK Elasticsearch.
func (c *Controller) enqueueIdentity(obj any) {
	var id string
	switch o := obj.(type) {
	case *monoclev1alpha1.Monocle:
		id = resources.Identity(o)
	default:
		object, err := objectMeta(obj)
		if err != nil {
			utilruntime.HandleError(err)
			return
		}
		id = resources.ECKIdentity(object.GetNamespace(), object.GetName())
	}
	if id != "" {
		c.enqueueIndexed(identityIndex, id)
	}
}

// handleElasticsearchUpdate enqueues the Monocles of an updated ECK Elasticsearch, skipping
// the periodic resyncs that carry no change. Its status (phase, health) matters: it is
// enqueued at once.
func (c *Controller) handleElasticsearchUpdate(oldObj, newObj any) {
	if changed(oldObj, newObj) {
		c.enqueueIdentity(newObj)
	}
}
