package search

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Op is the operator of an Expr, named after the constructors of Expr in
// src/Monocle/Search/Syntax.hs.
type Op int

// Operators of an Expr.
const (
	AndExpr Op = iota
	OrExpr
	NotExpr
	EqExpr
	GtExpr
	LtExpr
	GtEqExpr
	LtEqExpr
)

var opNames = [...]string{"AndExpr", "OrExpr", "NotExpr", "EqExpr", "GtExpr", "LtExpr", "GtEqExpr", "LtEqExpr"}

// Expr is a parsed query: And and Or have Left and Right, Not has Left, the field operators
// have Field and Value.
type Expr struct {
	Op          Op
	Left, Right *Expr
	Field       string
	Value       string
}

// String prints e as Haskell's Show does, as AndExpr (EqExpr "a" "b") (NotExpr ...).
func (e *Expr) String() string {
	switch e.Op {
	case AndExpr, OrExpr:
		return fmt.Sprintf("%s (%s) (%s)", opNames[e.Op], e.Left, e.Right)
	case NotExpr:
		return fmt.Sprintf("NotExpr (%s)", e.Left)
	}
	return fmt.Sprintf("%s %q %q", opNames[e.Op], e.Field, e.Value)
}

// Alias is a named Expr a query may use in place of a field expression (Parser.hs takes
// them as [(Text, Expr)]; the first of a name wins, as Data.List.lookup's does).
type Alias struct {
	Name string
	Expr *Expr
}

// Parser messages, from mkErr and formatExpected in Parser.hs.
const (
	msgExpectedExpression = "Expected expression"
	msgMissingOpenParen   = "Missing opening paren `(`"
	msgExpectedValue      = "Expected value"
	msgExpectedOperator   = "Expected operator (`:`, `>`, ...)"
	msgExpectedCloseParen = "Expected closing paren `)`"
	msgUnexpectedToken    = "Unexpected token"
	msgUnexpectedEnd      = "Unexpected end of query"
)

type exprP = parser[LocatedToken, *Expr]

func locatedKey(ts []LocatedToken) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%010d %02d %q %010d;", t.Start, t.Token.Kind, t.Token.Text, t.End)
	}
	return b.String()
}

// tokenOf is Parser.hs's token: the one token of kind k.
func tokenOf(k Kind) parser[LocatedToken, Kind] {
	return token(func(t LocatedToken) (Kind, bool) { return k, t.Token.Kind == k }, 0)
}

func tokensOf(ks ...Kind) parser[LocatedToken, Kind] {
	ps := make([]parser[LocatedToken, Kind], len(ks))
	for i, k := range ks {
		ps[i] = tokenOf(k)
	}
	return choice(ps...)
}

// literalToken is Parser.hs's literal: a Literal's text, labelled "literal".
var literalToken = label("literal", token(func(t LocatedToken) (string, bool) {
	return t.Token.Text, t.Token.Kind == Literal
}, 0))

// fieldOperator, openParen and closeParen are the labelled tokens of fieldExpr and parenExpr.
var (
	fieldOperator = label("operator", tokensOf(Equal, Greater, Lower, GreaterEqual, LowerEqual))
	openParen     = label("open paren", tokenOf(OpenParenthesis))
	closeParen    = label("closing paren", tokenOf(CloseParenthesis))
)

// grammar is Parser.hs's exprParser for one list of aliases. exprParser and closedExpr are
// memoised by offset: a parser's reply depends on the offset only, so the memo changes no
// result, and it keeps "((((..." linear where the grammar's try would make it exponential.
type grammar struct {
	aliases []Alias
	expr    map[int]reply[LocatedToken, *Expr]
	closed  map[int]reply[LocatedToken, *Expr]
	// parses counts the parses of a field expression; noMemo turns the memo off. Both are
	// for the test that shows why MaxNesting exists.
	parses int
	noMemo bool
}

func (g *grammar) memo(m map[int]reply[LocatedToken, *Expr], p exprP) exprP {
	return func(in *input[LocatedToken], offset int) reply[LocatedToken, *Expr] {
		if r, ok := m[offset]; ok && !g.noMemo {
			return r
		}
		r := p(in, offset)
		m[offset] = r
		return r
	}
}

// exprParser: choice [try boolExpr, closedExpr].
func (g *grammar) exprParser(in *input[LocatedToken], offset int) reply[LocatedToken, *Expr] {
	return g.memo(g.expr, choice(try(g.boolExpr), g.closedExpr))(in, offset)
}

// boolExpr: a closedExpr, then and/or (and when absent), then an exprParser.
func (g *grammar) boolExpr(in *input[LocatedToken], offset int) reply[LocatedToken, *Expr] {
	return bind(exprP(g.closedExpr), func(left *Expr) exprP {
		return bind(optional(tokensOf(And, Or)), func(op *Kind) exprP {
			o := AndExpr
			if op != nil && *op == Or {
				o = OrExpr
			}
			return fmap(exprP(g.exprParser), func(right *Expr) *Expr {
				return &Expr{Op: o, Left: left, Right: right}
			})
		})
	})(in, offset)
}

