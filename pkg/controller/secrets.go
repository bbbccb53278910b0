package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// secretRefIndex indexes Monocles by "<namespace>/<secretRef.name>".
const secretRefIndex = "secretRef"

func indexBySecretRef(obj any) ([]string, error) {
	m, ok := obj.(*monoclev1alpha1.Monocle)
	if !ok || m.Spec.SecretRef == nil {
		return nil, nil
	}
	return []string{m.Namespace + "/" + m.Spec.SecretRef.Name}, nil
}

// stripSecretMetadata keeps only what the controller reads of a Secret's metadata (its name,
// namespace, UID and resourceVersion; resources.ManagedByLabel and a Monocle controller
// reference, which tell an earlier operator's Secret awaiting adoption), so the metadata
// cache of every Secret in the cluster stays small: no other labels, no annotations or
// managed fields.
func stripSecretMetadata(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	out := &metav1.PartialObjectMetadata{
		TypeMeta: m.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID,
			ResourceVersion: m.ResourceVersion, DeletionTimestamp: m.DeletionTimestamp,
		},
	}
	if v, ok := m.Labels[resources.ManagedByLabel]; ok {
		out.Labels = map[string]string{resources.ManagedByLabel: v}
	}
	if ref := metav1.GetControllerOf(m); ref != nil && owned.IsMonocleRef(*ref) {
		out.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	return out, nil
}

// handleSecretMetadata enqueues the Monocles whose secretRef names the Secret.
func (c *Controller) handleSecretMetadata(obj any) {
	object, err := objectMeta(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	key := object.GetNamespace() + "/" + object.GetName()
	if _, deleted := obj.(cache.DeletedFinalStateUnknown); deleted || object.GetDeletionTimestamp() != nil {
		c.userSecrets.forget(types.NamespacedName{Namespace: object.GetNamespace(), Name: object.GetName()})
	}
	monocles, err := c.monocleIndexer.ByIndex(secretRefIndex, key)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, m := range monocles {
		c.enqueueMonocle(m)
	}
}

func (c *Controller) handleSecretMetadataUpdate(oldObj, newObj any) {
	if changed(oldObj, newObj) {
		c.handleSecretMetadata(newObj)
	}
}

// userSecret is what the controller keeps of a user Secret: never its data.
type userSecret struct {
	resourceVersion string
	dataHash        string
	keys            map[string]bool
}

// userSecretCache maps referenced Secrets to their last read state. It holds one small entry
// per referenced Secret, whatever the number or size of the cluster's Secrets.
type userSecretCache struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]userSecret
}

func newUserSecretCache() *userSecretCache {
	return &userSecretCache{entries: map[types.NamespacedName]userSecret{}}
}

func (u *userSecretCache) get(name types.NamespacedName, resourceVersion string) (userSecret, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	e, ok := u.entries[name]
	return e, ok && e.resourceVersion == resourceVersion
}

func (u *userSecretCache) put(name types.NamespacedName, e userSecret) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.entries[name] = e
}

func (u *userSecretCache) forget(name types.NamespacedName) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.entries, name)
}

// readUserSecret returns the state of the Secret spec.secretRef names, or nil when it does
// not exist. The metadata cache says whether it exists and at which resourceVersion; its data
// is read from the API server only when that resourceVersion was not read before, so a
// converged Monocle costs no API call.
func (c *Controller) readUserSecret(ctx context.Context, m *monoclev1alpha1.Monocle) (*userSecret, error) {
	name := types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.SecretRef.Name}
	obj, err := c.secretMetadataLister.ByNamespace(name.Namespace).Get(name.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s metadata from the cache: %w", name.Name, err)
	}
	meta, err := objectMeta(obj)
	if err != nil {
		return nil, err
	}
	if e, ok := c.userSecrets.get(name, meta.GetResourceVersion()); ok {
		return &e, nil
	}
	secret, err := c.kubeclientset.CoreV1().Secrets(name.Namespace).Get(ctx, name.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s: %w", name.Name, err)
	}
	e := userSecret{resourceVersion: secret.ResourceVersion, dataHash: resources.DataHash(secret.Data), keys: map[string]bool{}}
	for k, v := range secret.Data {
		e.keys[k] = len(v) > 0
	}
	c.userSecrets.put(name, e)
	return &e, nil
}

// secretsCheck is what checkSecrets found.
type secretsCheck struct {
	// hash is the data hash of the Secret spec.secretRef names ("" without one).
	hash string
	// condition is the SecretsReady condition.
	condition metav1.Condition
	// api and crawler say whether the component gets every variable it needs from the
	// Secrets: only then is it created or rolled.
	api, crawler bool
}

