package reasons

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// constant is a string constant declared in a Go file.
type constant struct {
	file, name, value string
}

// stringConstants returns the string constants of the non-test Go files in dir whose names
// start with prefix followed by an upper-case letter (prefix "": the exported ones).
func stringConstants(t *testing.T, dir, prefix string) []constant {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("^" + prefix + "[A-Z]")
	fset := token.NewFileSet()
	var out []constant
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !named.MatchString(name.Name) {
						continue
					}
					c := constant{file: filepath.Base(path), name: name.Name}
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							c.value, _ = strconv.Unquote(lit.Value)
						}
					}
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// statusSection returns the part of docs/status.md that lists the reasons: from its
// "## Conditions" heading to the end of the page (the conditions' table, then the events').
func statusSection(page string) string {
	_, after, found := strings.Cut(page, "\n## Conditions\n")
	if !found {
		return ""
	}
	return after
}

var backticked = regexp.MustCompile("`([A-Z][A-Za-z]*)`")

// reasonProblems checks reasons (the Reason constants of this package) against conditions
// (the condition types of the API) and the tables of docs/status.md: every reason is declared
// in reasons.go, named after its value, and listed in a table of the section;
// every condition type has a row in it; and the tables name nothing else in CamelCase
// backticks. It returns one line per problem.
func reasonProblems(reasons, conditions []constant, section string) []string {
	var problems []string
	if section == "" {
		return []string{`docs/status.md has no "## Conditions" section`}
	}
	listed := map[string]bool{}
	rows := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		for _, m := range backticked.FindAllStringSubmatch(line, -1) {
			listed[m[1]] = true
		}
		if first := strings.Split(line, "|")[1]; backticked.MatchString(first) {
			rows[backticked.FindStringSubmatch(first)[1]] = true
		}
	}
	known := map[string]bool{}
	for _, r := range reasons {
		known[r.value] = true
		if r.file != "reasons.go" {
			problems = append(problems, r.name+" is declared in "+r.file+", not in reasons.go")
		}
		if r.name != r.value {
			problems = append(problems, r.name+" has the value "+strconv.Quote(r.value)+": name it "+r.value)
		}
		if !listed[r.value] {
			problems = append(problems, r.name+" ("+r.value+") is missing from the tables of docs/status.md")
		}
	}
	for _, c := range conditions {
		known[c.value] = true
		if !rows[c.value] {
			problems = append(problems, "condition "+c.value+" has no row in docs/status.md")
		}
	}
	for _, word := range slices.Sorted(maps.Keys(listed)) {
		if !known[word] {
			problems = append(problems, "docs/status.md lists `"+word+"`, which is neither a reason in reasons.go nor a condition type")
		}
	}
	return problems
}

// TestReasonsDocumented keeps reasons.go, the API's condition types and the tables of
// docs/status.md in step.
func TestReasonsDocumented(t *testing.T) {
	reasons := stringConstants(t, ".", "")
	conditions := stringConstants(t, filepath.Join("..", "..", "apis", "monocle", "v1alpha1"), "Condition")
	if len(reasons) == 0 || len(conditions) == 0 {
		t.Fatalf("found %d reasons and %d condition types; expected some of each", len(reasons), len(conditions))
	}
	page, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "status.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range reasonProblems(reasons, conditions, statusSection(string(page))) {
		t.Error(p)
	}
}

// TestReasonProblems shows that reasonProblems reports each kind of mismatch.
func TestReasonProblems(t *testing.T) {
	conditions := []constant{{file: "types.go", name: "ConditionReady", value: "Ready"}}
	section := "\n| condition | reasons |\n|---|---|\n| `Ready` | `AllComponentsReady` |\n| event | |\n| `Created` | Normal |\n"
	tests := map[string]struct {
		reasons  []constant
		section  string
		problems int
	}{
		"in step": {
			reasons: []constant{{"reasons.go", "AllComponentsReady", "AllComponentsReady"}, {"reasons.go", "Created", "Created"}},
			section: section,
		},
		"reason missing from the page": {
			reasons: []constant{{"reasons.go", "AllComponentsReady", "AllComponentsReady"}, {"reasons.go", "Created", "Created"},
				{"reasons.go", "Deleted", "Deleted"}},
			section:  section,
			problems: 1,
		},
		"page lists an unknown reason": {
			reasons:  []constant{{"reasons.go", "AllComponentsReady", "AllComponentsReady"}},
			section:  section,
			problems: 1,
		},
		"reason declared elsewhere": {
			reasons:  []constant{{"reasons.go", "AllComponentsReady", "AllComponentsReady"}, {"events.go", "Created", "Created"}},
			section:  section,
			problems: 1,
		},
		"name does not match the value": {
			reasons:  []constant{{"reasons.go", "AllComponentsReady", "AllComponentsReady"}, {"reasons.go", "CreatedObject", "Created"}},
			section:  section,
			problems: 1,
		},
		"condition without a row": {
			reasons:  []constant{{"reasons.go", "AllComponentsReady", "AllComponentsReady"}, {"reasons.go", "Created", "Created"}},
			section:  "\n| reasons |\n|---|\n| `AllComponentsReady`, `Created`, `Ready` |\n",
			problems: 1,
		},
		"no Conditions section": {
			problems: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := reasonProblems(tc.reasons, conditions, tc.section)
			if len(got) != tc.problems {
				t.Errorf("got %d problems, want %d: %q", len(got), tc.problems, got)
			}
		})
	}
}
