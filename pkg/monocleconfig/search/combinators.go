package search

import (
	"slices"
	"sync"
)

// This file is a small model of the Megaparsec parser combinators Monocle's search language
// is written with (Text/Megaparsec/Internal.hs, megaparsec 9.3 to 9.6, the versions Monocle
// 1.11.2 builds with). Monocle's error messages and positions come from the error Megaparsec
// reports, which depends on what each combinator does with "consumed" and "empty" replies,
// with merged errors and with hints (expected items carried past a parser that succeeded
// without consuming input). Modelling those rules, rather than guessing each message, keeps
// the messages and positions Monocle's (the ported tables of its src/Tests.hs check them).

// itemKind is the kind of a Megaparsec ErrorItem, in the order of its constructors (which is
// the order Megaparsec compares them in).
type itemKind int

const (
	itemTokens itemKind = iota
	itemLabel
	itemEndOfInput
)

// errItem is an expected item: a token sequence (by its text), a label, or the end of input.
type errItem struct {
	kind itemKind
	text string
}

// itemSet is a set of expected items, one bit per item: the grammar knows fewer than 64
// (interned by item), so joining sets allocates nothing.
type itemSet uint64

var (
	itemsMu sync.Mutex
	itemBit = map[errItem]itemSet{}
)

// item returns the set of it alone.
func item(it errItem) itemSet {
	itemsMu.Lock()
	defer itemsMu.Unlock()
	b, ok := itemBit[it]
	if !ok {
		if len(itemBit) == 64 {
			panic("search: more than 64 distinct expected items")
		}
		b = 1 << len(itemBit)
		itemBit[it] = b
	}
	return b
}

func (s itemSet) has(it errItem) bool { return s&item(it) != 0 }

func union(a, b itemSet) itemSet { return a | b }

// unexpected is the item a parse error found: tokens of the input, or the end of input.
type unexpected[T any] struct {
	some       bool
	endOfInput bool
	tokens     []T
	key        func([]T) string // orders two unexpected token sequences, as Megaparsec's Ord does
}

// parseError is Megaparsec's TrivialError: where, what was found (nil: nothing, from empty)
// and what was expected. (The grammar raises no FancyError.)
type parseError[T any] struct {
	offset   int
	found    unexpected[T] // found.some is false when nothing was found (empty)
	expected itemSet
}

// mergeErrors is Megaparsec's mergeError: the error further in the input wins; at the same
// offset the found items are the greater one and the expected sets are joined.
func mergeErrors[T any](a, b *parseError[T]) *parseError[T] {
	switch {
	case a.offset < b.offset:
		return b
	case a.offset > b.offset:
		return a
	}
	found := a.found
	switch {
	case !found.some:
		found = b.found
	case b.found.some && unexpectedLess(found, b.found):
		found = b.found
	}
	return &parseError[T]{offset: a.offset, found: found, expected: union(a.expected, b.expected)}
}

func unexpectedLess[T any](a, b unexpected[T]) bool {
	if a.endOfInput || b.endOfInput {
		return !a.endOfInput // Tokens < EndOfInput
	}
	return a.key(a.tokens) < b.key(b.tokens)
}

// withHints is Megaparsec's withHints: the hints join the error's expected items.
func withHints[T any](hints itemSet, err *parseError[T]) *parseError[T] {
	if hints == 0 {
		return err
	}
	return &parseError[T]{offset: err.offset, found: err.found, expected: union(err.expected, hints)}
}

// toHints is Megaparsec's toHints: an error at the current offset becomes hints.
func toHints[T any](offset int, err *parseError[T]) itemSet {
	if err.offset != offset {
		return 0
	}
	return err.expected
}

// reply is what a parser returns: whether it consumed input, then a value, the offset after
// it and hints, or an error.
type reply[T, A any] struct {
	consumed bool
	err      *parseError[T]
	value    A
	offset   int
	hints    itemSet
}

// input is the token sequence a parser reads; key names a token sequence in expected and
// unexpected items.
type input[T any] struct {
	tokens []T
	key    func([]T) string
}

// parser reads in from offset.
type parser[T, A any] func(in *input[T], offset int) reply[T, A]

func fail[T, A any](consumed bool, err *parseError[T]) reply[T, A] {
	return reply[T, A]{consumed: consumed, err: err}
}

// pure succeeds with v without consuming input.
func pure[T, A any](v A) parser[T, A] {
	return func(_ *input[T], offset int) reply[T, A] { return reply[T, A]{value: v, offset: offset} }
}

