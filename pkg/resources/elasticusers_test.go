package resources

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// TestElasticUsersSecret: the Secret holds each user's password and the file realm's files:
// one users line per realm user with its hash, each user in its own role, and both roles
// defined in roles.yml.
func TestElasticUsersSecret(t *testing.T) {
	m := minimal()
	passwords := map[string][]byte{ElasticSuperuser: []byte("e"), ElasticMonocleUser: []byte("m"), ElasticOperatorUser: []byte("o"),
		ElasticProbeUser: []byte("p")}
	hashes := map[string]string{ElasticMonocleUser: "$2a$10$mmm", ElasticOperatorUser: "$2a$10$ooo", ElasticProbeUser: "$2a$10$ppp"}
	s := NewElasticUsersSecret(m, passwords, hashes)
	if s.Name != "demo-elastic-users" {
		t.Errorf("name %s", s.Name)
	}
	for u, pw := range passwords {
		if string(s.Data[u]) != string(pw) {
			t.Errorf("password of %s: %q", u, s.Data[u])
		}
	}
	if got, want := string(s.Data[ElasticRealmUsersFile]), "monocle:$2a$10$mmm\nmonocle-operator:$2a$10$ooo\nmonocle-probe:$2a$10$ppp\n"; got != want {
		t.Errorf("users:\n%s\nwant\n%s", got, want)
	}
	if got, want := string(s.Data[ElasticRealmRolesFile]), "monocle:monocle\nmonocle_operator:monocle-operator\nmonocle_probe:monocle-probe\n"; got != want {
		t.Errorf("users_roles:\n%s\nwant\n%s", got, want)
	}
	var roles map[string]struct {
		Cluster []string `json:"cluster"`
		Indices []struct {
			Names      []string `json:"names"`
			Privileges []string `json:"privileges"`
		} `json:"indices"`
	}
	if err := yaml.UnmarshalStrict(s.Data[ElasticRolesFile], &roles); err != nil {
		t.Fatalf("roles.yml: %v", err)
	}
	for _, role := range []string{ElasticMonocleRole, ElasticOperatorRole} {
		r, ok := roles[role]
		if !ok || len(r.Indices) == 0 || !strings.HasPrefix(r.Indices[0].Names[0], "monocle") {
			t.Errorf("role %s: %+v", role, r)
		}
	}
	if r := roles[ElasticProbeRole]; strings.Join(r.Cluster, ",") != "monitor" || len(r.Indices) > 0 {
		t.Errorf("role %s: %+v, want monitor only", ElasticProbeRole, r)
	}
	if len(roles) != len(ElasticRealmUsers) {
		t.Errorf("roles.yml defines %d roles for %d users", len(roles), len(ElasticRealmUsers))
	}
	if h := ElasticUsersHash(s.Data); h == ElasticUsersHash(NewElasticUsersSecret(m, map[string][]byte{ElasticSuperuser: []byte("other")}, hashes).Data) {
		t.Error("the users hash does not follow the elastic password")
	}
}

// TestElasticNodeMountsOnlyWhatItNeeds: the node's container mounts the probe user's
// password alone, init-config the realm's files alone, init-keystore the elastic user's
// password alone, and no container but the exporter, which takes the probe user's password
// from its env only, references the users Secret in its environment.
func TestElasticNodeMountsOnlyWhatItNeeds(t *testing.T) {
	m := minimal()
	m.Spec.Elasticsearch.Exporter = &monoclev1alpha1.ElasticsearchExporter{}
	pod := NewElasticStatefulSet(m, ElasticDataVolume, false, "h").Spec.Template
	if pod.Annotations[ElasticUsersHashAnnotation] != "h" {
		t.Errorf("annotations %v", pod.Annotations)
	}
	items := map[string][]string{}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == ElasticUsersSecretName(m) {
			for _, i := range v.Secret.Items {
				items[v.Name] = append(items[v.Name], i.Key)
			}
		}
	}
	if got := strings.Join(items["probe"], ","); got != ElasticProbeUser {
		t.Errorf("the node mounts %s of the users Secret", got)
	}
	if got := strings.Join(items["bootstrap"], ","); got != ElasticSuperuser {
		t.Errorf("init-keystore mounts %s of the users Secret", got)
	}
	mounts := map[string][]string{}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		for _, vm := range c.VolumeMounts {
			mounts[vm.Name] = append(mounts[vm.Name], c.Name)
		}
	}
	for vol, want := range map[string]string{"probe": ComponentElastic, "realm": "init-config", "bootstrap": "init-keystore"} {
		if got := strings.Join(mounts[vol], ","); got != want {
			t.Errorf("volume %s is mounted by %s, want %s alone", vol, got, want)
		}
	}
	if got := strings.Join(items["realm"], ","); got != strings.Join(ElasticRealmFiles, ",") {
		t.Errorf("the init container mounts %s of the users Secret", got)
	}
	var refs []string
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == ElasticUsersSecretName(m) {
				refs = append(refs, c.Name+"/"+e.Name+"="+e.ValueFrom.SecretKeyRef.Key)
			}
		}
	}
	if got, want := strings.Join(refs, ","), "exporter/ES_PASSWORD="+ElasticProbeUser; got != want {
		t.Errorf("env references to the users Secret: %s, want %s", got, want)
	}
}
