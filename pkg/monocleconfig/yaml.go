package monocleconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// maxAliasedValues bounds the values decodeYAML builds by expanding aliases. Values written
// out are bounded by MaxSize; an alias bomb ("billion laughs") expands a few lines into
// billions of values, which this budget cuts off after a few megabytes of memory.
const maxAliasedValues = 1 << 18

// decodeYAML turns the single YAML document in data into its JSON form: map[string]any,
// []any, string, json.Number, bool or nil.
//
// Monocle reads config.yaml with dhall-yaml, built on HsYAML and its aeson bridge
// (HsYAML-aeson's decodeValue: coreSchemaResolver and identityKeyConv). yaml.v3 gives the node
// tree only; scalars are resolved here as HsYAML's core schema does (coreSchemaResolver in
// src/Data/YAML/Schema/Internal.hs of haskell-hvr/HsYAML), see resolveScalar: yes, no, on,
// off, 1_000, 0b11 and 017 are strings, not booleans or numbers as in YAML 1.1 parsers. A
// mapping key must resolve to a string ("non-String key encountered in mapping" in
// HsYAML-aeson's src/Data/YAML/Aeson.hs), and a scalar with an unknown tag such as !foo is
// unresolved, which the bridge refuses ("unresolved YAML scalar encountered"). Merge keys
// (<<) are plain string keys in YAML 1.2. Duplicate keys are refused, a deliberate difference:
// HsYAML-aeson builds a mapping with aeson's object, where the later value silently wins.
//
// Two more differences are refused rather than read apart from Monocle: the characters U+0085,
// U+2028 and U+2029 written raw, line breaks for yaml.v3 (YAML 1.1) and not for HsYAML
// (YAML 1.2); and a file that ends inside a block scalar (| or >) without a final line
// break, which HsYAML refuses ("Unexpected ' '") and yaml.v3 reads.
func decodeYAML(data string) (any, *Error) {
	if i := strings.IndexAny(data, "\u0085\u2028\u2029"); i >= 0 {
		r, _ := utf8.DecodeRuneInString(data[i:])
		return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml holds the character U+%04X at line %d: YAML 1.1 readers take it for a line break, Monocle's does not; write it as an escape in a double-quoted string",
			r, strings.Count(data[:i], "\n")+1))
	}
	dec := yaml.NewDecoder(strings.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(err)
		}
		return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml holds more than one YAML document (a second one starts at line %d): keep only one", next.Line))
	}
	lines := strings.Split(data, "\n")
	if last := lastNode(&doc); last != nil && endsInBlockScalar(lines, last) {
		return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml ends inside the block scalar that starts at line %d, without a final line break, which Monocle's YAML reader refuses: end the file with a line break", last.Line))
	}
	d := &converter{budget: maxAliasedValues, open: map[*yaml.Node]bool{}, lines: lines}
	return d.toValue(&doc)
}

// endsInBlockScalar reports whether the source lines end, without a final line break, on a
// content line of the block scalar (| or >) n, the document's last node: a line indented at
// least as far as the scalar's first content line. A blank line or a less indented comment
// ends the scalar first, and HsYAML then reads the file.
func endsInBlockScalar(lines []string, n *yaml.Node) bool {
	end := len(lines) - 1
	if n.Kind != yaml.ScalarNode || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 || n.Line >= len(lines) || strings.TrimSpace(lines[end]) == "" {
		return false
	}
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	for _, l := range lines[n.Line:end] {
		if strings.TrimSpace(l) != "" {
			return indent(lines[end]) >= indent(l)
		}
	}
	return true
}

// lastNode returns the node a document ends with, not following aliases; nil for none.
func lastNode(n *yaml.Node) *yaml.Node {
	for n.Kind != yaml.ScalarNode && n.Kind != yaml.AliasNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[len(n.Content)-1]
	}
	return n
}

