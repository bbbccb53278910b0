package monocleconfig

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// TestPlainScalarsByTheCoreSchema: each plain scalar resolves to its YAML 1.2 core schema type,
// as HsYAML's coreSchemaResolver (which Monocle's config loading uses) resolves it; YAML 1.1
// forms (yes, on, 1_000, 0b11, 017 as octal, timestamps) stay strings.
//
// Floats are the Double HsYAML reads, made exact by GHC's toRational: 2^1024 for an infinity
// and -3·2^1023 for NaN (the values the Haskell libraries print for them).
func TestPlainScalarsByTheCoreSchema(t *testing.T) {
	inf := new(big.Int).Lsh(big.NewInt(1), 1024).String()
	nan := "-" + new(big.Int).Lsh(big.NewInt(3), 1023).String()
	for in, want := range map[string]any{
		"~": nil, "null": nil, "Null": nil, "NULL": nil, "": nil,
		"true": true, "True": true, "TRUE": true, "false": false, "False": false, "FALSE": false,
		"yes": "yes", "no": "no", "on": "on", "off": "off", "y": "y", "n": "n", "tRUE": "tRUE", "nULL": "nULL",
		"0": json.Number("0"), "-1": json.Number("-1"), "+1": json.Number("1"), "0o17": json.Number("15"),
		"0x1F": json.Number("31"), "017": json.Number("17"), "123456789012345678901234567890": json.Number("123456789012345678901234567890"),
		"1_000": "1_000", "0b11": "0b11", "0x": "0x", "0o8": "0o8", "+-1": "+-1", "1:20": "1:20", "0.1.2": "0.1.2",
		"1e3": json.Number("1000"), ".5": json.Number("0.5"), "-1.5": json.Number("-1.5"), "1.": json.Number("1"),
		"-.inf": json.Number("-" + inf), ".Inf": json.Number(inf), "1e400": json.Number(inf), "1.8e308": json.Number(inf),
		".NaN": json.Number(nan), ".nan": json.Number(nan), "-0.0": json.Number("0"), "0.1": json.Number("0.1000000000000000055511151231257827021181583404541015625"),
		"inf": "inf", "nan": "nan", "1e": "1e",
		"2001-12-14": "2001-12-14", "2001-12-14t21:59:43.10-05:00": "2001-12-14t21:59:43.10-05:00",
	} {
		got, err := decodeYAML("k: " + in + "\n")
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if v := got.(map[string]any)["k"]; v != want {
			t.Errorf("%q resolves to %#v, want %#v", in, v, want)
		}
	}
}

// TestQuotedTaggedAndKeys: quoted scalars are strings; !!str, !!int and friends are obeyed or
// refused as HsYAML does; an unknown tag is refused (the aeson bridge's "unresolved YAML
// scalar"), and so is a key that is not a string ("non-String key encountered in mapping").
func TestQuotedTaggedAndKeys(t *testing.T) {
	for in, want := range map[string]any{
		`k: "1"`: "1", `k: 'true'`: "true", "k: !!str 1": "1", "k: !!int 0x10": json.Number("16"),
		"k: !!float 1": json.Number("1"), "k: !!bool True": true, "k: !!null ~": nil,
		"k: |\n  12\n": "12\n", `"1": x`: nil, "yes: x": nil,
		// The non-specific tag makes a string, as HsYAML reads it; yaml.v3 drops it.
		"k: ! 5": "5", "k: &a ! true": "true", "k: !  null": "null",
		// A file may end without a line break after a block scalar's header, a blank line
		// or a comment that ends the scalar.
		"k: |": "", "k: |\n  5\n# c": "5\n", "k: >\n  5\n  ": "5\n",
	} {
		got, err := decodeYAML(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		m := got.(map[string]any)
		if v, ok := m["k"]; ok && v != want {
			t.Errorf("%q gives %#v, want %#v", in, v, want)
		}
	}
	for in, msg := range map[string]string{
		"k: !foo x":                   "tagged !foo",
		"k: !!int 1_000":              "invalid !!int",
		"k: !!float 0x10":             "invalid !!float",
		"k: |\n  5":                   "ends inside the block scalar that starts at line 1",
		"a:\n  k: >-\n\n    5\n    6": "ends inside the block scalar that starts at line 2",
		"k: a\u0085b":                 "the character U+0085 at line 1",
		"# c\nk: 'a\u2028b'":          "the character U+2028 at line 2",
		"k: !!bool yes":               "invalid !!bool",
		"k: !!null 0":                 "invalid !!null",
		"1: x":                        "key \"1\" at line 1, which YAML reads as a number",
		"true: x":                     "reads as a boolean",
		"~: x":                        "reads as a null",
		"? [a]\n: x":                  "key that is not a string",
	} {
		_, err := decodeYAML(in)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want one saying %q", in, err, msg)
		}
	}
}

// TestConfigScalarsAsMonocleReadsThem: at the level of config.yaml, a Natural written 1_000 is
// refused (a string to Monocle, which then exits), and a name written 1_000 is the string
// "1_000" Monocle reads.
func TestConfigScalarsAsMonocleReadsThem(t *testing.T) {
	if _, err := Parse("workspaces:\n  - name: 1_000\n    crawlers: []\n"); err != nil {
		t.Errorf("name: 1_000 refused: %v", err)
	}
	c, err := Parse("workspaces:\n  - name: '1000'\n    crawlers: []\n")
	if err != nil || c.Workspaces[0].Name != "1000" {
		t.Errorf("quoted name: %+v, %v", c, err)
	}
	if _, err := Parse("crawlers:\n  loop_delay_sec: 0x10\nworkspaces:\n  - name: demo\n    crawlers: []\n"); err != nil {
		t.Errorf("loop_delay_sec: 0x10 (16 in the core schema) refused: %v", err)
	}
	for _, bad := range []string{
		"crawlers:\n  loop_delay_sec: 1_000\nworkspaces:\n  - name: demo\n    crawlers: []\n",
		"crawlers:\n  loop_delay_sec: 0b11\nworkspaces:\n  - name: demo\n    crawlers: []\n",
		"workspaces:\n  - name: demo\n    crawlers: []\n1: x\n",
		"workspaces:\n  - name: !foo demo\n    crawlers: []\n",
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}
