package monocleconfig

import (
	"reflect"
	"testing"
)

// TestRecordsFromKeyValueLists: wherever Monocle's schema expects a record, dhall-json's
// default conversion (Dhall.JSONToDhall, "key-value list ~> Record") reads a list of
// {key, value} mappings as the mapping of those keys, the empty list as the empty mapping;
// lists the schema expects stay lists.
func TestRecordsFromKeyValueLists(t *testing.T) {
	type crawler struct{ name, provider, token string }
	tests := map[string]struct {
		config     string
		workspaces []string
		crawlers   []crawler
	}{
		"empty crawlers section": {config: "crawlers: []\nworkspaces: [{name: a, crawlers: []}]", workspaces: []string{"a"}},
		"crawlers section with a null value and another key": {
			config:     "crawlers: [{key: loop_delay_sec, value: null, note: ignored}]\nworkspaces: [{name: a, crawlers: []}]",
			workspaces: []string{"a"}},
		"the whole document": {config: "- {key: workspaces, value: [{name: a, crawlers: []}]}", workspaces: []string{"a"}},
		"a workspace":        {config: "workspaces:\n  - - {key: name, value: a}\n    - {key: crawlers, value: []}\n", workspaces: []string{"a"}},
		"a provider, a union's payload": {
			config: `workspaces:
  - name: a
    crawlers:
      - name: c
        update_since: "2021-01-01"
        provider: [{key: github_organization, value: o}, {key: github_token, value: GH}]
`,
			workspaces: []string{"a"}, crawlers: []crawler{{"c", ProviderGitHub, "GH"}}},
		"an auth provider and links": {
			config: `about: [{key: links, value: [[{key: name, value: n}, {key: url, value: u}]]}]
auth: {auth_provider: [{key: oidc_provider_name, value: kc}, {key: oidc_issuer_url, value: i}, {key: oidc_client_id, value: c}]}
workspaces: [{name: a, crawlers: []}]
`,
			workspaces: []string{"a"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Parse(tc.config)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var workspaces []string
			var crawlers []crawler
			for _, w := range c.Workspaces {
				workspaces = append(workspaces, w.Name)
				for _, cr := range w.Crawlers {
					crawlers = append(crawlers, crawler{cr.Name, cr.Provider, cr.TokenVariable})
				}
			}
			if !reflect.DeepEqual(workspaces, tc.workspaces) || !reflect.DeepEqual(crawlers, tc.crawlers) {
				t.Errorf("workspaces %q, crawlers %+v; want %q, %+v", workspaces, crawlers, tc.workspaces, tc.crawlers)
			}
		})
	}
}

// TestNaturalsHaveNoUpperBound: loop_delay_sec is a Dhall Natural, which dhall-json takes from
// any non-negative number without a fraction ("number ~> Natural"); HsYAML-aeson makes .inf
// and floats beyond a Double the number 2^1024, and .nan a negative number.
func TestNaturalsHaveNoUpperBound(t *testing.T) {
	for v, ok := range map[string]bool{
		"0": true, "300": true, "9223372036854775808": true, "99999999999999999999999999": true,
		"1e30": true, "1.0": true, "-0.0": true, "1e400": true, ".inf": true, "0x7fffffffffffffffff": true,
		"0.99999999999999999999": true, "1e-400": true, // a Double first: 1 and 0
		"-1": false, "1.5": false, "1e-3": false, ".nan": false, "-.inf": false, "-1e400": false, "'5'": false,
	} {
		_, err := Parse("crawlers: {loop_delay_sec: " + v + "}\nworkspaces: [{name: a, crawlers: []}]")
		if (err == nil) != ok {
			t.Errorf("loop_delay_sec: %s: %v, want accepted %v", v, err, ok)
		}
	}
}
