package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/report"
	"github.com/kodustech/kodyls/analysis/review"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// The acceptance test of Kody Rules: testdata/kodyrules/repo is a workspace
// holding rules from every source a Kodus team keeps, written as users write
// them (most without a detector), and testdata/kodyrules/change is an edit
// of two of its files that breaks several of them on known lines.

// kodyRulesFixtureRule is a rule the fixture holds, as `kodyls rules list`
// must show it.
type kodyRulesFixtureRule struct {
	title, source, check string
}

var kodyRulesFixtureRules = []kodyRulesFixtureRule{
	{"Log through the shared logger", "cursor-mdc", "model"},
	{"Prefer `const` over `let`; never use `var`", "cursorrules", "model"},
	{"Use async/await instead of raw promise chains", "cursorrules", "model"},
	{"Error handling", "copilot", "model"},
	{"Tests", "copilot", "model"},
	{"Run gofmt on every file", "copilot-instructions", "model"},
	{"Pass a context.Context as the first argument of functions that do I/O", "copilot-instructions", "model"},
	{"Dates are stored in UTC", "kody-memories", "model"},
	{"Use parameterized SQL queries", "kody-yml", "model"},
	{"Do not send internal errors to clients", "kody-yml", "model"},
	{"Handlers validate their input", "kody-md", "model"},
	{"No fmt.Println in handlers", "kody-md", "detector"},
	{"Use named HTTP status codes", "kody-md", "model"}, // no front matter
	{"Every pull request explains why", "kody-md", "model"},
	{"Keep HTTP handlers thin: parse the request, call a service, write the response", "windsurf", "model"},
	{"Name booleans as questions (`isPaid`, `hasItems`)", "windsurf", "model"},
	{"Run `make test` before committing", "agents", "model"},
	{"Never push to main", "agents", "model"},
	{"Never log secrets such as passwords, tokens or API keys", "claude", "model"},
	{"Keep pull requests under 400 changed lines", "claude", "model"},
	{"Never expose internal ids in responses", "kody-md", "model"}, // BOM and CRLF
	// .github/instructions/legacy.instructions.md says @kody-ignore: none.
}

// The changed files and the language an editor and the CLI give each.
var kodyRulesChanged = []struct{ path, language string }{
	{"server/handlers/users.go", "go"},
	{"src/api/orders.ts", "typescript"},
}

// kodyRulesViolation is a violation of the change: the rule (by title), the
// 1-based lines it must be shown on, and the code the model copies from
// the file (none for the detector's).
type kodyRulesViolation struct {
	file, rule    string
	line, endLine int
	existingCode  string
}

var kodyRulesViolations = []kodyRulesViolation{
	{"server/handlers/users.go", "No fmt.Println in handlers", 40, 40, ""},
	{"server/handlers/users.go", "Never log secrets such as passwords, tokens or API keys", 41, 41,
		`log.Printf("delete user %s with token %s", id, r.Header.Get("Authorization"))`},
	{"server/handlers/users.go", "Use named HTTP status codes", 43, 43, "w.WriteHeader(500)"},
	{"server/handlers/users.go", "Do not send internal errors to clients", 44, 44, "_, _ = w.Write([]byte(err.Error()))"},
	// Models re-indent what they copy: spaces for the file's tab.
	{"server/handlers/users.go", "Pass a context.Context as the first argument of functions that do I/O", 50, 51,
		"func (h *UserHandler) remove(id string) error {\n    _, err := h.DB.Exec(\"DELETE FROM users WHERE id = \" + id)"},
	{"server/handlers/users.go", "Use parameterized SQL queries", 51, 51, `_, err := h.DB.Exec("DELETE FROM users WHERE id = " + id)`},

	{"src/api/orders.ts", "Prefer `const` over `let`; never use `var`", 15, 15, "var total = 0;"},
	{"src/api/orders.ts", "Handlers validate their input", 16, 16, "for (const item of req.body.items) {"},
	{"src/api/orders.ts", "Use named HTTP status codes", 20, 20,
		`res.status(400).json({ error: { code: "customer_required", message: "customerId is required" } });`},
	{"src/api/orders.ts", "Error handling", 24, 24, `throw "an order needs items";`},
	{"src/api/orders.ts", "Log through the shared logger", 26, 26, `console.log("creating order", req.body);`},
	{"src/api/orders.ts", "Use async/await instead of raw promise chains", 27, 29,
		"db.orders\n    .insert({ ...req.body, total, createdAt: new Date().toLocaleString() })\n    .then((order) => res.status(StatusCodes.CREATED).json(order));"},
	{"src/api/orders.ts", "Dates are stored in UTC", 28, 28, ".insert({ ...req.body, total, createdAt: new Date().toLocaleString() })"},
}

