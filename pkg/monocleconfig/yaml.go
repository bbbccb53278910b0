package monocleconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// Monocle reads config.yaml with dhall-yaml, built on HsYAML with the YAML 1.2 core schema,
// so yes, no, on, off, y and n are strings, not booleans as in YAML 1.1 parsers such as
// sigs.k8s.io/yaml (a crawler named "no" is fine). yaml.v3 resolves plain scalars the 1.2
// way; timestamps, which the core schema does not know, stay strings. Duplicate keys are
// refused: the later value would silently win.
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
		return scalar(n), nil
	}
	return nil, nil
}

// scalar returns the JSON form of a scalar node by its resolved tag.
func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int", "!!float":
		var v any
		if n.Decode(&v) == nil {
			switch x := v.(type) {
			case int:
				return json.Number(strconv.Itoa(x))
			case int64:
				return json.Number(strconv.FormatInt(x, 10))
			case uint64:
				return json.Number(strconv.FormatUint(x, 10))
			case float64:
				// .inf and .nan give "+Inf" and "NaN", which no Natural accepts.
				return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
			}
		}
		return json.Number(n.Value)
	}
	return n.Value
}
