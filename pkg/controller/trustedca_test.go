package controller

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

const testPEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

// withTrustedCA is a Monocle "demo" whose spec.trustedCA names the key ca.crt of the
// ConfigMap "corp-bundle".
func withTrustedCA() *monoclev1alpha1.Monocle {
	m := newMonocle("demo")
	m.Spec.TrustedCA = &monoclev1alpha1.ConfigMapKeyReference{Name: "corp-bundle", Key: "ca.crt"}
	return m
}

// newBundle is the ConfigMap "corp-bundle" of the user at resourceVersion rv.
func newBundle(rv string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "corp-bundle", Namespace: metav1.NamespaceDefault, ResourceVersion: rv},
		Data:       data,
	}
}

// resyncWithBundle syncs m once over objects with the given ConfigMaps of the user, and
// returns the fixture, the kube writes and the Monocle the sync left.
func resyncWithBundle(t *testing.T, m *monoclev1alpha1.Monocle, objects []runtime.Object, cms ...*corev1.ConfigMap) (*fixture, []core.Action, *monoclev1alpha1.Monocle) {
	t.Helper()
	return resyncWith(t, m, objects, func(f *fixture) { f.userConfigMaps = cms })
}

func TestTrustedCAReachesAPIAndCrawler(t *testing.T) {
	bundle := newBundle("1", map[string]string{"ca.crt": testPEM})
	m, objects := convergedWith(t, withTrustedCA(), func(f *fixture) { f.userConfigMaps = []*corev1.ConfigMap{bundle} })
	if c := condition(t, m, monoclev1alpha1.ConditionSecretsReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("SecretsReady = %+v, want True", c)
	}
	want := resources.TrustedCAHash([]byte(testPEM))
	for _, name := range []string{"demo-api", "demo-crawler"} {
		d := find[*appsv1.Deployment](objects, name)
		if d == nil {
			t.Fatalf("Deployment %s not created", name)
		}
		if got := d.Spec.Template.Annotations[resources.TrustedCAHashAnnotation]; got != want {
			t.Errorf("%s: %s = %q, want %q", name, resources.TrustedCAHashAnnotation, got, want)
		}
	}
	if s := find[*appsv1.StatefulSet](objects, "demo-elastic"); s == nil || s.Spec.Template.Annotations[resources.TrustedCAHashAnnotation] != "" {
		t.Errorf("the StatefulSet is missing or carries the CA hash")
	}

	// The same data at a new resourceVersion rolls nothing; a new bundle rolls the API and
	// the crawler, and nothing else.
	_, writes, _ := resyncWithBundle(t, m, objects, newBundle("2", map[string]string{"ca.crt": testPEM, "other": "x"}))
	expectActions(t, writes)
	_, writes, _ = resyncWithBundle(t, m, objects, newBundle("3", map[string]string{"ca.crt": testPEM + testPEM}))
	expectActions(t, writes, "update deployments demo-api", "update deployments demo-crawler")
}

func TestTrustedCAIsReadOncePerResourceVersion(t *testing.T) {
	bundle := newBundle("1", map[string]string{"ca.crt": testPEM})
	m, objects := convergedWith(t, withTrustedCA(), func(f *fixture) { f.userConfigMaps = []*corev1.ConfigMap{bundle} })
	for i, actions := range syncTwice(t, m, objects, func(f *fixture) { f.userConfigMaps = []*corev1.ConfigMap{bundle} }) {
		// The first sync of this process reads the ConfigMap once; nothing is written.
		if want := []string{"get configmaps "}[:1-i]; !slices.Equal(describe(actions), want) {
			t.Errorf("sync %d made %q, want %q", i+1, describe(actions), want)
		}
	}
}

func TestTrustedCAMissingHoldsAPIAndCrawler(t *testing.T) {
	for name, tc := range map[string]struct {
		bundle  []*corev1.ConfigMap
		reason  string
		message string
	}{
		"no ConfigMap": {reason: reasons.ConfigMapNotFound, message: "ConfigMap corp-bundle named by spec.trustedCA does not exist"},
		"no key": {bundle: []*corev1.ConfigMap{newBundle("1", map[string]string{"bundle.pem": testPEM})},
			reason: reasons.ConfigMapKeyMissing, message: "has no key ca.crt"},
		"no certificate": {bundle: []*corev1.ConfigMap{newBundle("1", map[string]string{"ca.crt": "not a PEM"})},
			reason: reasons.ConfigMapKeyMissing, message: "holds no PEM certificate"},
	} {
		t.Run(name, func(t *testing.T) {
			// A new Monocle: the API and the crawler are never created.
			m, objects := convergedWith(t, withTrustedCA(), func(f *fixture) { f.userConfigMaps = tc.bundle })
			assertAPIAndCrawlerWait(t, m, objects, "the CA bundle", tc.reason, tc.message)
		})
	}
}