// kodyRulesSetup is the fixture repository with its change in the working
// tree, its rules as loaded, and the fake endpoint scripted to report the
// violations.
type kodyRulesSetup struct {
	repo   *lsptest.Repo
	fake   *llmtest.Server
	splits map[string]*llmtest.Script // the model's split, by assistant's file
	uuids  map[string]string          // rule uuid by title
	titles map[string]string          // rule title by uuid
	checks map[string]reviewtest.RuleScripts
}

// readTree returns the files under dir, by slash-separated relative path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func newKodyRulesSetup(t *testing.T) *kodyRulesSetup {
	t.Helper()
	fixture := filepath.Join("testdata", "kodyrules")
	repo := lsptest.NewRepo(t, readTree(t, filepath.Join(fixture, "repo")))
	change := readTree(t, filepath.Join(fixture, "change"))
	repo.Write(change)

	// The fixture's lines are what the test says they are.
	for _, v := range kodyRulesViolations {
		lines := strings.Split(change[v.file], "\n")
		if v.endLine > len(lines) {
			t.Fatalf("%s has no line %d", v.file, v.endLine)
		}
		got := normalizeCode(strings.Join(lines[v.line-1:v.endLine], "\n"))
		if v.existingCode == "" && !strings.Contains(got, "fmt.Println(") || v.existingCode != "" && got != normalizeCode(v.existingCode) {
			t.Fatalf("fixture: %s:%d-%d is %q, not what the violation of %q is about", v.file, v.line, v.endLine, got, v.rule)
		}
	}

	loaded, errs := rules.DefaultRegistry().Load(context.Background(), repo.Dir)
	if len(errs) != 0 {
		t.Fatalf("broken rules in the fixture: %v", errs)
	}
	s := &kodyRulesSetup{repo: repo, uuids: map[string]string{}, titles: map[string]string{}, checks: map[string]reviewtest.RuleScripts{}}
	for _, r := range loaded {
		if _, dup := s.uuids[r.Title]; dup {
			t.Fatalf("two rules titled %q: the test finds rules by title", r.Title)
		}
		s.uuids[r.Title], s.titles[r.UUID] = r.UUID, r.Title
	}

	s.fake = llmtest.NewServer()
	t.Cleanup(s.fake.Close)
	s.scriptSplits(t, loaded)
	reviewtest.Script(s.fake, nil)
	s.fake.On(llmtest.SchemaName(review.SchemaPullRequestRules), llmtest.JSON(map[string]any{"violations": []any{}}))
	for _, f := range kodyRulesChanged {
		// The rules reach the file's prompt in the order ModelRules keeps;
		// the model names them by their position there.
		sent := filereview.ModelRules(loaded, f.path, f.language)
		match := []llmtest.Matcher{llmtest.PromptContains(f.path)}
		for _, r := range sent {
			match = append(match, llmtest.PromptContains(r.Title))
		}
		var vs []reviewtest.RuleViolation
		for _, v := range kodyRulesViolations {
			if v.file != f.path || v.existingCode == "" {
				continue
			}
			i := slices.IndexFunc(sent, func(r *rules.Rule) bool { return r.Title == v.rule })
			if i < 0 {
				t.Fatalf("%q is not among the rules the model checks for %s", v.rule, f.path)
			}
			// The reported lines are off by two, as models' often are:
			// the copied code decides where a violation goes.
			vs = append(vs, reviewtest.RuleViolation{
				Rule: i + 1, Reason: "these lines break the rule", SuggestionContent: "follow the rule",
				ExistingCode: v.existingCode, ImprovedCode: "/* fixed */", OneSentenceSummary: "breaks the rule",
				RelevantLinesStart: v.line - 2, RelevantLinesEnd: v.endLine - 2,
			})
		}
		s.checks[f.path] = reviewtest.Rules(s.fake, llmtest.All(match...), vs...)
	}
	// A check of anything else, or a prompt that lost a rule, finds nothing.
	reviewtest.Rules(s.fake, nil)
	return s
}