// bind is Megaparsec's pBind (also what <*>, *> and <* do): after m, k's empty reply keeps
// m's hints, as expected items of its error or as hints.
func bind[T, A, B any](m parser[T, A], k func(A) parser[T, B]) parser[T, B] {
	return func(in *input[T], offset int) reply[T, B] {
		r := m(in, offset)
		if r.err != nil {
			return fail[T, B](r.consumed, r.err)
		}
		return after(r.consumed, r.hints, k(r.value)(in, r.offset))
	}
}

// then runs m and n and keeps n's value (*>).
func then[T, A, B any](m parser[T, A], n parser[T, B]) parser[T, B] {
	return func(in *input[T], offset int) reply[T, B] {
		r := m(in, offset)
		if r.err != nil {
			return fail[T, B](r.consumed, r.err)
		}
		return after(r.consumed, r.hints, n(in, r.offset))
	}
}

// before runs m and n and keeps m's value (<*).
func before[T, A, B any](m parser[T, A], n parser[T, B]) parser[T, A] {
	return func(in *input[T], offset int) reply[T, A] {
		r := m(in, offset)
		if r.err != nil {
			return r
		}
		r2 := after(r.consumed, r.hints, n(in, r.offset))
		return reply[T, A]{consumed: r2.consumed, err: r2.err, value: r.value, offset: r2.offset, hints: r2.hints}
	}
}

// after is the second half of bind: r2 follows a parser that succeeded having consumed input
// or not, with hints.
func after[T, B any](consumed bool, hints itemSet, r2 reply[T, B]) reply[T, B] {
	if r2.consumed {
		return r2
	}
	r2.consumed = consumed
	if r2.err != nil {
		r2.err = withHints(hints, r2.err)
	} else {
		r2.hints = union(hints, r2.hints)
	}
	return r2
}

// fmap applies f to p's value.
func fmap[T, A, B any](p parser[T, A], f func(A) B) parser[T, B] {
	return func(in *input[T], offset int) reply[T, B] {
		r := p(in, offset)
		return reply[T, B]{consumed: r.consumed, err: r.err, offset: r.offset, hints: r.hints, value: f(r.value)}
	}
}

// plus is Megaparsec's pPlus (<|>): n runs only when m failed without consuming input;
// errors of both are merged, and m's error becomes hints when n succeeds without consuming.
func plus[T, A any](m, n parser[T, A]) parser[T, A] {
	return func(in *input[T], offset int) reply[T, A] {
		r := m(in, offset)
		if r.err == nil || r.consumed {
			return r
		}
		r2 := n(in, offset)
		switch {
		case r2.err != nil:
			r2.err = mergeErrors(r2.err, r.err)
		case !r2.consumed:
			r2.hints = union(toHints(r2.offset, r.err), r2.hints)
		}
		return r2
	}
}

// empty is Megaparsec's pZero: it fails at offset, finding and expecting nothing.
func empty[T, A any]() parser[T, A] {
	return func(_ *input[T], offset int) reply[T, A] {
		return fail[T, A](false, &parseError[T]{offset: offset})
	}
}

// choice is parser-combinators' choice: foldr (<|>) empty.
func choice[T, A any](ps ...parser[T, A]) parser[T, A] {
	p := empty[T, A]()
	for i := len(ps) - 1; i >= 0; i-- {
		p = plus(ps[i], p)
	}
	return p
}

// try is Megaparsec's pTry: a failure reports not having consumed input.
func try[T, A any](p parser[T, A]) parser[T, A] {
	return func(in *input[T], offset int) reply[T, A] {
		r := p(in, offset)
		if r.err != nil {
			r.consumed = false
		}
		return r
	}
}

// label is Megaparsec's pLabel (<?>): the parser's empty error expects the label instead,
// and its non-empty hints become the label.
func label[T, A any](name string, p parser[T, A]) parser[T, A] {
	l := item(errItem{kind: itemLabel, text: name})
	return func(in *input[T], offset int) reply[T, A] {
		r := p(in, offset)
		switch {
		case r.consumed:
		case r.err != nil:
			r.err = &parseError[T]{offset: r.err.offset, found: r.err.found, expected: l}
		case r.hints != 0:
			r.hints = l
		}
		return r
	}
}

// optional is parser-combinators' optional: (Just <$> p) <|> pure Nothing.
func optional[T, A any](p parser[T, A]) parser[T, *A] {
	return plus(fmap(p, func(a A) *A { return &a }), pure[T, *A](nil))
}

