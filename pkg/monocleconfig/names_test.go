package monocleconfig

import "testing"

// TestUpdateSinceFormats: exactly the dates parseDateValue (src/Monocle/Prelude.hs, 1.11.2)
// parses are accepted.
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
		// Refused by Monocle's crawler: "Invalid date format".
		"2020-01-01T00:00:00.5Z":    false,
		"2020-01-01T00:00:00":       false,
		"2020-01-01T00:00:00+02:00": false,
		"2020-01-01 00:00:00":       false,
		"2020-01-01 00:00:00.5 UTC": false,
		"2020-01-01 00:00:00 CET":   false,
		"2020-01-01 00:00:00 J":     false,
		"2020-1-01":                 false,
		"20-01-01":                  false,
		"2020-02-30":                false,
		"2020-01-01 25:00:00 UTC":   false,
		" 2020-01-01":               false,
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
