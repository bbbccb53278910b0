package elastictest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// contractFiles are the documented answers of Elasticsearch 7.17, one YAML file per answer.
//
//go:embed contract/*.yaml
var contractFiles embed.FS

// Fixture is one documented answer of Elasticsearch 7.17 to a request package elastic sends,
// from contract/<Name>.yaml. Package elastic's contract test decodes each with the client,
// and test/testkit's checks that the fake Elasticsearch answers the same request alike.
type Fixture struct {
	// Name is the file name without ".yaml", e.g. "snapshot-get-missing".
	Name string `json:"-"`
	// Request is the method and path template as the operator sends it, e.g.
	// "GET /_snapshot/{repository}/{snapshot}"; a {name} stands for one path segment.
	Request string `json:"request"`
	// Query is the query string the operator sends, e.g. "wait_for_completion=false"; empty
	// when it sends none.
	Query string `json:"query"`
	// Source says where Body comes from: an Elasticsearch 7.17 reference page, a REST test
	// or a class and method of elastic/elasticsearch.
	Source string `json:"source"`
	// Status is the HTTP status of the answer, e.g. 200 or 404.
	Status int `json:"status"`
	// Body is the JSON body of the answer.
	Body string `json:"body"`
}

// fixtures are all fixtures by name, loaded once; loadErr is why loading failed.
var fixtures, loadErr = loadFixtures(contractFiles)

func loadFixtures(fsys fs.FS) (map[string]Fixture, error) {
	files, err := fs.Glob(fsys, "contract/*.yaml")
	if err != nil {
		return nil, err
	}
	out := map[string]Fixture{}
	for _, file := range files {
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		var f Fixture
		if err := yaml.UnmarshalStrict(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		f.Name = strings.TrimSuffix(path.Base(file), ".yaml")
		out[f.Name] = f
	}
	return out, nil
}

// RunContract runs check as a subtest named after each fixture, with the case cases holds
// under the fixture's name, and fails t on a fixture without a case and on a case without a
// fixture: a test of every documented answer misses none, and a new fixture comes with its
// cases.
func RunContract[C any](t *testing.T, cases map[string]C, check func(t *testing.T, f Fixture, c C)) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range Fixtures() {
		seen[f.Name] = true
		t.Run(f.Name, func(t *testing.T) {
			c, ok := cases[f.Name]
			if !ok {
				t.Fatalf("fixture %s has no case", f.Name)
			}
			check(t, f, c)
		})
	}
	for name := range cases {
		if !seen[name] {
			t.Errorf("case %s has no fixture", name)
		}
	}
}

// Fixtures returns every fixture, sorted by name. It panics when a fixture file does not
// parse, which the package's own test reports first.
func Fixtures() []Fixture {
	if loadErr != nil {
		panic("elastictest: " + loadErr.Error())
	}
	out := make([]Fixture, 0, len(fixtures))
	for _, f := range fixtures {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MustFixture returns the fixture named name; it panics when there is none.
func MustFixture(name string) Fixture {
	if loadErr != nil {
		panic("elastictest: " + loadErr.Error())
	}
	f, ok := fixtures[name]
	if !ok {
		panic("elastictest: no fixture " + name)
	}
	return f
}

// templateParam is a {name} of a Request path template.
var templateParam = regexp.MustCompile(`\{[a-z_]+\}`)

// Path returns the path of f's Request with each {name} replaced by args[name], e.g.
// "/_snapshot/backups/snap-1" for "GET /_snapshot/{repository}/{snapshot}"; it panics on
// a {name} that args lacks.
func (f Fixture) Path(args map[string]string) string {
	_, tmpl, _ := strings.Cut(f.Request, " ")
	return templateParam.ReplaceAllStringFunc(tmpl, func(p string) string {
		v, ok := args[p[1:len(p)-1]]
		if !ok {
			panic("elastictest: fixture " + f.Name + ": no value for " + p)
		}
		return v
	})
}

// Matches reports, as an error, how a request differs from the one f documents: the
// method, the path (each {name} of the template matching one segment) and the query
// parameters, compared as sets of values.
func (f Fixture) Matches(method string, u *url.URL) error {
	wantMethod, tmpl, _ := strings.Cut(f.Request, " ")
	if method != wantMethod {
		return fmt.Errorf("method %s, want %s", method, wantMethod)
	}
	parts := templateParam.Split(tmpl, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	if !regexp.MustCompile("^" + strings.Join(parts, "[^/]+") + "$").MatchString(u.Path) {
		return fmt.Errorf("path %s, want %s", u.Path, tmpl)
	}
	want, err := url.ParseQuery(f.Query)
	if err != nil {
		return fmt.Errorf("fixture %s: query %q: %w", f.Name, f.Query, err)
	}
	got := u.Query()
	if len(got) != len(want) {
		return fmt.Errorf("query %q, want %q", u.RawQuery, f.Query)
	}
	for k, v := range want {
		if strings.Join(got[k], ",") != strings.Join(v, ",") {
			return fmt.Errorf("query %q, want %q", u.RawQuery, f.Query)
		}
	}
	return nil
}

// SameShape reports, as an error naming the first difference, whether got has the JSON
// shape of want: the same JSON type at each place (null, boolean, number, string, array,
// object), objects with the same keys, arrays of the same length whose elements have
// pairwise the same shape. A key whose path is in optional may be present in one and absent
// in the other; a path is its keys joined by "/", an array element written "*", e.g.
// "snapshots/*/reason".
func SameShape(want, got []byte, optional ...string) error {
	var w, g any
	if err := decodeJSON(want, &w); err != nil {
		return fmt.Errorf("want: %w", err)
	}
	if err := decodeJSON(got, &g); err != nil {
		return fmt.Errorf("got: %w", err)
	}
	opt := map[string]bool{}
	for _, p := range optional {
		opt[p] = true
	}
	return sameShape("", w, g, opt)
}

func decodeJSON(b []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("text after the JSON value")
	}
	return nil
}

// jsonTypes name the JSON types by the Go types a value decoded with UseNumber has.
var jsonTypes = map[string]string{"<nil>": "null", "bool": "boolean", "json.Number": "number", "string": "string",
	"[]interface {}": "array", "map[string]interface {}": "object"}

func jsonType(v any) string { return jsonTypes[fmt.Sprintf("%T", v)] }

func sameShape(at string, want, got any, optional map[string]bool) error {
	where := at
	if where == "" {
		where = "the top"
	}
	if wt, gt := jsonType(want), jsonType(got); wt != gt {
		return fmt.Errorf("at %s: %s, want %s", where, gt, wt)
	}
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "/" + k
	}
	switch w := want.(type) {
	case []any:
		g := got.([]any)
		if len(g) != len(w) {
			return fmt.Errorf("at %s: %d elements, want %d", where, len(g), len(w))
		}
		for i := range w {
			if err := sameShape(join("*"), w[i], g[i], optional); err != nil {
				return err
			}
		}
	case map[string]any:
		g := got.(map[string]any)
		for _, k := range sortedKeys(w) {
			gv, ok := g[k]
			switch {
			case !ok && optional[join(k)]:
			case !ok:
				return fmt.Errorf("at %s: no key %q", where, k)
			default:
				if err := sameShape(join(k), w[k], gv, optional); err != nil {
					return err
				}
			}
		}
		for _, k := range sortedKeys(g) {
			if _, ok := w[k]; !ok && !optional[join(k)] {
				return fmt.Errorf("at %s: key %q the fixture does not have", where, k)
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
