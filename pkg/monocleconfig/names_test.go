package monocleconfig

import "testing"

// TestUpdateSinceFormats: exactly the dates parseDateValue (src/Monocle/Prelude.hs, 1.11.2)
// parses are accepted, as the time library 1.12.2 Monocle builds with reads them.
func TestUpdateSinceFormats(t *testing.T) {
	for s, ok := range map[string]bool{
		"2020-01-01":                 true,
		"2020-01-01 00:00:00 UTC":    true,
		"2020-01-01 12:30:00 GMT":    true,
		"2020-01-01 12:30:00 PST":    true,
		"2020-01-01 12:30:00 +0200":  true,
		"2020-01-01 12:30:00 -05:00": true,
		"2020-01-01 12:30:00 Z":      true,
		"2020-01-01T00:00:00Z":       true,
		// Read by Monocle's crawler too: letters match in either case, a space of the format
		// matches any run of white space, the year is any number of digits after optional
		// white space and "-", second 60 is a second, zone names are time's.
		"2021-01-01t00:00:00z":         true,
		"2021-01-01T23:59:60Z":         true,
		"2021-01-01 00:00:00 gmt":      true,
		"2021-01-01 00:00:00 ut":       true,
		"2021-01-01 00:00:00 a":        true,
		"2021-01-01 00:00:00 +99:99":   true,
		"2021-01-01\t00:00:00   UTC":   true,
		"2021-01-01\u00a000:00:00 UTC": true,
		"0002021-01-01":                true,
		"99999-12-31":                  true,
		"-2021-01-01":                  true,
		"20-01-01":                     true,
		" 2020-01-01":                  true,
		"\t2020-01-01 00:00:00 UTC":    true,
		"2021-01-01 00:00:00 utc":      false,
		"2021-01-01 24:00:00 UTC":      false,
		"2021-01-01 12:60:00 UTC":      false,
		"2021-01-01 12:00:61 UTC":      false,
		"2021-01-01 00:00:00UTC":       false,
		"2021-01-01\u008500:00:00 UTC": false,
		"+2021-01-01":                  false,
		" -2021-01-01":                 false,
		"2020-01-01 00:00:00 UTC ":     false,
		// Refused by Monocle's crawler: "Invalid date format".
		"2020-01-01T00:00:00.5Z":    false,
		"2020-01-01T00:00:00":       false,
		"2020-01-01T00:00:00+02:00": false,
		"2020-01-01 00:00:00":       false,
		"2020-01-01 00:00:00.5 UTC": false,
		"2020-01-01 00:00:00 CET":   false,
		"2020-01-01 00:00:00 J":     false,
		"2020-1-01":                 false,
		"2020-02-30":                false,
		"2020-01-01 25:00:00 UTC":   false,
		"2020-01-01\n":              false,
		"yesterday":                 false,
		"":                          false,
	} {
		if err := validateUpdateSince(s); (err == nil) != ok {
			t.Errorf("validateUpdateSince(%q) = %v, want accepted %v", s, err, ok)
		}
	}
}

// TestParseDateOrders: ParseDate applies zones, so dates compare as instants.
func TestParseDateOrders(t *testing.T) {
	for _, c := range [][2]string{
		{"2023-12-31", "2024-01-01"},
		{"2024-01-01 00:00:00 UTC", "2024-01-01T00:00:01Z"},
		{"2024-01-01 12:00:00 +0200", "2024-01-01 11:00:00 UTC"},
		{"2024-01-01 05:00:00 EST", "2024-01-01 10:30:00 GMT"},
		{"2024-01-01 12:00:00 A", "2024-01-01 11:30:00 UTC"},
		{"2024-01-01 23:59:59 UTC", "2024-01-01T23:59:60Z"},
		{"0000001969-12-31", "1970-01-01"},
	} {
		a, err1 := ParseDate(c[0])
		b, err2 := ParseDate(c[1])
		if err1 != nil || err2 != nil || !a.Before(b) {
			t.Errorf("ParseDate(%q) = %v, %v; ParseDate(%q) = %v, %v; want the first before", c[0], a, err1, c[1], b, err2)
		}
	}
	if _, err := ParseDate("2024-01-01T00:00:00.5Z"); err == nil {
		t.Error("ParseDate accepts a fraction")
	}
}
