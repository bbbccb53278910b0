package resources

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// TestNewTarget: each kind of cluster, with its identity, where the operator reaches it, where
// the pods reach it (the proxy once credentials or TLS are needed), and the one answer to
// "is it bundled?".
func TestNewTarget(t *testing.T) {
	withRef := func(ref monoclev1alpha1.ElasticsearchReference) *monoclev1alpha1.Monocle {
		m := minimal()
		m.Spec.Elasticsearch.ElasticsearchRef = &ref
		return m
	}
	for _, tc := range []struct {
		name     string
		m        *monoclev1alpha1.Monocle
		tls      bool
		username string
		kind     monoclev1alpha1.ElasticsearchClusterKind
		identity string
		// url is the operator's, pods the pods'.
		url, pods string
	}{
		{name: "bundled", m: minimal(), tls: true, kind: monoclev1alpha1.ElasticsearchBundled,
			url: "http://demo-elastic.team-a.svc:9200", pods: "http://demo-elastic:9200"},
		{name: "ECK of the Monocle's namespace, https", m: withRef(monoclev1alpha1.ElasticsearchReference{Name: "es"}), tls: true,
			username: "elastic", kind: monoclev1alpha1.ElasticsearchECK, identity: "eck/team-a/es",
			url: "https://es-es-http.team-a.svc:9200", pods: "http://127.0.0.1:9200"},
		{name: "ECK of another namespace, http", m: withRef(monoclev1alpha1.ElasticsearchReference{Name: "es", Namespace: "search"}),
			username: "monocle", kind: monoclev1alpha1.ElasticsearchECK, identity: "eck/search/es",
			url: "http://es-es-http.search.svc:9200", pods: "http://127.0.0.1:9200"},
		{name: "external http without credentials, trailing slash", m: external("http://ES.example.com:9200/"),
			kind: monoclev1alpha1.ElasticsearchExternal, identity: "http://es.example.com:9200",
			url: "http://ES.example.com:9200", pods: "http://ES.example.com:9200"},
		{name: "external https without a port", m: external("https://es.example.com"), tls: true,
			kind: monoclev1alpha1.ElasticsearchExternal, identity: "https://es.example.com:443",
			url: "https://es.example.com", pods: "http://127.0.0.1:9200"},
		{name: "external http with credentials", m: external("http://es.example.com"), username: "monocle",
			kind: monoclev1alpha1.ElasticsearchExternal, identity: "http://es.example.com:80",
			url: "http://es.example.com", pods: "http://127.0.0.1:9200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := NewTarget(tc.m, tc.tls)
			target.Username = tc.username
			if target.Kind != tc.kind || target.Identity != tc.identity || target.URL != tc.url || target.PodURL() != tc.pods {
				t.Errorf("target %s %q at %s, pods at %s; want %s %q at %s, pods at %s",
					target.Kind, target.Identity, target.URL, target.PodURL(), tc.kind, tc.identity, tc.url, tc.pods)
			}
			if target.Identity != Identity(tc.m) {
				t.Errorf("identity %q, Identity(m) %q", target.Identity, Identity(tc.m))
			}
			if bundled := tc.kind == monoclev1alpha1.ElasticsearchBundled; target.Bundled() != bundled || BundledElasticsearch(tc.m) != bundled {
				t.Errorf("Bundled() = %v, BundledElasticsearch = %v; want %v", target.Bundled(), BundledElasticsearch(tc.m), bundled)
			}
			if target.NeedsProxy() != (tc.pods == "http://127.0.0.1:9200") {
				t.Errorf("NeedsProxy() = %v with pods at %s", target.NeedsProxy(), tc.pods)
			}
		})
	}
	// BundledTarget is the bundled one whatever the spec names.
	if got, want := BundledTarget(external("https://es.example.com")), NewTarget(minimal(), true); !reflect.DeepEqual(got, want) {
		t.Errorf("BundledTarget = %+v, want %+v", got, want)
	}
}

// TestParseEndpoint: the one parse of a cluster URL, with the scheme's port by default and
// the refusals admission makes too.
func TestParseEndpoint(t *testing.T) {
	for raw, want := range map[string]Endpoint{
		"http://es.example.com:9200/": {Scheme: "http", Host: "es.example.com", Port: "9200", Authority: "es.example.com:9200"},
		"https://ES.example.com":      {Scheme: "https", Host: "ES.example.com", Port: "443", Authority: "ES.example.com"},
		"http://10.0.0.1":             {Scheme: "http", Host: "10.0.0.1", Port: "80", Authority: "10.0.0.1"},
		"https://[fd00::1]:9243":      {Scheme: "https", Host: "fd00::1", Port: "9243", Authority: "[fd00::1]:9243"},
	} {
		if got, err := ParseEndpoint(raw); err != nil || got != want {
			t.Errorf("ParseEndpoint(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "es.example.com:9200", "ftp://es.example.com", "http://", "http://u:p@es.example.com", "http://es.example.com/path"} {
		if got, err := ParseEndpoint(raw); err == nil {
			t.Errorf("ParseEndpoint(%q) = %+v, want an error", raw, got)
		}
	}
}

// TestBundledTargetWithUsers: with its users, the bundled node is read by the operator as its
// own user, and Monocle's pods reach it through the proxy as Monocle's user, never the
// operator's.
func TestBundledTargetWithUsers(t *testing.T) {
	m := minimal()
	users := map[string][]byte{ElasticOperatorUser: []byte("operator-pw"), ElasticMonocleUser: []byte("monocle-pw")}
	target := BundledTarget(m).WithBundledUsers(users)
	if target.Username != ElasticOperatorUser || target.Password != "operator-pw" {
		t.Errorf("the operator reads as %s", target.Username)
	}
	if !target.NeedsProxy() || target.PodURL() != "http://127.0.0.1:9200" {
		t.Errorf("NeedsProxy %v, pods at %s; want the proxy", target.NeedsProxy(), target.PodURL())
	}
	conf, err := ProxyConfig(target, PodProxyLayout)
	if err != nil {
		t.Fatal(err)
	}
	basic := func(user, pw string) string { return base64.StdEncoding.EncodeToString([]byte(user + ":" + pw)) }
	if !strings.Contains(conf, basic(ElasticMonocleUser, "monocle-pw")) || strings.Contains(conf, basic(ElasticOperatorUser, "operator-pw")) {
		t.Errorf("the proxy does not send Monocle's user alone:\n%s", conf)
	}
	if !strings.Contains(conf, "demo-elastic.team-a.svc:9200") {
		t.Errorf("the proxy does not reach the node's Service:\n%s", conf)
	}
}