// checkSecrets checks that each component gets, non-empty, every variable it reads from the
// Secret "<name>-api" (apiSecret, whose keys users add, as with the earlier operator) or the
// Secret spec.secretRef names:
//   - the crawler: the token variables config.yaml names;
//   - the API: MONOCLE_OIDC_<NAME>_CLIENT_SECRET of an OIDC auth_provider. When it is unset
//     or empty, Monocle 1.11.2 logs a warning and serves with authentication disabled, even
//     with enforce_auth (getAuthProvider and "AuthSystemFailed" in src/Monocle/Main.hs), so
//     the API is held back rather than started open;
//   - both: any crawlers_api_key variable other than the generated CRAWLERS_API_KEY (both
//     exit at start without it).
//
// A missing variable holds back only the component that needs it: the API keeps serving the
// data indexed while a crawler token is missing. A missing referenced Secret holds both (their
// envFrom needs it).
func (c *Controller) checkSecrets(ctx context.Context, m *monoclev1alpha1.Monocle, cfg *monocleconfig.Config, apiSecret *corev1.Secret) (secretsCheck, error) {
	out := secretsCheck{api: true, crawler: true,
		condition: metav1.Condition{Type: monoclev1alpha1.ConditionSecretsReady, Status: metav1.ConditionTrue, Reason: reasons.SecretsPresent}}
	var tokens, both []string
	oidc := ""
	if cfg != nil {
		tokens = cfg.TokenVariables()
		for _, v := range cfg.CrawlersAPIKeyVariables() {
			if v != resources.CrawlersAPIKeyKey && !slices.Contains(both, v) {
				both = append(both, v)
			}
		}
		oidc = cfg.OIDCClientSecretVariable
	}
	apiName := resources.SecretName(m)
	secretNames := apiName
	var userKeys map[string]bool
	if m.Spec.SecretRef != nil {
		secretName := m.Spec.SecretRef.Name
		secret, err := c.readUserSecret(ctx, m)
		if err != nil {
			return secretsCheck{}, err
		}
		if secret == nil {
			out.api, out.crawler = false, false
			out.condition.Status, out.condition.Reason = metav1.ConditionFalse, reasons.SecretNotFound
			out.condition.Message = fmt.Sprintf("Secret %s named by spec.secretRef does not exist in namespace %s; the API and crawler are not rolled until it does",
				secretName, m.Namespace)
			return out, nil
		}
		out.hash, userKeys = secret.dataHash, secret.keys
		secretNames = secretName + " nor " + apiName
	}
	missing := func(vars ...string) []string {
		var out []string
		for _, v := range vars {
			if v == "" || len(apiSecret.Data[v]) > 0 || userKeys[v] {
				continue
			}
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		sort.Strings(out)
		return out
	}
	if apiSecret == nil {
		apiSecret = &corev1.Secret{}
	}
	missingBoth, missingTokens, missingOIDC := missing(both...), missing(tokens...), missing(oidc)
	out.api = len(missingBoth)+len(missingOIDC) == 0
	out.crawler = len(missingBoth)+len(missingTokens) == 0
	if out.api && out.crawler {
		if m.Spec.SecretRef != nil {
			out.condition.Message = fmt.Sprintf("Secrets %s and %s provide every variable config.yaml needs", m.Spec.SecretRef.Name, apiName)
		} else {
			out.condition.Message = fmt.Sprintf("Secret %s holds every variable config.yaml needs", apiName)
		}
		return out, nil
	}
	var parts []string
	if len(missingOIDC) > 0 {
		parts = append(parts, fmt.Sprintf("%s, the OIDC client secret of auth.auth_provider: the API is not started or rolled until it is set, since without it Monocle runs with authentication disabled",
			missingOIDC[0]))
	}
	if len(missingTokens) > 0 {
		parts = append(parts, fmt.Sprintf("the token variables %s of the crawlers: the crawler is not started or rolled until they are set", strings.Join(missingTokens, ", ")))
	}
	if len(missingBoth) > 0 {
		parts = append(parts, fmt.Sprintf("the crawlers_api_key variables %s: the API and crawler are not started or rolled until they are set", strings.Join(missingBoth, ", ")))
	}
	out.condition.Status, out.condition.Reason = metav1.ConditionFalse, reasons.TokenMissing
	out.condition.Message = fmt.Sprintf("Neither Secret %s holds, non-empty, %s", secretNames, strings.Join(parts, "; "))
	if m.Spec.SecretRef == nil {
		out.condition.Message += "; spec.secretRef names no Secret to provide them"
	}
	return out, nil
}
