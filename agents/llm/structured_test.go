package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
)

func TestStructuredValidReply(t *testing.T) {
	s := newServer(t)
	want := sampleReview()
	s.On(llmtest.SchemaName("review"), llmtest.JSON(want))
	g := newGateway(t, s.URL, nil)

	got, res, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if res.Source != llm.SourceModel || len(res.Dropped) != 0 || res.Err != nil {
		t.Errorf("result = %+v, want source model and nothing dropped", res)
	}
	req := lastChat(t, s)
	rf := req.ResponseFormat
	if rf == nil || rf.Type != "json_schema" || rf.JSONSchema == nil || rf.JSONSchema.Name != "review" || !rf.JSONSchema.Strict {
		t.Fatalf("response_format = %+v, want strict json_schema named review", rf)
	}
	// Strict mode: every object closed, every property required, the
	// optional one nullable. (The fake rejects a non-strict schema with 400,
	// so getting here already shows most of it.)
	var sch map[string]any
	if err := json.Unmarshal(rf.JSONSchema.Schema, &sch); err != nil {
		t.Fatal(err)
	}
	item := sch["properties"].(map[string]any)["codeSuggestions"].(map[string]any)["items"].(map[string]any)
	if item["additionalProperties"] != false {
		t.Errorf("item additionalProperties = %v, want false", item["additionalProperties"])
	}
	if req := item["required"].([]any); len(req) != 6 {
		t.Errorf("item required = %v, want all 6 properties", req)
	}
	if typ := item["properties"].(map[string]any)["fix"].(map[string]any)["type"]; !reflect.DeepEqual(typ, []any{"string", "null"}) {
		t.Errorf("optional fix type = %v, want [string null]", typ)
	}
	if res.Usage.PromptTokens == 0 || res.Usage.Attempts != 1 {
		t.Errorf("usage = %+v, want tokens and 1 attempt", res.Usage)
	}
}

func TestStructuredExtractsFromProseFencesAndTrailingCommas(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Text("<think>the user wants {json}</think>Sure! Here is the review:\n```json\n"+
		`{"summary": "one", "codeSuggestions": [{"id": "s1", "file": "a.go", "line": 3, "severity": "low", "message": "m",},],}`+
		"\n```\nLet me know if you need more."))
	g := newGateway(t, s.URL, nil)

	got, res, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if res.Source != llm.SourceModel || got.Summary != "one" || len(got.CodeSuggestions) != 1 || got.CodeSuggestions[0].Line != 3 {
		t.Errorf("got %+v (%s), want the fenced document", got, res.Source)
	}
	if s.CountChat() != 1 {
		t.Errorf("requests = %d, want 1 (no repair needed)", s.CountChat())
	}
}

// TestStructuredReadsCommentedJSON: a reply whose JSON carries // and
// /* */ comments, as some models write, gives its whole document, every
// item, without a repair round; not an inner object of it.
func TestStructuredReadsCommentedJSON(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Text("```json\n{\n  \"summary\": \"two\", // overall\n  \"codeSuggestions\": [\n"+
		`    {"id": "s1", "file": "a.go", "line": 3, "severity": "low", "message": "see http://example.com/a"}, /* first */`+"\n"+
		`    {"id": "s2", "file": "b.go", "line": 9, "severity": "high", "message": "m"} // second`+"\n  ]\n}\n```"))
	g := newGateway(t, s.URL, nil)

	got, res, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if res.Source != llm.SourceModel || got.Summary != "two" || len(got.CodeSuggestions) != 2 || got.CodeSuggestions[0].Message != "see http://example.com/a" {
		t.Errorf("got %+v (%s, %v), want the whole commented document", got, res.Source, res.Err)
	}
	if s.CountChat() != 1 {
		t.Errorf("requests = %d, want 1 (no repair needed)", s.CountChat())
	}
}

