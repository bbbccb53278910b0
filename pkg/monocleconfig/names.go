package monocleconfig

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
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

// ParseDate returns the time of a date ValidateDate accepts, in UTC; a zone other than UTC
// or an offset is applied.
func ParseDate(s string) (time.Time, error) {
	if err := validateUpdateSince(s); err != nil {
		return time.Time{}, err
	}
	switch {
	case len(s) == len("2006-01-02"):
		return time.Parse("2006-01-02", s)
	case s[10] == 'T':
		return time.Parse("2006-01-02T15:04:05Z", s)
	}
	t, err := time.Parse("2006-01-02 15:04:05", s[:19])
	if err != nil {
		return t, err
	}
	zone := s[20:]
	offsets := map[string]int{"UTC": 0, "UT": 0, "GMT": 0, "Z": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7}
	if h, ok := offsets[zone]; ok {
		return t.Add(-time.Duration(h) * time.Hour), nil
	}
	if zone[0] == '+' || zone[0] == '-' {
		digits := strings.ReplaceAll(zone[1:], ":", "")
		h, _ := strconv.Atoi(digits[:2])
		mi, _ := strconv.Atoi(digits[2:])
		d := time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute
		if zone[0] == '+' {
			d = -d
		}
		return t.Add(d), nil
	}
	// A military zone letter: the date is compared at day precision anyway.
	return t, nil
}

// ValidateDate returns nil when s is a date Monocle reads for update_since and the janitor's
// --commit-date (both parse it with parseDateValue), and an error saying the accepted forms
// otherwise. See validateUpdateSince.
func ValidateDate(s string) error { return validateUpdateSince(s) }

// validateUpdateSince returns nil when s is a date Monocle's crawler parses, and only then:
// parseDateValue in src/Monocle/Prelude.hs (used by getWorkerUpdatedSince in
// src/Monocle/Backend/Index.hs) at 1.11.2 tries parseTimeM with defaultTimeLocale and the
// formats "%F", "%F %T %Z" and "%FT%XZ" (%X is "%H:%M:%S" there): a whole string of
// YYYY-MM-DD, or that date with hh:mm:ss and a zone, or with Thh:mm:ssZ. Seconds have no
// fraction (that would be %Q). The zone of %Z is what the time library's parser takes for
// one: a numeric offset (+hhmm, +hh:mm), "UTC", a zone of defaultTimeLocale's knownTimeZones
// (UT, GMT, EST, EDT, CST, CDT, MST, MDT, PST, PDT) or a one-letter military zone. Monocle
// loads any string but the crawler then fails on every run with "Invalid date format".
func validateUpdateSince(s string) error {
	if updateSinceFormat.MatchString(s) && validDateTime(s) {
		return nil
	}
	return fmt.Errorf("it is not a date Monocle reads: use YYYY-MM-DD, YYYY-MM-DD hh:mm:ss UTC or YYYY-MM-DDThh:mm:ssZ")
}

// updateSinceFormat matches the shapes of parseDateValue's three formats; validDateTime checks
// the values.
var updateSinceFormat = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(` +
	`( \d{2}:\d{2}:\d{2} ([+-]\d{2}:?\d{2}|UTC|UT|GMT|[ECMP][SD]T|[A-IK-Z]))` +
	`|(T\d{2}:\d{2}:\d{2}Z))?$`)

// validDateTime reports whether the date and time at the start of s exist (no 2021-02-30, no
// 25:00:00).
func validDateTime(s string) bool {
	if len(s) == len("2006-01-02") {
		_, err := time.Parse("2006-01-02", s)
		return err == nil
	}
	_, err := time.Parse("2006-01-02 15:04:05", s[:10]+" "+s[11:19])
	return err == nil
}