func TestTrustedCAGoneLeavesRunningPodsAlone(t *testing.T) {
	bundle := newBundle("1", map[string]string{"ca.crt": testPEM})
	m, objects := convergedWith(t, withTrustedCA(), func(f *fixture) { f.userConfigMaps = []*corev1.ConfigMap{bundle} })
	// The bundle is deleted and the spec changes what the API runs: nothing is rolled.
	m = m.DeepCopy()
	m.Spec.API.Title = "New title"
	m.Generation++
	_, writes, status := resyncWithBundle(t, m, objects)
	expectActions(t, writes)
	if c := condition(t, status, monoclev1alpha1.ConditionSecretsReady); c.Reason != reasons.ConfigMapNotFound {
		t.Errorf("SecretsReady = %+v, want ConfigMapNotFound", c)
	}
	// Back again: the API rolls to the new spec.
	_, writes, _ = resyncWithBundle(t, m, objects, bundle)
	expectActions(t, writes, "update deployments demo-api")
}

func TestTrustedCAChangeRequeuesTheMonoclesNamingIt(t *testing.T) {
	f := newFixture(t)
	other := newMonocle("other")
	other.UID = "uid-other"
	f.monocles = []*monoclev1alpha1.Monocle{withTrustedCA(), other}
	c := f.newController()
	name := types.NamespacedName{Namespace: metav1.NamespaceDefault, Name: "corp-bundle"}
	c.trustedCAs.put(name, "1", map[string]string{"ca.crt": "h"})

	changeQueuesDemoOnly(t, c, onChange(c.handleConfigMapMetadata), name, "the bundle")
	c.handleConfigMapMetadata(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: "unrelated"}})
	if got := c.queue.Len(); got != 0 {
		t.Errorf("queue length %d after a change of an unrelated ConfigMap, want 0", got)
	}
	c.handleConfigMapMetadata(cache.DeletedFinalStateUnknown{Key: name.String(),
		Obj: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name, ResourceVersion: "2"}}})
	if _, ok := c.trustedCAs.get(name, "1"); ok {
		t.Error("the deleted ConfigMap's hashes are still cached")
	}
}

// assertAPIAndCrawlerWait checks a new Monocle whose API and crawler wait for what (a
// missing Secret or ConfigMap): neither Deployment is created, the StatefulSet is, and
// SecretsReady is False and Degraded True with reason, SecretsReady's message saying message.
func assertAPIAndCrawlerWait(t *testing.T, m *monoclev1alpha1.Monocle, objects []runtime.Object, what, reason, message string) {
	t.Helper()
	for _, name := range []string{"demo-api", "demo-crawler"} {
		if find[*appsv1.Deployment](objects, name) != nil {
			t.Errorf("Deployment %s created while %s is missing", name, what)
		}
	}
	if find[*appsv1.StatefulSet](objects, "demo-elastic") == nil {
		t.Errorf("the StatefulSet is not created: only the API and the crawler wait for %s", what)
	}
	c := condition(t, m, monoclev1alpha1.ConditionSecretsReady)
	if c.Status != metav1.ConditionFalse || c.Reason != reason || !strings.Contains(c.Message, message) {
		t.Errorf("SecretsReady = %+v, want False %s saying %q", c, reason, message)
	}
	if d := condition(t, m, monoclev1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != reason {
		t.Errorf("Degraded = %+v, want True %s", d, reason)
	}
}

// changeQueuesDemoOnly gives update (an informer's update handler) a new version of the
// object name, which the Monocle demo names (what it is), and checks that demo alone is
// queued.
func changeQueuesDemoOnly(t *testing.T, c *Controller, update func(oldObj, newObj any), name types.NamespacedName, what string) {
	t.Helper()
	update(
		&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name, ResourceVersion: "1"}},
		&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name, ResourceVersion: "2"}})
	if got := c.queue.Len(); got != 1 {
		t.Fatalf("queue length %d after a change of %s, want 1 (demo only)", got, what)
	}
	if key, _ := c.queue.Get(); key.Name != "demo" {
		t.Errorf("queued %v, want default/demo", key)
	}
}
