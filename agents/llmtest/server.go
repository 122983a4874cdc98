package llmtest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxBody bounds request bodies; real endpoints reject far smaller ones, and
// a runaway client in a test should fail rather than exhaust memory.
const maxBody = 32 << 20

// Server is a fake OpenAI-compatible endpoint. All methods are safe for
// concurrent use, including while requests are in flight.
type Server struct {
	// URL is the base URL to configure clients with, ending in /v1
	// (e.g. http://127.0.0.1:41234/v1).
	URL string

	hs      *http.Server
	done    chan struct{} // closed by Close: wakes handlers that wait or hang
	created int64         // "created" of the listed models

	inflight sync.WaitGroup

	mu               sync.Mutex
	closed           bool
	scripts          []*Script
	models           []string
	rejectJSONSchema bool
	apiKey           string
	noValidation     bool
	knownModelsOnly  bool
	records          []*Recorded
	changed          chan struct{} // closed and replaced whenever records change
	logf             func(format string, args ...any)
	nextScript       int
}

// Script is a list of replies for the requests a Matcher accepts.
type Script struct {
	srv     *Server
	match   Matcher
	replies []Reply
	times   atomic.Int64
	name    string // guarded by srv.mu
}

// Recorded is one request as the server saw it. Requests still in flight
// have a zero End.
type Recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Chat is the parsed body of a chat completion request; nil for other
	// paths and for bodies that are not valid JSON.
	Chat       *ChatRequest
	Start, End time.Time
	// ClientGone reports that the client closed the connection before the
	// reply was complete (cancellation, timeout).
	ClientGone bool
	// Status is the HTTP status sent (0 when none was: the client left first).
	Status int
	// Script names the script that answered, "" when none did.
	Script string
}

// NewServer starts a server on a free port of 127.0.0.1. Like
// httptest.NewServer it panics if it cannot listen, which only happens when
// the machine has no loopback interface.
func NewServer() *Server {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("llmtest: failed to listen on a port: %v", err))
	}
	return s
}

// Listen starts a server on addr ("127.0.0.1:8089", ":0"). An unspecified
// host in the URL is replaced by localhost so the URL is usable as is.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	host := "localhost"
	port := ""
	if ta, ok := ln.Addr().(*net.TCPAddr); ok {
		port = fmt.Sprint(ta.Port)
		if !ta.IP.IsUnspecified() {
			host = ta.IP.String()
		}
	}
	s := &Server{
		URL:     "http://" + net.JoinHostPort(host, port) + "/v1",
		done:    make(chan struct{}),
		created: time.Now().Unix(),
		models:  []string{"fake-model"},
		changed: make(chan struct{}),
	}
	s.hs = &http.Server{Handler: http.HandlerFunc(s.handle), ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = s.hs.Serve(ln) }() // returns ErrServerClosed on Close
	return s, nil
}

// Close stops the server. Hanging and waiting handlers are released and
// their connections dropped; Close returns once every handler has returned.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	_ = s.hs.Close()
	s.inflight.Wait()
}

// On adds a script: matching requests get replies in order, and the last
// reply repeats once the list is exhausted (no replies means an empty
// successful answer). Scripts are tried in the order they were added; the
// first that matches answers. A nil m matches everything.
func (s *Server) On(m Matcher, replies ...Reply) *Script {
	if m == nil {
		m = Any()
	}
	if len(replies) == 0 {
		replies = []Reply{{}}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextScript++
	sc := &Script{srv: s, match: m, replies: slices.Clone(replies), name: fmt.Sprintf("#%d", s.nextScript)}
	s.scripts = append(s.scripts, sc)
	return sc
}

// Times reports how many requests the script answered.
func (sc *Script) Times() int { return int(sc.times.Load()) }

// Named sets the name used in logs and Recorded.Script (default "#N", N
// counting scripts added since the server started).
func (sc *Script) Named(name string) *Script {
	sc.srv.mu.Lock()
	sc.name = name
	sc.srv.mu.Unlock()
	return sc
}

// Name returns the script's name.
func (sc *Script) Name() string {
	sc.srv.mu.Lock()
	defer sc.srv.mu.Unlock()
	return sc.name
}

// SetModels replaces the list served by GET /v1/models.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	s.models = slices.Clone(ids)
	s.mu.Unlock()
}

