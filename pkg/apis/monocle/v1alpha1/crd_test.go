package v1alpha1_test

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestCRDDocumentsEveryField checks that every property of the CRD's schema, which
// controller-gen takes from the Go doc comments, has a description, so that
// `kubectl explain monocle.spec` documents every field.
func TestCRDDocumentsEveryField(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "deploy", "01-crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("%d versions, want 1", len(crd.Spec.Versions))
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	props := root["properties"].(map[string]any)
	var undocumented []string
	var walk func(path string, schema map[string]any)
	walk = func(path string, schema map[string]any) {
		d, _ := schema["description"].(string)
		if d == "" {
			undocumented = append(undocumented, path)
		}
		if strings.Contains(d, "`kubectl explain pod.spec.") {
			// A Pod spec field's schema (hack/crd-descriptions): the Pod's own field
			// documents what is below.
			return
		}
		if p, ok := schema["properties"].(map[string]any); ok {
			for name, sub := range p {
				walk(path+"."+name, sub.(map[string]any))
			}
		}
		if items, ok := schema["items"].(map[string]any); ok {
			if _, ok := items["properties"]; ok {
				for name, sub := range items["properties"].(map[string]any) {
					walk(path+"[]."+name, sub.(map[string]any))
				}
			}
		}
	}
	for _, top := range []string{"spec", "status"} {
		walk(top, props[top].(map[string]any))
	}
	sort.Strings(undocumented)
	if len(undocumented) > 0 {
		t.Errorf("fields without a description (add a doc comment on the field in pkg/apis/monocle/v1alpha1 and run hack/update-codegen.sh): %v", undocumented)
	}
}

// TestPodMetadataAdmission checks the syntax admission asks of the keys and values of
// podLabels, nodeSelector and podAnnotations (label keys and values: Kubernetes' "Labels and
// Selectors", syntax and character set; annotation values are free), on each component that
// has them, so that the API server never refuses the pod template the operator writes.
func TestPodMetadataAdmission(t *testing.T) {
	name63 := strings.Repeat("n", 63)
	prefix253 := strings.Repeat("p", 61) + "." + strings.Repeat("q", 63) + "." + strings.Repeat("r", 63) + "." + strings.Repeat("s", 63)
	if len(prefix253) != 253 {
		t.Fatalf("prefix of %d characters", len(prefix253))
	}
	var cases []admissionCase
	for _, place := range []struct{ field, spec string }{
		{"spec.api", "api"}, {"spec.crawler", "crawler"}, {"spec.elasticsearch", "elasticsearch"}, {"spec.jobs", "jobs"},
	} {
		in := func(s string) string { return "{" + place.spec + ": " + s + "}" }
		for _, m := range []string{"podLabels", "nodeSelector"} {
			f := place.field + "." + m
			cases = append(cases,
				refused(f+" value with a space", in("{"+m+": {team: a b}}"), f+".team", "should match"),
				refused(f+" value of 64", in("{"+m+": {team: "+name63+"x}}"), f+".team", "Too long"),
				refused(f+" value beginning with '-'", in("{"+m+": {team: '-a'}}"), f+".team", "should match"),
				refused(f+" value ending with '.'", in("{"+m+": {team: 'a.'}}"), f+".team", "should match"),
				accepted(f+" empty value", in("{"+m+": {team: ''}}")),
				accepted(f+" value of 63", in("{"+m+": {team: "+name63+"}}")),
				accepted(f+" value of every character", in("{"+m+": {team: A-z_0.9}}")),
			)
		}
		for _, m := range []string{"podLabels", "nodeSelector", "podAnnotations"} {
			f := place.field + "." + m
			for _, key := range []string{"a b", "-team", "team-", "team.", name63 + "x", prefix253 + "x/team",
				"Example.com/team", "example.com/", "/team", "a/b/c", "example..com/team", "team:1", "ünïcode"} {
				cases = append(cases, refused(f+" key "+key, in("{"+m+": {"+strconv.Quote(key)+": v}}"), f, m+" keys must be qualified names"))
			}
			for _, key := range []string{"t", "team", name63, "Team_A.b-c", "example.com/team", prefix253 + "/" + name63, "kubernetes.io/hostname"} {
				cases = append(cases, accepted(f+" key "+key, in("{"+m+": {"+strconv.Quote(key)+": v}}")))
			}
		}
		cases = append(cases, accepted(place.field+".podAnnotations value of free text",
			in(`{podAnnotations: {example.com/note: "free text: with spaces, \"quotes\" and `+strings.Repeat("x", 300)+`"}}`)))
	}
	runAdmissionCases(t, cases)
}

