package search

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The tables marked "Tests.hs" are the cases of monocleSearchLanguage in src/Tests.hs of
// Monocle 1.11.2, with their inputs and expected values unchanged; the others are this
// port's own.

func lit(s string) Token { return Token{Kind: Literal, Text: s} }

func TestLexTestsHs(t *testing.T) {
	cases := map[string]struct {
		code string
		want []Token
	}{
		"Lexer basic": {"state:open", []Token{lit("state"), {Kind: Equal}, lit("open")}},
		"Lexer paren": {"(a>42 or a:0 ) and b:d", []Token{{Kind: OpenParenthesis}, lit("a"), {Kind: Greater}, lit("42"),
			{Kind: Or}, lit("a"), {Kind: Equal}, lit("0"), {Kind: CloseParenthesis}, {Kind: And}, lit("b"), {Kind: Equal}, lit("d")}},
		"Lexer quoted":          {`field:"A value"`, []Token{lit("field"), {Kind: Equal}, lit("A value")}},
		"Lexer unicode":         {"not field:λr🌈bow", []Token{{Kind: Not}, lit("field"), {Kind: Equal}, lit("λr🌈bow")}},
		"Lexer quoted unicode":  {`"Zuul ▲ user"`, []Token{lit("Zuul ▲ user")}},
		"Lexer does not escape": {`"test\"`, []Token{lit(`test\`)}},
		// This port's own: keywords are prefixes (Lexer.hs's symbol has no word boundary),
		// and ">=" is ">" then a character no token starts with.
		"keyword prefix": {"repo:notary", []Token{lit("repo"), {Kind: Equal}, {Kind: Not}, lit("ary")}},
		"spaces":         {"  a:b\t OR\n c<2 ", []Token{lit("a"), {Kind: Equal}, lit("b"), {Kind: Or}, lit("c"), {Kind: Lower}, lit("2")}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Lex(c.code)
			if err != nil {
				t.Fatalf("Lex(%q): %v", c.code, err)
			}
			var toks []Token
			for _, lt := range got {
				toks = append(toks, lt.Token)
			}
			if len(toks) != len(c.want) {
				t.Fatalf("Lex(%q) = %v, want %v", c.code, toks, c.want)
			}
			for i := range toks {
				if toks[i] != c.want[i] {
					t.Fatalf("Lex(%q) = %v, want %v", c.code, toks, c.want)
				}
			}
		})
	}
}

func TestLexLocations(t *testing.T) {
	got, err := Lex("not  a:\"b c\" )")
	if err != nil {
		t.Fatal(err)
	}
	want := []LocatedToken{{0, Token{Kind: Not}, 5}, {5, lit("a"), 6}, {6, Token{Kind: Equal}, 7}, {7, lit("b c"), 13}, {13, Token{Kind: CloseParenthesis}, 14}}
	if len(got) != len(want) {
		t.Fatalf("Lex = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("token %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestParseTestsHs(t *testing.T) {
	sprint42 := &Expr{Op: GtExpr, Field: "date", Value: "2021-07-01"}
	cases := map[string]struct {
		aliases []Alias
		code    string
		want    string
	}{
		"Parser basic":          {nil, "state:open", `EqExpr "state" "open"`},
		"Parser paren":          {nil, "(a>42 or a:0) and b:d", `AndExpr (OrExpr (GtExpr "a" "42") (EqExpr "a" "0")) (EqExpr "b" "d")`},
		"Parser aliases":        {[]Alias{{"sprint42", sprint42}}, "status:open sprint42", `AndExpr (EqExpr "status" "open") (GtExpr "date" "2021-07-01")`},
		"Parser implicit and":   {nil, "state:open author:foo", `AndExpr (EqExpr "state" "open") (EqExpr "author" "foo")`},
		"not binds the closest": {nil, "not a:1 b:2", `AndExpr (NotExpr (EqExpr "a" "1")) (EqExpr "b" "2")`},
		"right associative":     {nil, "a:1 or b:2 and c:3", `OrExpr (EqExpr "a" "1") (AndExpr (EqExpr "b" "2") (EqExpr "c" "3"))`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(c.aliases, c.code)
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.code, err)
			}
			if got.String() != c.want {
				t.Fatalf("Parse(%q) = %s, want %s", c.code, got, c.want)
			}
		})
	}
	if e, err := Parse(nil, "  "); e != nil || err != nil {
		t.Fatalf("Parse of white space = %v, %v; want no expression and no error", e, err)
	}
}

// testTenant and now are Tests.hs's.
var (
	zuulBranch, zuulFile, zuulRepo = "master", "tests/.*", "zuul/.*"
	testTenant                     = Index{Projects: []Project{{Name: "zuul", BranchRegex: &zuulBranch, FileRegex: &zuulFile, RepositoryRegex: &zuulRepo}}}
	testNow                        = time.Date(2021, 5, 31, 0, 0, 0, 0, time.UTC)
)

// mkQuery is Tests.hs's mkQuery': parse without aliases, then queryWithMods now mempty testTenant.
func mkQuery(code string, flavor Flavor) (Query, *ParseError) {
	e, err := Parse(nil, code)
	if err != nil {
		return Query{}, err
	}
	return QueryWithMods(Env{Now: testNow, Index: testTenant, Flavor: flavor}, e)
}

func TestErrorsTestsHs(t *testing.T) {
	cases := []struct {
		name, code string
		pos        int
		msg        string
	}{
		{"Error basic", "a", 1, "Expected operator (`:`, `>`, ...)"},
		{"Error simple", "a:", 2, "Expected value"},
		{"Error typo", "a:42 nor b:23", 5, "Unexpected token"},
		{"Error missing right expr", "a:41 or", 7, "Expected expression"},
		{"Error not expr", "a:41 not", 8, "Expected expression"},
		{"Error space", "a: b", 2, "Expected field value (spaces are not allowed after operator)"},
		{"Error (", "(a:42", 5, "Expected closing paren `)`"},
		{"Error (", "a:42)", 5, "Missing opening paren `(`"},
		{"Error field", "bad:cofee", 0, "Unknown field: bad"},
		{"Error value", "from:hier", 0, "Invalid date: hier"},
		// This port's own.
		{"greater or equal is not a token", "ttm>=3", 4, "Expected field value (spaces are not allowed after operator)"},
		{"unterminated quote", `repo:"abc`, 9, "Expected field value (spaces are not allowed after operator)"},
		{"empty quotes", `repo:""`, 6, "Invalid token"},
		{"bang", "state:open !", 11, "Expected field value (spaces are not allowed after operator)"},
		{"open paren alone", "(", 1, "Expected value"},
		{"empty parens", "()", 2, "Missing opening paren `(`"},
		{"nested unclosed", "((state:open)", 13, "Expected closing paren `)`"},
		{"operator without field", ":a", 0, "Expected value"},
		{"leading and", "and a:b", 4, "Expected expression"},
		{"keyword prefix", "author:notme", 10, "Expected expression"},
		{"state value", "state:closed", 0, "Invalid value for state: closed"},
		{"project", "project:nova", 0, "Unknown project: nova"},
		{"group", "group:core", 0, "Unknown group: core"},
		{"number", "ttm>1h", 0, "Invalid number: 1h"},
		{"number with underscore", "task.score<1_000", 0, "Invalid number: 1_000"},
		{"range on text", "tag>bug", 0, "Field tag does not support range operator"},
		{"equal on a date", "updated_at:2021", 0, "Invalid date operator for: updated_at, ':' is not allowed"},
		{"too old", "created_at>1969-12-31", 0, "Date is too old: 1969-12-31 00:00:00 UTC"},
		{"relative too old", "from:now-60years", 0, "Date is too old: 1961-05-31 00:00:00 UTC"},
		{"no such day", "to:2021-02-29", 0, "Invalid date: 2021-02-29"},
		{"month of one digit", "to:2021-2", 0, "Invalid date: 2021-2"},
		// The year of %Y is any number of digits (time's parseTimeM): 1969, then too old.
		{"year with leading zeros too old", "from:0000001969", 0, "Date is too old: 1969-01-01 00:00:00 UTC"},
		{"month of a year with leading zeros too old", "to:00001969-12", 0, "Date is too old: 1969-12-01 00:00:00 UTC"},
		{"negative year", "from:-2021", 0, "Date is too old: -2021-01-01 00:00:00 UTC"},
		{"self when anonymous", "author:self", 0, "You need to be logged in to use the self value"},
		{"first error wins", "state:x or bad:y", 0, "Invalid value for state: x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := mkQuery(c.code, Flavor{})
			if err == nil {
				t.Fatalf("query %q did not fail, want %q at %d", c.code, c.msg, c.pos)
			}
			if err.Message != c.msg || err.Offset != c.pos {
				t.Fatalf("query %q: got %q at %d, want %q at %d", c.code, err.Message, err.Offset, c.msg, c.pos)
			}
		})
	}
}

func TestQueryTestsHs(t *testing.T) {
	cases := []struct {
		name   string
		flavor *Flavor
		code   string
		want   string
	}{
		{"Query date", nil, "updated_at>2021-05-27", `{"range":{"updated_at":{"boost":1,"gt":"2021-05-27T00:00:00Z"}}}`},
		{"Query number", nil, "task.score>200", `{"range":{"tasks_data.score":{"boost":1,"gt":200}}}`},
		{"Query boolean", nil, "not state:self_merged", `{"bool":{"must_not":[{"term":{"self_merged":{"value":"true"}}}]}}`},
		{"Query regex", nil, "repo:openstack/.*nova.*", `{"regexp":{"repository_fullname":{"flags":"ALL","value":"openstack/.*nova.*"}}}`},
		{"Query state", nil, "state:abandoned", `{"term":{"state":{"value":"CLOSED"}}}`},
		{"Query draft state", nil, "state:draft", `{"term":{"draft":{"value":"true"}}}`},
		{"Query date", nil, "updated_at>2021 and updated_at<2021-05", `{"bool":{"must":[{"range":{"updated_at":{"boost":1,"gt":"2021-01-01T00:00:00Z"}}},{"range":{"updated_at":{"boost":1,"lt":"2021-05-01T00:00:00Z"}}}]}}`},
		{"Query relative date", nil, "updated_at>now-3weeks", `{"range":{"updated_at":{"boost":1,"gt":"2021-05-10T00:00:00Z"}}}`},
		{"Query from field", nil, "from:now-3weeks", `{"range":{"created_at":{"boost":1,"gt":"2021-05-10T00:00:00Z"}}}`},
		{"Query from flavor", &Flavor{Author, UpdatedAt}, "from:now-3weeks", `{"range":{"updated_at":{"boost":1,"gt":"2021-05-10T00:00:00Z"}}}`},
		{"Query from to field", nil, "from:now-3weeks to:now", `{"bool":{"must":[{"range":{"created_at":{"boost":1,"gt":"2021-05-10T00:00:00Z"}}},{"range":{"created_at":{"boost":1,"lt":"2021-05-31T00:00:00Z"}}}]}}`},
		{"Query tag field", nil, "tag:bug", `{"term":{"labels":{"value":"bug"}}}`},
		{"Query ttm field", nil, "ttm>3600", `{"range":{"duration":{"boost":1,"gt":3600}}}`},
		{"Query file field", nil, "file:tests/*", `{"regexp":{"changed_files.path":{"flags":"ALL","value":"tests/*"}}}`},
		{"Query project", nil, "project:zuul", `{"bool":{"must":[{"regexp":{"repository_fullname":{"flags":"ALL","value":"zuul/.*"}}},{"regexp":{"target_branch":{"flags":"ALL","value":"master"}}},{"regexp":{"changed_files.path":{"flags":"ALL","value":"tests/.*"}}}]}}`},
		{"Query author", &Flavor{Author, UpdatedAt}, "author:alice", `{"regexp":{"author.muid":{"flags":"ALL","value":"alice"}}}`},
		{"Query on author", &Flavor{OnAuthor, UpdatedAt}, "author:alice", `{"regexp":{"on_author.muid":{"flags":"ALL","value":"alice"}}}`},
		{"Query multi-or", nil, "task.score:1 (task.score:2 or task.score:3 or task.score:4) task.score:5 task.score:6", `{"bool":{"must":[{"term":{"tasks_data.score":{"value":"1"}}},{"bool":{"should":[{"term":{"tasks_data.score":{"value":"2"}}},{"term":{"tasks_data.score":{"value":"3"}}},{"term":{"tasks_data.score":{"value":"4"}}}]}},{"term":{"tasks_data.score":{"value":"5"}}},{"term":{"tasks_data.score":{"value":"6"}}}]}}`},
		// Tests.hs's "QueryM withFlavor" (its first assertion; the QueryM effect itself is not
		// ported) and "QueryM dropDate"/"dropAuthor" (their queries before the drop).
		{"QueryM withFlavor", &Flavor{Author, OnCreatedAndCreated}, "from:2021", `{"bool":{"filter":[{"range":{"created_at":{"boost":1,"gt":"2021-01-01T00:00:00Z"}}},{"range":{"on_created_at":{"boost":1,"gt":"2021-01-01T00:00:00Z"}}}]}}`},
		{"QueryM dropDate", nil, "from:2020 repo:zuul", `{"bool":{"must":[{"range":{"created_at":{"boost":1,"gt":"2020-01-01T00:00:00Z"}}},{"regexp":{"repository_fullname":{"flags":"ALL","value":"zuul"}}}]}}`},
		{"QueryM dropAuthor", nil, "repo:zuul author:john", `{"bool":{"must":[{"regexp":{"repository_fullname":{"flags":"ALL","value":"zuul"}}},{"regexp":{"author.muid":{"flags":"ALL","value":"john"}}}]}}`},
		// This port's own.
		{"hexadecimal number", nil, "ttm<0x10", `{"range":{"duration":{"boost":1,"lt":16}}}`},
		{"month end clipped", nil, "from:now-3months", `{"range":{"created_at":{"boost":1,"gt":"2021-02-28T00:00:00Z"}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			flavor := Flavor{}
			if c.flavor != nil {
				flavor = *c.flavor
			}
			q, err := mkQuery(c.code, flavor)
			if err != nil {
				t.Fatalf("query %q: %v", c.code, err)
			}
			got, jerr := json.Marshal(q.JSON)
			if jerr != nil {
				t.Fatal(jerr)
			}
			if string(got) != c.want {
				t.Fatalf("query %q:\n got %s\nwant %s", c.code, got, c.want)
			}
		})
	}
}

func TestQueryBoundsTestsHs(t *testing.T) {
	d := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	threeWeek := d("2021-05-10")
	cases := map[string]struct {
		code     string
		min, max time.Time
	}{
		"Query default bound": {"state:open", threeWeek, testNow},
		"Query lower bound":   {"updated_at>2021-01-01", d("2021-01-01"), testNow},
		"Query max bound":     {"updated_at<2021-01-01", d("2020-12-11"), d("2021-01-01")},
		"Query both bounds":   {"created_at<2020-08-01 and updated_at>2020-06-01", d("2020-06-01"), d("2020-08-01")},
		"Query silly bounds":  {"created_at<2020-01-01 and updated_at>2021-01-01", d("2021-01-01"), d("2020-01-01")},
		"Query multi bounds":  {"created_at>2000 and created_at>2001 and created_at<2010 and created_at<2011", d("2001-01-01"), d("2010-01-01")},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			q, err := mkQuery(c.code, Flavor{})
			if err != nil {
				t.Fatal(err)
			}
			if !q.MinBound.Equal(c.min) || !q.MaxBound.Equal(c.max) {
				t.Fatalf("bounds of %q = (%s, %s), want (%s, %s)", c.code, q.MinBound, q.MaxBound, c.min, c.max)
			}
		})
	}
}

func TestCheckAlias(t *testing.T) {
	index := Index{Projects: []Project{{Name: "nova"}}, Idents: []Ident{{Ident: "Jane", Groups: []string{"core"}}}}
	cases := []struct {
		alias string
		msg   string
		pos   int
	}{
		// The aliases of the issue that Monocle's API refuses at start.
		{"from:hier", "Invalid date: hier", 0},
		{"bad:cofee", "Unknown field: bad", 0},
		{"a: b", "Expected field value (spaces are not allowed after operator)", 2},
		{"(state:open", "Expected closing paren `)`", 11},
		{"", MsgEmptyAlias, 0},
		{"   ", MsgEmptyAlias, 0},
		// Another alias's name is not known inside an alias: loadAliases parses with none.
		{"sprint42", "Expected operator (`:`, `>`, ...)", 8},
		{"project:swift", "Unknown project: swift", 0},
		// Accepted: "self" is the user loadAliases evaluates as, relative dates count from
		// its fake date, the workspace's projects and groups resolve.
		{"author:self from:now-2weeks", "", 0},
		{"project:nova group:core", "", 0},
		{`from:2020-01-01 to:2020-03-31 (repo:"openstack/nova" or tag:"a b")`, "", 0},
		// A year of %Y has any number of digits: 0000001969 is 1969, which stops the API.
		{"from:0000001969", "Date is too old: 1969-01-01 00:00:00 UTC", 0},
		{"from:0000001970", "", 0},
		{"from:20210101", "", 0},
	}
	for _, c := range cases {
		err := CheckAlias(index, c.alias)
		switch {
		case c.msg == "" && err != nil:
			t.Errorf("CheckAlias(%q) = %v, want no error", c.alias, err)
		case c.msg != "" && (err == nil || err.Message != c.msg || err.Offset != c.pos):
			t.Errorf("CheckAlias(%q) = %v, want %q at %d", c.alias, err, c.msg, c.pos)
		}
	}
}

// TestHostileAliases: what a config can hold is checked without a crash (the memo keeps deep
// nesting linear; Monocle's own parser is exponential in it).
func TestHostileAliases(t *testing.T) {
	deep := strings.Repeat("(", MaxNesting) + "state:open" + strings.Repeat(")", MaxNesting)
	tooDeep := strings.Repeat("(", 50_000) + "state:open" + strings.Repeat(")", 50_000)
	unclosed := strings.Repeat("(", MaxNesting) + "state:open"
	long := strings.Repeat("state:open or ", 20_000) + "state:merged"
	bad := strings.Repeat("state:open ", 20_000) + "state:open nor x"
	for name, c := range map[string]struct {
		alias string
		ok    bool
	}{
		"deep": {deep, true}, "too deep": {tooDeep, false}, "unclosed": {unclosed, false}, "long": {long, true}, "bad at the end": {bad, false},
		"control characters": {"state:\x00open", false}, "invalid UTF-8": {"repo:\xffopen", true},
	} {
		if err := CheckAlias(Index{}, c.alias); (err == nil) != c.ok {
			t.Errorf("%s: CheckAlias = %v, want ok=%v", name, err, c.ok)
		}
	}
}

// TestMonocleParsesNestedGroupsExponentially shows the reason for MaxNesting on the grammar
// itself: without the memo (as Monocle runs it) the innermost field expression of a group
// nested n deep is parsed 2^n times or more.
func TestMonocleParsesNestedGroupsExponentially(t *testing.T) {
	for n := 1; n <= 12; n++ {
		code := strings.Repeat("(", n) + "state:open" + strings.Repeat(")", n)
		toks, err := Lex(code)
		if err != nil {
			t.Fatal(err)
		}
		plain, memoised := newGrammar(nil), newGrammar(nil)
		plain.noMemo = true
		e1, err1 := plain.parse(code, toks)
		e2, err2 := memoised.parse(code, toks)
		if err1 != nil || err2 != nil || e1.String() != e2.String() {
			t.Fatalf("depth %d: without memo %v %v, with %v %v", n, e1, err1, e2, err2)
		}
		if plain.parses < 1<<n {
			t.Errorf("depth %d: Monocle's grammar parsed the field %d times, want at least 2^%d", n, plain.parses, n)
		}
		if memoised.parses > 2 {
			t.Errorf("depth %d: the memoised grammar parsed the field %d times", n, memoised.parses)
		}
	}
}
