package monocleconfig

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The inputs of TestDifferentialAgainstLibraries: hand-picked edge cases, then inputs drawn
// from pools of near-valid parts with a fixed seed, so every run compares the same inputs.

// differentialSeed seeds the random part of the inputs.
const differentialSeed = 28

// Kinds of differential inputs; the oracle (test/differential/Oracle.hs) knows the same names.
const (
	kindUpdateSince = "update_since"
	kindAliasDate   = "alias_date"
	kindYAMLScalar  = "yaml_scalar"
	kindNatural     = "natural"
)

// differentialInput is one input of one kind.
type differentialInput struct {
	kind, input string
}

// Counts of random inputs of each kind, on top of the hand-picked ones.
const (
	randomUpdateSince = 4000
	randomAliasDates  = 3000
	randomYAMLScalars = 1500
	randomNaturals    = 1000
)

// whiteSpace are single characters around Haskell's isSpace: the ASCII white space, the
// no-break space and an ideographic space (isSpace), and NEL, LINE SEPARATOR and ZERO WIDTH
// SPACE (not isSpace).
var whiteSpace = []string{" ", "\t", "\n", "\v", "\f", "\r", "\u00a0", "\u3000", "\u0085", "\u2028", "\u200b"}

// Parts of dates: each pool starts with the values that are valid in every date, which
// part draws most of the time, so that most inputs have one odd part or none.
var (
	years = []string{"2021", "2020", "2000", "1970", "1900", "2100", "2400", "1969", "0000", "0001",
		"0002021", "0000001969", "0000001970", "99999", "20210101", "202", "21", "2", "12345678901234567890",
		" 2021", "\t2021", "\u00a02021", "\u30002021", "  2021", "+2021", "\u0662\u0660\u0662\u0661", "", "2O21", "-2021"}
	months = []string{"01", "02", "10", "12", "13", "00", "1", "001", "ab", "2"}
	days   = []string{"01", "28", "29", "30", "31", "00", "1", "32", "001"}
	hours  = []string{"00", "12", "23", "24", "25", "0", "000", "1"}
	mins   = []string{"00", "59", "60", "5"}
	secs   = []string{"00", "59", "60", "61", "60.5", "00.5", "0", "99"}
	zones  = []string{"UTC", "UT", "GMT", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT", "Z", "A", "M", "N", "Y",
		"+01:00", "+0100", "-0100", "-1200", "+99:99", "-9999", "utc", "Utc", "uTC", "ut", "gmt", "Gmt", "est", "pdt",
		"CEST", "CET", "z", "a", "I", "J", "j", "K", "y", "-12", "+02", "+1:00", "+01:0", "+0:100", "00:00",
		"UTC\u00e9", "\u041c\u0421\u041a", "", "UTCUTC", "ZZ"}
	tees = []string{"T", "t", " ", "", "TT", "\u0422"}
	zees = []string{"Z", "z", "", "ZZ", "+00:00", "UTC", " Z"}
)

// Counts of the values at the start of each pool above that are valid in every date (a
// year, month, day, hour, minute or second that exists, a zone parseTimeM reads).
const validYears, validMonths, validDays, validHours, validMins, validSecs, validZones = 4, 4, 2, 3, 2, 2, 22

// part returns one of the first valid values of pool three times in four, else any value.
func part(r *rand.Rand, pool []string, valid int) string {
	if r.IntN(4) > 0 {
		return pool[r.IntN(valid)]
	}
	return pick(r, pool)
}

// pick returns a random element of pool.
func pick(r *rand.Rand, pool []string) string { return pool[r.IntN(len(pool))] }

// spaceRun returns a run of 1 to 3 white space characters, mostly a single space.
func spaceRun(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return " "
	}
	var b strings.Builder
	for n := 1 + r.IntN(3); n > 0; n-- {
		b.WriteString(pick(r, whiteSpace))
	}
	return b.String()
}

// digits returns 1 to 12 random ASCII digits.
func digits(r *rand.Rand) string {
	var b strings.Builder
	for n := 1 + r.IntN(12); n > 0; n-- {
		b.WriteByte(byte('0' + r.IntN(10)))
	}
	return b.String()
}

// randomYear is a year of the pool, or 1 to 12 random digits.
func randomYear(r *rand.Rand) string {
	if r.IntN(5) == 0 {
		return digits(r)
	}
	return part(r, years, validYears)
}

// aroundSpace adds leading or trailing white space now and then.
func aroundSpace(r *rand.Rand, s string) string {
	switch r.IntN(10) {
	case 0:
		return spaceRun(r) + s
	case 1:
		return s + spaceRun(r)
	}
	return s
}

