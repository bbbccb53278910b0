package monocleconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"

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
func decodeYAML(data string) (any, *Error) {
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
	d := &converter{budget: maxAliasedValues, open: map[*yaml.Node]bool{}}
	return d.toValue(&doc)
}

// converter turns yaml.v3 nodes into values, within a budget of values built inside alias
// expansions, refusing an alias to a node it is inside of ("a: &a [*a]").
type converter struct {
	budget int
	// open are the anchored nodes being expanded; none means outside any alias.
	open map[*yaml.Node]bool
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
			key, kerr := resolveScalar(k)
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
		return resolveScalar(n)
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
//   - a quoted or block scalar: a string (so is one tagged with the non-specific "!" for HsYAML,
//     but yaml.v3 drops that tag and reads such a scalar as plain: a known difference, for a
//     form no config needs);
//   - a scalar tagged !!str, !!null, !!bool, !!int or !!float: that type, or an error when
//     the value is not one ("invalid !!int");
//   - any other tag: an error, as the aeson bridge refuses unresolved scalars.
//
// Integers and floats are json.Number in decimal.
func resolveScalar(n *yaml.Node) (any, *Error) {
	v := n.Value
	tag := ""
	if n.Style&yaml.TaggedStyle != 0 {
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
	case tag == "!!int" && coreInt.MatchString(v), tag == "!!float" && (coreFloat.MatchString(v) || coreInt.MatchString(v)):
		return coreNumber(v), nil
	case tag == "!!null" || tag == "!!bool" || tag == "!!int" || tag == "!!float":
		return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml has %s %s at line %d, which is not one (invalid %s)", tag, quote(v), n.Line, tag))
	}
	return nil, newError("", ReasonSyntax, fmt.Sprintf("config.yaml has a value tagged %s at line %d: Monocle resolves no such tag (unresolved YAML scalar)", tag, n.Line))
}

// coreNumber returns a core-schema integer or float in decimal JSON form. .inf and .nan give
// "+Inf" and "NaN", which no Natural accepts.
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
	switch strings.TrimLeft(v, "+-") {
	case ".inf", ".Inf", ".INF":
		if strings.HasPrefix(v, "-") {
			return json.Number("-Inf")
		}
		return json.Number("+Inf")
	case ".nan", ".NaN", ".NAN":
		return json.Number("NaN")
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return json.Number(v)
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
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
