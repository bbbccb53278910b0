package parsetime

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// asTime: inputs, one a line as a Go string literal, each followed by the instant (Unix
// seconds, or N for none) that parseTimeM False defaultTimeLocale of the time library 1.12.2
// (the version GHC 9.6.2 ships, which Monocle 1.11.2 builds with) gives for it with Monocle's
// two format lists: "%F", "%F %T %Z", "%FT%XZ" (src/Monocle/Prelude.hs parseDateValue), then
// "%F", "%Y-%m", "%Y" (src/Monocle/Search/Query.hs parseDateValue). The values are that
// library's output on these inputs.
const asTime = `
"2021-01-01" 1609459200 1609459200
" 2021-01-01" 1609459200 1609459200
"\t2021-01-01" 1609459200 1609459200
"\u30002021-01-01" 1609459200 1609459200
"2021-01-01 " N N
"-2021-01-01" -125943811200 -125943811200
"- 2021-01-01" -125943811200 -125943811200
" -2021-01-01" N N
"+2021-01-01" N N
"0002021-01-01" 1609459200 1609459200
"20-01-01" -61536067200 -61536067200
"99999-12-31" 3093527894400 3093527894400
"0000-01-01" -62167219200 -62167219200
"2021-1-01" N N
"2021-13-01" N N
"2021-00-10" N N
"2021-02-29" N N
"2020-02-29" 1582934400 1582934400
"2100-02-29" N N
"2000-02-29" 951782400 951782400
"2021-04-31" N N
"2021-01-32" N N
"2021-01-01 00:00:00 UTC" 1609459200 N
"2021-01-01 00:00:00 utc" N N
"2021-01-01 00:00:00 GMT" 1609459200 N
"2021-01-01 00:00:00 gmt" 1609459200 N
"2021-01-01 00:00:00 ut" 1609459200 N
"2021-01-01 00:00:00 EST" 1609477200 N
"2021-01-01 00:00:00 pdt" 1609484400 N
"2021-01-01 00:00:00 CEST" N N
"2021-01-01 00:00:00 Z" 1609459200 N
"2021-01-01 00:00:00 z" 1609459200 N
"2021-01-01 00:00:00 A" 1609455600 N
"2021-01-01 00:00:00 m" 1609416000 N
"2021-01-01 00:00:00 N" 1609462800 N
"2021-01-01 00:00:00 Y" 1609502400 N
"2021-01-01 00:00:00 J" N N
"2021-01-01 00:00:00 ı" 1609426800 N
"2021-01-01 00:00:00 eſt" 1609477200 N
"2021-01-01 00:00:00 +0200" 1609452000 N
"2021-01-01 00:00:00 +02:00" 1609452000 N
"2021-01-01 00:00:00 -0530" 1609479000 N
"2021-01-01 00:00:00 +99:99" 1609096860 N
"2021-01-01 00:00:00 +02" N N
"2021-01-01 00:00:00 +2:00" N N
"2021-01-01   00:00:00\tUTC" 1609459200 N
"2021-01-01\n00:00:00\nUTC" 1609459200 N
"2021-01-01\u00a000:00:00 UTC" 1609459200 N
"2021-01-01\u008500:00:00 UTC" N N
"2021-01-01\u202800:00:00 UTC" N N
"2021-01-01 00:00:00UTC" N N
"2021-01-0100:00:00 UTC" N N
"2021-01-01 23:59:60 UTC" 1609545600 N
"2021-01-01 12:00:60 UTC" 1609502460 N
"2021-01-01 12:00:61 UTC" N N
"2021-01-01 24:00:00 UTC" N N
"2021-01-01 12:60:00 UTC" N N
"2021-01-01 0:00:00 UTC" N N
"2021-01-01 00:00:00.5 UTC" N N
"2021-01-01 00:00:00 UTC " N N
"2021-01-01T00:00:00Z" 1609459200 N
"2021-01-01t00:00:00z" 1609459200 N
"2021-01-01T23:59:60Z" 1609545600 N
"2021-01-01T00:00:00.123Z" N N
"2021-01-01T00:00:00+00:00" N N
"2021-01-01T00:00:00" N N
"2021-01-01T00:00:00 Z" N N
"2021-01-01 00:00:00Z" N N
"2021" N 1609459200
"2021-05" N 1619827200
"2021-5" N N
"0000001969" N -31536000
"0000001970" N 0
"-2021" N -125943811200
"+2021" N N
" 2021" N 1609459200
"20210101" N 637707019996800
"99999999999" N 3155695137801244800
"٣2021" N N
"" N N
`

// TestParseAsTime: Parse reads each input of asTime as parseTimeM does.
func TestParseAsTime(t *testing.T) {
	formats := [][]string{{"%F", "%F %T %Z", "%FT%XZ"}, {"%F", "%Y-%m", "%Y"}}
	for _, line := range strings.Split(strings.TrimSpace(asTime), "\n") {
		lit, err := strconv.QuotedPrefix(line)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		in, _ := strconv.Unquote(lit)
		wants := strings.Fields(line[len(lit):])
		for i, f := range formats {
			got, ok := Parse(in, f...)
			answer := "N"
			if ok {
				answer = strconv.FormatInt(got.Unix(), 10)
			}
			if answer != wants[i] {
				t.Errorf("%q with %q: %s (%s), parseTimeM gives %s", in, f, answer, got, wants[i])
			}
		}
	}
}

// TestParseHugeYears: years Go's time cannot hold keep their leap years (1000000000000 is a
// leap year, 1000000000100 is not, as parseTimeM says) and come after every exact year.
func TestParseHugeYears(t *testing.T) {
	huge, ok := Parse("1000000000000-02-29", "%F")
	if !ok {
		t.Fatal("refused Feb 29 of year 1000000000000, a leap year")
	}
	if _, ok := Parse("1000000000100-02-29", "%F"); ok {
		t.Error("accepted Feb 29 of year 1000000000100, not a leap year")
	}
	exact, _ := Parse("100000000000-12-31", "%F")
	if !exact.Before(huge) || exact.Year() != MaxExactYear {
		t.Errorf("year %d read as %s, not before %s", MaxExactYear, exact, huge)
	}
	negative, ok := Parse("-1000000000000-02-29", "%F")
	if !ok || !negative.Before(time.Date(-MaxExactYear, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("year -1000000000000 read as %s, %v", negative, ok)
	}
}

// TestParseRefusesUnmodelledFormats: a format this reader would read differently from ReadP
// panics instead of answering.
func TestParseRefusesUnmodelledFormats(t *testing.T) {
	for _, f := range []string{"%Y%m%d", "%Y1", "%j", "%s"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("format %q did not panic", f)
				}
			}()
			Parse("2021", f)
		}()
	}
}
