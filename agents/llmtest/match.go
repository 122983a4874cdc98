package llmtest

import "strings"

// Matcher decides whether a script answers a request. Matchers must not
// modify the request; they may be called concurrently.
type Matcher func(*ChatRequest) bool

// Any matches every chat request.
func Any() Matcher { return func(*ChatRequest) bool { return true } }

// SchemaName matches requests that ask for the JSON schema called name. A
// request that asks for no schema (json_object mode, or a plain prompt, as
// clients do after falling back from an endpoint without structured outputs)
// matches when its prompt mentions name, since that is where such clients
// describe the shape they want. A request for a different schema name never
// matches, even if its prompt happens to mention name.
func SchemaName(name string) Matcher {
	return func(r *ChatRequest) bool {
		if rf := r.ResponseFormat; rf != nil && rf.Type == "json_schema" && rf.JSONSchema != nil {
			return rf.JSONSchema.Name == name
		}
		return strings.Contains(r.Text(), name)
	}
}

// PromptContains matches when some message's content contains substr.
// Messages are searched one by one so that a match never spans two of them.
func PromptContains(substr string) Matcher {
	return func(r *ChatRequest) bool {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, substr) {
				return true
			}
		}
		return false
	}
}

// HasTool matches requests that offer a function tool called name.
func HasTool(name string) Matcher {
	return func(r *ChatRequest) bool {
		for _, t := range r.Tools {
			if t.Function.Name == name {
				return true
			}
		}
		return false
	}
}

// LastMessageRole matches when the final message has the given role; "tool"
// means the model is being handed tool results and should answer them.
func LastMessageRole(role string) Matcher {
	return func(r *ChatRequest) bool { return r.LastMessage().Role == role }
}

// ModelIs matches requests for the given model.
func ModelIs(model string) Matcher {
	return func(r *ChatRequest) bool { return r.Model == model }
}

// Streaming matches streamed requests ("stream": true).
func Streaming() Matcher {
	return func(r *ChatRequest) bool { return r.Stream }
}

// Not inverts m; a nil m counts as Any, so Not(nil) matches nothing.
func Not(m Matcher) Matcher {
	return func(r *ChatRequest) bool { return m != nil && !m(r) }
}

// All matches when every matcher does; nil matchers are ignored, so All()
// matches everything.
func All(ms ...Matcher) Matcher {
	return func(r *ChatRequest) bool {
		for _, m := range ms {
			if m != nil && !m(r) {
				return false
			}
		}
		return true
	}
}

// ToolMessages matches requests whose conversation holds exactly n tool
// messages: in an agent's loop, the step the request belongs to.
func ToolMessages(n int) Matcher {
	return func(r *ChatRequest) bool {
		k := 0
		for _, m := range r.Messages {
			if m.Role == "tool" {
				k++
			}
		}
		return k == n
	}
}
