package monocleconfig

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The helpers below read the JSON form of the YAML document (what sigs.k8s.io/yaml produces:
// map[string]any, []any, string, json.Number, bool, nil) the way yaml-to-dhall reads it:
// a required key must be present and non-null, an Optional key may be absent or null, a Text
// is a string only, a Natural is a non-negative integer only (of any size), a record is a
// mapping or a list of {key, value} mappings.

// object is a YAML mapping with the path it was found at.
type object struct {
	path string
	m    map[string]any
}

func keyPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// typeName names the YAML type of a decoded value for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func wrongType(path, want string, v any) *Error {
	return newError(path, ReasonWrongType, fmt.Sprintf("must be %s, not %s", want, typeName(v)))
}

// asObject returns v as a record: a mapping, or a list of {key, value} mappings. dhall-json's
// conversion reads such a list as the mapping of each key to its value wherever a record is
// expected ("key-value list ~> Record" in dhall-json/src/Dhall/JSONToDhall.hs, noKeyValArr
// False in defaultConversion, dhall-json 1.7.12): an item is a mapping whose "key" is a string
// and that has a "value", null included (keyValMay), and its other keys are ignored; the
// empty list is the empty mapping. dhall-json keeps the last value of a key given twice; it
// is refused here, as a key given twice in a mapping is (decodeYAML).
func asObject(path string, v any) (object, *Error) {
	switch v := v.(type) {
	case map[string]any:
		return object{path: path, m: v}, nil
	case []any:
		m := make(map[string]any, len(v))
		for i, item := range v {
			kv, _ := item.(map[string]any)
			key, isText := kv["key"].(string)
			value, hasValue := kv["value"]
			if !isText || !hasValue {
				return object{}, newError(path, ReasonWrongType, fmt.Sprintf(
					"must be a mapping, not a list: a list stands for one only when each item is a mapping with a string key and a value, and item %d is not", i))
			}
			if _, dup := m[key]; dup {
				return object{}, newError(indexPath(path, i), ReasonDuplicate, fmt.Sprintf(
					"gives the key %s again: Monocle would keep the last value silently", quote(key)))
			}
			m[key] = value
		}
		return object{path: path, m: m}, nil
	}
	return object{}, wrongType(path, "a mapping", v)
}

// has reports whether key is present with a non-null value.
func (o object) has(key string) bool { return o.m[key] != nil }

// required returns the value of key, or a ReasonMissing error when it is absent or null.
func (o object) required(key string) (any, *Error) {
	v, ok := o.m[key]
	if !ok {
		return nil, newError(keyPath(o.path, key), ReasonMissing, "is required")
	}
	if v == nil {
		return nil, newError(keyPath(o.path, key), ReasonMissing, "is required and must not be null")
	}
	return v, nil
}

func (o object) text(key string) (string, *Error) {
	v, err := o.required(key)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", wrongType(keyPath(o.path, key), "a string", v)
	}
	return s, nil
}

// optText returns the string at key and whether it is set; absent and null are unset.
func (o object) optText(key string) (string, bool, *Error) {
	if !o.has(key) {
		return "", false, nil
	}
	s, err := o.text(key)
	return s, err == nil, err
}

func (o object) optBool(key string) *Error {
	if v := o.m[key]; v != nil {
		if _, ok := v.(bool); !ok {
			return wrongType(keyPath(o.path, key), "a boolean", v)
		}
	}
	return nil
}

// optNatural checks that key, when set, is a Natural as dhall-json reads a number ("number ~>
// Natural" in dhall-json/src/Dhall/JSONToDhall.hs: floatingOrInteger gives an Integer, and it
// is not negative): 1.0 and 1e3 are Naturals, and there is no upper bound. The YAML reader
// makes a float a Double first, then a number (realToFrac in HsYAML-aeson's scalarToValue),
// so .inf and floats beyond a Double's range are 2^1024, a Natural, and .nan and -.inf are
// negative numbers, which are not.
func (o object) optNatural(key string) *Error {
	v := o.m[key]
	if v == nil {
		return nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return wrongType(keyPath(o.path, key), "a non-negative integer", v)
	}
	if !isNatural(string(n)) {
		return newError(keyPath(o.path, key), ReasonInvalid, "must be a non-negative integer")
	}
	return nil
}

// isNatural reports whether n, as coreNumber writes a number (decimal digits for an integer,
// digits "." digits otherwise, a "-" before a negative one), is a non-negative integer: what
// dhall-json takes for a Natural, of any size.
func isNatural(n string) bool {
	return n != "" && strings.TrimLeft(n, "0123456789") == ""
}

// list returns the items of the list at key, which is required.
func (o object) list(key string) ([]any, *Error) {
	v, err := o.required(key)
	if err != nil {
		return nil, err
	}
	l, ok := v.([]any)
	if !ok {
		return nil, wrongType(keyPath(o.path, key), "a list", v)
	}
	return l, nil
}

// optList returns the items of the list at key, nil when absent or null.
func (o object) optList(key string) ([]any, *Error) {
	if !o.has(key) {
		return nil, nil
	}
	return o.list(key)
}

// items returns the items of the list at key: optList's when optional, list's otherwise.
func (o object) items(key string, optional bool) ([]any, *Error) {
	if optional {
		return o.optList(key)
	}
	return o.list(key)
}

// textList returns the strings of the list at key; optional says whether the key may be
// absent or null.
func (o object) textList(key string, optional bool) ([]string, *Error) {
	return listOf(o, key, optional, func(path string, item any) (string, *Error) {
		s, ok := item.(string)
		if !ok {
			return "", wrongType(path, "a string", item)
		}
		return s, nil
	})
}

// objects returns the mappings of the list at key; optional says whether the key may be
// absent or null.
func (o object) objects(key string, optional bool) ([]object, *Error) {
	return listOf(o, key, optional, asObject)
}

// listOf returns the items of the list at key of o, each converted by conv, which gets the
// item's path ("<key>[<i>]") for its errors; optional says whether the key may be absent or
// null. The first error of conv is returned.
func listOf[T any](o object, key string, optional bool, conv func(path string, item any) (T, *Error)) ([]T, *Error) {
	items, err := o.items(key, optional)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for i, item := range items {
		v, err := conv(indexPath(keyPath(o.path, key), i), item)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