// RejectJSONSchema makes requests with response_format type json_schema
// fail with 400, as servers without structured outputs answer, so that a
// client's fallback to json_object can be tested.
func (s *Server) RejectJSONSchema(on bool) {
	s.mu.Lock()
	s.rejectJSONSchema = on
	s.mu.Unlock()
}

// RequireAPIKey makes every request without "Authorization: Bearer key"
// fail with 401; "" turns the check off again.
func (s *Server) RequireAPIKey(key string) {
	s.mu.Lock()
	s.apiKey = key
	s.mu.Unlock()
}

// ValidateRequests turns OpenAI's request checks on (the default) or off.
// When on, chat requests are rejected with 400 and OpenAI's wording for: a
// missing model, no messages, an unknown role, tool messages that do not
// answer the preceding assistant tool_calls (or calls left unanswered), bad
// tool names, json_object mode without the word "json" in the messages, a
// json_schema without a name, a strict schema (response format or tool)
// whose objects do not set additionalProperties false and require every
// property, temperature outside [0, 2], and stream_options without stream. Turn them off to imitate laxer servers
// (Ollama, llama.cpp) that accept such requests.
func (s *Server) ValidateRequests(on bool) {
	s.mu.Lock()
	s.noValidation = !on
	s.mu.Unlock()
}

// RequireKnownModel makes chat requests for a model not in the SetModels
// list fail with 404 model_not_found, as OpenAI and vLLM do. Off by
// default so tests can use any model name.
func (s *Server) RequireKnownModel(on bool) {
	s.mu.Lock()
	s.knownModelsOnly = on
	s.mu.Unlock()
}

// SetLogf makes the server log one line per finished request (method, path,
// model, script, status, latency). t.Logf and log.Printf both fit; nil
// turns logging off.
func (s *Server) SetLogf(logf func(format string, args ...any)) {
	s.mu.Lock()
	s.logf = logf
	s.mu.Unlock()
}

// Requests returns every request so far, in arrival order.
func (s *Server) Requests() []Recorded {
	return s.snapshot(func(*Recorded) bool { return true })
}

// ChatRequests returns the requests whose body parsed as a chat completion.
func (s *Server) ChatRequests() []Recorded {
	return s.snapshot(func(r *Recorded) bool { return r.Chat != nil })
}

// CountChat returns len(ChatRequests()).
func (s *Server) CountChat() int { return s.count(func(r *Recorded) bool { return r.Chat != nil }) }

// Disconnects counts requests whose client went away before the reply was
// complete.
func (s *Server) Disconnects() int { return s.count(func(r *Recorded) bool { return r.ClientGone }) }

// WaitRequests waits until at least n requests (of any kind) have arrived,
// and reports whether they did within timeout.
func (s *Server) WaitRequests(n int, timeout time.Duration) bool {
	return s.waitFor(func() bool { return len(s.records) >= n }, timeout)
}

// WaitSchema waits until n chat requests asking for the structured output
// schema name have arrived, and reports whether they did within timeout.
// It reads the name from the raw body, which is recorded as the request
// arrives (the parsed Chat is filled in a moment later).
func (s *Server) WaitSchema(name string, n int, timeout time.Duration) bool {
	return s.waitFor(func() bool {
		seen := 0
		for _, r := range s.records {
			var body struct {
				ResponseFormat struct {
					JSONSchema struct {
						Name string `json:"name"`
					} `json:"json_schema"`
				} `json:"response_format"`
			}
			if json.Unmarshal(r.Body, &body) == nil && body.ResponseFormat.JSONSchema.Name == name {
				seen++
			}
		}
		return seen >= n
	}, timeout)
}

// WaitDisconnects waits until Disconnects() >= n, and reports whether that
// happened within timeout.
func (s *Server) WaitDisconnects(n int, timeout time.Duration) bool {
	return s.waitFor(func() bool {
		c := 0
		for _, r := range s.records {
			if r.ClientGone {
				c++
			}
		}
		return c >= n
	}, timeout)
}

// Reset forgets all scripts and recorded requests; settings (models, API
// key, JSON-schema rejection, validation) are kept.
func (s *Server) Reset() {
	s.mu.Lock()
	s.scripts = nil
	s.records = nil
	s.notifyLocked()
	s.mu.Unlock()
}

