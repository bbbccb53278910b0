package search

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/change-metrics/monocle-operator/pkg/monocleconfig/parsetime"
)

// This file ports the query stage of Monocle's search language (src/Monocle/Search/Query.hs
// at 1.11.2): the field table, the value types and the Elasticsearch query each expression
// becomes, in the JSON Bloodhound encodes it to, so that Monocle's own query tests run here
// as tables. Monocle evaluates every alias this way when its API starts (loadAliases), and
// stops on the first error.

// FieldType is the type of a search field (Field_Type in Monocle's protobuf search schema).
type FieldType int

// Field types of the field table.
const (
	FieldDate FieldType = iota
	FieldNumber
	FieldText
	FieldRegex
)

// flavored marks a field whose document field depends on the query flavor (author or
// on_author; created_at, updated_at or on_created_at).
const flavored = ""

// Field is an entry of the field table: its name in queries, its type and the document field.
type Field struct {
	Name, DocField string
	Type           FieldType
}

// Fields is Query.hs's fields, in its order.
var Fields = []Field{
	{"updated_at", "updated_at", FieldDate},
	{"created_at", "created_at", FieldDate},
	{"from", flavored, FieldDate},
	{"to", flavored, FieldDate},
	{"state", "state", FieldText},
	{"repo", "repository_fullname", FieldRegex},
	{"project", "project_def", FieldText},
	{"author", flavored, FieldRegex},
	{"group", flavored, FieldText},
	{"branch", "target_branch", FieldRegex},
	{"approval", "approval", FieldText},
	{"ttm", "duration", FieldNumber},
	{"tag", "labels", FieldText},
	{"file", "changed_files.path", FieldRegex},
	{"task.priority", "tasks_data.priority", FieldText},
	{"task.severity", "tasks_data.severity", FieldText},
	{"task.tag", "tasks_data.ttype", FieldRegex},
	{"task.score", "tasks_data.score", FieldNumber},
}

// AuthorFlavor says which author field author and group match (Query.hs AuthorFlavor).
type AuthorFlavor int

// RangeFlavor says which date field from and to match (Query.hs RangeFlavor).
type RangeFlavor int

// Flavors.
const (
	Author AuthorFlavor = iota
	OnAuthor
)

// Range flavors.
const (
	CreatedAt RangeFlavor = iota
	OnCreatedAt
	UpdatedAt
	OnCreatedAndCreated
)

// Flavor is Query.hs's QueryFlavor; the zero value is defaultQueryFlavor (Author, CreatedAt).
type Flavor struct {
	Author AuthorFlavor
	Range  RangeFlavor
}

// Project is a project of a workspace, as the project field reads it.
type Project struct {
	Name                                    string
	RepositoryRegex, BranchRegex, FileRegex *string
}

// Ident is an identity of a workspace, as the group field reads it.
type Ident struct {
	Ident  string
	Groups []string
}

// Index is what the query stage reads of a workspace (Config.Index): its projects and idents.
type Index struct {
	Projects []Project
	Idents   []Ident
}

// Env is the query stage's environment (Query.hs Env).
type Env struct {
	// Now is the time relative dates count from; only its date is used.
	Now time.Time
	// Username is the user "self" stands for; empty for an anonymous query.
	Username string
	Index    Index
	Flavor   Flavor
}

// Query is the Elasticsearch query of an Expr, as JSON values (maps, slices, strings,
// float64), with the date bounds it sets (Query.hs queryBounds, queryMinBoundsSet).
type Query struct {
	JSON        any
	MinBound    time.Time
	MaxBound    time.Time
	MinBoundSet bool
}

// QueryWithMods is Query.hs's queryWithMods with the identity modifier: the query of e (nil:
// no query) in env, or the query stage's first error, at offset 0.
func QueryWithMods(env Env, e *Expr) (Query, *ParseError) {
	env.Now = dropTime(env.Now)
	threeWeeksAgo := func(t time.Time) time.Time { return t.Add(-3 * 7 * 24 * time.Hour) }
	if e == nil {
		return Query{MinBound: threeWeeksAgo(env.Now), MaxBound: env.Now}, nil
	}
	// The bounds come from a run with the default flavor, the query from one with env's.
	q := &querier{env: Env{Now: env.Now, Username: env.Username, Index: env.Index}, max: env.Now}
	if _, err := q.query(e); err != nil {
		return Query{}, &ParseError{Message: err.Error(), Offset: 0}
	}
	out := Query{MaxBound: q.max, MinBoundSet: q.min != nil}
	if q.min != nil {
		out.MinBound = *q.min
	} else {
		out.MinBound = threeWeeksAgo(q.max)
	}
	qf := &querier{env: env, max: env.Now}
	js, err := qf.query(e)
	if err != nil {
		return Query{}, &ParseError{Message: err.Error(), Offset: 0}
	}
	out.JSON = js
	return out, nil
}

type querier struct {
	env Env
	min *time.Time
	max time.Time
}

