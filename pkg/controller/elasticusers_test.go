package controller

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/ktesting"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// TestElasticUsers: a new Monocle's users get generated passwords and hashes that match them;
// a later sync keeps both and writes nothing; a password a user edits is kept and only its
// hash changes; one too short or too long for the file realm is generated anew, with a
// warning.
func TestElasticUsers(t *testing.T) {
	m := newMonocle("demo")
	var events []string
	ensure := func(objects ...runtime.Object) (*corev1.Secret, int) {
		t.Helper()
		s, n, e := ensureUsers(t, m, objects, nil)
		events = e
		return s, n
	}
	hashOf := func(s *corev1.Secret, user string) string {
		return realmUsers(s.Data[resources.ElasticRealmUsersFile])[user]
	}
	first, n := ensure()
	if n != 1 {
		t.Errorf("a new Monocle's users: %d writes, want 1", n)
	}
	for _, u := range resources.ElasticUsers {
		if len(first.Data[u]) < resources.KeyLength {
			t.Errorf("password of %s: %d characters", u, len(first.Data[u]))
		}
	}
	for u := range resources.ElasticRealmUsers {
		if err := bcrypt.CompareHashAndPassword([]byte(hashOf(first, u)), first.Data[u]); err != nil {
			t.Errorf("the hash of %s does not match its password: %v", u, err)
		}
	}

	again, n := ensure(first)
	if n != 0 || string(again.Data[resources.ElasticRealmUsersFile]) != string(first.Data[resources.ElasticRealmUsersFile]) {
		t.Errorf("a converged Monocle's users: %d writes, users file changed: %v", n,
			string(again.Data[resources.ElasticRealmUsersFile]) != string(first.Data[resources.ElasticRealmUsersFile]))
	}

	edited := first.DeepCopy()
	edited.Data[resources.ElasticMonocleUser] = []byte("rotated-by-hand")
	edited.Data[resources.ElasticSuperuser] = []byte("short")
	edited.Data[resources.ElasticProbeUser] = []byte(strings.Repeat("x", maxElasticPassword+1))
	rotated, n := ensure(edited)
	if n != 1 || string(rotated.Data[resources.ElasticMonocleUser]) != "rotated-by-hand" {
		t.Errorf("after an edit: %d writes, monocle's password %q", n, rotated.Data[resources.ElasticMonocleUser])
	}
	if err := bcrypt.CompareHashAndPassword([]byte(hashOf(rotated, resources.ElasticMonocleUser)), []byte("rotated-by-hand")); err != nil {
		t.Errorf("the edited password's hash: %v", err)
	}
	if hashOf(rotated, resources.ElasticOperatorUser) != hashOf(first, resources.ElasticOperatorUser) {
		t.Error("the operator user's hash changed with another user's password")
	}
	if string(rotated.Data[resources.ElasticSuperuser]) == "short" || len(rotated.Data[resources.ElasticSuperuser]) != resources.KeyLength {
		t.Errorf("a password too short for Elasticsearch was kept: %q", rotated.Data[resources.ElasticSuperuser])
	}
	if len(rotated.Data[resources.ElasticProbeUser]) != resources.KeyLength {
		t.Errorf("a password too long for bcrypt was kept: %d bytes", len(rotated.Data[resources.ElasticProbeUser]))
	}
	if want := "Warning " + reasons.ElasticPasswordRejected + " Secret demo-elastic-users: the password of elastic, monocle-probe was not"; len(events) != 1 || !strings.HasPrefix(events[0], want) {
		t.Errorf("events %q, want one starting %q", events, want)
	}

	// A cache behind the API server: the create fails and the API server's passwords stay.
	stale, _, _ := ensureUsers(t, m, nil, []runtime.Object{first})
	for _, u := range resources.ElasticUsers {
		if string(stale.Data[u]) != string(first.Data[u]) {
			t.Errorf("with a stale cache, the password of %s was generated anew", u)
		}
	}
}

// ensureUsers runs ensureElasticUsers for m with cached objects in the caches and the API
// server, and uncached ones in the API server alone; it returns the Secret as built and the
// number of writes and the warnings recorded.
func ensureUsers(t *testing.T, m *monoclev1alpha1.Monocle, cached, uncached []runtime.Object) (*corev1.Secret, int, []string) {
	t.Helper()
	f := newFixture(t)
	f.monocles = []*monoclev1alpha1.Monocle{m}
	f.kubeobjects, f.uncached = cached, uncached
	c := f.newController()
	_, ctx := ktesting.NewTestContext(t)
	u, err := c.ensureElasticUsers(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for len(f.recorder.Events) > 0 {
		if e := <-f.recorder.Events; strings.HasPrefix(e, "Warning ") {
			events = append(events, e)
		}
	}
	return u.secret, len(writes(f.kubeclient.Actions())), events
}

// TestRealmMatches: a hash is checked against its password with bcrypt once, then from
// memory; a password that does not match is never remembered, nor does a remembered match
// answer for another password of the same hash.
func TestRealmMatches(t *testing.T) {
	pw := []byte("a-password")
	h, err := bcrypt.GenerateFromPassword(pw, realmHashCost)
	if err != nil {
		t.Fatal(err)
	}
	r := newRealmMatches()
	calls := 0
	r.compare = func(hash, password []byte) error {
		calls++
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	for i, c := range []struct {
		pw        string
		want      bool
		wantCalls int
	}{
		{"a-password", true, 1},
		{"a-password", true, 1},
		{"another-password", false, 2},
		{"another-password", false, 3},
		{"a-password", true, 3},
	} {
		if got := r.matches(string(h), []byte(c.pw)); got != c.want || calls != c.wantCalls {
			t.Errorf("check %d, %q: matches %v after %d bcrypt checks, want %v after %d", i+1, c.pw, got, calls, c.want, c.wantCalls)
		}
	}
}
