package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// CheckReport is what `kodyls doctor` shows about the LLM endpoint.
type CheckReport struct {
	Endpoint            string
	Model               string
	Reachable           bool
	Models              []string // served models, as listed by /models
	ModelListed         bool
	StructuredOK        bool // a trivial structured request returned valid JSON
	JSONSchemaSupported bool // the endpoint accepted response_format json_schema
	Latency             time.Duration
	// Problems say exactly what to fix; a report without problems is
	// healthy.
	Problems []string
	// Notes are advisories that need no action, e.g. a fallback in use.
	Notes []string

	// modelsNotFound: /models answered 404, so a 404 of the chat request
	// too says the base URL is wrong, not the model.
	modelsNotFound bool
}

// okReply is the schema of the health-check request.
type okReply struct {
	OK bool `json:"ok"`
}

// Check probes the endpoint for `kodyls doctor`: is it reachable, is the
// key accepted, is model served, does a structured request work and with
// which response format. model defaults to the configured model. Check
// bypasses the circuit breaker and retries, because the doctor must show
// the endpoint's state now; what it learns about response formats is kept
// for later calls.
func (g *Gateway) Check(ctx context.Context, model string) CheckReport {
	rep := CheckReport{Endpoint: g.endpoint, Model: model}
	if rep.Model == "" {
		rep.Model = g.cfg.Model
	}
	model = rep.Model

	info := &respInfo{}
	lctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	start := time.Now()
	list, err := g.client.ListModels(withRespInfo(lctx, info))
	timedOut := errors.Is(lctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	listed := false
	if err != nil {
		if ctx.Err() != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("the check of %s was interrupted: %v", g.endpoint, ctx.Err()))
			return rep
		}
		ce := g.classify(err, info, timedOut, model)
		var se *StatusError
		switch {
		case errors.Is(ce, ErrKeyNotSendable):
			rep.Problems = append(rep.Problems, ce.Error())
			return rep
		case ce.reason == reasonNotAPI:
			// Something answers there, but a web page, not the API.
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s answers, but not as an OpenAI-compatible API (got %s from /models, not JSON): %s",
				g.endpoint, info.notAPI(), BaseURLAdvice))
			return rep
		}
		if !errors.As(ce, &se) {
			rep.Problems = append(rep.Problems, fmt.Sprintf(
				"the LLM endpoint %s is not reachable (%s): start the server (e.g. `ollama serve`, or llama.cpp's `llama-server --port 8080`) or point KODYLS_LLM_BASE_URL at a running OpenAI-compatible endpoint",
				g.endpoint, ce.reason))
			return rep
		}
		rep.Reachable = true
		switch se.StatusCode {
		case 401, 403:
			rep.Problems = append(rep.Problems, fmt.Sprintf("%d from %s/models (%s): set KODYLS_LLM_API_KEY to a valid API key", se.StatusCode, g.endpoint, se.Message))
			return rep
		case 404:
			if saysBadURL(se.Message) {
				rep.Problems = append(rep.Problems, badBaseURL(g.endpoint, "/models", se.Message))
				return rep
			}
			rep.modelsNotFound = true
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s does not list models (404 on /models); if chat calls fail too, check that the base URL ends in /v1", g.endpoint))
		default:
			rep.Notes = append(rep.Notes, fmt.Sprintf("listing models failed: %v", se))
		}
	} else {
		rep.Reachable, listed = true, true
		rep.Latency = time.Since(start)
		for _, m := range list.Models {
			rep.Models = append(rep.Models, m.ID)
		}
		slices.Sort(rep.Models)
	}

	if model == "" {
		// The configuration reports the missing model (contract.Resolve);
		// Models tells which names the endpoint accepts.
		return rep
	}
	notListed := ""
	if listed {
		rep.ModelListed = modelListed(model, rep.Models)
		switch {
		case len(rep.Models) == 0:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s lists no models", g.endpoint))
		case !rep.ModelListed:
			notListed = fmt.Sprintf("model %q is not served by %s;%s — set KODYLS_LLM_MODEL", model, g.endpoint, available(rep.Models))
		}
	}

	g.checkStructured(ctx, model, &rep)
	if notListed != "" {
		if rep.StructuredOK {
			// llama.cpp's server, for one, answers for any model name.
			rep.Notes = append(rep.Notes, fmt.Sprintf("model %q is not listed by %s, but the endpoint answered for it", model, g.endpoint))
		} else {
			rep.Problems = append([]string{notListed}, rep.Problems...)
		}
	}
	return rep
}