// TestExternalURLAdmission checks that spec.elasticsearch.external.url refuses a port out of
// 1..65535 and the hosts that reach the pod itself or its node (loopback, unspecified,
// link-local, IPv4 spelt otherwise than in dotted decimal), and accepts the edges around them.
func TestExternalURLAdmission(t *testing.T) {
	const field = "spec.elasticsearch.external.url"
	ext := func(url string) string { return `{elasticsearch: {external: {url: "` + url + `"}}}` }
	var cases []admissionCase
	for _, u := range []string{"http://es.example.com:99999", "http://es.example.com:0", "http://es.example.com:65536",
		"http://es.example.com:", "https://es.example.com:/", "http://es.example.com:09200", "http://10.0.0.1:123456", "http://[2001:db8::1]:70000"} {
		cases = append(cases, refused("port "+u, ext(u), field, "port must be from 1 to 65535"))
	}
	for _, u := range []string{"http://es.example.com:1", "http://es.example.com:65535", "https://es.example.com:9243/",
		"http://es.example.com:9200", "https://es.example.com", "http://10.0.0.1:9200", "http://[2001:db8::1]:9200", "http://[2001:db8::1]"} {
		cases = append(cases, accepted("port "+u, ext(u)))
	}
	for _, host := range []string{
		"localhost", "LOCALHOST", "localhost.", "es.localhost", "Es.LocalHost.",
		"127.0.0.1", "127.255.255.254", "127.1", "127.0.1", "0x7f.0.0.1", "0X7F000001", "2130706433", "0177.0.0.1", "10.0.0.1.",
		"0.0.0.0", "0", "0.1.2.3", "169.254.169.254", "169.254.0.1",
		"[::1]", "[0:0:0:0:0:0:0:1]", "[0000::0001]", "[::]", "[0::0]", "[::0]",
		"[fe80::1]", "[FE80::1]", "[fe80::1%25eth0]", "[febf:ffff::1]", "[2001:db8::1%25eth0]",
		"[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:7f00:0001]", "[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]", "[::ffff:0.0.0.0]", "[::ffff:0:1]", "[::127.0.0.1]",
	} {
		for _, port := range []string{"", ":9200"} {
			u := "http://" + host + port
			cases = append(cases, refused("host "+u, ext(u), field, "host must not be localhost"))
		}
	}
	for _, host := range []string{
		"es.example.com", "localhost.example.com", "mylocalhost", "127.example.com", "0x7f.example.com", "es-127.0.0.1.nip.example",
		"10.0.0.1", "1.2.3.4", "126.255.255.255", "128.0.0.1", "169.253.255.255", "169.255.0.1", "255.255.255.255",
		"[2001:db8::1]", "[::2]", "[1::]", "[fec0::1]", "[fe7f::1]", "[fec0::]", "[::ffff:10.0.0.1]", "[::ffff:a00:1]", "[::fffe:7f00:1]", "[64:ff9b::1.2.3.4]",
	} {
		u := "https://" + host + ":9243"
		cases = append(cases, accepted("host "+u, ext(u)))
	}
	runAdmissionCases(t, cases)
}

// TestProxyAdmission checks that spec.proxy's URLs refuse credentials (they come from
// credentialsSecretRef) and '$', which Kubernetes would expand, and that credentialsSecretRef
// comes with a proxy URL.
func TestProxyAdmission(t *testing.T) {
	var cases []admissionCase
	for _, f := range []string{"httpsProxy", "httpProxy"} {
		field := "spec.proxy." + f
		for _, u := range []string{"http://user:secret@proxy.example.com:3128", "http://user@proxy.example.com:3128",
			"http://:secret@proxy.example.com", "http://user:p%40ss@proxy.example.com:3128/", "http://$(GITHUB_TOKEN).example.com:3128"} {
			cases = append(cases, refused(f+" "+u, `{proxy: {`+f+`: "`+u+`"}}`, field, "without credentials (use proxy.credentialsSecretRef)"))
		}
		for _, u := range []string{"http://proxy.example.com:3128", "http://proxy.example.com", "http://10.0.0.1:3128/", "http://[2001:db8::1]:3128"} {
			cases = append(cases, accepted(f+" "+u, `{proxy: {`+f+`: "`+u+`", credentialsSecretRef: {name: proxy-credentials}}}`))
		}
	}
	cases = append(cases,
		refused("credentialsSecretRef without a proxy", `{proxy: {noProxy: example.com, credentialsSecretRef: {name: proxy-credentials}}}`,
			"spec.proxy", "credentialsSecretRef needs httpsProxy or httpProxy"),
		refused("credentialsSecretRef without a name", `{proxy: {httpsProxy: "http://proxy.example.com:3128", credentialsSecretRef: {}}}`,
			"spec.proxy.credentialsSecretRef.name", "Required"),
		refused("credentialsSecretRef with a path", `{proxy: {httpsProxy: "http://proxy.example.com:3128", credentialsSecretRef: {name: ../etc}}}`,
			"spec.proxy.credentialsSecretRef.name"),
		accepted("credentialsSecretRef with httpProxy only", `{proxy: {httpProxy: "http://proxy.example.com:3128", credentialsSecretRef: {name: proxy-credentials}}}`),
	)
	runAdmissionCases(t, cases)
}
