package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/owned"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// secretRefIndex indexes Monocles by "<namespace>/<name>" of each Secret they read: the one
// spec.secretRef names, that of spec.proxy.credentialsSecretRef and those of their
// Elasticsearch (targetSecrets).
const secretRefIndex = "secretRef"

func indexBySecretRef(obj any) ([]string, error) {
	m, ok := obj.(*monoclev1alpha1.Monocle)
	if !ok {
		return nil, nil
	}
	var out []string
	if m.Spec.SecretRef != nil {
		out = append(out, m.Namespace+"/"+m.Spec.SecretRef.Name)
	}
	if s, ok := proxyCredentialsSecret(m); ok {
		out = append(out, s.String())
	}
	for _, s := range targetSecrets(m) {
		out = append(out, s.String())
	}
	return out, nil
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

// handleSecretMetadata enqueues the Monocles that read the Secret (secretRefIndex).
func (c *Controller) handleSecretMetadata(obj any) {
	c.handleReferenced(obj, secretRefIndex, c.userSecrets.forget, c.targetSecrets.forget)
}

// userSecret is what the controller keeps of a user Secret: never its data.
type userSecret struct {
	dataHash string
	keys     map[string]bool
}

// readSecret returns what keep makes of the Secret name, and false when it does not exist
// (readReferenced).
func readSecret[V any](ctx context.Context, c *Controller, cache *readCache[V], name types.NamespacedName, keep func(*corev1.Secret) V) (V, bool, error) {
	get := func(ctx context.Context, name types.NamespacedName) (*corev1.Secret, error) {
		return c.kubeclientset.CoreV1().Secrets(name.Namespace).Get(ctx, name.Name, metav1.GetOptions{})
	}
	return readReferenced(ctx, "Secret", c.secretMetadataLister, get, cache, name, keep)
}

// readUserSecret returns the state of the Secret spec.secretRef names, or nil when it does
// not exist (readSecret).
func (c *Controller) readUserSecret(ctx context.Context, m *monoclev1alpha1.Monocle) (*userSecret, error) {
	name := types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.SecretRef.Name}
	e, ok, err := readSecret(ctx, c, c.userSecrets, name, keepUserSecret)
	if !ok {
		return nil, err
	}
	return &e, nil
}

// keepUserSecret keeps of a user Secret the hash of its data and which keys are non-empty.
func keepUserSecret(secret *corev1.Secret) userSecret {
	e := userSecret{dataHash: resources.DataHash(secret.Data), keys: map[string]bool{}}
	for k, v := range secret.Data {
		e.keys[k] = len(v) > 0
	}
	return e
}

// secretsCheck is what checkSecrets found, and then withTrustedCA and withProxyCredentials.
type secretsCheck struct {
	// hash is the data hash of the Secret spec.secretRef names ("" without one), joined by
	// that of spec.proxy.credentialsSecretRef's when it is set.
	hash string
	// caHash is the hash of the spec.trustedCA bundle ("" without one).
	caHash string
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