// scriptSplits makes the model split each assistant's file of the fixture
// into the rules its sections and bullets already are, each on its lines,
// so that the rules keep their ids and the split is exercised end to end.
func (s *kodyRulesSetup) scriptSplits(t *testing.T, loaded []*rules.Rule) {
	t.Helper()
	s.splits = map[string]*llmtest.Script{}
	byFile := map[string][]map[string]any{}
	for _, r := range loaded {
		if _, ok := rules.AssistantSource(r.Source); !ok {
			continue
		}
		end := r.BodyLine + strings.Count(r.Body, "\n")
		byFile[r.File] = append(byFile[r.File], map[string]any{"title": r.Title, "text": r.Instructions, "startLine": r.Line, "endLine": end})
	}
	for file, rs := range byFile {
		s.splits[file] = s.fake.On(llmtest.All(llmtest.SchemaName(workspace.SchemaRuleSplit), llmtest.PromptContains("a coding assistant ("+file+")")),
			llmtest.JSON(map[string]any{"rules": rs}))
	}
}

// splitCalls is how many times each assistant's file was split.
func (s *kodyRulesSetup) splitCalls() map[string]int {
	out := map[string]int{}
	for file, sc := range s.splits {
		out[file] = sc.Times()
	}
	return out
}

// normalizeCode trims every line, as a reader comparing code would.
func normalizeCode(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, "\n")
}

func (s *kodyRulesSetup) env(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "KODYLS_DATA_DIR=" + filepath.Join(t.TempDir(), "data"),
		"KODYLS_LLM_BASE_URL=" + s.fake.URL, "KODYLS_LLM_MODEL=fake-model"}
}

// wanted is every violation as "file uuid lines a-b", sorted.
func (s *kodyRulesSetup) wanted(t *testing.T) []string {
	var out []string
	for _, v := range kodyRulesViolations {
		id, ok := s.uuids[v.rule]
		if !ok {
			t.Fatalf("no rule titled %q was loaded", v.rule)
		}
		out = append(out, fmt.Sprintf("%s %s lines %d-%d", v.file, id, v.line, v.endLine))
	}
	slices.Sort(out)
	return out
}

// checkCalls fails the test unless each changed file's rule check was
// answered by its own script since before: a prompt that lost a rule or
// named another file would have fallen through to the empty answer.
func (s *kodyRulesSetup) checkCalls(t *testing.T, before map[string]int) {
	t.Helper()
	for _, f := range kodyRulesChanged {
		if s.checks[f.path].Check.Times() <= before[f.path] {
			t.Errorf("no Kody Rules check of %s carried every rule that applies to it", f.path)
		}
	}
}

func (s *kodyRulesSetup) callCounts() map[string]int {
	out := map[string]int{}
	for _, f := range kodyRulesChanged {
		out[f.path] = s.checks[f.path].Check.Times()
	}
	return out
}

// cliFinding is a finding of `kodyls review` keyed for comparison.
type cliFinding struct {
	file, id, ruleID string
	startLine, end   int
}

func (f cliFinding) String() string {
	return fmt.Sprintf("%s %s %s lines %d-%d", f.file, f.id, f.ruleID, f.startLine, f.end)
}

