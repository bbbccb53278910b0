package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

func TestUserSecretChangeRollsAPIAndCrawlerOnly(t *testing.T) {
	secret := newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"})
	m, objects := converged(t, withTokens(newMonocle("demo")), secret)
	if c := condition(t, m, monoclev1alpha1.ConditionSecretsReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("SecretsReady = %+v", c)
	}

	// Same data at a new resourceVersion (a label change): nothing rolls.
	_, writes, _ := resync(t, m, objects, newUserSecret("2", map[string]string{"MY_GITHUB_TOKEN": "a"}))
	expectActions(t, writes)

	// New data: the API and the crawler roll, Elasticsearch does not.
	_, writes, _ = resync(t, m, objects, newUserSecret("3", map[string]string{"MY_GITHUB_TOKEN": "b"}))
	expectActions(t, writes, "update deployments demo-api", "update deployments demo-crawler")
	for _, a := range writes {
		d := a.(core.UpdateAction).GetObject().(*appsv1.Deployment)
		old := find[*appsv1.Deployment](objects, d.Name)
		if d.Spec.Template.Annotations[resources.SecretHashAnnotation] == old.Spec.Template.Annotations[resources.SecretHashAnnotation] {
			t.Errorf("%s: the secret hash annotation did not change", d.Name)
		}
	}
}

func TestUserSecretIsReadOncePerResourceVersion(t *testing.T) {
	secret := newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"})
	m, objects := converged(t, withTokens(newMonocle("demo")), secret)
	// The first sync of this process reads the Secret's data once.
	for i, actions := range syncTwice(t, m, objects, func(f *fixture) { f.userSecrets = []*corev1.Secret{secret} }) {
		if want := 1 - i; len(actions) != want {
			t.Errorf("sync %d made %d API calls (%v), want %d", i, len(actions), describe(actions), want)
		}
	}
}

// syncTwice syncs m twice with one controller over objects and what setup seeds, and
// returns the kube client's actions of each sync.
func syncTwice(t *testing.T, m *monoclev1alpha1.Monocle, objects []runtime.Object, setup func(*fixture)) [2][]core.Action {
	t.Helper()
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	setup(f)
	c := f.newController()
	_, ctx := ktesting.NewTestContext(t)
	var out [2][]core.Action
	for i := range out {
		f.kubeclient.ClearActions()
		if err := c.syncHandler(ctx, cache.ObjectName{Namespace: m.Namespace, Name: m.Name}); err != nil {
			t.Fatal(err)
		}
		out[i] = f.kubeclient.Actions()
	}
	return out
}