// many is Control.Applicative's many (go = ((:) <$> p <*> go) <|> pure []), written as a
// loop: the result's hints are the last item's hints and the final failure's expected items.
// p must consume input when it succeeds.
func many[T, A any](p parser[T, A]) parser[T, []A] {
	return func(in *input[T], offset int) reply[T, []A] {
		var values []A
		var hints itemSet
		consumed := false
		for {
			r := p(in, offset)
			if r.err != nil {
				if r.consumed {
					return fail[T, []A](true, r.err)
				}
				return reply[T, []A]{consumed: consumed, value: values, offset: offset,
					hints: union(hints, toHints(offset, r.err))}
			}
			if !r.consumed {
				panic("search: many applied to a parser that succeeds without consuming input")
			}
			values, offset, hints, consumed = append(values, r.value), r.offset, r.hints, true
		}
	}
}

// between is parser-combinators' between: open *> p <* close.
func between[T, O, C, A any](open parser[T, O], close parser[T, C], p parser[T, A]) parser[T, A] {
	return before(then(open, p), close)
}

// getOffset is Megaparsec's getOffset.
func getOffset[T any]() parser[T, int] {
	return func(_ *input[T], offset int) reply[T, int] { return reply[T, int]{value: offset, offset: offset} }
}

// found is what a parser that fails at offset found: n tokens, fewer at the end, or the end.
func (in *input[T]) found(offset, n int) unexpected[T] {
	if offset >= len(in.tokens) {
		return unexpected[T]{some: true, endOfInput: true}
	}
	end := min(offset+n, len(in.tokens))
	toks := in.tokens[offset:end]
	return unexpected[T]{some: true, tokens: toks, key: in.key}
}

// token is Megaparsec's pToken: one token test accepts, expecting the given items otherwise.
func token[T, A any](test func(T) (A, bool), expected itemSet) parser[T, A] {
	return func(in *input[T], offset int) reply[T, A] {
		if offset < len(in.tokens) {
			if v, ok := test(in.tokens[offset]); ok {
				return reply[T, A]{consumed: true, value: v, offset: offset + 1}
			}
		}
		return fail[T, A](false, &parseError[T]{offset: offset, found: in.found(offset, 1), expected: expected})
	}
}

// chunk is Megaparsec's pTokens with (==) (chunk, string): exactly want, expecting it
// otherwise. want is not empty.
func chunk[T comparable](want []T, key func([]T) string) parser[T, []T] {
	expected := item(errItem{kind: itemTokens, text: key(want)})
	return func(in *input[T], offset int) reply[T, []T] {
		end := offset + len(want)
		if end <= len(in.tokens) && slices.Equal(in.tokens[offset:end], want) {
			return reply[T, []T]{consumed: true, value: want, offset: end}
		}
		return fail[T, []T](false, &parseError[T]{offset: offset, found: in.found(offset, len(want)), expected: expected})
	}
}

// takeWhile is Megaparsec's takeWhileP with a label: the longest run of tokens f accepts,
// possibly none, hinting the label.
func takeWhile[T any](name string, f func(T) bool) parser[T, []T] {
	hints := item(errItem{kind: itemLabel, text: name})
	return func(in *input[T], offset int) reply[T, []T] {
		end := offset
		for end < len(in.tokens) && f(in.tokens[end]) {
			end++
		}
		return reply[T, []T]{consumed: end > offset, value: in.tokens[offset:end], offset: end, hints: hints}
	}
}

// takeWhile1 is Megaparsec's takeWhile1P Nothing: a run of at least one token f accepts.
func takeWhile1[T any](f func(T) bool) parser[T, []T] {
	return func(in *input[T], offset int) reply[T, []T] {
		end := offset
		for end < len(in.tokens) && f(in.tokens[end]) {
			end++
		}
		if end == offset {
			return fail[T, []T](false, &parseError[T]{offset: offset, found: in.found(offset, 1)})
		}
		return reply[T, []T]{consumed: true, value: in.tokens[offset:end], offset: end}
	}
}

// eof is Megaparsec's pEof.
func eof[T any]() parser[T, struct{}] {
	return func(in *input[T], offset int) reply[T, struct{}] {
		if offset >= len(in.tokens) {
			return reply[T, struct{}]{offset: offset}
		}
		return fail[T, struct{}](false, &parseError[T]{offset: offset, found: in.found(offset, 1),
			expected: item(errItem{kind: itemEndOfInput})})
	}
}

// run is Megaparsec's parse: p over the whole of tokens.
func run[T, A any](p parser[T, A], tokens []T, key func([]T) string) (A, *parseError[T]) {
	r := p(&input[T]{tokens: tokens, key: key}, 0)
	return r.value, r.err
}
