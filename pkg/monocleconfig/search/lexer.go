package search

import (
	"fmt"

	"github.com/change-metrics/monocle-operator/pkg/monocleconfig/parsetime"
)

// Kind is the kind of a Token: the tokens of src/Monocle/Search/Lexer.hs at Monocle 1.11.2.
type Kind int

// Token kinds, in the order of Lexer.hs's Token constructors.
const (
	// Literal is a field name or a value, bare or double-quoted.
	Literal Kind = iota
	And
	Or
	Not
	// Equal is ":".
	Equal
	// Greater is ">".
	Greater
	// GreaterEqual is ">=". Lexer.hs lists it after ">", which always matches first, so
	// Monocle never produces it (">=" is a lexing error there, and so here).
	GreaterEqual
	// Lower is "<".
	Lower
	// LowerEqual is "<=", never produced, like GreaterEqual.
	LowerEqual
	OpenParenthesis
	CloseParenthesis
)

var kindNames = [...]string{"Literal", "And", "Or", "Not", "Equal", "Greater", "GreaterEqual",
	"Lower", "LowerEqual", "OpenParenthesis", "CloseParenthesis"}

// String returns the constructor's name in Lexer.hs.
func (k Kind) String() string { return kindNames[k] }

// Token is a token of the search language; Text is set for a Literal only (without the
// quotes of a quoted one: Monocle does not unescape, "a\" is the literal a\).
type Token struct {
	Kind Kind
	Text string
}

// String returns the token as Haskell's Show prints it, as Literal "x" or And.
func (t Token) String() string {
	if t.Kind == Literal {
		return fmt.Sprintf("Literal %q", t.Text)
	}
	return t.Kind.String()
}

// LocatedToken is a token with the offsets of its first character and of the character after
// it, white space after a keyword or a literal included (LocatedToken in Lexer.hs). Offsets
// count characters (Unicode code points), as Haskell's Text does.
type LocatedToken struct {
	Start int
	Token Token
	End   int
}

// ParseError is Monocle's ParseError (src/Monocle/Search/Syntax.hs): a message and the
// character offset it is about. The query stage's errors are at offset 0, as Monocle's are.
type ParseError struct {
	Message string
	Offset  int
}

// Error returns "at <offset>: <message>".
func (e *ParseError) Error() string { return fmt.Sprintf("at %d: %s", e.Offset, e.Message) }

// Lexer messages, from formatExpected in Lexer.hs.
const (
	msgFieldValue    = "Expected field value (spaces are not allowed after operator)"
	msgFieldOperator = "Expected field operator: `:`, `>`, ..."
	msgInvalidToken  = "Invalid token"
)

type lexParser[A any] = parser[rune, A]

func runesKey(rs []rune) string { return string(rs) }

func str(s string) lexParser[[]rune] { return chunk([]rune(s), runesKey) }

// space is Megaparsec.Char.space: takeWhileP (Just "white space") isSpace.
var space = fmap(takeWhile("white space", parsetime.IsSpace), func([]rune) struct{} { return struct{}{} })

// keyword is Lexer.symbol space: the text, then any white space.
func keyword(s string) lexParser[[]rune] { return before(str(s), space) }

func keywords(ss ...string) lexParser[[]rune] {
	ps := make([]lexParser[[]rune], len(ss))
	for i, s := range ss {
		ps[i] = keyword(s)
	}
	return choice(ps...)
}

// isValueChar is the character class of a bare literal in Lexer.hs: not a space, a control
// character, !, ", (, ), :, <, = or >.
func isValueChar(c rune) bool {
	return c >= 0x23 && c <= 0x27 || c >= 0x2a && c <= 0x39 || c == 0x3b || c >= 0x3f && c <= 0x10ffff
}

// isText is the character class inside double quotes: anything printable but ".
func isText(c rune) bool { return c >= 0x20 && c <= 0x21 || c >= 0x23 && c <= 0x10ffff }

// literal is Lexer.hs's literal: a bare or a quoted run, then any white space.
var literal = before(choice(
	takeWhile1(isValueChar),
	before(then(str(`"`), takeWhile1(isText)), str(`"`)),
), space)

func as(k Kind, p lexParser[[]rune]) lexParser[Token] {
	return fmap(p, func([]rune) Token { return Token{Kind: k} })
}

// tokenParser is Lexer.hs's tokenParser, alternatives in its order.
var tokenParser = choice(
	as(And, keywords("and", "AND")),
	as(Or, keywords("or", "OR")),
	as(Not, keywords("not", "NOT")),
	as(Equal, str(":")),
	as(Greater, str(">")),
	as(GreaterEqual, str(">=")),
	as(Lower, str("<")),
	as(LowerEqual, str("<=")),
	as(OpenParenthesis, keyword("(")),
	as(CloseParenthesis, keyword(")")),
	fmap(literal, func(rs []rune) Token { return Token{Kind: Literal, Text: string(rs)} }),
)

var locatedTokenParser = bind(getOffset[rune](), func(start int) lexParser[LocatedToken] {
	return bind(tokenParser, func(t Token) lexParser[LocatedToken] {
		return fmap(getOffset[rune](), func(end int) LocatedToken { return LocatedToken{start, t, end} })
	})
})

var tokensParser = before(then(space, many(locatedTokenParser)), eof[rune]())

// Lex splits a query into tokens as Monocle's lex does, or returns its error: Lexer.hs's
// mkErr turns Megaparsec's error into msgFieldValue when a double quote was expected there,
// msgFieldOperator when a ":" was, msgInvalidToken otherwise.
func Lex(code string) ([]LocatedToken, *ParseError) {
	toks, err := run(tokensParser, []rune(code), runesKey)
	if err == nil {
		return toks, nil
	}
	msg := msgInvalidToken
	switch {
	case err.expected.has(errItem{kind: itemTokens, text: `"`}):
		msg = msgFieldValue
	case err.expected.has(errItem{kind: itemTokens, text: ":"}):
		msg = msgFieldOperator
	}
	return nil, &ParseError{Message: msg, Offset: err.offset}
}