type Scores struct {
	Score      int     `json:"score"`
	Confidence float64 `json:"confidence"`
	Relevant   bool    `json:"relevant"`
	Note       string  `json:"note,omitempty"`
}

func TestStructuredCoercesScalarsSentAsStrings(t *testing.T) {
	s := newServer(t)
	// Weak models quote numbers and booleans, and send null for what they
	// leave out.
	s.On(llmtest.Any(), llmtest.Text(`{"score": "42", "confidence": "3.5", "relevant": "true", "note": null}`))
	g := newGateway(t, s.URL, nil)

	got, res, err := llm.Structured[Scores](context.Background(), g, llm.StructuredRequest{ChatRequest: chatRequest("score it")}, nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	want := Scores{Score: 42, Confidence: 3.5, Relevant: true}
	if got != want || res.Source != llm.SourceModel {
		t.Errorf("got %+v (%s), want %+v from the model", got, res.Source, want)
	}
}

type Ref struct {
	ID    string `json:"id"`
	Count int64  `json:"count"`
}

func TestStructuredKeepsEveryDigitOfLargeIDs(t *testing.T) {
	s := newServer(t)
	// 2^53+1 does not survive float64; an id sent as a number where a
	// string is wanted must keep its digits too.
	s.On(llmtest.Any(), llmtest.Text(`{"id": 9007199254740993, "count": 9007199254740993}`))
	g := newGateway(t, s.URL, nil)
	got, _, err := llm.Structured[Ref](context.Background(), g, llm.StructuredRequest{ChatRequest: chatRequest("ref")}, nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if got.ID != "9007199254740993" || got.Count != 9007199254740993 {
		t.Errorf("got %+v, want every digit kept", got)
	}
}

func TestStructuredDropsOnlyTheBadListItem(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Text(`{"summary": "three", "codeSuggestions": [
		{"id": "s1", "file": "a.go", "line": 1, "severity": "high", "message": "first"},
		{"id": "s2", "file": "a.go", "line": "not a line", "severity": "low", "message": "bad"},
		{"id": "s3", "file": "b.go", "line": 7, "severity": "low", "message": "third"}]}`))
	g := newGateway(t, s.URL, nil)

	got, res, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if res.Source != llm.SourceSalvaged {
		t.Errorf("source = %s, want salvaged", res.Source)
	}
	if len(got.CodeSuggestions) != 2 || got.CodeSuggestions[0].ID != "s1" || got.CodeSuggestions[1].ID != "s3" {
		t.Errorf("kept %+v, want s1 and s3", got.CodeSuggestions)
	}
	if len(res.Dropped) != 1 || !strings.Contains(res.Dropped[0], "codeSuggestions[1]") ||
		!strings.Contains(res.Dropped[0], `"s2"`) || !strings.Contains(res.Dropped[0], "integer") {
		t.Errorf("dropped = %q, want codeSuggestions[1] (id s2) with the type problem", res.Dropped)
	}
	if s.CountChat() != 1 {
		t.Errorf("requests = %d, want 1: salvage needs no repair round", s.CountChat())
	}
}

func TestStructuredAllowedIDsStopMistypedIDs(t *testing.T) {
	s := newServer(t)
	// The model drops a digit of an id: "s12" instead of "s123".
	s.On(llmtest.Any(), llmtest.Text(`{"summary": "x", "codeSuggestions": [
		{"id": "s12", "file": "a.go", "line": 1, "severity": "high", "message": "orphan"},
		{"id": "s124", "file": "a.go", "line": 2, "severity": "low", "message": "ok"}]}`))
	g := newGateway(t, s.URL, nil)
	req := reviewRequest()
	req.Allowed = map[string][]any{"codeSuggestions.id": {"s123", "s124"}}

	got, res, err := llm.Structured[Review](context.Background(), g, req, nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if len(got.CodeSuggestions) != 1 || got.CodeSuggestions[0].ID != "s124" {
		t.Errorf("kept %+v, want only s124", got.CodeSuggestions)
	}
	if len(res.Dropped) != 1 || !strings.Contains(res.Dropped[0], `"s12"`) {
		t.Errorf("dropped = %q, want the item with the mistyped id", res.Dropped)
	}
	// On the wire the ids are an enum, so structured outputs cannot
	// produce a wrong one in the first place.
	if !strings.Contains(string(lastChat(t, s).ResponseFormat.JSONSchema.Schema), `"enum":["s123","s124"]`) {
		t.Errorf("schema sent lacks the id enum: %s", lastChat(t, s).ResponseFormat.JSONSchema.Schema)
	}
}

func TestStructuredRepairRound(t *testing.T) {
	s := newServer(t)
	want := sampleReview()
	s.On(llmtest.Any(), llmtest.WrongSchema(nil), llmtest.JSON(want))
	g := newGateway(t, s.URL, nil)

	got, res, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if res.Source != llm.SourceRepaired || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v (%s), want the repaired review", got, res.Source)
	}
	reqs := s.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d, want 2", len(reqs))
	}
	repair := reqs[1].Chat
	n := len(repair.Messages)
	if repair.Messages[n-2].Role != "assistant" || !strings.Contains(repair.Messages[n-2].Content, "llmtest_wrong_schema") {
		t.Errorf("repair round lacks the previous reply: %+v", repair.Messages[n-2])
	}
	if last := repair.Messages[n-1]; last.Role != "user" || !strings.Contains(last.Content, "missing properties") {
		t.Errorf("repair prompt %q lacks the validation error", last.Content)
	}
	if res.Usage.Attempts != 2 || res.Usage.Calls != 2 {
		t.Errorf("usage = %+v, want both calls summed", res.Usage)
	}
}

