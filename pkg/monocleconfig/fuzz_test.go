package monocleconfig

import (
	"errors"
	"slices"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error is an *Error with a bounded
// message, and that what it accepts keeps the invariants callers rely on: at least one
// workspace, valid unique workspace names, unique crawler names with known providers, and
// sorted, de-duplicated TokenVariables. Seeds are in testdata/fuzz/FuzzParse and below.
func FuzzParse(f *testing.F) {
	f.Add(full)
	f.Add("workspaces: [{name: demo, crawlers: []}]")
	f.Add("workspaces:\n  - name: Bad Name\n    crawlers: []\n")
	f.Add("workspaces: [{name: a, crawlers: [{name: c, update_since: '2020-01-01', provider: {gitlab_organization: o, gitlab_token: T}}]}]")
	f.Add("workspaces: [{name: a, crawlers: [{name: c, update_since: 2020-01-01, provider: TaskDataProvider}, {name: c}]}]")
	f.Add(laughs)
	f.Add("a: &a [*a]")
	f.Add("{workspaces: [{name: '.', crawlers: [[[[[]]]]]}]}")
	f.Add("- {key: workspaces, value: [[{key: name, value: a}, {key: crawlers, value: []}]]}\n- {key: crawlers, value: [{key: loop_delay_sec, value: .inf}]}")
	f.Add("workspaces: [{name: a, crawlers: [{name: c, update_since: '2021-01-01t00:00:00z', provider: [{key: gitlab_organization, value: o}, {key: gitlab_organization, value: p}]}]}]")
	f.Fuzz(func(t *testing.T, data string) {
		c, err := Parse(data)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %v is a %T, want *Error", err, err)
			}
			if perr.Message == "" || len(err.Error()) > 2048 {
				t.Fatalf("bad message (%d bytes): %.200q", len(err.Error()), err.Error())
			}
			if c != nil {
				t.Fatalf("Parse returned a config with an error")
			}
			return
		}
		if len(c.Workspaces) == 0 {
			t.Fatal("accepted a config without workspaces")
		}
		names := map[string]bool{}
		var tokens []string
		for _, w := range c.Workspaces {
			if err := ValidateWorkspaceName(w.Name); err != nil || names[w.Name] {
				t.Fatalf("accepted workspace name %q: %v, duplicate %v", w.Name, err, names[w.Name])
			}
			names[w.Name] = true
			crawlers := map[string]bool{}
			for _, cr := range w.Crawlers {
				if cr.Name == "" || crawlers[cr.Name] || cr.Provider == "" {
					t.Fatalf("accepted crawler %+v", cr)
				}
				crawlers[cr.Name] = true
				if cr.TokenVariable != "" {
					if err := validateVariableName(cr.TokenVariable); err != nil {
						t.Fatalf("accepted token variable %q: %v", cr.TokenVariable, err)
					}
					tokens = append(tokens, cr.TokenVariable)
				}
			}
		}
		got := c.TokenVariables()
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("TokenVariables() = %q is not sorted and unique", got)
		}
		for _, v := range tokens {
			if !slices.Contains(got, v) {
				t.Fatalf("TokenVariables() = %q lacks %q", got, v)
			}
		}
	})
}
