// Package parsetime reads dates the way Monocle 1.11.2 does: with the Haskell time library's
//
//	parseTimeM False defaultTimeLocale format input :: Maybe UTCTime
//
// for the few formats Monocle uses. Monocle 1.11.2 is built with GHC 9.6.2, whose time is
// 1.12.2; the rules below are that version's (haskell/time, lib/Data/Time/Format/Parse.hs,
// Parse/Class.hs and Parse/Instances.hs at tag 1.12.2). time 1.11 and 1.14 read these formats
// the same; time 1.9 (GHC 9.0) refuses the "-" sign of a year.
//
// The specifiers modelled are:
//   - %Y: an optional "-", then any white space (IsSpace), then one or more ASCII digits with
//     no upper bound ("allowNegative $ digits SpacePadding 4"; the 4 is not a limit), read
//     as an Integer: "0000001969" is 1969, " 2021" is 2021;
//   - %m, %d, %H, %M, %S: exactly two ASCII digits ("digits ZeroPadding 2"), then within
//     1-12, 1-31, 0-23, 0-59 and 0-60 (clipValid); the day must exist in its month
//     (fromGregorianValid): 24:00:00 and minute 60 are refused, second 60 is accepted;
//   - %F, %T, %X: "%Y-%m-%d", "%H:%M:%S" and defaultTimeLocale's timeFmt "%H:%M:%S";
//   - %Z: a run of letters (munch1 isAlpha) or a numeric offset ±hhmm or ±hh:mm with no
//     range check; the letters are a zone of defaultTimeLocale's knownTimeZones (UT, GMT,
//     EST, EDT, CST, CDT, MST, MDT, PST, PDT) in any case, "UTC" in exactly that case, or
//     one military letter A-I, K-Z in any case (getMilZone); anything else is refused.
//
// A letter of the format matches the same letter in either case (charCI compares toUpper of
// both); other characters match themselves. A white-space character of the format matches one
// or more white-space characters of the input. The whole input must be read: trailing white
// space is refused, but leading white space before a %Y is read by %Y. A format that starts
// with %Y thus accepts leading white space, as Monocle does.
package parsetime

import (
	"strings"
	"time"
	"unicode"
)

// IsSpace is GHC's Data.Char.isSpace, which ReadP's skipSpaces and a format's white space
// use: tab, newline, vertical tab, form feed, carriage return, space, no-break space, and
// above U+0377 the Unicode space separators (category Zs).
func IsSpace(r rune) bool {
	if r <= 0x377 {
		return r == ' ' || r >= '\t' && r <= '\r' || r == 0xa0
	}
	return unicode.Is(unicode.Zs, r)
}

// MaxExactYear bounds the years Parse returns exactly. Haskell's years are unbounded
// Integers, Go's time.Time holds about ±2.9e11: a year beyond ±MaxExactYear is returned as
// ±(MaxExactYear+400) plus the year modulo 400, which keeps its leap years and its order
// against every exact year.
const MaxExactYear = 100_000_000_000

