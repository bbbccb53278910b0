package monocleconfig

import (
	"strconv"
)

// Reason classifies an Error, for callers that react to a kind of problem rather than to a
// message.
type Reason string

// Reasons of an Error.
const (
	// ReasonTooLarge: the document is longer than MaxSize bytes.
	ReasonTooLarge Reason = "TooLarge"
	// ReasonSyntax: the document is not YAML, is empty, or is not a mapping.
	ReasonSyntax Reason = "Syntax"
	// ReasonMissing: a key Monocle requires is absent.
	ReasonMissing Reason = "Missing"
	// ReasonWrongType: a value has the wrong YAML type (a number where a string is expected,
	// a mapping where a list is expected, ...).
	ReasonWrongType Reason = "WrongType"
	// ReasonInvalid: a value has the right type but breaks a rule (a workspace name, a date,
	// an environment variable name).
	ReasonInvalid Reason = "Invalid"
	// ReasonDuplicate: two workspaces, or two crawlers of a workspace, share a name, or a
	// list of {key, value} mappings read as a mapping gives a key twice.
	ReasonDuplicate Reason = "Duplicate"
	// ReasonUnknownProvider: a crawler's provider has the shape of no provider Monocle knows.
	ReasonUnknownProvider Reason = "UnknownProvider"
	// ReasonUnsupported: Monocle accepts the value when loading but fails on it when it runs.
	ReasonUnsupported Reason = "Unsupported"
)

// Error is a problem found in a config.yaml: where it is and what is wrong. Parse returns
// the first problem it finds as an *Error.
type Error struct {
	// Path locates the problem, as "workspaces[1].crawlers[0].name"; empty when the
	// document as a whole is at fault.
	Path string
	// Reason classifies the problem.
	Reason Reason
	// Message says what is wrong, for a user to read. It quotes at most maxQuoted
	// characters of a value, and never the value of a token field.
	Message string
}

// Error returns "<path>: <message>", or the message alone when Path is empty.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

func newError(path string, reason Reason, message string) *Error {
	return &Error{Path: path, Reason: reason, Message: message}
}

// maxQuoted bounds how much of a user's value an error message repeats, so a hostile config
// cannot make a status condition message huge.
const maxQuoted = 64

// quote returns s as a Go-quoted string, cut to maxQuoted characters.
func quote(s string) string {
	if head, cut := cutRunes(s, maxQuoted); cut {
		return strconv.Quote(head) + "..."
	}
	return strconv.Quote(s)
}

// cut returns s cut to maxMessage characters: a message that repeats a user's value (as
// Monocle's "Unknown field: <name>" does) stays short.
func cut(s string) string {
	if head, cut := cutRunes(s, maxMessage); cut {
		return head + "..."
	}
	return s
}

// maxMessage bounds a message of Monocle's that cut repeats.
const maxMessage = 160

// cutRunes returns the first n characters of s and true when s is longer, s and false
// otherwise.
func cutRunes(s string, n int) (string, bool) {
	for i := range s {
		if n == 0 {
			return s[:i], true
		}
		n--
	}
	return s, false
}