func (s *Server) snapshot(keep func(*Recorded) bool) []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Recorded
	for _, r := range s.records {
		if keep(r) {
			out = append(out, *r)
		}
	}
	return out
}

func (s *Server) count(keep func(*Recorded) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.records {
		if keep(r) {
			n++
		}
	}
	return n
}

// waitFor evaluates cond under s.mu each time the records change.
func (s *Server) waitFor(cond func() bool, timeout time.Duration) bool {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ok, ch := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-timer.C:
			s.mu.Lock()
			defer s.mu.Unlock()
			return cond()
		}
	}
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// exchange is the state of one request being answered.
type exchange struct {
	s      *Server
	w      http.ResponseWriter
	r      *http.Request
	rec    *Recorded
	status int
	script string
	gone   bool
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	defer s.inflight.Done()

	start := time.Now()
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	rec := &Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Start: start}
	s.mu.Lock()
	s.records = append(s.records, rec)
	s.notifyLocked()
	s.mu.Unlock()

	ex := &exchange{s: s, w: w, r: r, rec: rec}
	w.Header().Set("X-Request-Id", "req_"+randomID(24))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(readErr, &tooBig):
		ex.writeError(&apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error",
			Message: fmt.Sprintf("Request body too large: the limit is %d bytes.", tooBig.Limit)})
	case readErr != nil:
		// The client failed or left while sending the body.
		ex.gone = r.Context().Err() != nil
		ex.writeError(&apiError{Status: http.StatusBadRequest, Type: "invalid_request_error",
			Message: fmt.Sprintf("Could not read the request body: %v", readErr)})
	default:
		ex.route(body)
	}

	s.mu.Lock()
	rec.End = time.Now()
	rec.Status = ex.status
	rec.ClientGone = ex.gone
	rec.Script = ex.script
	logf := s.logf
	s.notifyLocked()
	s.mu.Unlock()
	if logf != nil {
		model := "-"
		if rec.Chat != nil {
			model = rec.Chat.Model
			if model == "" {
				model = `""`
			}
		}
		script := ex.script
		if script == "" {
			script = "-"
		}
		extra := ""
		if ex.gone {
			extra = " client-gone"
		}
		logf("%s %s model=%s script=%s status=%d latency=%.1fms%s",
			r.Method, r.URL.Path, model, script, ex.status, float64(rec.End.Sub(rec.Start))/float64(time.Millisecond), extra)
	}
}

func (ex *exchange) route(body []byte) {
	s, r := ex.s, ex.r
	path := strings.TrimSuffix(r.URL.Path, "/")
	// Chat bodies are parsed before the auth check so that rejected
	// requests are recorded with their content too.
	var (
		req  *ChatRequest
		perr *apiError
	)
	if path == "/v1/chat/completions" && r.Method == http.MethodPost {
		req, perr = parseChatRequest(body)
	}
	s.mu.Lock()
	key := s.apiKey
	ex.rec.Chat = req
	s.mu.Unlock()
	if key != "" {
		if err := checkAuth(r.Header.Get("Authorization"), key); err != nil {
			ex.writeError(err)
			return
		}
	}
	switch {
	case path == "/v1/chat/completions":
		if r.Method != http.MethodPost {
			ex.badMethod()
			return
		}
		if perr != nil {
			ex.writeError(perr)
			return
		}
		ex.chat(req)
	case path == "/v1/models":
		if r.Method != http.MethodGet {
			ex.badMethod()
			return
		}
		ex.listModels()
	case strings.HasPrefix(path, "/v1/models/"):
		if r.Method != http.MethodGet {
			ex.badMethod()
			return
		}
		ex.getModel(strings.TrimPrefix(path, "/v1/models/"))
	default:
		ex.writeError(&apiError{Status: http.StatusNotFound, Type: "invalid_request_error",
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)})
	}
}

func (ex *exchange) badMethod() {
	ex.writeError(&apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
		Message: fmt.Sprintf("Invalid method for URL (%s %s)", ex.r.Method, ex.r.URL.Path)})
}