func (s *kodyRulesSetup) review(t *testing.T, env []string, format string) string {
	t.Helper()
	out, errOut, code := runBin(t, env, s.repo.Dir, "review", "--format", format)
	if code != 0 {
		t.Fatalf("kodyls review --format %s: exit %d\n%s%s", format, code, out, errOut)
	}
	return out
}

// TestKodyRulesComplete is the acceptance test of Kody Rules: a workspace
// with rules from every source loads with none broken and `kodyls rules
// list` shows each with its source; with the model scripted to report
// violations of them, `kodyls review` (JSON and SARIF), the editor and
// Neovim show each violation with its rule's id on its line, and the same
// ones everywhere.
func TestKodyRulesComplete(t *testing.T) {
	s := newKodyRulesSetup(t)
	want := s.wanted(t)

	t.Run("rules list", func(t *testing.T) {
		splitsBefore := s.splitCalls()
		out, errOut, code := runBin(t, s.env(t), s.repo.Dir, "rules", "list", "--json")
		if code != 0 {
			t.Fatalf("kodyls rules list --json: exit %d\n%s%s", code, out, errOut)
		}
		var list struct {
			Rules []struct {
				UUID, Title, Source, Check, Scope string
				Enabled, Split                    bool
			} `json:"rules"`
			Broken []problemJSON `json:"broken"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("rules list JSON: %v\n%s", err, out)
		}
		if len(list.Broken) != 0 {
			t.Errorf("broken rules: %+v", list.Broken)
		}
		var got, wantRules []string
		for _, r := range list.Rules {
			got = append(got, fmt.Sprintf("%s (%s, %s)", r.Title, r.Source, r.Check))
			if !r.Enabled || r.UUID != s.uuids[r.Title] {
				t.Errorf("%q: enabled %v, uuid %q; want enabled with uuid %q", r.Title, r.Enabled, r.UUID, s.uuids[r.Title])
			}
			// With a model, every assistant's file is the model's split.
			if _, assistant := rules.AssistantSource(r.Source); r.Split != assistant {
				t.Errorf("%q (%s): split %v", r.Title, r.Source, r.Split)
			}
		}
		for _, r := range kodyRulesFixtureRules {
			wantRules = append(wantRules, fmt.Sprintf("%s (%s, %s)", r.title, r.source, r.check))
		}
		slices.Sort(got)
		slices.Sort(wantRules)
		if !slices.Equal(got, wantRules) {
			t.Errorf("rules list:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(wantRules, "\n  "))
		}
		for file, n := range s.splitCalls() {
			if n != splitsBefore[file]+1 {
				t.Errorf("%s split %d times by rules list, want once", file, n-splitsBefore[file])
			}
		}
		if len(s.splits) != 7 {
			t.Errorf("%d assistant's files split, want the fixture's 7", len(s.splits))
		}
		if out, errOut, code := runBin(t, s.env(t), s.repo.Dir, "rules", "check"); code != 0 {
			t.Errorf("kodyls rules check: exit %d\n%s%s", code, out, errOut)
		}
	})

	// The CLI's findings, the reference the editors are compared with.
	var fromCLI []cliFinding
	t.Run("review json and sarif", func(t *testing.T) {
		env := s.env(t)
		before := s.callCounts()
		out := s.review(t, env, "json")
		s.checkCalls(t, before)
		// "Use named HTTP status codes" points at lines 1-4 of
		// docs/http-status.md: the model's check carries them, not line 5.
		for _, f := range kodyRulesChanged {
			var body string
			for _, r := range s.fake.ChatRequests() {
				if r.Chat.SchemaName() == review.SchemaKodyRules && strings.Contains(r.Chat.Text(), f.path) {
					body = r.Chat.Text()
				}
			}
			if !strings.Contains(body, "StatusUnprocessableEntity") || strings.Contains(body, "not part of the reference") {
				t.Errorf("the rule check of %s does not carry exactly the referenced lines of docs/http-status.md:\n%s", f.path, body)
			}
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("review JSON: %v\n%s", err, out)
		}
		for _, n := range rep.Notes {
			if strings.Contains(n, "broken") || strings.Contains(n, "not checked") {
				t.Errorf("note: %s", n)
			}
		}
		for _, f := range rep.Files {
			if len(f.Degraded) > 0 || f.Skipped != "" {
				t.Errorf("%s: skipped %q, degraded %v", f.Path, f.Skipped, f.Degraded)
			}
		}
		var got []string
		for _, f := range rep.Findings {
			got = append(got, fmt.Sprintf("%s %s lines %d-%d", f.File, f.RuleID, f.StartLine, f.EndLine))
			fromCLI = append(fromCLI, cliFinding{f.File, f.ID, f.RuleID, f.StartLine, f.EndLine})
			wantSource := report.SourceReview
			if s.titles[f.RuleID] == "No fmt.Println in handlers" {
				wantSource = report.SourceRule
			}
			if f.Source != wantSource || f.RuleTitle != s.titles[f.RuleID] || f.ID == "" {
				t.Errorf("finding %s: source %q, rule title %q; want source %q, rule title %q", f.ID, f.Source, f.RuleTitle, wantSource, s.titles[f.RuleID])
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("kodyls review --format json:\n  %s\nwant:\n  %s\n%s", strings.Join(got, "\n  "), strings.Join(want, "\n  "), out)
		}

		// SARIF lists the same findings, with the same ids, rules and lines;
		// the second run finds the assistants' files split in the store.
		splitsBefore := s.splitCalls()
		out = s.review(t, env, "sarif")
		if got := s.splitCalls(); !maps.Equal(got, splitsBefore) {
			t.Errorf("the second review split files again: %v, before %v", got, splitsBefore)
		}
		var sarif struct {
			Runs []struct {
				Tool struct {
					Driver struct {
						Rules []struct {
							ID               string `json:"id"`
							ShortDescription struct {
								Text string `json:"text"`
							} `json:"shortDescription"`
						} `json:"rules"`
					} `json:"driver"`
				} `json:"tool"`
				Results []struct {
					RuleID    string `json:"ruleId"`
					Locations []struct {
						PhysicalLocation struct {
							ArtifactLocation struct {
								URI string `json:"uri"`
							} `json:"artifactLocation"`
							Region struct {
								StartLine int `json:"startLine"`
								EndLine   int `json:"endLine"`
							} `json:"region"`
						} `json:"physicalLocation"`
					} `json:"locations"`
					PartialFingerprints map[string]string `json:"partialFingerprints"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &sarif); err != nil || len(sarif.Runs) != 1 {
			t.Fatalf("SARIF: %v\n%s", err, out)
		}
		var gotSARIF, wantSARIF []string
		for _, r := range sarif.Runs[0].Results {
			if len(r.Locations) != 1 {
				t.Fatalf("SARIF result %s has %d locations", r.RuleID, len(r.Locations))
			}
			loc := r.Locations[0].PhysicalLocation
			gotSARIF = append(gotSARIF, cliFinding{loc.ArtifactLocation.URI, r.PartialFingerprints["kodylsFindingId/v1"], r.RuleID, loc.Region.StartLine, loc.Region.EndLine}.String())
		}
		for _, f := range fromCLI {
			wantSARIF = append(wantSARIF, f.String())
		}
		slices.Sort(gotSARIF)
		slices.Sort(wantSARIF)
		if !slices.Equal(gotSARIF, wantSARIF) {
			t.Errorf("SARIF results:\n  %s\nJSON findings:\n  %s", strings.Join(gotSARIF, "\n  "), strings.Join(wantSARIF, "\n  "))
		}
		for _, r := range sarif.Runs[0].Tool.Driver.Rules {
			if title, ok := s.titles[r.ID]; !ok || r.ShortDescription.Text != title {
				t.Errorf("SARIF rule %s described as %q, want the Kody Rule's title %q", r.ID, r.ShortDescription.Text, title)
			}
		}
	})
	if len(fromCLI) == 0 {
		t.FailNow()
	}

	t.Run("editor", func(t *testing.T) {
		before := s.callCounts()
		ed := lsptest.StartBinary(t, lsptest.BuildBinary(t), s.repo.Dir, s.env(t))
		ed.Initialize(lsptest.InitOptions{})
		// Saved at once: a review waits for the rules the server loads
		// after initialized.
		for _, f := range kodyRulesChanged {
			ed.OpenFile(f.path)
			ed.Save(f.path)
		}
		ed.AwaitIdle("")
		var got, shown, wantCLI []string
		for _, f := range kodyRulesChanged {
			for _, d := range ed.Diagnostics(f.path) {
				var data struct {
					ID string `json:"id"`
				}
				if err := json.Unmarshal(d.Data, &data); err != nil || data.ID == "" {
					t.Fatalf("%s: diagnostic without data.id: %+v", f.path, d)
				}
				if src, _ := d.Source.Get(); src != "kody" {
					t.Errorf("%s: diagnostic from %q: %s", f.path, src, lsptest.Message(d))
				}
				got = append(got, cliFinding{f.path, data.ID, lsptest.Code(d), int(d.Range.Start.Line) + 1, diagnosticEndLine(d)}.String())
				shown = append(shown, fmt.Sprintf("%s %s lines %d-%d", f.path, lsptest.Code(d), d.Range.Start.Line+1, diagnosticEndLine(d)))
			}
		}
		ed.Shutdown()
		s.checkCalls(t, before)
		for _, f := range fromCLI {
			wantCLI = append(wantCLI, f.String())
		}
		slices.Sort(shown)
		if !slices.Equal(shown, want) {
			t.Errorf("the editor's diagnostics (file code lines):\n  %s\nwant:\n  %s", strings.Join(shown, "\n  "), strings.Join(want, "\n  "))
		}
		slices.Sort(got)
		slices.Sort(wantCLI)
		if !slices.Equal(got, wantCLI) {
			t.Errorf("the editor and kodyls review disagree\neditor (file data.id code lines):\n  %s\nCLI (file id ruleId lines):\n  %s", strings.Join(got, "\n  "), strings.Join(wantCLI, "\n  "))
		}
	})

	t.Run("neovim", func(t *testing.T) {
		eachNeovim(t, func(t *testing.T, nv neovim) {
			codes := map[string][]string{}
			var files []string
			for _, f := range kodyRulesChanged {
				files = append(files, f.path)
			}
			for _, v := range kodyRulesViolations {
				codes[v.file] = append(codes[v.file], s.uuids[v.rule])
			}
			filesJSON, _ := json.Marshal(files)
			codesJSON, _ := json.Marshal(codes)
			before := s.callCounts()
			data := nvimScript(t, nv, "kodyrules.lua", s.repo, "KODYLS_LLM_BASE_URL="+s.fake.URL, "KODYLS_LLM_MODEL=fake-model",
				"KODYLS_FILES="+string(filesJSON), "KODYLS_EXPECT="+string(codesJSON))
			var res struct {
				nvimResult
				Diagnostics []struct {
					File    string `json:"file"`
					Source  string `json:"source"`
					Code    string `json:"code"`
					Line    int    `json:"line"`
					EndLine int    `json:"end_line"`
				} `json:"diagnostics"`
			}
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatalf("result %s: %v", data, err)
			}
			res.check(t, data)
			s.checkCalls(t, before)
			var got []string
			for _, d := range res.Diagnostics {
				if d.Source != "kody" {
					t.Errorf("%s:%d: diagnostic from %q", d.File, d.Line, d.Source)
				}
				got = append(got, fmt.Sprintf("%s %s lines %d-%d", d.File, d.Code, d.Line, d.EndLine))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("Neovim's diagnostics (file code lines):\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	})
}

// diagnosticEndLine is the 1-based last line a diagnostic covers: a range
// ending at a line start ends on the line before.
func diagnosticEndLine(d protocol.Diagnostic) int {
	end := int(d.Range.End.Line) + 1
	if d.Range.End.Character == 0 && d.Range.End.Line > d.Range.Start.Line {
		end--
	}
	return end
}
