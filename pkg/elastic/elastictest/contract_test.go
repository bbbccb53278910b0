package elastictest_test

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-operator/pkg/elastic/elastictest"
)

// TestFixtures checks every fixture of contract/: it parses, has a request, a source, a
// status and a body that is valid JSON, and an error answer's body carries its status.
func TestFixtures(t *testing.T) {
	all := elastictest.Fixtures()
	if len(all) == 0 {
		t.Fatal("no fixture")
	}
	for i, f := range all {
		t.Run(f.Name, func(t *testing.T) {
			if i > 0 && all[i-1].Name >= f.Name {
				t.Errorf("Fixtures not sorted: %s after %s", f.Name, all[i-1].Name)
			}
			method, path, ok := strings.Cut(f.Request, " ")
			if !ok || method != strings.ToUpper(method) || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " ?") {
				t.Errorf("request %q: want \"METHOD /path\" without a query", f.Request)
			}
			if _, err := url.ParseQuery(f.Query); err != nil {
				t.Errorf("query %q: %v", f.Query, err)
			}
			if strings.TrimSpace(f.Source) == "" {
				t.Error("no source")
			}
			if f.Status < 200 || f.Status > 599 {
				t.Errorf("status %d", f.Status)
			}
			if !json.Valid([]byte(f.Body)) {
				t.Fatalf("body is not valid JSON: %s", f.Body)
			}
			// An error answer, {"error": ..., "status": n}, carries the HTTP status. Not every
			// answer of an error status is one: a timed-out cluster health is its health body.
			var e map[string]json.RawMessage
			if json.Unmarshal([]byte(f.Body), &e) == nil && e["error"] != nil {
				if string(e["status"]) != strconv.Itoa(f.Status) || f.Status < 400 {
					t.Errorf("error answer: body status %s, want %d (4xx or 5xx)", e["status"], f.Status)
				}
			}
			if got := elastictest.MustFixture(f.Name); got != f {
				t.Errorf("MustFixture(%q) = %+v, want %+v", f.Name, got, f)
			}
		})
	}
}

func TestMustFixturePanicsOnUnknownName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustFixture of an unknown name did not panic")
		}
	}()
	elastictest.MustFixture("no-such-fixture")
}

// TestAnswersHaveFixtureShapes keeps the canned answers of this package in the shape of the
// documented answers.
func TestAnswersHaveFixtureShapes(t *testing.T) {
	for _, c := range []struct{ name, fixture, answer string }{
		{"GreenHealth", "cluster-health", elastictest.GreenHealth},
		{"YellowHealth", "cluster-health", elastictest.YellowHealth},
		{"RedHealth", "cluster-health", elastictest.RedHealth},
		{"Allocation80", "cat-allocation", elastictest.Allocation80},
		{"Allocation90", "cat-allocation", elastictest.Allocation90},
	} {
		if err := elastictest.SameShape([]byte(elastictest.MustFixture(c.fixture).Body), []byte(c.answer)); err != nil {
			t.Errorf("%s: not the shape of fixture %s: %v", c.name, c.fixture, err)
		}
	}
}

func TestSameShape(t *testing.T) {
	for _, c := range []struct {
		want, got string
		optional  []string
		err       string
	}{
		{`{"a":1,"b":[{"c":"x"}]}`, `{"b":[{"c":"y"}],"a":2.5}`, nil, ""},
		{`{"a":1}`, `{"a":"1"}`, nil, "at a: string, want number"},
		{`{"a":1}`, `{}`, nil, `no key "a"`},
		{`{"a":1}`, `{"a":1,"b":2}`, nil, `key "b" the fixture does not have`},
		{`{"a":[{"r":1}]}`, `{"a":[{}]}`, []string{"a/*/r"}, ""},
		{`{"a":[1,2]}`, `{"a":[1]}`, nil, "at a: 1 elements, want 2"},
		{`{"a":[1,"x"]}`, `{"a":[1,2]}`, nil, "at a/*: number, want string"},
		{`{"a":null}`, `{"a":{}}`, nil, "at a: object, want null"},
		{`[]`, `{}`, nil, "at the top: object, want array"},
		{`{}`, `{} x`, nil, "got: "},
	} {
		err := elastictest.SameShape([]byte(c.want), []byte(c.got), c.optional...)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("SameShape(%s, %s): %v", c.want, c.got, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("SameShape(%s, %s) = %v, want an error with %q", c.want, c.got, err, c.err)
		}
	}
}

func TestFixtureRequest(t *testing.T) {
	f := elastictest.MustFixture("restore")
	p := f.Path(map[string]string{"repository": "backups", "snapshot": "s-1"})
	if p != "/_snapshot/backups/s-1/_restore" {
		t.Fatalf("Path = %q", p)
	}
	for _, c := range []struct {
		method, url, err string
	}{
		{"POST", p + "?wait_for_completion=false", ""},
		{"PUT", p + "?wait_for_completion=false", "method PUT, want POST"},
		{"POST", p, "query"},
		{"POST", p + "?wait_for_completion=false&pretty=true", "query"},
		{"POST", "/_snapshot/backups/s-1/x/_restore?wait_for_completion=false", "path"},
	} {
		u, _ := url.Parse(c.url)
		err := f.Matches(c.method, u)
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("Matches(%s %s) = %v, want %q", c.method, c.url, err, c.err)
		}
	}
}
