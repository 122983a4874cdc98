package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaInfo is everything the gateway derives from a Go type's schema.
// There are two versions of the schema because the wire and validation
// have opposite needs: OpenAI's strict mode wants a closed schema in which
// every property is required (optional ones nullable), while replies
// should be judged leniently against the original, so that an extra
// property or a null for an optional field does not cost a finding.
type schemaInfo struct {
	lenient  *jsonschema.Schema
	resolved *jsonschema.Resolved
	wire     json.RawMessage // strict-mode schema sent as response_format
	strict   bool            // whether strict mode can express the schema
	promptJS string          // compact schema for prompts (json_object fallback)
	hash     string          // identifies the schema in cache keys

	// Salvage: the top-level array properties of an object root, or the
	// items of an array root (key ""), with their item schemas resolved.
	arrays []arrayProp
}

type arrayProp struct {
	name  string
	items *jsonschema.Resolved
}

var schemaCache sync.Map // reflect.Type → *schemaInfo

// schemaFor returns the schema information of T. Plain types are inferred
// once per process; requests with allowed values get their own copy.
func schemaFor[T any](allowed map[string][]any) (*schemaInfo, error) {
	t := reflect.TypeFor[T]()
	if len(allowed) == 0 {
		if v, ok := schemaCache.Load(t); ok {
			return v.(*schemaInfo), nil
		}
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, fmt.Errorf("infer json schema of %s: %w", t, err)
	}
	info, err := newSchemaInfo(s, allowed)
	if err != nil {
		return nil, fmt.Errorf("json schema of %s: %w", t, err)
	}
	if len(allowed) == 0 {
		v, _ := schemaCache.LoadOrStore(t, info)
		info = v.(*schemaInfo)
	}
	return info, nil
}

func newSchemaInfo(orig *jsonschema.Schema, allowed map[string][]any) (*schemaInfo, error) {
	lenient := orig.CloneSchemas()
	loosen(lenient)
	wire := orig.CloneSchemas()
	strict := strictify(wire) && types(wire).has("object") && len(types(wire)) == 1

	for _, path := range slices.Sorted(maps.Keys(allowed)) {
		vals := allowed[path]
		ls, err := schemaAt(lenient, path)
		if err != nil {
			return nil, err
		}
		ws, _ := schemaAt(wire, path)
		ls.Enum = slices.Clone(vals)
		ws.Enum = slices.Clone(vals)
		if types(ws).has("null") {
			ws.Enum = append(ws.Enum, nil)
		}
	}

	info := &schemaInfo{lenient: lenient, strict: strict}
	var err error
	if info.resolved, err = lenient.Resolve(nil); err != nil {
		return nil, fmt.Errorf("resolve: %w", err)
	}
	if info.wire, err = json.Marshal(wire); err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	lj, err := json.Marshal(lenient)
	if err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	info.promptJS = string(info.wire)
	sum := sha256.Sum256(append(append(slices.Clip(info.wire), 0), lj...))
	info.hash = hex.EncodeToString(sum[:])

	addArray := func(name string, s *jsonschema.Schema) error {
		if s == nil || !types(s).has("array") || s.Items == nil {
			return nil
		}
		r, err := s.Items.CloneSchemas().Resolve(nil)
		if err != nil {
			return fmt.Errorf("resolve items of %q: %w", name, err)
		}
		info.arrays = append(info.arrays, arrayProp{name: name, items: r})
		return nil
	}
	if types(lenient).has("array") {
		err = addArray("", lenient)
	} else {
		for _, name := range propertyNames(lenient) {
			if err = addArray(name, lenient.Properties[name]); err != nil {
				break
			}
		}
	}
	return info, err
}

// typeSet is a schema's "type" keyword as a list.
type typeSet []string

func types(s *jsonschema.Schema) typeSet {
	if s == nil {
		return nil
	}
	if s.Type != "" {
		return typeSet{s.Type}
	}
	return s.Types
}

func (t typeSet) has(name string) bool { return slices.Contains(t, name) }

// propertyNames returns s's properties in declaration order.
func propertyNames(s *jsonschema.Schema) []string {
	names := slices.Clone(s.PropertyOrder)
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		if !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	return slices.DeleteFunc(names, func(n string) bool { _, ok := s.Properties[n]; return !ok })
}

func isFalseSchema(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// children calls f for every direct subschema of s.
func children(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	for _, c := range s.Properties {
		f(c)
	}
	if s.Items != nil {
		f(s.Items)
	}
	for _, c := range s.ItemsArray {
		f(c)
	}
	for _, c := range s.PrefixItems {
		f(c)
	}
	if s.AdditionalProperties != nil && !isFalseSchema(s.AdditionalProperties) {
		f(s.AdditionalProperties)
	}
	for _, l := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, c := range l {
			f(c)
		}
	}
	for _, c := range s.Defs {
		f(c)
	}
}