func TestStructuredFallbackWhenRepairFails(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.WrongSchema(nil))
	g := newGateway(t, s.URL, nil)

	var gotErr error
	got, res, err := llm.Structured(context.Background(), g, reviewRequest(), func(err error) Review {
		gotErr = err
		return Review{Summary: "AI review unavailable"}
	})
	if err != nil {
		t.Fatalf("Structured with a fallback returned an error: %v", err)
	}
	if got.Summary != "AI review unavailable" || res.Source != llm.SourceFallback {
		t.Errorf("got %+v (%s), want the fallback", got, res.Source)
	}
	if res.Err == nil || gotErr == nil || !errors.Is(res.Err, llm.ErrInvalidReply) {
		t.Errorf("result err = %v, fallback err = %v; want ErrInvalidReply", res.Err, gotErr)
	}
	if s.CountChat() != 2 {
		t.Errorf("requests = %d, want 2 (one repair round, no more)", s.CountChat())
	}

	// Without a fallback the caller gets the error.
	_, _, err = llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if !errors.Is(err, llm.ErrInvalidReply) {
		t.Errorf("err = %v, want ErrInvalidReply", err)
	}
}

func TestStructuredTruncatedReplyIsRepaired(t *testing.T) {
	s := newServer(t)
	want := sampleReview()
	s.On(llmtest.Any(), llmtest.Truncated(want), llmtest.JSON(want))
	g := newGateway(t, s.URL, nil)

	got, res, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if res.Source != llm.SourceRepaired || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v (%s), want the repaired review", got, res.Source)
	}
	if last := lastChat(t, s).LastMessage(); !strings.Contains(last.Content, "cut off") {
		t.Errorf("repair prompt %q does not say the reply was cut off", last.Content)
	}
}

func TestStructuredFallbackOnTransportError(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.ServerError())
	g := newGateway(t, s.URL, func(c *llm.Config) { c.MaxRetries = 1 })

	got, res, err := llm.Structured(context.Background(), g, reviewRequest(), func(error) Review { return Review{Summary: "offline"} })
	if err != nil || got.Summary != "offline" || res.Source != llm.SourceFallback || res.Err == nil {
		t.Errorf("got %+v, %+v, %v; want the fallback with the cause in Result.Err", got, res, err)
	}
	if res.Usage.Attempts != 2 || res.Usage.Failures != 1 {
		t.Errorf("usage = %+v, want the failed call's 2 attempts", res.Usage)
	}
}