// nonSpecificTag reports whether the scalar n is written with the non-specific tag "!" (as
// in "! 5"), which yaml.v3 reads and drops: HsYAML resolves such a scalar as a string. The
// node's position is that of its properties (anchor, then tag) in the source.
func (d *converter) nonSpecificTag(n *yaml.Node) bool {
	if n.Line < 1 || n.Line > len(d.lines) {
		return false
	}
	line := []rune(d.lines[n.Line-1])
	if n.Column < 1 || n.Column > len(line) {
		return false
	}
	rest := string(line[n.Column-1:])
	if strings.HasPrefix(rest, "&") {
		_, rest, _ = strings.Cut(rest, " ")
		rest = strings.TrimLeft(rest, " \t")
	}
	return rest == "!" || strings.HasPrefix(rest, "! ") || strings.HasPrefix(rest, "!\t")
}

// converter turns yaml.v3 nodes into values, within a budget of values built inside alias
// expansions, refusing an alias to a node it is inside of ("a: &a [*a]").
type converter struct {
	budget int
	// open are the anchored nodes being expanded; none means outside any alias.
	open map[*yaml.Node]bool
	// lines are the source's lines, for what yaml.v3 does not keep (nonSpecificTag).
	lines []string
}

func syntaxError(err error) *Error {
	return newError("", ReasonSyntax, "config.yaml is not valid YAML: "+strings.TrimPrefix(err.Error(), "yaml: "))
}

// toValue converts n, spending one unit of budget per value built in an alias expansion.
func (d *converter) toValue(n *yaml.Node) (any, *Error) {
	if len(d.open) > 0 {
		d.budget--
	}
	if d.budget < 0 {
		return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml expands its aliases to more than %d values", maxAliasedValues))
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.toValue(n.Content[0])
	case yaml.AliasNode:
		if d.open[n.Alias] {
			return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml has an alias at line %d to a value that contains it", n.Line))
		}
		d.open[n.Alias] = true
		defer delete(d.open, n.Alias)
		return d.toValue(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := d.toValue(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			for k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml has a key that is not a string at line %d", k.Line))
			}
			key, kerr := resolveScalar(k, d.nonSpecificTag(k))
			if kerr != nil {
				return nil, kerr
			}
			if _, ok := key.(string); !ok {
				return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml has the key %s at line %d, which YAML reads as a %s: Monocle takes string keys only (quote it)",
					quote(k.Value), k.Line, kindOf(key)))
			}
			if _, dup := out[k.Value]; dup {
				return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml has the key %s twice in one mapping (again at line %d)", quote(k.Value), k.Line))
			}
			v, err := d.toValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.ScalarNode:
		return resolveScalar(n, d.nonSpecificTag(n))
	}
	return nil, nil
}

// Patterns of the YAML 1.2 core schema's plain scalars (YAML 1.2.2 section 10.3.2), as HsYAML
// decodes them (coreDecodeInt, coreDecodeFloat; .inf and .nan are a table of literals).
var (
	coreInt   = regexp.MustCompile(`^([-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$`)
	coreFloat = regexp.MustCompile(`^([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$`)
)