// closedExpr: choice [notExpr, fieldExpr, parenExpr].
func (g *grammar) closedExpr(in *input[LocatedToken], offset int) reply[LocatedToken, *Expr] {
	return g.memo(g.closed, choice(g.notExpr(), g.fieldExpr(), g.parenExpr()))(in, offset)
}

func (g *grammar) notExpr() exprP {
	return then(tokenOf(Not), fmap(exprP(g.closedExpr), func(e *Expr) *Expr {
		return &Expr{Op: NotExpr, Left: e}
	}))
}

var fieldOperators = map[Kind]Op{Equal: EqExpr, Greater: GtExpr, Lower: LtExpr, GreaterEqual: GtEqExpr, LowerEqual: LtEqExpr}

// fieldExpr: a literal that names an alias, or a field, an operator and a value.
func (g *grammar) fieldExpr() exprP {
	return bind(literalToken, func(field string) exprP {
		g.parses++
		for _, a := range g.aliases {
			if a.Name == field {
				return pure[LocatedToken](a.Expr)
			}
		}
		return bind(fieldOperator, func(k Kind) exprP {
			return fmap(literalToken, func(value string) *Expr {
				return &Expr{Op: fieldOperators[k], Field: field, Value: value}
			})
		})
	})
}

func (g *grammar) parenExpr() exprP {
	return between(openParen, closeParen, exprP(g.exprParser))
}

// Parse parses a query as Monocle's parse does (Parser.hs): nil for a query of white space
// only, the Expr otherwise, or Monocle's error with its message and character offset.
func Parse(aliases []Alias, code string) (*Expr, *ParseError) {
	toks, lerr := Lex(code)
	if lerr != nil {
		return nil, lerr
	}
	if err := checkNesting(toks); err != nil {
		return nil, err
	}
	return newGrammar(aliases).parse(code, toks)
}

func newGrammar(aliases []Alias) *grammar {
	return &grammar{aliases: aliases, expr: map[int]reply[LocatedToken, *Expr]{}, closed: map[int]reply[LocatedToken, *Expr]{}}
}

// parse is Parse after the lexer.
func (g *grammar) parse(code string, toks []LocatedToken) (*Expr, *ParseError) {
	e, err := run(before(optional(exprP(g.exprParser)), eof[LocatedToken]()), toks, locatedKey)
	if err == nil {
		if e == nil {
			return nil, nil
		}
		return *e, nil
	}
	return nil, parserError(utf8.RuneCountInString(code), err)
}

// MaxNesting is how deep Parse lets parentheses nest. Parser.hs's exprParser tries boolExpr,
// and after it fails, which it does at the closing parenthesis of every group, parses the
// same group again as a closedExpr: Monocle parses a group nested n deep 2^n times, so its
// API, which parses every alias when it starts, would not start in a useful time with an
// alias nested 30 deep. (This port memoises, so the limit is about Monocle, not about it.)
const MaxNesting = 20

// checkNesting refuses parentheses nested deeper than MaxNesting, at the opening one that
// goes past it.
func checkNesting(toks []LocatedToken) *ParseError {
	depth := 0
	for _, t := range toks {
		switch t.Token.Kind {
		case OpenParenthesis:
			if depth++; depth > MaxNesting {
				return &ParseError{Offset: t.Start, Message: fmt.Sprintf(
					"Parentheses nested more than %d deep: Monocle parses a group nested n deep 2^n times", MaxNesting)}
			}
		case CloseParenthesis:
			depth--
		}
	}
	return nil
}

// parserError is Parser.hs's mkErr.
func parserError(length int, err *parseError[LocatedToken]) *ParseError {
	format := func(def string) string {
		switch {
		case err.expected.has(errItem{kind: itemLabel, text: "literal"}):
			return msgExpectedValue
		case err.expected.has(errItem{kind: itemLabel, text: "operator"}):
			return msgExpectedOperator
		case err.expected.has(errItem{kind: itemLabel, text: "closing paren"}):
			return msgExpectedCloseParen
		}
		return def
	}
	switch {
	case !err.found.some:
		// Monocle calls error "Unknown parsec error" here; its API would stop on it too.
		return &ParseError{Message: "Unknown parsec error", Offset: 0}
	case err.found.endOfInput:
		return &ParseError{Message: format(msgUnexpectedEnd), Offset: length}
	}
	t := err.found.tokens[0]
	switch t.Token.Kind {
	case And, Or, Not:
		return &ParseError{Message: msgExpectedExpression, Offset: t.End}
	case CloseParenthesis:
		return &ParseError{Message: msgMissingOpenParen, Offset: t.End}
	}
	return &ParseError{Message: format(msgUnexpectedToken), Offset: t.Start}
}
