// Package llmtest is a fake OpenAI-compatible HTTP server for tests and
// demos, so that code talking to OpenAI, vLLM, llama.cpp server or Ollama's
// /v1 API can be exercised without a real model.
//
// It speaks the REST API as those servers do: GET /v1/models, GET
// /v1/models/{id} and POST /v1/chat/completions, plain and streamed
// (server-sent events with content and tool-call deltas, a finish chunk, an
// optional usage chunk and "data: [DONE]"), errors in OpenAI's
// {"error":{...}} shape, optional bearer auth. Requests are checked the way
// OpenAI checks them (see [Server.ValidateRequests]) so that a client bug a
// real endpoint would reject is not hidden by a lenient fake.
//
// Answers are scripted by matching on the request:
//
//	s := llmtest.NewServer()
//	defer s.Close()
//	review := s.On(llmtest.SchemaName("review"), llmtest.Throttle("1"), llmtest.JSON(findings))
//	s.On(llmtest.Any(), llmtest.Text("ok"))
//	// point the client at s.URL (".../v1"), run the code under test, then
//	// inspect review.Times(), s.ChatRequests(), s.Disconnects()...
//
// Every request is recorded (see [Server.Requests]), including whether the
// client went away before the reply was complete, which is how tests check
// cancellation and timeouts. Command fakellm serves scripts from a JSON file
// for manual use.
package llmtest
