package controller

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// withProxyCredentials is a Monocle "demo" behind an HTTPS proxy whose credentials are in
// the Secret "proxy-credentials".
func withProxyCredentials() *monoclev1alpha1.Monocle {
	m := newMonocle("demo")
	m.Spec.Proxy = &monoclev1alpha1.OutboundProxy{HTTPSProxy: "http://proxy.corp:3128",
		CredentialsSecretRef: &monoclev1alpha1.SecretReference{Name: "proxy-credentials"}}
	return m
}

// newProxyCredentials is the Secret "proxy-credentials" of the user at resourceVersion rv.
func newProxyCredentials(rv string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "proxy-credentials", Namespace: metav1.NamespaceDefault, ResourceVersion: rv},
		Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestProxyCredentialsReachAPIAndCrawler(t *testing.T) {
	creds := newProxyCredentials("1", map[string]string{"username": "monocle", "password": "s3cret"})
	m, objects := converged(t, withProxyCredentials(), creds)
	if c := condition(t, m, monoclev1alpha1.ConditionSecretsReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("SecretsReady = %+v, want True", c)
	}
	for _, name := range []string{"demo-api", "demo-crawler"} {
		d := find[*appsv1.Deployment](objects, name)
		if d == nil {
			t.Fatalf("Deployment %s not created", name)
		}
		env := d.Spec.Template.Spec.Containers[0].Env
		i := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == resources.ProxyPasswordVar })
		if i < 0 || env[i].ValueFrom == nil || env[i].ValueFrom.SecretKeyRef == nil || env[i].ValueFrom.SecretKeyRef.Name != "proxy-credentials" {
			t.Errorf("%s: %s does not come from the Secret: %+v", name, resources.ProxyPasswordVar, env)
		}
		for _, e := range env {
			if strings.Contains(e.Value, "s3cret") {
				t.Errorf("%s: %s holds the password", name, e.Name)
			}
		}
	}

	// The same data at a new resourceVersion rolls nothing; new credentials roll the API and
	// the crawler, which read them at start.
	resync := func(s *corev1.Secret) []core.Action {
		_, writes, _ := resyncWith(t, m, objects, func(f *fixture) { f.userSecrets = []*corev1.Secret{s} })
		return writes
	}
	expectActions(t, resync(newProxyCredentials("2", map[string]string{"username": "monocle", "password": "s3cret"})))
	expectActions(t, resync(newProxyCredentials("3", map[string]string{"username": "monocle", "password": "n3w"})),
		"update deployments demo-api", "update deployments demo-crawler")
}

func TestProxyCredentialsMissingHoldAPIAndCrawler(t *testing.T) {
	for name, tc := range map[string]struct {
		secrets []*corev1.Secret
		reason  string
		message string
	}{
		"no Secret": {reason: reasons.SecretNotFound, message: "Secret proxy-credentials named by spec.proxy.credentialsSecretRef does not exist in namespace default"},
		"no password": {secrets: []*corev1.Secret{newProxyCredentials("1", map[string]string{"username": "monocle"})},
			reason: reasons.SecretKeyMissing, message: "has no key password"},
		"empty username": {secrets: []*corev1.Secret{newProxyCredentials("1", map[string]string{"username": "", "password": "x"})},
			reason: reasons.SecretKeyMissing, message: "has no key username"},
	} {
		t.Run(name, func(t *testing.T) {
			m, objects := converged(t, withProxyCredentials(), tc.secrets...)
			assertAPIAndCrawlerWait(t, m, objects, "the proxy credentials", tc.reason, tc.message)
		})
	}
}

func TestProxyCredentialsChangeRequeuesTheMonoclesNamingThem(t *testing.T) {
	f := newFixture(t)
	other := newMonocle("other")
	other.UID = "uid-other"
	f.monocles = []*monoclev1alpha1.Monocle{withProxyCredentials(), other}
	c := f.newController()
	name := types.NamespacedName{Namespace: metav1.NamespaceDefault, Name: "proxy-credentials"}
	changeQueuesDemoOnly(t, c, onChange(c.handleSecretMetadata), name, "the proxy credentials")
}
