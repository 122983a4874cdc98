package llm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := map[string]time.Duration{
		"":      0,
		"2":     2 * time.Second,
		" 1.5 ": 1500 * time.Millisecond,
		"0":     0,
		"-3":    0,
		"soon":  0,
		now.Add(7 * time.Second).Format(http.TimeFormat):  7 * time.Second,
		now.Add(-7 * time.Second).Format(http.TimeFormat): 0,
	}
	for in, want := range cases {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestBackoffIsJitteredAndCapped(t *testing.T) {
	g := &Gateway{backoffBase: 500 * time.Millisecond, backoffCap: 20 * time.Second}
	for retry := range 10 {
		limit := min(20*time.Second, 500*time.Millisecond<<retry)
		seen := map[time.Duration]bool{}
		for range 50 {
			d := g.backoff(retry)
			if d < 0 || d > limit {
				t.Fatalf("backoff(%d) = %s, outside [0, %s]", retry, d, limit)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("backoff(%d) is not jittered: %d distinct values", retry, len(seen))
		}
	}
}

func TestFormatRejection(t *testing.T) {
	cases := []struct {
		status int
		msg    string
		param  string
		want   bool
	}{
		{400, "response_format type json_schema is not supported", "", true},
		{400, "Invalid value: 'json_schema'", "response_format", true},
		{400, "Structured outputs are not available for this model", "", true},
		{422, "json schema unsupported", "", true},
		{500, `response_format type must be one of "text" or "json_object", but got: json_schema`, "", true},
		{400, "temperature is not supported with this model", "", false},
		{400, "context length exceeded", "", false},
		{500, "llmtest: no script matches response_format=json_schema(review)", "", false},
		{401, "response_format", "", false},
	}
	for _, c := range cases {
		if got := isFormatRejection(&StatusError{StatusCode: c.status, Message: c.msg, Param: c.param}); got != c.want {
			t.Errorf("%d %q: %v, want %v", c.status, c.msg, got, c.want)
		}
	}
}

type withMap struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

type nested struct {
	Items []struct {
		A string `json:"a"`
		B *int   `json:"b,omitempty"`
	} `json:"items"`
}

func TestStrictSchema(t *testing.T) {
	info, err := schemaFor[withMap](nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.strict {
		t.Error("a schema with a free-form map cannot be strict")
	}
	info, err = schemaFor[nested](nil)
	if err != nil {
		t.Fatal(err)
	}
	if !info.strict {
		t.Fatal("nested structs should be strict")
	}
	var wire map[string]any
	if err := json.Unmarshal(info.wire, &wire); err != nil {
		t.Fatal(err)
	}
	item := wire["properties"].(map[string]any)["items"].(map[string]any)["items"].(map[string]any)
	if item["additionalProperties"] != false || len(item["required"].([]any)) != 2 {
		t.Errorf("item schema not strict: %v", item)
	}
	// Validation stays lenient: an extra property and a null for the
	// optional one are fine.
	if _, _, err := info.check(`{"items": [{"a": "x", "b": null, "extra": 1}]}`); err != nil {
		t.Errorf("lenient check: %v", err)
	}
	if info2, _ := schemaFor[nested](nil); info2 != info {
		t.Error("schema info is not cached per type")
	}
}

func TestTruncateLines(t *testing.T) {
	text := strings.Repeat("0123456789\n", 100)
	out, kept, total := truncateLines("fake", text, 100)
	if total != 101 || kept == 0 || kept >= total || CountTokens("fake", out) > 100 || !strings.Contains(out, "lines trimmed") {
		t.Errorf("kept %d of %d, %d tokens: %q", kept, total, CountTokens("fake", out), out)
	}
	// One enormous line is cut by bytes.
	out, kept, _ = truncateLines("fake", strings.Repeat("é", 5000), 100)
	if kept != 0 || CountTokens("fake", out) > 100 || !strings.Contains(out, "é") || !strings.HasSuffix(out, "context window]") {
		t.Errorf("long line: %d tokens: %q", CountTokens("fake", out), out)
	}
}

func TestDefaultPromptsRender(t *testing.T) {
	g, err := New(Config{BaseURL: "http://x/v1"})
	if err != nil {
		t.Fatal(err)
	}
	sch, _ := schemaFor[nested](nil)
	fb := g.fallbackPrompt(sch, "nested")
	if !strings.Contains(fb, "JSON") || !strings.Contains(fb, `"items"`) || !strings.Contains(fb, "nested") {
		t.Errorf("fallback prompt: %q", fb)
	}
	rp := g.repairPrompt(sch, "nested", &ChatResponse{Content: "{"}, errTruncated)
	if !strings.Contains(rp, "cut off") {
		t.Errorf("repair prompt: %q", rp)
	}
	// A custom renderer wins; a failing one falls back to the built-in text.
	g.prompts = func(name string, _ any) (string, error) { return "custom " + name, nil }
	if got := g.fallbackPrompt(sch, "nested"); got != "custom json_object_fallback" {
		t.Errorf("custom prompt: %q", got)
	}
	g.prompts = func(string, any) (string, error) { return "", http.ErrNoLocation }
	if got := g.fallbackPrompt(sch, "nested"); got != fb {
		t.Errorf("failing renderer: %q", got)
	}
}