func TestStructuredCancelledReturnsTheContextError(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.Reply{Hang: true})
	g := newGateway(t, s.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	called := false
	_, res, err := llm.Structured(ctx, g, reviewRequest(), func(error) Review { called = true; return Review{} })
	if !errors.Is(err, context.DeadlineExceeded) || called || res.Source != "" {
		t.Errorf("err = %v, fallback called %v, source %q; want the caller's deadline and no value", err, called, res.Source)
	}
}

func TestJSONSchemaRejectedFallsBackToJSONObject(t *testing.T) {
	s := newServer(t)
	s.RejectJSONSchema(true)
	want := sampleReview()
	s.On(llmtest.SchemaName("review"), llmtest.JSON(want))
	g := newGateway(t, s.URL, nil)

	got, res, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if !reflect.DeepEqual(got, want) || res.Source != llm.SourceModel {
		t.Errorf("got %+v (%s)", got, res.Source)
	}
	reqs := s.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d, want 2 (json_schema rejected, then json_object)", len(reqs))
	}
	if rf := reqs[0].Chat.ResponseFormat; rf == nil || rf.Type != "json_schema" {
		t.Errorf("first request format = %+v, want json_schema", rf)
	}
	second := reqs[1].Chat
	if rf := second.ResponseFormat; rf == nil || rf.Type != "json_object" {
		t.Errorf("second request format = %+v, want json_object", rf)
	}
	if sys := second.Messages[0]; sys.Role != "system" || !strings.Contains(sys.Content, `"codeSuggestions"`) ||
		!strings.HasPrefix(sys.Content, "You review Go code") {
		t.Errorf("system message %q should keep the original text and carry the schema", sys.Content)
	}
	if len(second.Messages) != 2 {
		t.Errorf("messages = %d, want 2 (schema appended to the existing system message)", len(second.Messages))
	}

	// The gateway remembers: the next call goes straight to json_object.
	s.Reset()
	s.On(llmtest.SchemaName("review"), llmtest.JSON(want))
	if _, _, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil); err != nil {
		t.Fatalf("second Structured: %v", err)
	}
	reqs = s.ChatRequests()
	if len(reqs) != 1 || reqs[0].Chat.ResponseFormat == nil || reqs[0].Chat.ResponseFormat.Type != "json_object" {
		t.Errorf("second call made %d requests (first format %+v), want 1 json_object request", len(reqs), reqs[0].Chat.ResponseFormat)
	}
}