type queryError string

func (e queryError) Error() string { return string(e) }

func obj(k string, v any) map[string]any { return map[string]any{k: v} }

func (q *querier) query(e *Expr) (any, error) {
	switch e.Op {
	case AndExpr, OrExpr:
		var qs []any
		for _, x := range flatten(e.Op, e) {
			j, err := q.query(x)
			if err != nil {
				return nil, err
			}
			qs = append(qs, j)
		}
		if e.Op == AndExpr {
			return obj("bool", obj("must", qs)), nil
		}
		return obj("bool", obj("should", qs)), nil
	case NotExpr:
		j, err := q.query(e.Left)
		if err != nil {
			return nil, err
		}
		return obj("bool", obj("must_not", []any{j})), nil
	case EqExpr:
		switch e.Field {
		case "from":
			return q.rangeQuery(GtExpr, "from", e.Value)
		case "to":
			return q.rangeQuery(LtExpr, "from", e.Value)
		}
		return q.eqQuery(e.Field, e.Value)
	}
	return q.rangeQuery(e.Op, e.Field, e.Value)
}

// flatten is Query.hs's takeWhileExpr: Or (Or e1 e2) e3 is [e1, e2, e3].
func flatten(op Op, e *Expr) []*Expr {
	var out []*Expr
	var walk func(*Expr)
	walk = func(e *Expr) {
		if e.Op != op {
			out = append(out, e)
			return
		}
		walk(e.Left)
		walk(e.Right)
	}
	walk(e)
	return out
}

// lookupField is Query.hs's lookupField: the field's type and its document field in the
// flavor.
func (q *querier) lookupField(name string) (FieldType, string, error) {
	for _, f := range Fields {
		if f.Name != name {
			continue
		}
		doc := f.DocField
		switch name {
		case "author", "group":
			doc = "author"
			if q.env.Flavor.Author == OnAuthor {
				doc = "on_author"
			}
		case "from", "to":
			doc = map[RangeFlavor]string{CreatedAt: "created_at", OnCreatedAt: "on_created_at", UpdatedAt: "updated_at"}[q.env.Flavor.Range]
		}
		return f.Type, doc, nil
	}
	return 0, "", queryError("Unknown field: " + name)
}

func (q *querier) rangeQuery(op Op, field, value string) (any, error) {
	typ, doc, err := q.lookupField(field)
	if err != nil {
		return nil, err
	}
	key := map[Op]string{GtExpr: "gt", GtEqExpr: "gte", LtExpr: "lt", LtEqExpr: "lte"}[op]
	var v any
	switch typ {
	case FieldDate:
		d, ok := parseRelativeDate(q.env.Now, value)
		if !ok {
			d, ok = parseDateValue(value)
		}
		if !ok {
			return nil, queryError("Invalid date: " + value)
		}
		d = dropTime(d)
		if d.Before(oldestDate) {
			return nil, queryError("Date is too old: " + showUTCTime(d))
		}
		if op == GtExpr || op == GtEqExpr {
			if q.min == nil || d.After(*q.min) {
				q.min = &d
			}
		} else if d.Before(q.max) {
			q.max = d
		}
		v = d.Format("2006-01-02T15:04:05Z")
	case FieldNumber:
		n, ok := readDouble(value)
		if !ok {
			return nil, queryError("Invalid number: " + value)
		}
		v = n
	default:
		return nil, queryError("Field " + field + " does not support range operator")
	}
	mk := func(f string) any { return obj("range", obj(f, map[string]any{"boost": 1.0, key: v})) }
	if q.env.Flavor.Range == OnCreatedAndCreated {
		return obj("bool", obj("filter", []any{mk("created_at"), mk("on_created_at")})), nil
	}
	return mk(doc), nil
}

func regexpQuery(field, value string) any {
	return obj("regexp", obj(field, map[string]any{"flags": "ALL", "value": value}))
}

func termQuery(field, value string) any { return obj("term", obj(field, obj("value", value))) }