// checkAuth answers as OpenAI does: a different message for a missing key
// and a wrong one, the latter quoting the key masked.
func checkAuth(header, key string) *apiError {
	token, ok := strings.CutPrefix(header, "Bearer ")
	token = strings.TrimSpace(token)
	if !ok || token == "" {
		return &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error",
			Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys."}
	}
	if token != key {
		return &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
			Message: fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", maskKey(token))}
	}
	return nil
}

func maskKey(k string) string {
	if len(k) <= 8 {
		return strings.Repeat("*", len(k))
	}
	return k[:3] + strings.Repeat("*", 8) + k[len(k)-4:]
}

type wireModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (ex *exchange) listModels() {
	ex.s.mu.Lock()
	ids := slices.Clone(ex.s.models)
	ex.s.mu.Unlock()
	list := struct {
		Object string      `json:"object"`
		Data   []wireModel `json:"data"`
	}{Object: "list", Data: []wireModel{}}
	for _, id := range ids {
		list.Data = append(list.Data, wireModel{ID: id, Object: "model", Created: ex.s.created, OwnedBy: "llmtest"})
	}
	ex.writeJSON(http.StatusOK, list)
}

func (ex *exchange) getModel(id string) {
	ex.s.mu.Lock()
	known := slices.Contains(ex.s.models, id)
	ex.s.mu.Unlock()
	if !known {
		ex.writeError(modelNotFound(id))
		return
	}
	ex.writeJSON(http.StatusOK, wireModel{ID: id, Object: "model", Created: ex.s.created, OwnedBy: "llmtest"})
}

func modelNotFound(id string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found",
		Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", id)}
}

func (ex *exchange) chat(req *ChatRequest) {
	s := ex.s
	s.mu.Lock()
	validate, reject, knownOnly := !s.noValidation, s.rejectJSONSchema, s.knownModelsOnly
	models := slices.Clone(s.models)
	scripts := slices.Clone(s.scripts)
	s.mu.Unlock()

	if validate {
		if err := req.validate(); err != nil {
			ex.writeError(err)
			return
		}
	}
	if knownOnly && !slices.Contains(models, req.Model) {
		ex.writeError(modelNotFound(req.Model))
		return
	}
	if reject && req.ResponseFormat != nil && req.ResponseFormat.Type == "json_schema" {
		ex.writeError(&apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "response_format",
			Message: "response_format type json_schema is not supported"})
		return
	}

	var sc *Script
	for _, c := range scripts {
		if c.match(req) {
			sc = c
			break
		}
	}
	if sc == nil {
		ex.writeError(&apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "llmtest_no_script",
			Message: "llmtest: no script matches " + req.summary()})
		return
	}
	n := int(sc.times.Add(1)) - 1
	reply := sc.replies[min(n, len(sc.replies)-1)]
	s.mu.Lock()
	ex.script = sc.name
	s.mu.Unlock()
	ex.answer(req, reply)
}

// answer sends reply after its latency, or hangs.
func (ex *exchange) answer(req *ChatRequest, reply Reply) {
	if reply.Hang {
		ex.wait(-1)
		return
	}
	if !ex.wait(reply.Latency) {
		return
	}
	if reply.RetryAfter != "" {
		ex.w.Header().Set("Retry-After", reply.RetryAfter)
	}
	switch {
	case reply.Status != 0 && reply.Status != http.StatusOK:
		if reply.Status < 100 || reply.Status > 599 {
			ex.writeError(&apiError{Status: 500, Type: "server_error",
				Message: fmt.Sprintf("llmtest: reply has invalid HTTP status %d", reply.Status)})
			return
		}
		ex.writeError(reply.apiError())
	case reply.CutBody:
		ex.cutBody(completionBody("chatcmpl-"+randomID(24), time.Now().Unix(), req, reply, reply.toolCallsWithIDs()))
	case reply.HugeBody > 0:
		ex.hugeBody(reply.HugeBody)
	case reply.RawBody != "":
		ct := reply.ContentType
		if ct == "" {
			ct = "application/json"
			if req.Stream {
				ct = "text/event-stream"
			}
		}
		ex.w.Header().Set("Content-Type", ct)
		ex.writeHeader(http.StatusOK)
		ex.write([]byte(reply.RawBody))
	case req.Stream:
		ex.stream(req, reply)
	default:
		id := "chatcmpl-" + randomID(24)
		ex.writeJSON(http.StatusOK, completionBody(id, time.Now().Unix(), req, reply, reply.toolCallsWithIDs()))
	}
}