// Parse returns the instant, in UTC, of the first of formats that reads s, as Monocle's
// "tryParse f1 <|> tryParse f2 <|> ..." does with tryParse f = parseTimeM False
// defaultTimeLocale f s, and false when none does. Go's time.Time has no leap second:
// second 60, which time keeps as such, is returned as the first second of the next minute.
// Parse panics on a format using a specifier other than those of the package documentation,
// or a %Y followed by something that can start with a digit (there ReadP's %Y would not take
// all the digits, which this reader does).
func Parse(s string, formats ...string) (time.Time, bool) {
	for _, f := range formats {
		if t, ok := parse(f, s); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// fields are what the specifiers read, as buildTime gets them; unset ones keep the defaults
// of buildTime (year 1970, January 1st, midnight, UTC).
type fields struct {
	negative          bool
	year              string // the digits of %Y, "" without one
	month, day        int
	hour, minute, sec int
	zoneMinutes       int // east of UTC
}

func parse(format, s string) (time.Time, bool) {
	f := []rune(expand(format))
	in := []rune(s)
	v := fields{month: 1, day: 1}
	i := 0
	for j := 0; j < len(f); j++ {
		c := f[j]
		switch {
		case c == '%' && j+1 < len(f):
			j++
			n, ok := v.read(f[j], f[j+1:], in[i:])
			if !ok {
				return time.Time{}, false
			}
			i += n
		case IsSpace(c):
			if i == len(in) || !IsSpace(in[i]) {
				return time.Time{}, false
			}
			i++
			if j+1 < len(f) && IsSpace(f[j+1]) {
				continue
			}
			i += spaces(in[i:])
		default:
			if i == len(in) || unicode.ToUpper(in[i]) != unicode.ToUpper(c) {
				return time.Time{}, false
			}
			i++
		}
	}
	if i != len(in) {
		return time.Time{}, false
	}
	return v.build()
}

// expand substitutes %F, %T and %X (substituteTimeSpecifier with defaultTimeLocale).
func expand(format string) string {
	return strings.NewReplacer("%F", "%Y-%m-%d", "%T", "%H:%M:%S", "%X", "%H:%M:%S").Replace(format)
}

// spaces returns how many white-space characters in starts with (skipSpaces).
func spaces(in []rune) int {
	n := 0
	for n < len(in) && IsSpace(in[n]) {
		n++
	}
	return n
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// twoDigits returns the number written by the two ASCII digits at in[k:k+2].
func twoDigits(in []rune, k int) (int, bool) {
	if len(in) < k+2 || !isDigit(in[k]) || !isDigit(in[k+1]) {
		return 0, false
	}
	return int(in[k]-'0')*10 + int(in[k+1]-'0'), true
}

// read reads specifier c at the start of in, rest being the format after it, and returns
// how many characters it took. A %Z that reads but names no zone fails here: buildTime would
// fail on it, and %Z reads at most one way.
func (v *fields) read(c rune, rest, in []rune) (int, bool) {
	switch c {
	case 'Y':
		if len(rest) > 0 && (rest[0] == '%' || isDigit(rest[0])) {
			panic("parsetime: %Y followed by " + string(rest) + " is not modelled")
		}
		n := 0
		if n < len(in) && in[n] == '-' {
			v.negative = true
			n++
		}
		n += spaces(in[n:])
		start := n
		for n < len(in) && isDigit(in[n]) {
			n++
		}
		v.year = string(in[start:n])
		return n, n > start
	case 'm', 'd', 'H', 'M', 'S':
		n, ok := twoDigits(in, 0)
		switch c {
		case 'm':
			v.month = n
		case 'd':
			v.day = n
		case 'H':
			v.hour = n
		case 'M':
			v.minute = n
		default:
			v.sec = n
		}
		return 2, ok
	case 'Z':
		n := 0
		for n < len(in) && unicode.IsLetter(in[n]) {
			n++
		}
		if n == 0 {
			return v.numericZone(in)
		}
		var ok bool
		v.zoneMinutes, ok = zoneName(string(in[:n]))
		return n, ok
	}
	panic("parsetime: specifier %" + string(c) + " is not modelled")
}

// numericZone reads ±hhmm or ±hh:mm (numericTZ, then readTzOffset, which has no range
// check: +99:99 is 99 hours 99 minutes).
func (v *fields) numericZone(in []rune) (int, bool) {
	if len(in) < 5 || in[0] != '+' && in[0] != '-' {
		return 0, false
	}
	n := 3
	if in[n] == ':' {
		n++
	}
	h, okh := twoDigits(in, 1)
	m, okm := twoDigits(in, n)
	if !okh || !okm {
		return 0, false
	}
	v.zoneMinutes = 60*h + m
	if in[0] == '-' {
		v.zoneMinutes = -v.zoneMinutes
	}
	return n + 2, true
}

// knownZones is defaultTimeLocale's knownTimeZones, in minutes east of UTC.
var knownZones = map[string]int{"UT": 0, "GMT": 0, "EST": -5 * 60, "EDT": -4 * 60, "CST": -6 * 60,
	"CDT": -5 * 60, "MST": -7 * 60, "MDT": -6 * 60, "PST": -8 * 60, "PDT": -7 * 60}

// zoneName is the TimeZone instance's buildTime for a %Z of letters: a known zone compared
// upper-cased (map toUpper), "UTC" as is, or one military letter upper-cased (getMilZone).
func zoneName(name string) (int, bool) {
	if m, ok := knownZones[strings.Map(unicode.ToUpper, name)]; ok {
		return m, true
	}
	if name == "UTC" {
		return 0, true
	}
	r := []rune(name)
	if len(r) != 1 {
		return 0, false
	}
	switch c := unicode.ToUpper(r[0]); {
	case c >= 'A' && c <= 'I':
		return 60 * int(c-'A'+1), true
	case c >= 'K' && c <= 'M':
		return 60 * int(c-'K'+10), true
	case c >= 'N' && c <= 'Y':
		return -60 * int(c-'N'+1), true
	case c == 'Z':
		return 0, true
	}
	return 0, false
}

// build is buildTime for UTCTime: the Day (fromGregorianValid), the TimeOfDay (clipValid),
// then zonedTimeToUTC.
func (v *fields) build() (time.Time, bool) {
	year := 1970
	if v.year != "" {
		year = readYear(v.negative, v.year)
	}
	if v.month < 1 || v.month > 12 || v.day < 1 || v.hour > 23 || v.minute > 59 || v.sec > 60 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(v.month), v.day, v.hour, v.minute, 0, 0, time.UTC)
	if t.Day() != v.day { // time.Date moved a day its month lacks to the next month
		return time.Time{}, false
	}
	return t.Add(time.Duration(v.sec)*time.Second - time.Duration(v.zoneMinutes)*time.Minute), true
}

// readYear reads the year digits as an Integer, beyond ±MaxExactYear as MaxExactYear says.
// Only divisibility by 4, 100 and 400 makes a leap year, so the sign does not change it.
func readYear(negative bool, digits string) int {
	y, mod400 := 0, 0
	for _, c := range digits {
		mod400 = (mod400*10 + int(c-'0')) % 400
		if y <= MaxExactYear {
			y = y*10 + int(c-'0')
		}
	}
	if y > MaxExactYear {
		y = MaxExactYear + 400 + mod400
	}
	if negative {
		return -y
	}
	return y
}