func (q *querier) eqQuery(field, value string) (any, error) {
	typ, doc, err := q.lookupField(field)
	if err != nil {
		return nil, err
	}
	if doc == "author" || doc == "on_author" {
		if value == "self" {
			if q.env.Username == "" {
				return nil, queryError("You need to be logged in to use the self value")
			}
			value = q.env.Username
		}
		doc += ".muid"
	}
	switch {
	case field == "state":
		states := map[string][2]string{"open": {"state", "OPEN"}, "merged": {"state", "MERGED"},
			"self_merged": {"self_merged", "true"}, "abandoned": {"state", "CLOSED"}, "draft": {"draft", "true"}}
		s, ok := states[value]
		if !ok {
			return nil, queryError("Invalid value for state: " + value)
		}
		return termQuery(s[0], s[1]), nil
	case field == "project":
		for _, p := range q.env.Index.Projects {
			if p.Name != value {
				continue
			}
			must := []any{}
			for _, r := range []struct {
				field string
				re    *string
			}{{"repository_fullname", p.RepositoryRegex}, {"target_branch", p.BranchRegex}, {"changed_files.path", p.FileRegex}} {
				if r.re != nil {
					must = append(must, regexpQuery(r.field, *r.re))
				}
			}
			if len(must) == 0 {
				return obj("bool", map[string]any{}), nil
			}
			return obj("bool", obj("must", must)), nil
		}
		return nil, queryError("Unknown project: " + value)
	case field == "group":
		var members []any
		// lookupGroupMembers folds the idents from the right, keeping their order.
		for _, id := range q.env.Index.Idents {
			for _, g := range id.Groups {
				if g == value {
					members = append(members, id.Ident)
					break
				}
			}
		}
		if len(members) == 0 {
			return nil, queryError("Unknown group: " + value)
		}
		return obj("terms", obj(doc, members)), nil
	case typ == FieldRegex:
		return regexpQuery(doc, value), nil
	case typ == FieldDate:
		return nil, queryError("Invalid date operator for: " + field + ", ':' is not allowed")
	}
	return termQuery(doc, value), nil
}

// oldestDate is Query.hs's oldestDate: dates before it are refused.
var oldestDate = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

func dropTime(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// showUTCTime is Haskell's show of a UTCTime, as "2021-05-10 00:00:00 UTC".
func showUTCTime(t time.Time) string {
	y := t.Year()
	sign := ""
	if y < 0 {
		sign, y = "-", -y
	}
	return fmt.Sprintf("%s%04d-%s UTC", sign, y, t.Format("01-02 15:04:05"))
}

// parseDateValue is Query.hs's parseDateValue: parseTimeM False defaultTimeLocale with "%F",
// then "%Y-%m", then "%Y", as the time library reads them (parsetime): a year of any number of
// digits ("0000001969" is 1969), an optional "-" and white space before it.
func parseDateValue(s string) (time.Time, bool) {
	return parsetime.Parse(s, "%F", "%Y-%m", "%Y")
}

// parseRelativeDate is Query.hs's parseRelativeDateValue: "now", or "now-" a count and
// hour, day, week, month or year with an optional "s" (white space may follow, as readMaybe
// allows), counted back from now's date (months and years clip the day to the month's end).
// The count is a Word: it wraps at 2^64, as Haskell's does.
func parseRelativeDate(now time.Time, s string) (time.Time, bool) {
	m := relativeDate.FindStringSubmatch(strings.TrimRightFunc(s, parsetime.IsSpace))
	if m == nil {
		return time.Time{}, false
	}
	if m[1] == "" {
		return now, true
	}
	var count uint64
	for _, c := range m[1] {
		count = count*10 + uint64(c-'0')
	}
	// Past a billion units any date is long before 1970; keep the arithmetic in range.
	n := int(min(count, 1_000_000_000))
	switch m[2] {
	case "hour":
		return now.Add(-time.Duration(min(n, 1_000_000)) * time.Hour), true
	case "day":
		return now.AddDate(0, 0, -n), true
	case "week":
		return now.AddDate(0, 0, -7*n), true
	case "month":
		return addMonthsClip(now, -n), true
	}
	return addMonthsClip(now, -12*n), true
}

var relativeDate = regexp.MustCompile(`^now(?:-([0-9]+)(hour|day|week|month|year)s?)?$`)

// addMonthsClip is addGregorianMonthsClip: the day is clipped to the new month's length.
func addMonthsClip(t time.Time, months int) time.Time {
	total := t.Year()*12 + int(t.Month()) - 1 + months
	y, mo := total/12, total%12
	if mo < 0 {
		y, mo = y-1, mo+12
	}
	last := time.Date(y, time.Month(mo+2), 0, 0, 0, 0, 0, time.UTC).Day()
	return time.Date(y, time.Month(mo+1), min(t.Day(), last), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

// readDouble is readMaybe for a Double: Haskell's lexer number (decimal with an optional
// fraction and exponent, 0x hexadecimal, 0o octal), NaN or Infinity, an optional "-", within
// any parentheses and white space.
func readDouble(s string) (float64, bool) {
	s = strings.TrimFunc(s, parsetime.IsSpace)
	for strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		s = strings.TrimFunc(s[1:len(s)-1], parsetime.IsSpace)
	}
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = strings.TrimLeftFunc(s[1:], parsetime.IsSpace)
	}
	var v float64
	switch {
	case s == "NaN", s == "Infinity":
		v, _ = strconv.ParseFloat(s, 64)
	case haskellNumber.MatchString(s):
		if base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'O': 8}[s[min(1, len(s)-1)]]; base != 0 {
			n, _ := new(big.Int).SetString(s[2:], base)
			v, _ = new(big.Float).SetInt(n).Float64()
		} else {
			v, _ = strconv.ParseFloat(s, 64) // a range error gives ±Inf, as Haskell's read does
		}
	default:
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

var haskellNumber = regexp.MustCompile(`^(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)$`)
