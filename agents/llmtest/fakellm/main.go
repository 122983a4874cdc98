// Command fakellm serves a scripted fake OpenAI-compatible API (package
// llmtest) so that kodyls, or any OpenAI client, can be demonstrated and
// tried by hand without a real model.
//
// Usage:
//
//	fakellm -script script.json [-addr 127.0.0.1:8089] [-models a,b]
//	        [-reject-json-schema] [-api-key KEY] [-no-validate] [-require-known-model]
//
// For example, from the repository's root:
//
//	go run ./agents/llmtest/fakellm -script agents/llmtest/fakellm/example.json
//
// and, in another terminal:
//
//	export KODYLS_LLM_BASE_URL=http://127.0.0.1:8089/v1 KODYLS_LLM_MODEL=fake-model
//
// example.json answers every request kodyls makes for the demo of the
// README ("Try it without a model server"): the doctor's health check, each
// stage of the review, the Kody Rules checks and the explain agent's tool
// calls. kodyls names the JSON schema of every structured request
// (health_check, review_mode, review_suggestions, kodyrules_violations...;
// the Schema constants of analysis/review and agents), which is what
// "schema" matches.
//
// Once listening it prints the base URL (http://127.0.0.1:8089/v1) alone on
// stdout, so it can be captured and used as KODYLS_LLM_BASE_URL, and then
// serves until SIGINT or SIGTERM. Each request is logged to stderr with its
// method, path, model, the script that answered, status and latency.
//
// # Script format
//
// The script file is a JSON array of entries, tried in order for every chat
// completion request; the first entry whose match fits answers with its
// replies in turn, repeating the last one when they run out:
//
//	[
//	  {
//	    "name": "review",                  // optional, shown in logs
//	    "match": {                         // all given fields must fit; {} or no match = everything
//	      "schema": "review_suggestions",  // response_format.json_schema.name; see below
//	      "prompt": "explain",             // some message content contains this
//	      "tool": "read_file",             // a tool with this function name is offered
//	      "lastRole": "tool",              // role of the last message ("tool": tool results are being handed back)
//	      "model": "fake-model"            // requested model
//	    },
//	    "replies": [
//	      {
//	        "content": "text",             // assistant message text
//	        "json": {"any": "value"},      // or: a JSON value sent as the content (not both)
//	        "toolCalls": [{"id": "", "name": "read_file", "arguments": {"path": "main.go"}}],
//	                                       // arguments: a JSON object, or a string sent verbatim; id generated when empty
//	        "finishReason": "stop",        // default stop, or tool_calls with toolCalls
//	        "truncate": false,             // cut the content in half, finish_reason "length"
//	        "status": 429,                 // non-200: OpenAI error body with this status
//	        "error": "message",            // error message for status
//	        "retryAfter": "1",             // Retry-After header
//	        "latencyMs": 200,              // wait before answering
//	        "chunkDelayMs": 20,            // wait between streamed chunks
//	        "rawBody": "{\"id\":",         // sent verbatim with status 200 (malformed JSON, HTML...)
//	        "contentType": "text/html",    // Content-Type for rawBody
//	        "hang": false,                 // never answer (until the client gives up)
//	        "usage": {"promptTokens": 1, "completionTokens": 2}  // default: estimated
//	      }
//	    ]
//	  }
//	]
//
// "schema" matches a request whose response_format asks for the JSON
// schema of that name. A request that asks for no schema matches when it
// offers no tools and a system message names the schema as a word: that is
// how a client that fell back from structured outputs (kodyls against
// -reject-json-schema) describes the reply it wants. A schema's name in a
// user or tool message (code, error output, a file an agent read) does not
// match.
//
// (Comments are for explanation only: the file is plain JSON.) Unknown
// keys, wrong types and contradictory replies are reported at start-up with
// the file, line and column; see example.json next to this file.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kodustech/kodyls/agents/llmtest"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, stop))
}

// run is main without the process: it returns the exit status (0 after a
// signal, 1 when the script or the address is unusable, 2 for bad flags).
func run(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8089", "`host:port` to listen on (port 0 picks a free one)")
	scriptPath := fs.String("script", "", "JSON script `file` (required; format in `go doc ./agents/llmtest/fakellm`)")
	models := fs.String("models", "", "comma-separated model `ids` listed by GET /v1/models (default fake-model)")
	reject := fs.Bool("reject-json-schema", false, "answer 400 to response_format json_schema, like servers without structured outputs")
	apiKey := fs.String("api-key", "", "require `key` as the bearer token, answering 401 otherwise")
	noValidate := fs.Bool("no-validate", false, "accept requests real OpenAI rejects (as Ollama and llama.cpp do)")
	knownModels := fs.Bool("require-known-model", false, "answer 404 model_not_found to chat requests for models not in -models")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fakellm -script FILE [flags]\n\nServes a scripted fake OpenAI-compatible API and prints its base URL.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakellm: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *scriptPath == "" {
		fmt.Fprintln(stderr, "fakellm: -script FILE is required (see example.json next to the source)")
		return 2
	}
	entries, err := loadScript(*scriptPath)
	if err != nil {
		fmt.Fprintf(stderr, "fakellm: %v\n", err)
		return 1
	}

	srv, err := llmtest.Listen(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "fakellm: %v\n", err)
		return 1
	}
	defer srv.Close()
	if *models != "" {
		var ids []string
		for _, id := range strings.Split(*models, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
		srv.SetModels(ids...)
	}
	srv.RejectJSONSchema(*reject)
	srv.RequireAPIKey(*apiKey)
	srv.ValidateRequests(!*noValidate)
	srv.RequireKnownModel(*knownModels)
	logger := log.New(stderr, "fakellm: ", log.LstdFlags|log.Lmicroseconds)
	srv.SetLogf(logger.Printf)
	for _, e := range entries {
		srv.On(e.match, e.replies...).Named(e.name)
	}

	logger.Printf("serving %d script entries from %s on %s", len(entries), *scriptPath, srv.URL)
	fmt.Fprintln(stdout, srv.URL)
	sig := <-stop
	logger.Printf("%v: shutting down", sig)
	return 0
}
