package controller

import (
	"errors"
	"math/rand"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

func TestGeneratedKeysSurviveUpdatesByOthers(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	secret := find[*corev1.Secret](objects, "demo-api")
	original := secret.DeepCopy()
	// Another client adds a label: nothing of ours changed.
	secret.Labels["backup"] = "yes"
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	kubeWrites, _ := f.run()
	expectActions(t, kubeWrites)

	// A user adds a token, as the earlier operator's README says: it is kept, and the API and
	// crawler, which load the Secret with envFrom, roll to read it.
	secret.Data["EXTRA"] = []byte("theirs")
	_, kubeWrites, _ = resync(t, m, objects)
	expectActions(t, kubeWrites, "update deployments demo-api", "update deployments demo-crawler")
	for _, a := range kubeWrites {
		rolled := a.(core.UpdateAction).GetObject().(*appsv1.Deployment)
		live := find[*appsv1.Deployment](objects, rolled.Name)
		if rolled.Spec.Template.Annotations[resources.SecretHashAnnotation] == live.Spec.Template.Annotations[resources.SecretHashAnnotation] {
			t.Errorf("Deployment %s: the secret hash did not change", rolled.Name)
		}
		live.Spec.Template, live.Annotations = rolled.Spec.Template, rolled.Annotations
	}

	// Another client removes a generated key: it comes back with its original value from the
	// copy, nothing rolls, and the other client's key stays.
	delete(secret.Data, resources.JWKGenKeyKey)
	_, kubeWrites, _ = resync(t, m, objects)
	restored := secret.DeepCopy()
	restored.Data[resources.JWKGenKeyKey] = original.Data[resources.JWKGenKeyKey]
	checkActions(t, kubeWrites, expectUpdate(restored))

	// Removed from the copy too: only then is the key generated anew, with a warning, and the
	// pods that read it roll.
	delete(find[*corev1.Secret](objects, "demo-api-keys").Data, resources.JWKGenKeyKey)
	f, kubeWrites, _ = resync(t, m, objects)
	expectActions(t, kubeWrites, "update secrets demo-api", "update secrets demo-api-keys",
		"update deployments demo-api", "update deployments demo-crawler")
	for _, a := range kubeWrites {
		if s, ok := a.(core.UpdateAction).GetObject().(*corev1.Secret); ok {
			if string(s.Data[resources.CrawlersAPIKeyKey]) != string(original.Data[resources.CrawlersAPIKeyKey]) {
				t.Errorf("%s: CRAWLERS_API_KEY was regenerated", s.Name)
			}
			if !resources.ValidKey(resources.JWKGenKeyKey, s.Data[resources.JWKGenKeyKey]) || string(s.Data[resources.JWKGenKeyKey]) == string(original.Data[resources.JWKGenKeyKey]) {
				t.Errorf("%s: MONOCLE_JWK_GEN_KEY was not generated anew", s.Name)
			}
		}
	}
	var warned bool
	for len(f.recorder.Events) > 0 {
		if e := <-f.recorder.Events; strings.HasPrefix(e, "Warning "+reasons.KeyGenerated) && strings.Contains(e, resources.JWKGenKeyKey) {
			warned = true
		}
	}
	if !warned {
		t.Error("no KeyGenerated warning names the regenerated key")
	}
}

// After an API server restart the Secret informer can lag for minutes: Secrets the API
// server has but the cache has not seen must keep their keys, not get new ones.
func TestGeneratedKeysSurviveAStaleCache(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	var cached, uncached []runtime.Object
	for _, o := range objects {
		if _, ok := o.(*corev1.Secret); ok {
			uncached = append(uncached, o)
		} else {
			cached = append(cached, o)
		}
	}
	original := find[*corev1.Secret](objects, "demo-api")
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = cached
	f.uncached = uncached
	c := f.newController()
	// Another seed than the one that generated the keys, so that generating them again would
	// show.
	c.random = rand.New(rand.NewSource(2))
	_, ctx := ktesting.NewTestContext(t)
	if err := c.syncHandler(ctx, cache.ObjectName{Namespace: m.Namespace, Name: m.Name}); err != nil {
		t.Logf("sync returned: %v", err)
	}
	kubeWrites := keySecretActions(writes(f.kubeclient.Actions()))
	for _, a := range kubeWrites {
		s, ok := a.(core.UpdateAction).GetObject().(*corev1.Secret)
		if !ok {
			continue
		}
		for _, k := range resources.GeneratedKeys {
			if string(s.Data[k]) != string(original.Data[k]) {
				t.Errorf("%s %s: %s was replaced although the API server had it", a.GetVerb(), s.Name, k)
			}
		}
	}
	// The creates fail with AlreadyExists and carry the keys the API server has; nothing is
	// updated.
	expectActions(t, kubeWrites, "create secrets demo-api-keys", "create secrets demo-api")
}

// A new Monocle's keys cost two creates and no read: a create cannot replace a key.
func TestNewMonocleKeysCostTwoCreates(t *testing.T) {
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{newMonocle("demo")}
	f.run()
	expectActions(t, keySecretActions(f.kubeclient.Actions()), "create secrets demo-api-keys", "create secrets demo-api")
}

// A new Monocle (never synced) whose Secrets the API server holds, in part or whole, while the
// cache has not seen them (a sync that died after its creates, an informer lagging after an
// API server restart): the creates meet them, and the keys they hold are kept.
func TestNewMonocleKeepsKeysTheCacheHasNotSeen(t *testing.T) {
	_, objects := converged(t, newMonocle("demo"))
	primary, backup := find[*corev1.Secret](objects, "demo-api"), find[*corev1.Secret](objects, "demo-api-keys")
	for name, tc := range map[string]struct {
		uncached []runtime.Object
		// want is the Secret whose keys both Secrets must end with.
		want *corev1.Secret
		// writes are the writes of the sync to Secrets. Every create of a Secret the API
		// server has fails (409); after the first, the keys come from the API server, and
		// ensure's own creates, which the cache leads to, fail as well.
		writes []string
	}{
		"both exist": {uncached: []runtime.Object{primary, backup}, want: primary,
			writes: []string{"create secrets demo-api-keys", "create secrets demo-api-keys", "create secrets demo-api"}},
		"only demo-api exists": {uncached: []runtime.Object{primary}, want: primary,
			writes: []string{"create secrets demo-api-keys", "create secrets demo-api", "create secrets demo-api-keys",
				"update secrets demo-api-keys", "create secrets demo-api"}},
		"only the copy exists": {uncached: []runtime.Object{backup}, want: backup,
			writes: []string{"create secrets demo-api-keys", "create secrets demo-api-keys", "create secrets demo-api"}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			m := newMonocle("demo")
			f.monocles = []*monoclev1alpha1.Monocle{m}
			f.uncached = tc.uncached
			c := f.newController()
			// Another seed than the one that generated the keys, so that new keys would show.
			c.random = rand.New(rand.NewSource(2))
			_, ctx := ktesting.NewTestContext(t)
			if err := c.syncHandler(ctx, cache.ObjectName{Namespace: m.Namespace, Name: m.Name}); err != nil {
				t.Logf("sync returned: %v", err)
			}
			expectActions(t, keySecretActions(writes(f.kubeclient.Actions())), tc.writes...)
			for _, name := range []string{"demo-api", "demo-api-keys"} {
				live, err := f.kubeclient.CoreV1().Secrets(m.Namespace).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range resources.GeneratedKeys {
					if string(live.Data[k]) != string(tc.want.Data[k]) {
						t.Errorf("%s holds %s = %q, want %q, the value the API server had", name, k, live.Data[k], tc.want.Data[k])
					}
				}
			}
		})
	}
}

