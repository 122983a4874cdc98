package lsp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// publishedDataSchema is the diagnosticData schema of the published
// contract, the file editor integrations read.
func publishedDataSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(contract.APIFile)))
	if err != nil {
		t.Fatal(err)
	}
	var api struct {
		DiagnosticData *jsonschema.Schema `json:"diagnosticData"`
	}
	if err := json.Unmarshal(raw, &api); err != nil || api.DiagnosticData == nil {
		t.Fatalf("%s has no diagnosticData schema (%v)", contract.APIFile, err)
	}
	rs, err := api.DiagnosticData.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// diagnosticData checks that d's data is what the contract declares, field
// for field, and returns it.
func diagnosticData(t *testing.T, rs *jsonschema.Resolved, d protocol.Diagnostic) contract.DiagnosticData {
	t.Helper()
	var inst any
	if err := json.Unmarshal(d.Data, &inst); err != nil {
		t.Fatalf("data %s: %v", d.Data, err)
	}
	if err := rs.Validate(inst); err != nil {
		t.Fatalf("data %s does not match the published schema: %v", d.Data, err)
	}
	dec := json.NewDecoder(bytes.NewReader(d.Data))
	dec.DisallowUnknownFields()
	var data contract.DiagnosticData
	if err := dec.Decode(&data); err != nil {
		t.Fatalf("data %s is not a contract.DiagnosticData: %v", d.Data, err)
	}
	return data
}

func TestDiagnosticDataOfADetectorViolation(t *testing.T) {
	rs := publishedDataSchema(t)
	repo := newWorkspace(t)
	s := start(t, repo.Dir, lsp.Options{})
	s.Initialize(lsptest.InitOptions{})
	s.OpenText("v.go", "package main\n\nvar _ = fmt.Println(1)\n")
	ds := s.AwaitDiagnostics("v.go", lsptest.Count(1))
	data := diagnosticData(t, rs, ds[0])
	// The same id `kodyls review --format json` reports: uuid, file,
	// 1-based line and 0-based byte column of the match.
	if want := printlnRule + ":v.go:3:8"; data.ID != want || data.Rule != printlnRule || data.Kind != "" {
		t.Fatalf("data %+v, want id %s, rule %s and no kind", data, want, printlnRule)
	}
	// The version the id and the range refer to: the id names a place.
	if data.Version != 1 {
		t.Fatalf("data %+v, want version 1, the buffer's", data)
	}
	s.Shutdown()
}

func TestDiagnosticDataOfReviewFindings(t *testing.T) {
	rs := publishedDataSchema(t)
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, []reviewtest.Suggestion{rangeLoop})
	e := startReviewing(t, reviewRepo(t), fake, t.TempDir(), "save")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	ds := e.AwaitDiagnostics("main.go", hasReviewOnLine(6))
	data := diagnosticData(t, rs, ds[0])
	if data.Kind != contract.DiagnosticKindReview || data.ID == "" || data.Rule != "" {
		t.Fatalf("data of a review finding %+v, want kind review, an id and no rule", data)
	}
	// The id is what kodyls.dismissSuggestion takes.
	var res contract.DismissResult
	if err := e.ExecuteCommand(contract.CommandDismissSuggestion, contract.DismissArgs{ID: data.ID, URI: e.URI("main.go")}, &res); err != nil || res.Dismissed != 1 {
		t.Fatalf("dismissing data.id %q: %+v, %v", data.ID, res, err)
	}
	e.Shutdown()

	e, _, _ = savedLoopViolation(t, "Range over slices")
	ds = e.AwaitDiagnostics("main.go", lsptest.Count(1))
	data = diagnosticData(t, rs, ds[0])
	if data.Kind != contract.DiagnosticKindReview || data.Rule != "loops-range" || !strings.Contains(string(ds[0].Data), `"rule":"loops-range"`) {
		t.Fatalf("data of the model's Kody Rule violation %s, want kind review and rule loops-range", ds[0].Data)
	}
	e.Shutdown()
}
