package controller

import (
	"bytes"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// The CA bundle of spec.trustedCA is a key of a ConfigMap of the user (or of trust-manager),
// which carries no label of the operator: like the user's Secrets (secrets.go), the metadata
// of the watched namespaces' ConfigMaps is cached, stripped to what a change needs, and the
// ConfigMap is read from the API server only at a resourceVersion not read before
// (readcache.go). The controller keeps a hash per key, never the data.

// trustedCAIndex indexes Monocles by "<namespace>/<name>" of the ConfigMap spec.trustedCA
// names.
const trustedCAIndex = "trustedCA"

func indexByTrustedCA(obj any) ([]string, error) {
	m, ok := obj.(*monoclev1alpha1.Monocle)
	if !ok || m.Spec.TrustedCA == nil {
		return nil, nil
	}
	return []string{m.Namespace + "/" + m.Spec.TrustedCA.Name}, nil
}

// handleConfigMapMetadata enqueues the Monocles whose spec.trustedCA names the ConfigMap.
func (c *Controller) handleConfigMapMetadata(obj any) {
	c.handleReferenced(obj, trustedCAIndex, c.trustedCAs.forget)
}

// pemCertificate starts each certificate of a PEM bundle (RFC 7468, section 5.1).
var pemCertificate = []byte("-----BEGIN CERTIFICATE-----")

// keepTrustedCA keeps, for each key of a ConfigMap (data or binaryData, as its volume
// projects both), resources.TrustedCAHash of its value, or "" when the value holds no PEM
// certificate.
func keepTrustedCA(cm *corev1.ConfigMap) map[string]string {
	out := map[string]string{}
	keep := func(k string, v []byte) {
		out[k] = ""
		if bytes.Contains(v, pemCertificate) {
			out[k] = resources.TrustedCAHash(v)
		}
	}
	for k, v := range cm.BinaryData {
		keep(k, v)
	}
	for k, v := range cm.Data {
		keep(k, []byte(v))
	}
	return out
}

// trustedCACheck is what checkTrustedCA found.
type trustedCACheck struct {
	// hash is resources.TrustedCAHash of the bundle ("" without spec.trustedCA).
	hash string
	// ready is set when the pods can mount the bundle: there is none to mount, or it is
	// there.
	ready bool
	// condition is the SecretsReady condition that says why the bundle is not there (nil
	// when ready, or when it could not be read).
	condition *metav1.Condition
}

// checkTrustedCA checks that the ConfigMap spec.trustedCA names exists in m's namespace and
// holds, under its key, at least one PEM certificate, and returns the bundle's hash. It fails
// only when the ConfigMap cannot be read.
func (c *Controller) checkTrustedCA(ctx context.Context, m *monoclev1alpha1.Monocle) (trustedCACheck, error) {
	ref := m.Spec.TrustedCA
	if ref == nil {
		return trustedCACheck{ready: true}, nil
	}
	name := types.NamespacedName{Namespace: m.Namespace, Name: ref.Name}
	get := func(ctx context.Context, name types.NamespacedName) (*corev1.ConfigMap, error) {
		return c.kubeclientset.CoreV1().ConfigMaps(name.Namespace).Get(ctx, name.Name, metav1.GetOptions{})
	}
	keys, ok, err := readReferenced(ctx, "ConfigMap", c.configMapMetadataLister, get, c.trustedCAs, name, keepTrustedCA)
	if err != nil {
		return trustedCACheck{}, err
	}
	cond := &metav1.Condition{Type: monoclev1alpha1.ConditionSecretsReady, Status: metav1.ConditionFalse, Reason: reasons.ConfigMapKeyMissing}
	hash, hasKey := keys[ref.Key]
	switch {
	case !ok:
		cond.Reason = reasons.ConfigMapNotFound
		cond.Message = fmt.Sprintf("ConfigMap %s named by spec.trustedCA does not exist in namespace %s", ref.Name, m.Namespace)
	case !hasKey:
		cond.Message = fmt.Sprintf("ConfigMap %s named by spec.trustedCA has no key %s", ref.Name, ref.Key)
	case hash == "":
		cond.Message = fmt.Sprintf("The key %s of ConfigMap %s named by spec.trustedCA holds no PEM certificate", ref.Key, ref.Name)
	default:
		return trustedCACheck{hash: hash, ready: true}, nil
	}
	cond.Message += ": the API and crawler are not started or rolled until the bundle is there"
	return trustedCACheck{condition: cond}, nil
}

// withTrustedCA returns s held back by ca: while the bundle is not there, neither the API
// nor the crawler is started or rolled, and SecretsReady says why, followed by what s said
// when it held a component back too.
func (s secretsCheck) withTrustedCA(ca trustedCACheck) secretsCheck {
	s.caHash = ca.hash
	if ca.ready {
		return s
	}
	s.api, s.crawler = false, false
	if ca.condition != nil {
		cond := *ca.condition
		if s.condition.Status == metav1.ConditionFalse {
			cond.Message += "; " + s.condition.Message
		}
		s.condition = cond
	}
	return s
}