func TestJSONObjectRejectedTooSendsNoResponseFormat(t *testing.T) {
	s := newServer(t)
	s.RejectJSONSchema(true)
	isJSONObject := func(r *llmtest.ChatRequest) bool {
		return r.ResponseFormat != nil && r.ResponseFormat.Type == "json_object"
	}
	s.On(isJSONObject, llmtest.Reply{Status: 400, ErrorMessage: "response_format type json_object is not supported"})
	want := sampleReview()
	s.On(llmtest.Any(), llmtest.Text("Here it is: "+mustJSON(t, want)))
	g := newGateway(t, s.URL, nil)

	got, _, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if err != nil {
		t.Fatalf("Structured: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	reqs := s.ChatRequests()
	if len(reqs) != 3 || reqs[2].Chat.ResponseFormat != nil {
		t.Fatalf("requests = %d, want 3 ending with no response_format", len(reqs))
	}
	if !strings.Contains(reqs[2].Chat.Messages[0].Content, "JSON Schema") {
		t.Errorf("plain request lacks the schema in its system prompt")
	}
}

func TestStructuredCache(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.JSON(sampleReview()))
	cache := newMemCache()
	g := newGateway(t, s.URL, nil, llm.WithCache(cache))

	first, res, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if err != nil || res.Source != llm.SourceModel {
		t.Fatalf("first: %v %s", err, res.Source)
	}
	second, res, err := llm.Structured[Review](context.Background(), g, reviewRequest(), nil)
	if err != nil {
		t.Fatalf("second: %v", err)
	}
	if res.Source != llm.SourceCache || !res.Usage.Cached || !reflect.DeepEqual(first, second) {
		t.Errorf("second = %+v (%s), want the cached copy", second, res.Source)
	}
	if s.CountChat() != 1 {
		t.Errorf("requests = %d, want 1: a cache hit makes no HTTP request", s.CountChat())
	}

	req := reviewRequest()
	req.PromptVersion = 2
	if _, res, _ := llm.Structured[Review](context.Background(), g, req, nil); res.Source != llm.SourceModel {
		t.Errorf("new prompt version: source %s, want a miss", res.Source)
	}
	req = reviewRequest()
	req.NoCache = true
	if _, res, _ := llm.Structured[Review](context.Background(), g, req, nil); res.Source != llm.SourceModel {
		t.Errorf("NoCache: source %s, want the model", res.Source)
	}
	if s.CountChat() != 3 {
		t.Errorf("requests = %d, want 3", s.CountChat())
	}
}

func TestFallbackRepliesAreNotCached(t *testing.T) {
	s := newServer(t)
	s.On(llmtest.Any(), llmtest.WrongSchema(nil))
	cache := newMemCache()
	g := newGateway(t, s.URL, nil, llm.WithCache(cache))
	_, res, _ := llm.Structured(context.Background(), g, reviewRequest(), func(error) Review { return Review{} })
	if res.Source != llm.SourceFallback || cache.puts != 0 {
		t.Errorf("source %s, cache puts %d; want a fallback that is not cached", res.Source, cache.puts)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExtractJSON(t *testing.T) {
	cases := []struct {
		name, in, want string
		array          bool
	}{
		{"plain", `{"a":1}`, `{"a":1}`, false},
		{"fenced", "```json\n{\"a\":1}\n```", `{"a":1}`, false},
		{"unlabelled fence", "text\n```\n{\"a\":1}\n```", `{"a":1}`, false},
		{"prose", `The answer is {"a": [1, 2]} as requested.`, `{"a": [1, 2]}`, false},
		{"bracket in prose first", `See [notes]: {"a":1}`, `{"a":1}`, false},
		{"trailing commas", `{"a":[1,2,],}`, `{"a":[1,2]}`, false},
		{"comma in string kept", `{"a":"x,}",}`, `{"a":"x,}"}`, false},
		{"array wanted", `Items: [{"a":1}]`, `[{"a":1}]`, true},
		{"think block", `<think>{"no":1}</think>{"a":1}`, `{"a":1}`, false},
		{"line comments", "{\"a\": 1, // the first\n\"b\": {\"c\": 2} // nested\n}", "{\"a\": 1, \n\"b\": {\"c\": 2} \n}", false},
		{"block comment", `{/* note */"a": [1, /* two */ 2]}`, `{ "a": [1,   2]}`, false},
		{"comment markers in strings kept", `{"url": "http://x/*y*/", "p": "a//b"} // end`, `{"url": "http://x/*y*/", "p": "a//b"}`, false},
		{"comment after the last item", "{\"a\": [1,\n// 2 was dropped\n]}", "{\"a\": [1\n\n]}", false},
	}
	for _, c := range cases {
		got, err := llm.ExtractJSON(c.in, c.array)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	for _, in := range []string{"", "no json here", `{"a": [1, 2`} {
		if got, err := llm.ExtractJSON(in, false); err == nil {
			t.Errorf("%q: got %q, want an error", in, got)
		}
	}
}