// randomUpdateSinceInput draws a string of one of parseDateValue's three shapes
// (src/Monocle/Prelude.hs: "%F", "%F %T %Z", "%FT%XZ"), with parts from the pools.
func randomUpdateSinceInput(r *rand.Rand) string {
	date := randomYear(r) + "-" + part(r, months, validMonths) + "-" + part(r, days, validDays)
	clock := part(r, hours, validHours) + ":" + part(r, mins, validMins) + ":" + part(r, secs, validSecs)
	switch r.IntN(10) {
	case 0, 1:
		return aroundSpace(r, date)
	case 2, 3, 4, 5:
		return aroundSpace(r, date+spaceRun(r)+clock+spaceRun(r)+part(r, zones, validZones))
	case 6:
		// one part missing or doubled
		return date + " " + clock + pick(r, []string{"", " ", "  UTC UTC", "UTC"})
	default:
		return aroundSpace(r, date+pick(r, tees)+clock+pick(r, zees))
	}
}

// randomAliasDateInput draws a string of one of Query.hs's parseDateValue's shapes ("%F",
// "%Y-%m", "%Y").
func randomAliasDateInput(r *rand.Rand) string {
	s := randomYear(r)
	if r.IntN(3) > 0 {
		s += "-" + part(r, months, validMonths)
		if r.IntN(2) == 0 {
			s += "-" + part(r, days, validDays)
		}
	}
	return aroundSpace(r, s)
}

// YAML scalars: core schema numbers in each form, YAML 1.1 forms that are strings in 1.2,
// booleans and nulls in every case, quoted and tagged scalars.
var yamlScalars = []string{
	"0", "-0", "+0", "007", "-007", "+5", "-5", "1_000", "0o17", "0o8", "0O17", "0x1F", "0X1F", "0x1f", "0xg", "0x", "0o",
	"0b11", "017", "0.0", "-0.0", ".5", "-.5", "5.", "1.0", "1.5", "-1.5", "1e3", "1E3", "1e+3", "1e-3", "-1e3", "+1.5e2",
	"1.5e", "e3", "1.2.3", "1e400", "-1e400", "1e-400", "2.5e-1", "12.5e1", ".inf", ".Inf", ".INF", "+.inf", "-.inf",
	"-.Inf", ".iNF", ".nan", ".NaN", ".NAN", "-.nan", "+.nan", "inf", "nan", "Infinity", "9223372036854775807",
	"9223372036854775808", "18446744073709551616", "-9223372036854775809", "123456789012345678901234567890",
	"9007199254740993", "9007199254740993.0", "1e19", "1e20", "1e308", "1.7976931348623157e308", "1.8e308", "4.9e-324",
	"0.1", "0.30000000000000004", "1,000", "$5", "12:30", "1:20:30", "0.", "-", "+", ".", "-.", "+-1",
	"true", "True", "TRUE", "tRUE", "false", "False", "FALSE", "fALSE", "yes", "Yes", "YES", "no", "No", "on", "off",
	"On", "y", "n", "Y", "N", "~", "null", "Null", "NULL", "nULL", "", "~~",
	`"5"`, `'5'`, `"true"`, `'~'`, `""`, `''`, `"a\tb"`, `'it''s'`, `"\u00e9"`, `"1e3"`,
	"!!str 5", "!!str", "!!int 5", "!!int 5.0", "!!int 0x10", "!!int abc", "!!float 5", "!!float 0x10", "!!float .inf",
	"!!float abc", "!!bool true", "!!bool yes", "!!bool True", "!!null ~", "!!null", "!!null x", "! 5", "! true",
	"!foo x", "!!binary aGk=", "!!timestamp 2001-12-14",
	"hello", "2021-01-01", "2021", "2001-12-14t21:59:43.10-05:00", "[1, 2]", "[]", "{a: 1}", "{}", "&a 5", "*a",
	"5 # comment", "5 ", " 5", "a: b", "|\n  5", ">\n  5", "|\n  5\n", ">\n  5\n", "a\u0085b", "'a\u0085b'", "\"a\u2028b\"", "a\u2028b", "1\nv: 2", "1\nw: 2", "'a\n  b'",
}

// randomYAMLNumber draws a scalar near the core schema's number patterns: a sign, digits,
// a fraction and an exponent, each maybe, with now and then a stray character.
func randomYAMLNumber(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString(pick(r, []string{"", "", "", "-", "+", "+-"}))
	switch r.IntN(6) {
	case 0:
		b.WriteString(pick(r, []string{"0x", "0o", "0X", "0b"}))
		b.WriteString(pick(r, []string{"1F", "17", "ff", "8", "0", "", "1_0"}))
		return b.String()
	case 1:
		b.WriteString(pick(r, []string{".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN", ".iNf", "inf"}))
		return b.String()
	}
	if r.IntN(5) > 0 {
		b.WriteString(digits(r))
	}
	if r.IntN(2) == 0 {
		b.WriteString(".")
		if r.IntN(4) > 0 {
			b.WriteString(digits(r))
		}
	}
	if r.IntN(2) == 0 {
		b.WriteString(pick(r, []string{"e", "E", "e+", "e-", "E-"}))
		b.WriteString(fmt.Sprint(r.IntN(30)))
	}
	if r.IntN(15) == 0 {
		b.WriteString(pick(r, []string{"_", " ", ",", "x"}))
	}
	return b.String()
}

// caseWords are the core schema's words whose case matters: only all lower case, all upper
// case and an initial capital are booleans, nulls, infinities or NaN.
var caseWords = []string{"true", "false", "null", "yes", "no", "on", "off", "inf", ".inf", "-.inf", ".nan"}

