package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/resources"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// TestBundledElasticsearchSecurity: a bundled Monocle's node runs with security on, its users'
// passwords are generated once into "<name>-elastic-users" and appear in no pod spec, the
// node answers 401 without credentials, the operator reads it as its own user, Monocle's
// pods reach it through the proxy as theirs, and the status says Enabled. An edited password
// is kept and followed everywhere (the realm's hash, the node's restart, the proxy, the
// operator's reads); a deleted one is generated anew, the others kept. The tenant sets the
// sidecar's image, as for an external cluster.
func TestBundledElasticsearchSecurity(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	ctx := t.Context()
	const ns = "bundled-security"
	startDay2(t, ns)

	users := usersSecret(t, ns)
	for _, u := range resources.ElasticUsers {
		if len(users.Data[u]) < resources.KeyLength {
			t.Errorf("the password of %s has %d characters, want a generated one of %d", u, len(users.Data[u]), resources.KeyLength)
		}
		expectNoPassword(t, ns, u, string(users.Data[u]))
	}
	expectRealm(t, users)
	waitCluster(t, ns, "m", "authentication Enabled", func(c *monoclev1alpha1.ElasticsearchClusterStatus) error {
		if c.Authentication != monoclev1alpha1.ElasticsearchAuthenticationEnabled {
			return fmt.Errorf("authentication %q", c.Authentication)
		}
		return nil
	})
	expectProxy(t, ns, "m", resources.ElasticMonocleUser, string(users.Data[resources.ElasticMonocleUser]), nil)
	waitOperatorPassword(t, ns, string(users.Data[resources.ElasticOperatorUser]))

	// Without credentials, the node refuses.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://m-elastic."+ns+".svc:9200/_cluster/health", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&http.Client{Transport: env.Elastic.Transport()}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the bundled node without credentials answered %d, want 401", res.StatusCode)
	}

	t.Run("an edited password is followed", func(t *testing.T) {
		node := statefulSetAnnotation(t, ns, "m-elastic", resources.ElasticUsersHashAnnotation)
		env.Kubectl.Must(t, "patch", "-n", ns, "secret/m-elastic-users", "--type=merge",
			`-p={"stringData":{"monocle":"rotated-monocle-pw","monocle-operator":"rotated-operator-pw"}}`)
		testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "the node restarted with the new passwords", func() error {
			if got := statefulSetAnnotation(t, ns, "m-elastic", resources.ElasticUsersHashAnnotation); got == node {
				return fmt.Errorf("%s still %s", resources.ElasticUsersHashAnnotation, got)
			}
			return nil
		})
		rotated := usersSecret(t, ns)
		for u, want := range map[string]string{resources.ElasticMonocleUser: "rotated-monocle-pw", resources.ElasticOperatorUser: "rotated-operator-pw",
			resources.ElasticSuperuser: string(users.Data[resources.ElasticSuperuser]), resources.ElasticProbeUser: string(users.Data[resources.ElasticProbeUser])} {
			if got := string(rotated.Data[u]); got != want {
				t.Errorf("the password of %s is %q, want %q", u, got, want)
			}
		}
		expectRealm(t, rotated)
		testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "the proxy sends the new password", func() error {
			s, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, "m-elastic-proxy", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !strings.Contains(string(s.Data[resources.ProxyConfigKey]), basicAuth(resources.ElasticMonocleUser, "rotated-monocle-pw")) {
				return fmt.Errorf("nginx.conf does not send the rotated password")
			}
			return nil
		})
		waitOperatorPassword(t, ns, "rotated-operator-pw")
		expectNoPassword(t, ns, resources.ElasticMonocleUser, "rotated-monocle-pw")
		env.Kubectl.Must(t, "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s", "monocle/m")
	})

	t.Run("the proxy's image is the Monocle's", func(t *testing.T) {
		const image = "registry.example.com/mirror/nginx-unprivileged:1.27.5-alpine"
		tenant(t, ns).Must(t, "patch", "-n", ns, "monocle/m", "--type=merge",
			`-p={"spec":{"elasticsearch":{"proxy":{"image":"`+image+`"}}}}`)
		testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "the API's sidecar on the mirror's image", func() error {
			d, err := env.Kube.AppsV1().Deployments(ns).Get(ctx, "m-api", metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, c := range d.Spec.Template.Spec.InitContainers {
				if c.Name == resources.ComponentProxy && c.Image == image {
					return nil
				}
			}
			return fmt.Errorf("init containers %+v", d.Spec.Template.Spec.InitContainers)
		})
	})

	t.Run("a deleted password is generated anew", func(t *testing.T) {
		env.Kubectl.Must(t, "patch", "-n", ns, "secret/m-elastic-users", "--type=json",
			`-p=[{"op":"remove","path":"/data/elastic"}]`)
		testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "a new elastic password", func() error {
			s := usersSecret(t, ns)
			if len(s.Data[resources.ElasticSuperuser]) < resources.KeyLength {
				return fmt.Errorf("elastic's password has %d characters", len(s.Data[resources.ElasticSuperuser]))
			}
			if string(s.Data[resources.ElasticOperatorUser]) != "rotated-operator-pw" {
				return fmt.Errorf("the operator's password changed with elastic's")
			}
			return nil
		})
	})
}

// usersSecret is the Secret "m-elastic-users" of ns.
func usersSecret(t *testing.T, ns string) *corev1.Secret {
	t.Helper()
	s, err := env.Kube.CoreV1().Secrets(ns).Get(t.Context(), "m-elastic-users", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// expectRealm checks that the file realm of users, the Secret "<name>-elastic-users", gives
// each realm user its role and a bcrypt hash of the password the Secret holds.
func expectRealm(t *testing.T, users *corev1.Secret) {
	t.Helper()
	hashes := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(users.Data[resources.ElasticRealmUsersFile])), "\n") {
		u, h, _ := strings.Cut(line, ":")
		hashes[u] = h
	}
	roles := string(users.Data[resources.ElasticRealmRolesFile])
	for u, role := range resources.ElasticRealmUsers {
		if err := bcrypt.CompareHashAndPassword([]byte(hashes[u]), users.Data[u]); err != nil {
			t.Errorf("the realm's hash of %s does not match its password: %v", u, err)
		}
		if !strings.Contains(roles, role+":"+u+"\n") {
			t.Errorf("users_roles does not give %s the role %s:\n%s", u, role, roles)
		}
	}
	if _, ok := hashes[resources.ElasticSuperuser]; ok {
		t.Errorf("the realm defines the built-in %s", resources.ElasticSuperuser)
	}
}

// waitOperatorPassword waits until the fake Elasticsearch of Monocle m of ns last accepted
// the operator's user with password.
func waitOperatorPassword(t *testing.T, ns, password string) {
	t.Helper()
	testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "the operator reads with its password", func() error {
		if got := env.Elastic.BundledPassword(ns, "m"); got != password {
			return fmt.Errorf("the operator sent %q", got)
		}
		return nil
	})
}

// statefulSetAnnotation is the pod template annotation key of StatefulSet name of ns.
func statefulSetAnnotation(t *testing.T, ns, name, key string) string {
	t.Helper()
	s, err := env.Kube.AppsV1().StatefulSets(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Spec.Template.Annotations[key]
}
