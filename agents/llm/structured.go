package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// StructuredRequest asks for a reply that is a JSON document of a Go type.
type StructuredRequest struct {
	ChatRequest
	// SchemaName names the schema in response_format; [a-zA-Z0-9_-], at
	// most 64 characters (other characters are replaced by '_'). Defaults
	// to the Go type's name.
	SchemaName string
	// Allowed restricts properties to listed values, keyed by a
	// dot-separated property path in which arrays are implicit (e.g.
	// "codeSuggestions.id"). Use it for ids the model must copy: the values
	// become an enum, so endpoints with structured outputs cannot produce a
	// mistyped id, and on other endpoints an item with an unknown id is
	// dropped (and reported) instead of being attached to nothing.
	Allowed map[string][]any
}

// Source says where a structured value came from.
type Source string

// The sources of a structured value.
const (
	SourceModel    Source = "model"    // the reply was valid (possibly after extraction and coercion)
	SourceCache    Source = "cache"    // served from the cache, no HTTP request
	SourceRepaired Source = "repaired" // valid after one repair round
	SourceSalvaged Source = "salvaged" // invalid list items were dropped, see Result.Dropped
	SourceFallback Source = "fallback" // the caller's fallback value, see Result.Err
)

// Result describes how a structured value was obtained.
type Result struct {
	Source Source
	// Dropped lists the list items removed because they did not match the
	// schema, each with the reason, e.g.
	// `codeSuggestions[2] (id "s3"): required: missing properties: ["line"]`.
	Dropped []string
	Usage   Usage // summed over the calls made (the first and the repair)
	// Err is the error that led to the fallback.
	Err error
}

// Structured asks the model for a T and returns a valid one or, failing
// that, fallback(err) with Source "fallback" and a nil error: the caller
// chose the degraded value, so it is not an error to them. A non-nil error
// is returned only when fallback is nil, or when ctx ended (the caller
// stopped waiting, so no value is produced).
//
// The reply goes through lenient extraction (fences, prose, <think> blocks,
// trailing commas), coercion of scalars sent as strings, and validation
// against T's schema. When invalid, items of top-level lists that fail
// validation are dropped one by one (Source "salvaged"); if the document
// is still invalid, the model gets one repair round with the validation
// error (Source "repaired"). A reply cut off at the token limit counts as
// invalid.
func Structured[T any](ctx context.Context, g *Gateway, req StructuredRequest, fallback func(err error) T) (T, Result, error) {
	var zero T
	var res Result
	fail := func(err error) (T, Result, error) {
		res.Err = err
		if ctx.Err() != nil {
			return zero, res, err
		}
		if fallback == nil {
			return zero, res, err
		}
		res.Source = SourceFallback
		return fallback(err), res, nil
	}

	sch, err := schemaFor[T](req.Allowed)
	if err != nil {
		return fail(err)
	}
	name := schemaName(req.SchemaName, reflect.TypeFor[T]())
	start := time.Now()
	p, err := g.prepare(req.ChatRequest)
	res.Usage = Usage{Feature: p.feature, Model: p.model, At: start}
	if err != nil {
		g.record(ctx, Usage{Feature: p.feature, Model: p.model, Err: err.Error(), At: start})
		return fail(err)
	}
	if len(p.tools) > 0 {
		return fail(errors.New("structured requests take no tools; use Chat"))
	}

	key := ""
	if g.cache != nil && !req.NoCache {
		key = g.cacheKey("structured", p, sch, name)
		if e, ok := g.cacheGet(ctx, key); ok && len(e.Doc) > 0 {
			var v T
			if err := json.Unmarshal(e.Doc, &v); err == nil {
				u := g.record(ctx, Usage{Feature: p.feature, Model: p.model, Cached: true, Latency: time.Since(start), At: start})
				return v, Result{Source: SourceCache, Dropped: e.Dropped, Usage: u}, nil
			}
		}
	}

	resp, u, err := g.exchange(ctx, p, sch, name)
	res.Usage.add(u)
	if err != nil {
		return fail(err)
	}
	v, doc, dropped, salvaged, perr := decodeStructured[T](sch, resp)
	if perr == nil {
		res.Source, res.Dropped = SourceModel, dropped
		if salvaged {
			res.Source = SourceSalvaged
		}
		if key != "" {
			g.cachePut(ctx, key, &cacheEntry{Doc: doc, Dropped: dropped})
		}
		return v, res, nil
	}
	g.log.Info("llm reply invalid; asking the model to repair it", "feature", p.feature, "model", p.model, "schema", name, "err", perr)

	rp := *p
	rp.msgs = append(append(make([]Message, 0, len(p.msgs)+2), p.msgs...),
		Message{Role: "assistant", Content: g.redact(replyText(resp))},
		Message{Role: "user", Content: g.redact(g.repairPrompt(sch, name, resp, perr))},
	)
	resp2, u, err := g.exchange(ctx, &rp, sch, name)
	res.Usage.add(u)
	if err != nil {
		return fail(fmt.Errorf("%w: %v; the repair request failed: %w", ErrInvalidReply, perr, err))
	}
	v, doc, dropped, _, perr = decodeStructured[T](sch, resp2)
	if perr != nil {
		return fail(fmt.Errorf("%w: still invalid after a repair round: %w", ErrInvalidReply, perr))
	}
	res.Source, res.Dropped = SourceRepaired, dropped
	if key != "" {
		g.cachePut(ctx, key, &cacheEntry{Doc: doc, Dropped: dropped})
	}
	return v, res, nil
}