// loosen lets objects inferred from structs carry extra properties, which
// are ignored when the reply is decoded.
func loosen(s *jsonschema.Schema) {
	if s.Properties != nil && isFalseSchema(s.AdditionalProperties) {
		s.AdditionalProperties = nil
	}
	children(s, loosen)
}

// strictify rewrites s in place for OpenAI strict mode: every object closed
// and all its properties required, formerly optional ones nullable. It
// reports whether strict mode can express the schema at all: free-form
// maps and untyped values (Go maps, interfaces) cannot, and are then sent
// with strict false.
func strictify(s *jsonschema.Schema) bool {
	ok := true
	ts := types(s)
	if len(ts) == 0 && s.Ref == "" && s.AnyOf == nil && s.OneOf == nil && s.Enum == nil && s.Const == nil {
		ok = false
	}
	if ts.has("object") {
		if s.Properties == nil && s.AdditionalProperties != nil && !isFalseSchema(s.AdditionalProperties) {
			ok = false
		} else {
			names := propertyNames(s)
			for _, n := range names {
				if !slices.Contains(s.Required, n) {
					nullable(s.Properties[n])
				}
			}
			s.Required = names
			s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
		}
	}
	children(s, func(c *jsonschema.Schema) {
		if !strictify(c) {
			ok = false
		}
	})
	return ok
}

func nullable(s *jsonschema.Schema) {
	switch {
	case s.Type != "":
		s.Types = []string{s.Type, "null"}
		s.Type = ""
	case len(s.Types) > 0 && !slices.Contains(s.Types, "null"):
		s.Types = append(s.Types, "null")
	}
}

// schemaAt finds the schema of a dot-separated property path; arrays on the
// way are stepped through to their items.
func schemaAt(s *jsonschema.Schema, path string) (*jsonschema.Schema, error) {
	cur := s
	for _, name := range strings.Split(path, ".") {
		for types(cur).has("array") && cur.Items != nil {
			cur = cur.Items
		}
		next := cur.Properties[name]
		if next == nil {
			return nil, fmt.Errorf("allowed values for %q: no property %q in the schema", path, name)
		}
		cur = next
	}
	for types(cur).has("array") && cur.Items != nil {
		cur = cur.Items
	}
	return cur, nil
}

// normalize prepares a decoded reply for validation against s: JSON
// numbers become int64 or float64 (decoding used UseNumber, so large ids
// keep every digit until here, and become strings exactly where the
// schema wants strings); scalars sent as strings are coerced where the
// schema wants a number, integer or boolean ("42" → 42); and nulls of
// optional properties are removed, since strict mode makes models send
// null for what they leave out.
func normalize(v any, s *jsonschema.Schema) any {
	switch x := v.(type) {
	case json.Number:
		return numberFor(x, s)
	case string:
		return coerceString(x, s)
	case bool:
		if ts := types(s); ts.has("string") && !ts.has("boolean") {
			return strconv.FormatBool(x)
		}
		return x
	case map[string]any:
		for k, val := range x {
			var ps *jsonschema.Schema
			if s != nil {
				ps = s.Properties[k]
				if ps == nil && s.AdditionalProperties != nil && !isFalseSchema(s.AdditionalProperties) {
					ps = s.AdditionalProperties
				}
			}
			if val == nil && s != nil && !slices.Contains(s.Required, k) && (ps == nil || !types(ps).has("null")) {
				delete(x, k)
				continue
			}
			x[k] = normalize(val, ps)
		}
		return x
	case []any:
		var is *jsonschema.Schema
		if s != nil {
			is = s.Items
		}
		for i := range x {
			x[i] = normalize(x[i], is)
		}
		return x
	}
	return v
}

func numberFor(n json.Number, s *jsonschema.Schema) any {
	ts := types(s)
	if ts.has("string") && !ts.has("number") && !ts.has("integer") {
		return n.String()
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	f, err := n.Float64()
	if err != nil {
		return n.String()
	}
	if ts.has("integer") && f == float64(int64(f)) {
		return int64(f)
	}
	return f
}

func coerceString(str string, s *jsonschema.Schema) any {
	ts := types(s)
	if len(ts) == 0 || ts.has("string") {
		return str
	}
	t := strings.TrimSpace(str)
	if ts.has("integer") {
		if i, err := strconv.ParseInt(t, 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil && f == float64(int64(f)) {
			return int64(f)
		}
	}
	if ts.has("number") {
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return f
		}
	}
	if ts.has("boolean") {
		if b, err := strconv.ParseBool(strings.ToLower(t)); err == nil {
			return b
		}
	}
	if ts.has("null") && (t == "" || t == "null") {
		return nil
	}
	return str
}

// validationMessage shortens the validator's nested "validating …: "
// prefixes to the innermost message, which is the one a person (or the
// model, in the repair prompt) can act on.
func validationMessage(err error) string {
	msg := err.Error()
	for {
		i := strings.Index(msg, "validating ")
		if i < 0 {
			break
		}
		j := strings.Index(msg[i:], ": ")
		if j < 0 {
			break
		}
		msg = msg[i+j+2:]
	}
	return shorten(msg, 300)
}