// resolveScalar returns the JSON form of a scalar node as HsYAML's core schema resolves it:
//   - a plain scalar: null for "", null, Null, NULL and ~; a boolean for true, True, TRUE,
//     false, False, FALSE; an integer for [-+]?[0-9]+, 0o[0-7]+ and 0x[0-9a-fA-F]+; a float
//     for the core float pattern; a string otherwise;
//   - a quoted or block scalar, or one with the non-specific tag "!" (nonSpecific, which
//     yaml.v3 does not keep): a string;
//   - a scalar tagged !!str, !!null, !!bool, !!int or !!float: that type, or an error when
//     the value is not one ("invalid !!int");
//   - any other tag: an error, as the aeson bridge refuses unresolved scalars.
//
// Integers and floats are json.Number in decimal.
func resolveScalar(n *yaml.Node, nonSpecific bool) (any, *Error) {
	v := n.Value
	tag := ""
	switch {
	case nonSpecific:
		tag = "!"
	case n.Style&yaml.TaggedStyle != 0:
		tag = n.ShortTag()
	}
	plain := n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
	switch {
	case tag == "" && !plain, tag == "!", tag == "!!str":
		return v, nil
	case tag == "":
		switch {
		case v == "" || v == "null" || v == "Null" || v == "NULL" || v == "~":
			return nil, nil
		case v == "true" || v == "True" || v == "TRUE":
			return true, nil
		case v == "false" || v == "False" || v == "FALSE":
			return false, nil
		case coreInt.MatchString(v):
			return coreNumber(v), nil
		case coreFloat.MatchString(v):
			return coreNumber(v), nil
		}
		return v, nil
	case tag == "!!null" && (v == "" || v == "null" || v == "Null" || v == "NULL" || v == "~"):
		return nil, nil
	case tag == "!!bool" && (v == "true" || v == "True" || v == "TRUE" || v == "false" || v == "False" || v == "FALSE"):
		return v == "true" || v == "True" || v == "TRUE", nil
	case tag == "!!int" && coreInt.MatchString(v), tag == "!!float" && coreFloat.MatchString(v):
		return coreNumber(v), nil
	case tag == "!!null" || tag == "!!bool" || tag == "!!int" || tag == "!!float":
		return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml has %s %s at line %d, which is not one (invalid %s)", tag, quote(v), n.Line, tag))
	}
	return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml has a value tagged %s at line %d: Monocle resolves no such tag (unresolved YAML scalar)", tag, n.Line))
}

// coreNumber returns a core-schema integer or float in decimal JSON form, with the value
// HsYAML gives it: an integer is exact (HsYAML's SInt holds an Integer), a float is the
// Double it reads (SFloat holds a Double), which the aeson bridge turns into a Scientific with
// realToFrac, through GHC's toRational: the Double's exact decimal value, 2^1024 for .inf and
// for a literal beyond the Double range, -3·2^1023 for .nan (toRational of a Double is its
// decodeFloat mantissa times 2 to its exponent, which for these two is what their bit
// patterns hold).
func coreNumber(v string) json.Number {
	if coreInt.MatchString(v) {
		var i big.Int
		base, digits := 10, strings.TrimPrefix(v, "+")
		switch {
		case strings.HasPrefix(v, "0o"):
			base, digits = 8, v[2:]
		case strings.HasPrefix(v, "0x"):
			base, digits = 16, v[2:]
		}
		if _, ok := i.SetString(digits, base); ok {
			return json.Number(i.String())
		}
	}
	var f float64
	switch strings.TrimLeft(v, "+-") {
	case ".inf", ".Inf", ".INF":
		f = math.Inf(1)
		if strings.HasPrefix(v, "-") {
			f = math.Inf(-1)
		}
	case ".nan", ".NaN", ".NAN":
		f = math.NaN()
	default:
		// A literal beyond the range is ±Inf (with ErrRange), as read gives a Double.
		f, _ = strconv.ParseFloat(v, 64)
	}
	return json.Number(exactDouble(f))
}

// exactDouble writes the exact decimal value of GHC's toRational of the Double f: an integer
// in digits, any other value as digits "." digits without trailing zeros.
func exactDouble(f float64) string {
	switch {
	case math.IsInf(f, 0):
		inf := new(big.Int).Lsh(big.NewInt(1), 1024)
		if f < 0 {
			inf.Neg(inf)
		}
		return inf.String()
	case math.IsNaN(f):
		return new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(3), 1023)).String()
	}
	r := new(big.Rat).SetFloat64(f)
	if r.IsInt() {
		return r.Num().String()
	}
	// The denominator is 2^k: k decimal places write the value exactly.
	return strings.TrimRight(r.FloatString(r.Denom().BitLen()-1), "0")
}

// kindOf names the YAML type of a resolved scalar, for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	}
	return "string"
}