func TestMissingUserSecretHoldsTheRollout(t *testing.T) {
	m, objects := converged(t, withTokens(newMonocle("demo")), newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"}))
	_, writes, status := resync(t, m, objects)
	expectActions(t, writes)
	c := condition(t, status, monoclev1alpha1.ConditionSecretsReady)
	if c.Status != metav1.ConditionFalse || c.Reason != reasons.SecretNotFound || !strings.Contains(c.Message, "tokens") {
		t.Errorf("SecretsReady = %+v, want False/SecretNotFound naming the Secret", c)
	}
	if d := condition(t, status, monoclev1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != reasons.SecretNotFound {
		t.Errorf("Degraded = %+v", d)
	}

	// A new Monocle whose Secret is missing gets no API or crawler at all.
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{withTokens(newMonocle("fresh"))}
	writes, _ = f.run()
	for _, d := range describe(writes) {
		if strings.Contains(d, "deployments") {
			t.Errorf("created a workload without its Secret: %s", d)
		}
	}
}

func TestTokenNamedByConfigButMissing(t *testing.T) {
	m, objects := converged(t, withTokens(newMonocle("demo")), newUserSecret("1", map[string]string{"MY_GITHUB_TOKEN": "a"}))
	// The token is gone: the crawler is held back, the API (which reads the Secret too) rolls
	// and keeps serving what is indexed.
	_, writes, status := resync(t, m, objects, newUserSecret("2", map[string]string{"OTHER": "a"}))
	expectActions(t, writes, "update deployments demo-api")
	c := condition(t, status, monoclev1alpha1.ConditionSecretsReady)
	if c.Status != metav1.ConditionFalse || c.Reason != reasons.TokenMissing || !strings.Contains(c.Message, "MY_GITHUB_TOKEN") ||
		!strings.Contains(c.Message, "the crawler is not started or rolled") {
		t.Errorf("SecretsReady = %+v, want False/TokenMissing naming MY_GITHUB_TOKEN and the crawler", c)
	}
	// An empty value is no token.
	_, writes, status = resync(t, m, objects, newUserSecret("3", map[string]string{"MY_GITHUB_TOKEN": ""}))
	expectActions(t, writes, "update deployments demo-api")
	if c := condition(t, status, monoclev1alpha1.ConditionSecretsReady); c.Reason != reasons.TokenMissing {
		t.Errorf("with an empty token: SecretsReady = %+v", c)
	}

	// A workspace reading the crawlers' key from its own variable needs the Secret to have it.
	own := m.DeepCopy()
	own.Spec.Config = strings.Replace(githubConfig, "  - name: demo\n", "  - name: demo\n    crawlers_api_key: DEMO_CRAWLERS_KEY\n", 1)
	_, _, status = resync(t, own, objects, newUserSecret("2", map[string]string{"MY_GITHUB_TOKEN": "a"}))
	if c := condition(t, status, monoclev1alpha1.ConditionSecretsReady); c.Reason != reasons.TokenMissing || !strings.Contains(c.Message, "DEMO_CRAWLERS_KEY") {
		t.Errorf("with crawlers_api_key: SecretsReady = %+v", c)
	}

	noRef := newMonocle("noref")
	noRef.Spec.Config = githubConfig
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{noRef}
	_, monocleWrites := f.run()
	got := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
	if c := condition(t, got, monoclev1alpha1.ConditionSecretsReady); c.Reason != reasons.TokenMissing || !strings.Contains(c.Message, "secretRef") {
		t.Errorf("without secretRef: SecretsReady = %+v", c)
	}
}

// oidcConfig configures an OIDC auth provider, whose client secret the API reads from
// MONOCLE_OIDC_KEYCLOAK_CLIENT_SECRET.
const oidcConfig = "auth:\n  enforce_auth: true\n  auth_provider:\n    oidc_provider_name: keycloak\n    oidc_issuer_url: https://sso.example.com/realms/x\n    oidc_client_id: monocle\nworkspaces:\n  - name: demo\n    crawlers: []\n"

// TestOIDCClientSecretHoldsTheAPI: without its OIDC client secret (missing or empty) Monocle
// would serve with authentication off: the API is not created, the crawler is, and
// SecretsReady names the variable; once the Secret has it, the API is created.
func TestOIDCClientSecretHoldsTheAPI(t *testing.T) {
	for name, data := range map[string]map[string]string{"missing": {}, "empty": {"MONOCLE_OIDC_KEYCLOAK_CLIENT_SECRET": ""}} {
		m := newMonocle("demo")
		m.Spec.Config = oidcConfig
		m.Spec.SecretRef = &monoclev1alpha1.SecretReference{Name: "tokens"}
		f := newFixture(t)
		f.monocles = []*monoclev1alpha1.Monocle{m}
		f.userSecrets = []*corev1.Secret{newUserSecret("1", data)}
		f.kubeobjects = []runtime.Object{readyElastic(m)}
		kubeWrites, monocleWrites := f.run()
		if written[*appsv1.Deployment](kubeWrites, "demo-api") != nil || written[*appsv1.Deployment](kubeWrites, "demo-crawler") == nil {
			t.Errorf("%s: writes %v, want the crawler and no API", name, describe(kubeWrites))
		}
		status := monocleWrites[0].(core.UpdateAction).GetObject().(*monoclev1alpha1.Monocle)
		c := condition(t, status, monoclev1alpha1.ConditionSecretsReady)
		if c.Status != metav1.ConditionFalse || c.Reason != reasons.TokenMissing ||
			!strings.Contains(c.Message, "MONOCLE_OIDC_KEYCLOAK_CLIENT_SECRET") || !strings.Contains(c.Message, "tokens") ||
			!strings.Contains(c.Message, "authentication disabled") {
			t.Errorf("%s: SecretsReady = %+v", name, c)
		}
	}
	m := newMonocle("demo")
	m.Spec.Config = oidcConfig
	m.Spec.SecretRef = &monoclev1alpha1.SecretReference{Name: "tokens"}
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.userSecrets = []*corev1.Secret{newUserSecret("1", map[string]string{"MONOCLE_OIDC_KEYCLOAK_CLIENT_SECRET": "s3cret"})}
	f.kubeobjects = []runtime.Object{readyElastic(m)}
	kubeWrites, _ := f.run()
	if written[*appsv1.Deployment](kubeWrites, "demo-api") == nil {
		t.Errorf("with the client secret: writes %v, want the API", describe(kubeWrites))
	}
}
