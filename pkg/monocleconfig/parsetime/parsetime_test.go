package parsetime

import (
	"testing"
	"time"
)

// no marks an input the formats refuse.
const no = -1 << 63

// TestParseAsTime: each input against Monocle's two format lists, with the instant (Unix
// seconds) that parseTimeM gives for it. The expected values are the output of
// parseTimeM False defaultTimeLocale of the time library 1.12.2 (the version GHC 9.6.2 ships,
// which Monocle 1.11.2 builds with), run on these inputs with Monocle's format lists: "%F",
// "%F %T %Z", "%FT%XZ" (src/Monocle/Prelude.hs parseDateValue) and "%F", "%Y-%m", "%Y"
// (src/Monocle/Search/Query.hs parseDateValue).
func TestParseAsTime(t *testing.T) {
	cases := []struct {
		in              string
		prelude, search int64
	}{
		{"2021-01-01", 1609459200, 1609459200},
		{" 2021-01-01", 1609459200, 1609459200},
		{"\t2021-01-01", 1609459200, 1609459200},
		{"\u30002021-01-01", 1609459200, 1609459200},
		{"2021-01-01 ", no, no},
		{"-2021-01-01", -125943811200, -125943811200},
		{"- 2021-01-01", -125943811200, -125943811200},
		{" -2021-01-01", no, no},
		{"+2021-01-01", no, no},
		{"0002021-01-01", 1609459200, 1609459200},
		{"20-01-01", -61536067200, -61536067200},
		{"99999-12-31", 3093527894400, 3093527894400},
		{"0000-01-01", -62167219200, -62167219200},
		{"2021-1-01", no, no},
		{"2021-13-01", no, no},
		{"2021-00-10", no, no},
		{"2021-02-29", no, no},
		{"2020-02-29", 1582934400, 1582934400},
		{"2100-02-29", no, no},
		{"2000-02-29", 951782400, 951782400},
		{"2021-04-31", no, no},
		{"2021-01-32", no, no},
		{"2021-01-01 00:00:00 UTC", 1609459200, no},
		{"2021-01-01 00:00:00 utc", no, no},
		{"2021-01-01 00:00:00 GMT", 1609459200, no},
		{"2021-01-01 00:00:00 gmt", 1609459200, no},
		{"2021-01-01 00:00:00 ut", 1609459200, no},
		{"2021-01-01 00:00:00 EST", 1609477200, no},
		{"2021-01-01 00:00:00 pdt", 1609484400, no},
		{"2021-01-01 00:00:00 CEST", no, no},
		{"2021-01-01 00:00:00 Z", 1609459200, no},
		{"2021-01-01 00:00:00 z", 1609459200, no},
		{"2021-01-01 00:00:00 A", 1609455600, no},
		{"2021-01-01 00:00:00 m", 1609416000, no},
		{"2021-01-01 00:00:00 N", 1609462800, no},
		{"2021-01-01 00:00:00 Y", 1609502400, no},
		{"2021-01-01 00:00:00 J", no, no},
		{"2021-01-01 00:00:00 ı", 1609426800, no},
		{"2021-01-01 00:00:00 eſt", 1609477200, no},
		{"2021-01-01 00:00:00 +0200", 1609452000, no},
		{"2021-01-01 00:00:00 +02:00", 1609452000, no},
		{"2021-01-01 00:00:00 -0530", 1609479000, no},
		{"2021-01-01 00:00:00 +99:99", 1609096860, no},
		{"2021-01-01 00:00:00 +02", no, no},
		{"2021-01-01 00:00:00 +2:00", no, no},
		{"2021-01-01   00:00:00\tUTC", 1609459200, no},
		{"2021-01-01\n00:00:00\nUTC", 1609459200, no},
		{"2021-01-01\u00a000:00:00 UTC", 1609459200, no},
		{"2021-01-01\u008500:00:00 UTC", no, no},
		{"2021-01-01\u202800:00:00 UTC", no, no},
		{"2021-01-01 00:00:00UTC", no, no},
		{"2021-01-0100:00:00 UTC", no, no},
		{"2021-01-01 23:59:60 UTC", 1609545600, no},
		{"2021-01-01 12:00:60 UTC", 1609502460, no},
		{"2021-01-01 12:00:61 UTC", no, no},
		{"2021-01-01 24:00:00 UTC", no, no},
		{"2021-01-01 12:60:00 UTC", no, no},
		{"2021-01-01 0:00:00 UTC", no, no},
		{"2021-01-01 00:00:00.5 UTC", no, no},
		{"2021-01-01 00:00:00 UTC ", no, no},
		{"2021-01-01T00:00:00Z", 1609459200, no},
		{"2021-01-01t00:00:00z", 1609459200, no},
		{"2021-01-01T23:59:60Z", 1609545600, no},
		{"2021-01-01T00:00:00.123Z", no, no},
		{"2021-01-01T00:00:00+00:00", no, no},
		{"2021-01-01T00:00:00", no, no},
		{"2021-01-01T00:00:00 Z", no, no},
		{"2021-01-01 00:00:00Z", no, no},
		{"2021", no, 1609459200},
		{"2021-05", no, 1619827200},
		{"2021-5", no, no},
		{"0000001969", no, -31536000},
		{"0000001970", no, 0},
		{"-2021", no, -125943811200},
		{"+2021", no, no},
		{" 2021", no, 1609459200},
		{"20210101", no, 637707019996800},
		{"99999999999", no, 3155695137801244800},
		{"٣2021", no, no},
		{"", no, no},
	}
	for _, c := range cases {
		for _, f := range []struct {
			name    string
			formats []string
			want    int64
		}{{"Prelude", []string{"%F", "%F %T %Z", "%FT%XZ"}, c.prelude}, {"Search", []string{"%F", "%Y-%m", "%Y"}, c.search}} {
			got, ok := Parse(c.in, f.formats...)
			switch {
			case f.want == no && ok:
				t.Errorf("%s formats accept %q as %s; parseTimeM refuses it", f.name, c.in, got)
			case f.want != no && !ok:
				t.Errorf("%s formats refuse %q; parseTimeM reads %s", f.name, c.in, time.Unix(f.want, 0).UTC())
			case ok && got.Unix() != f.want:
				t.Errorf("%s formats read %q as %s; parseTimeM reads %s", f.name, c.in, got, time.Unix(f.want, 0).UTC())
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
