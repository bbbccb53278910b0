package monocleconfig

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/change-metrics/monocle-operator/pkg/monocleconfig/parsetime"
)

// indexNamePrefix is what Monocle prepends to a workspace name to name its Elasticsearch
// index (src/Monocle/Env.hs, indexNamePrefix, at 1.11.2).
const indexNamePrefix = "monocle.changes.1."

// MaxWorkspaceNameBytes is the longest workspace name, in bytes, that gives a usable index:
// Elasticsearch refuses index names longer than 255 bytes, and Monocle prefixes the
// workspace name with "monocle.changes.1.". Monocle's own check allows 255 bytes, so a
// longer name passes its config loading and then fails when the API creates the index.
const MaxWorkspaceNameBytes = 255 - len(indexNamePrefix)

// ValidateWorkspaceName returns nil when Monocle accepts name as a workspace name, else an
// error saying which rule it breaks. The rules are Monocle 1.11.2's mkIndexName
// (src/Monocle/Config.hs), checked in its order, which are Elasticsearch's index name rules:
// not empty; shorter than 256 bytes; no letter that is not lowercase (so "Demo" and "démo"
// differ: "é" is fine, "É" and letters without case such as "中" are not); none of
// \ / * ? " < > | space , # :; not "." or ".."; not starting with - _ + or ".".
// It then applies MaxWorkspaceNameBytes, which Monocle does not check.
func ValidateWorkspaceName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("it is empty")
	case len(name) >= 256:
		return fmt.Errorf("it is longer than 255 bytes")
	case strings.ContainsFunc(name, func(r rune) bool { return unicode.IsLetter(r) && !unicode.IsLower(r) }):
		return fmt.Errorf("it contains letters that are not lowercase")
	case strings.ContainsAny(name, `\/*?"<>| ,#:`):
		return fmt.Errorf(`it contains one of \ / * ? " < > | space , # :`)
	case name == "." || name == "..":
		return fmt.Errorf(`it is "." or ".."`)
	case strings.ContainsAny(name[:1], "-_+."):
		return fmt.Errorf("it starts with one of - _ + .")
	case len(name) > MaxWorkspaceNameBytes:
		return fmt.Errorf("it is longer than %d bytes: Elasticsearch refuses the index name %s<name> beyond 255 bytes", MaxWorkspaceNameBytes, indexNamePrefix)
	}
	return nil
}

// validateVariableName returns nil when name can name an environment variable the operator
// loads from a Secret: a C identifier, as a shell would accept. Monocle reads any string, but
// a crawler whose variable is missing is skipped at every crawl with "Missing environment".
// Values that look like a GitHub or GitLab token are refused with a hint, since putting the
// token itself in config.yaml is a common mistake that would also leak it into logs.
func validateVariableName(name string) error {
	if name == "" {
		return fmt.Errorf("it is empty: name the environment variable holding the token, or remove the key to use the default")
	}
	for _, p := range []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-"} {
		if strings.HasPrefix(name, p) {
			return fmt.Errorf("it looks like a token, not the name of an environment variable: put the token in the Secret named by spec.secretRef and write the key's name here")
		}
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Errorf("it is not an environment variable name (letters, digits and _, not starting with a digit)")
		}
	}
	return nil
}

// ParseDate returns the instant, in UTC, of a date ValidateDate accepts: its zone or offset
// is applied, and second 60 is the first second of the next minute (see parsetime.Parse).
func ParseDate(s string) (time.Time, error) {
	if t, ok := parsetime.Parse(s, updateSinceFormats...); ok {
		return t, nil
	}
	return time.Time{}, errUpdateSince
}

// ValidateDate returns nil when s is a date Monocle reads for update_since and the janitor's
// --commit-date (both parse it with parseDateValue), and an error saying the accepted forms
// otherwise. See validateUpdateSince.
func ValidateDate(s string) error { return validateUpdateSince(s) }

// updateSinceFormats are the formats parseDateValue in src/Monocle/Prelude.hs (used by
// getWorkerUpdatedSince in src/Monocle/Backend/Index.hs and by the janitor's
// set-crawler-commit-date) at 1.11.2 tries in order, each with parseTimeM False
// defaultTimeLocale.
var updateSinceFormats = []string{"%F", "%F %T %Z", "%FT%XZ"}

var errUpdateSince = fmt.Errorf("it is not a date Monocle reads: use YYYY-MM-DD, YYYY-MM-DD hh:mm:ss UTC or YYYY-MM-DDThh:mm:ssZ")

// validateUpdateSince returns nil when s is a date Monocle's crawler parses, and only then:
// one of updateSinceFormats read as the time library does (parsetime). That is a year of any
// number of digits, with an optional "-" and leading white space; two-digit month, day, hour,
// minute and second (60 included) that exist; letters in either case ("t", "z"); any run of
// white space where the format has a space; a zone or offset as %Z reads it. Seconds have no
// fraction (that would be %Q). Monocle loads any string, but the crawler then fails on every
// run with "Invalid date format".
func validateUpdateSince(s string) error {
	_, err := ParseDate(s)
	return err
}