// A keys' copy that cannot be written holds back the write of <name>-api: the copy is always
// written first.
func TestKeysCopyFailureHoldsTheSecret(t *testing.T) {
	m, objects := converged(t, newMonocle("demo"))
	// demo-api lost a key (its copy has it) and the copy drifted: both need a write.
	delete(find[*corev1.Secret](objects, "demo-api").Data, resources.JWKGenKeyKey)
	delete(find[*corev1.Secret](objects, "demo-api-keys").Labels, resources.InstanceLabel)
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects = objects
	c := f.newController()
	f.kubeclient.PrependReactor("update", "secrets", func(a core.Action) (bool, runtime.Object, error) {
		if a.(core.UpdateAction).GetObject().(*corev1.Secret).Name == "demo-api-keys" {
			return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), "demo-api-keys", errors.New("denied"))
		}
		return false, nil, nil
	})
	_, ctx := ktesting.NewTestContext(t)
	if err := c.syncHandler(ctx, cache.ObjectName{Namespace: m.Namespace, Name: m.Name}); err == nil {
		t.Error("the sync hid the failed write of the copy")
	}
	for _, a := range writes(f.kubeclient.Actions()) {
		if a.GetResource().Resource == "secrets" && actionName(a) == "demo-api" {
			t.Errorf("%s although the copy could not be written", strings.Join(describe([]core.Action{a}), ""))
		}
	}
}

// keySecretActions are the actions of actions on the Secrets of the generated keys: "<name>-api"
// and its copy "<name>-api-keys".
func keySecretActions(actions []core.Action) []core.Action {
	var out []core.Action
	for _, a := range actions {
		name := actionName(a)
		if g, ok := a.(core.GetAction); ok {
			name = g.GetName()
		}
		if a.GetResource().Resource == "secrets" && (name == "demo-api" || name == "demo-api-keys") {
			out = append(out, a)
		}
	}
	return out
}