// stream sends the reply as server-sent events, flushing each chunk so the
// client sees them arrive one by one.
func (ex *exchange) stream(req *ChatRequest, reply Reply) {
	h := ex.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	ex.writeHeader(http.StatusOK)
	rc := http.NewResponseController(ex.w)
	id := "chatcmpl-" + randomID(24)
	chunks := streamChunks(id, time.Now().Unix(), req, reply, reply.toolCallsWithIDs())
	for i, c := range chunks {
		if i > 0 && !ex.wait(reply.ChunkDelay) {
			return
		}
		b, err := json.Marshal(c)
		if err != nil {
			return // cannot happen: every field is marshallable
		}
		if !ex.write([]byte("data: "+string(b)+"\n\n")) || rc.Flush() != nil {
			ex.gone = true
			return
		}
	}
	if !ex.write([]byte("data: [DONE]\n\n")) || rc.Flush() != nil {
		ex.gone = true
	}
}

// wait sleeps for d (forever when d < 0) and reports whether to go on. It
// returns false, marking the exchange gone, when the client disconnects; and
// false, dropping the connection, when the server is closing, so that a
// hanging request fails on the client instead of getting an empty 200.
func (ex *exchange) wait(d time.Duration) bool {
	ctx := ex.r.Context()
	if d == 0 {
		if ctx.Err() != nil {
			ex.gone = true
			return false
		}
		return true
	}
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		if ctx.Err() != nil {
			ex.gone = true
			return false
		}
		return true
	case <-ctx.Done():
		// Close drops connections, which also cancels ctx: that is the
		// server leaving, not the client.
		select {
		case <-ex.s.done:
		default:
			ex.gone = true
		}
		return false
	case <-ex.s.done:
		if conn, _, err := http.NewResponseController(ex.w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return false
	}
}

func (ex *exchange) writeHeader(status int) {
	ex.status = status
	ex.w.WriteHeader(status)
}

func (ex *exchange) write(b []byte) bool {
	_, err := ex.w.Write(b)
	return err == nil
}

func (ex *exchange) writeJSON(status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"message":"llmtest: cannot encode response","type":"server_error","param":null,"code":null}}`)
	}
	ex.w.Header().Set("Content-Type", "application/json")
	ex.writeHeader(status)
	if !ex.write(append(b, '\n')) && ex.r.Context().Err() != nil {
		ex.gone = true
	}
}

// writeError sends e in OpenAI's shape; empty param and code are null.
func (ex *exchange) writeError(e *apiError) {
	body := wireErrorBody{Error: wireError{Message: e.Message, Type: e.Type}}
	if e.Param != "" {
		body.Error.Param = &e.Param
	}
	if e.Code != "" {
		body.Error.Code = &e.Code
	}
	ex.writeJSON(e.Status, body)
}

// wireError keeps OpenAI's field order, which some log scrapers rely on.
type wireError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

type wireErrorBody struct {
	Error wireError `json:"error"`
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// randomID returns n random alphanumerics, the form of OpenAI's ids.
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b)
}

// cutBody sends the headers of v's JSON with its full Content-Length, then
// half the body, then drops the connection.
func (ex *exchange) cutBody(v any) {
	b, _ := json.Marshal(v)
	h := ex.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	ex.writeHeader(http.StatusOK)
	ex.write(b[:len(b)/2])
	if f, ok := ex.w.(http.Flusher); ok {
		f.Flush()
	}
	if hj, ok := ex.w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
}

// hugeBody streams a JSON completion of n bytes whose content is padding.
func (ex *exchange) hugeBody(n int) {
	head := `{"id":"chatcmpl-huge","object":"chat.completion","created":0,"model":"fake","choices":[{"index":0,"message":{"role":"assistant","content":"`
	tail := `"},"finish_reason":"stop"}]}`
	h := ex.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(n))
	ex.writeHeader(http.StatusOK)
	if !ex.write([]byte(head)) {
		return
	}
	pad := bytes.Repeat([]byte("x"), 64<<10)
	for left := n - len(head) - len(tail); left > 0; left -= len(pad) {
		if !ex.write(pad[:min(left, len(pad))]) {
			ex.gone = true
			return
		}
	}
	ex.write([]byte(tail))
}
