// Package search is Monocle's search language, ported from Monocle 1.11.2
// (src/Monocle/Search/Lexer.hs, Parser.hs, Syntax.hs and Query.hs), so the operator can refuse
// a config whose search_aliases Monocle's API would stop on when it starts.
//
// Lex, Parse and QueryWithMods do what Monocle's lex, parse and queryWithMods do, with the
// same messages and character offsets; CheckAlias does what loadAliases does for one alias.
// The Megaparsec rules those messages come from are modelled in combinators.go. The cases of
// Monocle's own tests (monocleSearchLanguage in src/Tests.hs) run here as tables, so a
// difference between the two languages fails a test.
//
// One rule is this package's own: parentheses nested more than MaxNesting deep are refused
// (Monocle's parser takes time exponential in the nesting).
package search