// replyText is what the model said, for the repair round's history; an
// empty reply is shown as such so the conversation stays well-formed.
func replyText(r *ChatResponse) string {
	if strings.TrimSpace(r.Content) == "" {
		return "(empty reply)"
	}
	return r.Content
}

// schemaName sanitises name for response_format, which accepts
// [a-zA-Z0-9_-]{1,64}.
func schemaName(name string, t reflect.Type) string {
	if name == "" {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		name = t.Name()
		if name == "" {
			name = "reply"
		}
	}
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// errTruncated marks a reply cut off at the token limit.
var errTruncated = errors.New("the reply was cut off at the token limit (finish_reason length)")

// decodeStructured turns a reply into a T. It returns the validated
// document (for the cache), the dropped items, whether items were dropped,
// and the reason the reply is unusable.
func decodeStructured[T any](sch *schemaInfo, resp *ChatResponse) (v T, doc []byte, dropped []string, salvaged bool, err error) {
	if resp.FinishReason == "length" {
		return v, nil, nil, false, errTruncated
	}
	doc, dropped, err = sch.check(resp.Content)
	if err != nil {
		return v, nil, nil, false, err
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		return v, nil, nil, false, fmt.Errorf("the reply does not fit the Go type: %w", err)
	}
	return v, doc, dropped, len(dropped) > 0, nil
}

// check extracts, normalises and validates a reply against the schema,
// dropping invalid items of top-level lists when that makes it valid.
func (s *schemaInfo) check(content string) (doc []byte, dropped []string, err error) {
	wantArray := len(s.arrays) == 1 && s.arrays[0].name == ""
	text, err := extractJSON(content, wantArray)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("the reply is not valid JSON: %w", err)
	}
	v = normalize(v, s.lenient)
	verr := s.resolved.Validate(v)
	if verr != nil {
		var total int
		v, dropped, total = s.salvage(v)
		// Salvage counts only when something is left: a list whose every
		// item is wrong points at a misunderstanding the repair round can
		// fix.
		if len(dropped) == 0 || len(dropped) == total {
			return nil, nil, fmt.Errorf("the reply does not match the schema: %s", validationMessage(verr))
		}
		if verr = s.resolved.Validate(v); verr != nil {
			return nil, nil, fmt.Errorf("the reply does not match the schema: %s", validationMessage(verr))
		}
	}
	doc, err = json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("re-encode the reply: %w", err)
	}
	return doc, dropped, nil
}

// salvage removes the items of top-level lists that fail their item
// schema. It returns the new document, what was dropped and how many items
// were looked at.
func (s *schemaInfo) salvage(v any) (out any, dropped []string, total int) {
	filter := func(name string, items []any, r arrayProp) []any {
		kept := make([]any, 0, len(items))
		for i, it := range items {
			total++
			if err := r.items.Validate(it); err != nil {
				dropped = append(dropped, fmt.Sprintf("%s[%d]%s: %s", name, i, itemHint(it), validationMessage(err)))
				continue
			}
			kept = append(kept, it)
		}
		return kept
	}
	for _, a := range s.arrays {
		if a.name == "" {
			if items, ok := v.([]any); ok {
				v = filter("items", items, a)
			}
			continue
		}
		if m, ok := v.(map[string]any); ok {
			if items, ok := m[a.name].([]any); ok {
				m[a.name] = filter(a.name, items, a)
			}
		}
	}
	return v, dropped, total
}

// itemHint identifies a dropped item by its id, when it has one.
func itemHint(it any) string {
	m, ok := it.(map[string]any)
	if !ok {
		return ""
	}
	for _, k := range []string{"id", "ID", "Id"} {
		if id, ok := m[k]; ok && id != nil {
			b, _ := json.Marshal(id)
			if len(b) > 0 && len(b) < 80 {
				return " (" + k + " " + string(bytes.TrimSpace(b)) + ")"
			}
		}
	}
	return ""
}