// randomCase returns s with each letter upper-cased or not at random.
func randomCase(r *rand.Rand, s string) string {
	b := []byte(s)
	for i, c := range b {
		if r.IntN(2) == 0 && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// differentialInputs returns every input of every kind, without repeats, the same on every
// run.
func differentialInputs() []differentialInput {
	r := rand.New(rand.NewPCG(differentialSeed, 0))
	var out []differentialInput
	seen := map[differentialInput]bool{}
	add := func(kind string, inputs ...string) {
		for _, in := range inputs {
			if d := (differentialInput{kind, in}); !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	add(kindUpdateSince,
		"2021-01-01", " 2021-01-01", "\t2021-01-01", "\u30002021-01-01", "2021-01-01 ", "+2021-01-01", " -2021-01-01",
		"0002021-01-01", "99999-12-31", "0000-01-01", "2021-1-01", "2021-13-01", "2021-02-29", "2021-04-31", "2020-02-29",
		"1900-02-29", "2000-02-29", "2400-02-29", "2100-02-29", "2020-02-30",
		"2021-01-01 00:00:00 UTC", "2021-01-01 00:00:00 utc", "2021-01-01 00:00:00 Utc", "2021-01-01 00:00:00 CEST",
		"2021-01-01 00:00:00 J", "2021-01-01 00:00:00 +02", "2021-01-01 00:00:00 GMT", "2021-01-01 00:00:00 gmt",
		"2021-01-01 00:00:00 UT", "2021-01-01 00:00:00 Z", "2021-01-01 00:00:00 z", "2021-01-01 00:00:00 EST",
		"2021-01-01 00:00:00 est", "2021-01-01 00:00:00 A", "2021-01-01 00:00:00 +0200", "2021-01-01 00:00:00 +02:00",
		"2021-01-01 00:00:00 -9999", "2021-01-01   00:00:00\tUTC", "2021-01-01\n00:00:00\nUTC",
		"2021-01-01\u00a000:00:00\u00a0UTC", "2021-01-01\u300000:00:00 UTC", "2021-01-01\u008500:00:00 UTC",
		"2021-01-01\u202800:00:00 UTC", "2021-01-01\u200b00:00:00 UTC", "2021-01-01 00:00:00UTC", "2021-01-0100:00:00 UTC",
		"2021-01-01 23:59:60 UTC", "2021-01-01T23:59:60Z", "2021-01-01 12:00:60 UTC", "2021-01-01 12:00:61 UTC",
		"2021-01-01 24:00:00 UTC", "2021-01-01 0:00:00 UTC", "2021-01-01 00:00:00.5 UTC", "2021-01-01 00:60:00 UTC",
		"2021-01-01T00:00:00Z", "2021-01-01t00:00:00z", "2021-01-01T00:00:00z", "2021-01-01t00:00:00Z",
		"2021-01-01T00:00:00.123Z", "2021-01-01T00:00:00+00:00", "2021-01-01T00:00:00", "2021-01-01T00:00:00Z ",
		"2021-01-01 00:00:00 UTC ", "2021-01-01 00:00:00", "2021-01-01 00:00:00 ", "2021-01-01\v00:00:00\fUTC",
		"2021-01-01\r00:00:00\r\nUTC", "20210101", "2021", "2021-01", "",
		"-2021-01-01", "- 2021-01-01", "-0001-12-31")
	add(kindAliasDate,
		"2021", "2021-05", "2021-05-27", "0000001969", "0000001970", "1969", "1970", "1969-12", "1969-12-31", "1970-01-01",
		" 2021", "\u00a02021", "2021 ", "+2021", "99999999999", "20210101", "2021-5", "2021-13", "2021-02-29", "2020-02-29",
		"2021-05-27 00:00:00", "0000", "0001-01-01", "", "2021-", "2021--01", "\u0662\u0660\u0662\u0661",
		"-2021", "-1969-01-01")
	add(kindYAMLScalar, yamlScalars...)
	add(kindNatural, "0", "1", "-1", "1.0", "1.5", "1e3", "1e-3", "10e-1", "1.5e1", "1.25e1", "-0", "-0.0", "0x10", "0o10",
		"+7", ".inf", "-.inf", ".nan", "1e400", "9223372036854775807", "9223372036854775808", "18446744073709551616",
		"1e19", "1e20", "1e308", "4.9e-324", "~", "null", `"5"`, "true", "[]", "1_000")
	for range randomUpdateSince {
		add(kindUpdateSince, randomUpdateSinceInput(r))
	}
	for range randomAliasDates {
		add(kindAliasDate, randomAliasDateInput(r))
	}
	for range randomYAMLScalars {
		if r.IntN(3) == 0 {
			add(kindYAMLScalar, randomCase(r, pick(r, caseWords)))
		} else {
			add(kindYAMLScalar, randomYAMLNumber(r))
		}
	}
	for range randomNaturals {
		add(kindNatural, randomYAMLNumber(r))
	}
	return out
}
