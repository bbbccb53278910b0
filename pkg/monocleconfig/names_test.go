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
