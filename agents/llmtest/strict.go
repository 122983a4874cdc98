package llmtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// strictSchemaProblem checks the rules OpenAI enforces on strict schemas
// (structured outputs and strict function tools): the root is an object,
// and every object sets additionalProperties to false and lists all of its
// properties as required. Schemas generated from Go structs break these
// rules easily, and only a real OpenAI endpoint would otherwise say so. It
// returns "" when the schema is acceptable, or OpenAI's description of the
// first problem.
func strictSchemaProblem(raw json.RawMessage) string {
	var root any
	if err := json.Unmarshal(raw, &root); err != nil || root == nil {
		return `schema must be a JSON Schema of 'type: "object"', got 'type: "None"'.`
	}
	m, ok := root.(map[string]any)
	if !ok {
		return fmt.Sprintf(`schema must be a JSON Schema of 'type: "object"', got '%s'.`, compact(root))
	}
	if !typeIncludes(m["type"], "object") {
		return fmt.Sprintf(`schema must be a JSON Schema of 'type: "object"', got 'type: "%v"'.`, pyValue(m["type"]))
	}
	return walkStrict(m, nil)
}

func walkStrict(node any, path []string) string {
	m, ok := node.(map[string]any)
	if !ok {
		return ""
	}
	props, hasProps := m["properties"].(map[string]any)
	if hasProps || typeIncludes(m["type"], "object") {
		if ap, ok := m["additionalProperties"].(bool); !ok || ap {
			return fmt.Sprintf("In context=%s, 'additionalProperties' is required to be supplied and to be false.", pyTuple(path))
		}
		var required []string
		if list, ok := m["required"].([]any); ok {
			for _, v := range list {
				if s, ok := v.(string); ok {
					required = append(required, s)
				}
			}
		}
		for _, k := range sortedKeys(props) {
			if !slices.Contains(required, k) {
				return fmt.Sprintf("In context=%s, 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", pyTuple(path), k)
			}
		}
	}
	for _, k := range sortedKeys(props) {
		if p := walkStrict(props[k], append(slices.Clone(path), "properties", k)); p != "" {
			return p
		}
	}
	if p := walkStrict(m["items"], append(slices.Clone(path), "items")); p != "" {
		return p
	}
	for _, key := range []string{"anyOf", "allOf", "oneOf"} {
		list, _ := m[key].([]any)
		for i, v := range list {
			if p := walkStrict(v, append(slices.Clone(path), key, fmt.Sprint(i))); p != "" {
				return p
			}
		}
	}
	for _, key := range []string{"$defs", "definitions"} {
		defs, _ := m[key].(map[string]any)
		for _, k := range sortedKeys(defs) {
			if p := walkStrict(defs[k], append(slices.Clone(path), key, k)); p != "" {
				return p
			}
		}
	}
	return ""
}

func typeIncludes(t any, want string) bool {
	switch v := t.(type) {
	case string:
		return v == want
	case []any:
		return slices.Contains(v, any(want))
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pyTuple formats a schema path the way OpenAI's (Python) messages do.
func pyTuple(path []string) string {
	if len(path) == 0 {
		return "()"
	}
	quoted := make([]string, len(path))
	for i, p := range path {
		quoted[i] = "'" + p + "'"
	}
	if len(path) == 1 {
		return "(" + quoted[0] + ",)"
	}
	return "(" + strings.Join(quoted, ", ") + ")"
}

func pyValue(v any) string {
	if v == nil {
		return "None"
	}
	return fmt.Sprint(v)
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
