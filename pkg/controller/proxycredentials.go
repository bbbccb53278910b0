package controller

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// The Secret of spec.proxy.credentialsSecretRef is a user Secret like spec.secretRef's: it
// is indexed under secretRefIndex, so that its changes enqueue the Monocle, read through the
// metadata cache and userSecrets (never its data: a hash and which keys are non-empty), and
// the crawler and the API read its keys themselves, by secretKeyRef
// (resources.OutboundEnv).

// proxyCredentialsSecret is the Secret spec.proxy.credentialsSecretRef names, if any.
func proxyCredentialsSecret(m *monoclev1alpha1.Monocle) (types.NamespacedName, bool) {
	if m.Spec.Proxy == nil || m.Spec.Proxy.CredentialsSecretRef == nil {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.Proxy.CredentialsSecretRef.Name}, true
}

// proxyCredentialsCheck is what checkProxyCredentials found.
type proxyCredentialsCheck struct {
	// hash is the data hash of the Secret ("" without spec.proxy.credentialsSecretRef).
	hash string
	// condition is the SecretsReady condition that says why the crawler and the API cannot
	// start (nil when they can).
	condition *metav1.Condition
}

// checkProxyCredentials checks that the Secret spec.proxy.credentialsSecretRef names exists
// in m's namespace with non-empty keys username and password, which the crawler's and the
// API's containers read (a missing key would keep them from starting). It fails only when
// the Secret cannot be read.
func (c *Controller) checkProxyCredentials(ctx context.Context, m *monoclev1alpha1.Monocle) (proxyCredentialsCheck, error) {
	name, ok := proxyCredentialsSecret(m)
	if !ok {
		return proxyCredentialsCheck{}, nil
	}
	secret, ok, err := readSecret(ctx, c, c.userSecrets, name, keepUserSecret)
	if err != nil {
		return proxyCredentialsCheck{}, err
	}
	cond := &metav1.Condition{Type: monoclev1alpha1.ConditionSecretsReady, Status: metav1.ConditionFalse}
	switch {
	case !ok:
		cond.Reason = reasons.SecretNotFound
		cond.Message = fmt.Sprintf("Secret %s named by spec.proxy.credentialsSecretRef does not exist in namespace %s: the API and crawler are not started or rolled until it does", name.Name, name.Namespace)
	case !secret.keys[resources.ProxyUsernameKey] || !secret.keys[resources.ProxyPasswordKey]:
		missing := resources.ProxyUsernameKey
		if secret.keys[missing] {
			missing = resources.ProxyPasswordKey
		}
		cond.Reason = reasons.SecretKeyMissing
		cond.Message = fmt.Sprintf("Secret %s named by spec.proxy.credentialsSecretRef has no key %s, or it is empty: the API and crawler are not started or rolled until it has", name.Name, missing)
	default:
		return proxyCredentialsCheck{hash: secret.dataHash}, nil
	}
	return proxyCredentialsCheck{condition: cond}, nil
}

// withProxyCredentials returns s with the proxy's credentials p: their hash joins s.hash, so
// that new credentials roll the crawler and the API (a Monocle without them keeps its hash);
// while they are missing, neither is started or rolled, and SecretsReady says why, followed
// by what s said when it held a component back too.
func (s secretsCheck) withProxyCredentials(p proxyCredentialsCheck) secretsCheck {
	if p.hash != "" {
		s.hash = resources.Hash([]string{s.hash, p.hash})
	}
	if p.condition == nil {
		return s
	}
	s.api, s.crawler = false, false
	cond := *p.condition
	if s.condition.Status == metav1.ConditionFalse {
		cond.Message += "; " + s.condition.Message
	}
	s.condition = cond
	return s
}
