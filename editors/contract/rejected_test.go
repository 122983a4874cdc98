package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

// A value the validation refuses is kept beside the problem, so that what
// the user set can be named after it was dropped.
func TestRejectedValuesAreKept(t *testing.T) {
	r := Resolve(env(nil), []byte(`{"llm":{"baseUrl":"127.0.0.1:8089/v1","model":"m"},"review":{"trigger":"sometimes"},"rules":{"scope":"file"}}`), nil)
	if r.Settings.LLM.BaseURL != "" || r.Rejected["llm.baseUrl"] != "127.0.0.1:8089/v1" {
		t.Errorf("llm.baseUrl %q, rejected %v", r.Settings.LLM.BaseURL, r.Rejected)
	}
	if r.Rejected["review.trigger"] != "sometimes" {
		t.Errorf("rejected %v lacks review.trigger", r.Rejected)
	}
	if _, ok := r.Rejected["rules.scope"]; ok || len(r.Rejected) != 2 {
		t.Errorf("rejected %v, want only the two bad values", r.Rejected)
	}
	if good := Resolve(env(nil), nil, nil); good.Rejected != nil {
		t.Errorf("defaults rejected %v", good.Rejected)
	}
}

// A blank inside a base URL is no endpoint's: url.Parse accepts it, the
// validation does not. (Blanks around it are trimmed where it is set.)
func TestBaseURLWithWhitespace(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:8089/ v1", "http://127.0.0.1:8089/\tv1", "http://127.0.0.1:8089/\nv1"} {
		r := Resolve(env(nil), []byte(`{"llm":{"baseUrl":`+quote(u)+`,"model":"m"}}`), nil)
		if r.Settings.LLMConfigured() || !strings.Contains(strings.Join(r.Problems, "\n"), "is not an http(s) URL") {
			t.Errorf("%q: configured %v, problems %q", u, r.Settings.LLMConfigured(), r.Problems)
		}
	}
	if r := Resolve(env(nil), []byte(`{"llm":{"baseUrl":"http://127.0.0.1:8089/v1","model":"m"}}`), nil); !r.Settings.LLMConfigured() || len(r.Problems) != 0 {
		t.Errorf("a good URL: problems %q", r.Problems)
	}
}

// A baseRef with a blank cannot be a revision.
func TestBaseRefWithWhitespace(t *testing.T) {
	r := Resolve(env(nil), []byte(`{"baseRef":"origin/ main"}`), nil)
	if r.Settings.BaseRef != "HEAD" || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], `baseRef "origin/ main" is not a git revision`) {
		t.Errorf("baseRef %q, problems %q", r.Settings.BaseRef, r.Problems)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestRefusedBaseURLHidesItsPassword: a base URL refused for a typo is
// named in the problem, the status and doctor without the password typed
// into it.
func TestRefusedBaseURLHidesItsPassword(t *testing.T) {
	for _, u := range []string{"htps://alice:s3cretPW@llm.example.com/v1", "alice:s3cretPW@llm.example.com/v1", "http//alice:s3cretPW@llm.example.com/v1",
		"https://alice:s3cretPW/dEf+g==@llm.example.com/v1", "http://alice:s3cretPW and more@llm.example.com/v1"} {
		r := Resolve(env(nil), []byte(`{"llm":{"baseUrl":`+quote(u)+`,"model":"m"}}`), nil)
		all := strings.Join(r.Problems, "\n") + "\n" + r.WhyNoModel()
		if strings.Contains(all, "s3cretPW") || !strings.Contains(all, "alice:xxxxx@llm.example.com") {
			t.Errorf("%q: %s", u, all)
		}
	}
	for _, u := range []string{"http://llm.example.com/v1", "http://llm.example.com/v1/models/@latest", "http://host:8080/v1/@x", "alice@llm.example.com/v1"} {
		if got := RedactURL(u); got != u {
			t.Errorf("a URL without a password changed: %q → %q", u, got)
		}
	}
}