// checkStructured makes one small structured request.
func (g *Gateway) checkStructured(ctx context.Context, model string, rep *CheckReport) {
	sch, err := schemaFor[okReply](nil)
	if err != nil {
		rep.Problems = append(rep.Problems, fmt.Sprintf("internal error: %v", err))
		return
	}
	p := &prepared{
		feature: "doctor",
		model:   model,
		msgs: []Message{
			{Role: "system", Content: "You are a health check. Answer in JSON."},
			{Role: "user", Content: `Reply with the JSON object {"ok": true}.`},
		},
		maxTokens:  64,
		noRetry:    true,
		probeLevel: true,
	}
	start := time.Now()
	resp, n, err := g.attempts(ctx, p, sch, "health_check")
	rep.Latency = time.Since(start)
	u := Usage{Feature: p.feature, Model: model, Attempts: n, Latency: rep.Latency, At: start}
	if err != nil {
		u.Err = err.Error()
	}
	g.record(ctx, u)
	rep.JSONSchemaSupported = err == nil && p.usedLevel == levelJSONSchema
	if err == nil {
		// What worked now is what later calls should use, also when an
		// upgraded endpoint accepts json_schema again.
		g.mu.Lock()
		g.formats[model] = p.usedLevel
		g.mu.Unlock()
	}
	if err != nil {
		var se *StatusError
		switch {
		case ctx.Err() != nil:
			rep.Problems = append(rep.Problems, fmt.Sprintf("the check of %s was interrupted: %v", g.endpoint, ctx.Err()))
		case errors.As(err, &se) && (se.StatusCode == 401 || se.StatusCode == 403):
			rep.Problems = append(rep.Problems, fmt.Sprintf("%d from %s (%s): set KODYLS_LLM_API_KEY to a valid API key", se.StatusCode, g.endpoint, se.Message))
		case errors.As(err, &se) && se.StatusCode == 404 && (saysBadURL(se.Message) || rep.modelsNotFound && !mentionsModel(se.Message)):
			// Neither /models nor the chat is there: the path is wrong.
			rep.Notes = slices.DeleteFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "404 on /models") })
			rep.Problems = append(rep.Problems, badBaseURL(g.endpoint, "/models and /chat/completions", se.Message))
		case errors.As(err, &se) && se.StatusCode == 404:
			rep.Problems = append(rep.Problems, fmt.Sprintf("model %q is not served by %s (404: %s);%s — set KODYLS_LLM_MODEL", model, g.endpoint, se.Message, available(rep.Models)))
		case errors.Is(err, context.DeadlineExceeded) || strings.Contains(shortReason(err), "no answer within"):
			rep.Problems = append(rep.Problems, fmt.Sprintf("model %q did not answer within %s: it may still be loading, try again; on slow hardware raise the timeout or choose a smaller model", model, g.cfg.Timeout))
		case errors.Is(err, ErrKeyNotSendable), strings.Contains(shortReason(err), reasonNotAPI):
			rep.Problems = append(rep.Problems, unwrapCall(err).Error())
		default:
			rep.Problems = append(rep.Problems, fmt.Sprintf("a test request to model %q failed: %v", model, err))
		}
		return
	}
	out := fromWire(resp)
	if out.FinishReason == "length" {
		rep.Problems = append(rep.Problems, fmt.Sprintf("model %q was cut off after 64 tokens on a trivial request: check the endpoint's max tokens and chat template", model))
		return
	}
	if _, _, err := sch.check(out.Content); err != nil {
		rep.Problems = append(rep.Problems, fmt.Sprintf("model %q did not return valid JSON for a trivial schema (%v): choose a stronger model or check the endpoint's chat template", model, err))
		return
	}
	rep.StructuredOK = true
	switch p.usedLevel {
	case levelJSONObject:
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s does not support json_schema structured outputs; kodyls uses json_object mode with the schema in the prompt (a newer llama.cpp, vLLM or Ollama enforces the schema)", g.endpoint))
	case levelNone:
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s supports no response_format; kodyls puts the schema in the prompt and validates replies (a newer llama.cpp, vLLM or Ollama enforces the schema)", g.endpoint))
	}
}

// saysBadURL reports whether a 404's message says the path is unknown, as
// OpenAI and the servers that copy it do ("Invalid URL (POST /v1/v1/…)").
func saysBadURL(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "invalid url") || strings.Contains(m, "unknown url") || strings.Contains(m, "no route")
}

// mentionsModel reports whether a 404's message is about a model, as
// servers word an unknown model ("model 'x' not found, try pulling it").
func mentionsModel(msg string) bool { return strings.Contains(strings.ToLower(msg), "model") }

// badBaseURL is the problem of a base URL whose API paths are not found,
// with a hint for the usual slips.
func badBaseURL(endpoint, paths, msg string) string {
	hint := ""
	path := endpoint
	if i := strings.Index(endpoint, "://"); i >= 0 {
		if j := strings.Index(endpoint[i+3:], "/"); j >= 0 {
			path = endpoint[i+3+j:]
		} else {
			path = ""
		}
	}
	switch {
	case strings.Contains(path, "/chat/completions") || strings.HasSuffix(path, "/completions"):
		hint = " (without /chat/completions: kodyls adds the paths)"
	case strings.Contains(path, "/v1/v1"):
		hint = " (/v1 appears twice)"
	case !strings.HasSuffix(path, "/v1"):
		hint = " (it does not end in /v1)"
	}
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("the base URL %s is not the API root%s: 404 on %s (%s); %s", endpoint, hint, paths, msg, BaseURLAdvice)
}

// unwrapCall returns the classified error of an attempt inside err (its
// message says what to do without the retry loop's words), else err.
func unwrapCall(err error) error {
	var ce *callError
	if errors.As(err, &ce) {
		return ce.err
	}
	return err
}

// modelListed reports whether model is among ids. Ollama lists "name:tag"
// and resolves a bare name to ":latest".
func modelListed(model string, ids []string) bool {
	for _, id := range ids {
		if id == model || id == model+":latest" || strings.TrimSuffix(id, ":latest") == model {
			return true
		}
	}
	return false
}

// available renders " available: a, b, c" (at most 12), or "" for none.
func available(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	shown := ids
	more := ""
	if len(shown) > 12 {
		shown, more = shown[:12], fmt.Sprintf(" and %d more", len(ids)-12)
	}
	return " available: " + strings.Join(shown, ", ") + more
}
