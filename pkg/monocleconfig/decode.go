package monocleconfig

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// The helpers below read the JSON form of the YAML document (what sigs.k8s.io/yaml produces:
// map[string]any, []any, string, json.Number, bool, nil) the way yaml-to-dhall reads it:
// a required key must be present and non-null, an Optional key may be absent or null, a Text
// is a string only, a Natural is a non-negative integer only.

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

func asObject(path string, v any) (object, *Error) {
	m, ok := v.(map[string]any)
	if !ok {
		return object{}, wrongType(path, "a mapping", v)
	}
	return object{path: path, m: m}, nil
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

// optNatural checks that key, when set, is a non-negative integer. 1.0 and 1e3 are integers,
// as for Monocle's JSON decoder.
func (o object) optNatural(key string) *Error {
	v := o.m[key]
	if v == nil {
		return nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return wrongType(keyPath(o.path, key), "a non-negative integer", v)
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		if i < 0 {
			return newError(keyPath(o.path, key), ReasonInvalid, "must be a non-negative integer")
		}
		return nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt64 {
		return newError(keyPath(o.path, key), ReasonInvalid, "must be a non-negative integer")
	}
	return nil
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
