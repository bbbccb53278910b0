package search

import "time"

// AliasNow is the date loadAliases evaluates aliases at (fakeNow in Query.hs, 1.11.2).
var AliasNow = time.Date(2021, 6, 2, 23, 0, 0, 0, time.UTC)

// MsgEmptyAlias is the error of an alias with no query (loadAliases says "Empty alias <name>").
const MsgEmptyAlias = "Empty alias"

// CheckAlias checks one search alias of a workspace the way Monocle's API does when it starts
// (loadAliases in src/Monocle/Search/Query.hs, called by run' in src/Monocle/Main.hs, which
// stops with "Invalid aliases" on any error): the alias is parsed without aliases, evaluated
// at AliasNow as the user "self" against the workspace's projects and idents, and must not be
// empty. It returns nil, or Monocle's message and the character offset it is about (0 for
// the errors of the evaluation and for an empty alias).
func CheckAlias(index Index, alias string) *ParseError {
	e, err := Parse(nil, alias)
	if err != nil {
		return err
	}
	if _, err := QueryWithMods(Env{Now: AliasNow, Username: "self", Index: index}, e); err != nil {
		return err
	}
	if e == nil {
		return &ParseError{Message: MsgEmptyAlias}
	}
	return nil
}
