package lsp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/review/reviewtest"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// ruleDiagnostic returns the diagnostic of the rule with the given code.
func ruleDiagnostic(ds []protocol.Diagnostic, code string) (protocol.Diagnostic, bool) {
	for _, d := range ds {
		if lsptest.Code(d) == code {
			return d, true
		}
	}
	return protocol.Diagnostic{}, false
}

func hasAction(actions []protocol.CodeAction, prefix string) bool {
	for _, a := range actions {
		if strings.HasPrefix(a.Title, prefix) {
			return true
		}
	}
	return false
}

// runAction runs the command of the code action whose title starts with
// prefix, failing when none is offered.
func runAction(t *testing.T, e *reviewEnv, actions []protocol.CodeAction, prefix string, result any) protocol.CodeAction {
	t.Helper()
	for _, a := range actions {
		if strings.HasPrefix(a.Title, prefix) {
			if a.Command.Command == "" {
				return a
			}
			var arg json.RawMessage
			if len(a.Command.Arguments) > 0 {
				raw, err := json.Marshal(a.Command.Arguments[0])
				if err != nil {
					t.Fatal(err)
				}
				arg = raw
			}
			if err := e.ExecuteCommand(a.Command.Command, arg, result); err != nil {
				t.Fatalf("%s: %v", a.Title, err)
			}
			return a
		}
	}
	var titles []string
	for _, a := range actions {
		titles = append(titles, a.Title)
	}
	t.Fatalf("no action %q among %q", prefix, titles)
	return protocol.CodeAction{}
}

// TestModelRuleViolationCodeActions: a Kody Rule violation the model found
// offers its fix, the rule and the dismissals; Show opens the rule file at
// the rule, "Dismiss all like this" dismisses this rule's violations in the
// file and leaves another rule's, and Dismiss removes the one it is on.
func TestModelRuleViolationCodeActions(t *testing.T) {
	const loopsTitle, sumTitle = "Loops over slices use range", "Accumulators are named after what they hold"
	repo := lsptest.NewRepo(t, map[string]string{
		"main.go":              reviewGo,
		".kody/rules/loops.md": loopRule(loopsTitle),
		".kody/rules/sum.md": "---\ntitle: " + sumTitle + "\nuuid: sum-name\nseverity: low\npath: \"**/*.go\"\n---\n" +
			"## Instructions\nA variable that accumulates says what it accumulates: total, not sum.\n",
	})
	fake := llmtest.NewServer()
	defer fake.Close()
	reviewtest.Script(fake, nil)
	// The check lists the rules in load order, loops.md before sum.md.
	reviewtest.Rules(fake, nil,
		reviewtest.RuleViolation{Rule: 1, Reason: "The loop indexes the slice.", ExistingCode: "for i := 0; i <= len(items); i++ {",
			ImprovedCode: "for _, it := range items {", OneSentenceSummary: "range over items", RelevantLinesStart: 7, RelevantLinesEnd: 7},
		reviewtest.RuleViolation{Rule: 2, Reason: "sum says nothing.", ExistingCode: "sum := 0",
			ImprovedCode: "total := 0", OneSentenceSummary: "name it total", RelevantLinesStart: 6, RelevantLinesEnd: 6},
	)
	e := startReviewing(t, repo, fake, t.TempDir(), "save")
	e.AwaitIdle("")
	e.OpenFile("main.go")
	typeBug(e)
	e.Save("main.go")
	ds := e.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		_, loops := ruleDiagnostic(ds, "loops-range")
		_, sum := ruleDiagnostic(ds, "sum-name")
		return loops && sum
	})
	loops, _ := ruleDiagnostic(ds, "loops-range")
	if loops.Range.Start.Line != 6 {
		t.Fatalf("the loop violation is on line %d, want 7: %s", loops.Range.Start.Line+1, lsptest.Describe(ds))
	}

	actions := e.CodeActions("main.go", loops.Range, []protocol.Diagnostic{loops})
	fix := runAction(t, e, actions, "Apply Kody fix: ", nil)
	if !strings.Contains(fix.Title, loopsTitle) || fix.Edit == nil && fix.Data == nil {
		t.Fatalf("fix action %+v: want the rule's title and an edit", fix)
	}
	if fix.Edit != nil {
		edits := fix.Edit.Changes[e.URI("main.go")]
		if len(edits) != 1 || !strings.Contains(edits[0].NewText, "for _, it := range items {") {
			t.Fatalf("fix edit %+v", fix.Edit)
		}
	}
	var loc protocol.Location
	runAction(t, e, actions, "Show Kody Rule: "+loopsTitle, &loc)
	if loc.URI != e.URI(".kody/rules/loops.md") {
		t.Fatalf("Show Kody Rule opened %s, want the rule file", loc.URI)
	}
	if !hasAction(actions, "Dismiss this Kody suggestion") {
		t.Fatal("no Dismiss action on the loop violation")
	}
	allLike := runAction(t, e, actions, "Dismiss all", nil)
	if !strings.Contains(allLike.Title, loopsTitle) {
		t.Errorf("%q should say which rule's violations it dismisses", allLike.Title)
	}
	ds = e.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		_, loops := ruleDiagnostic(ds, "loops-range")
		return !loops
	})
	sum, ok := ruleDiagnostic(ds, "sum-name")
	if !ok {
		t.Fatalf("dismissing the loop rule's violations took the other rule's along: %s", lsptest.Describe(ds))
	}

	var res contract.DismissResult
	runAction(t, e, e.CodeActions("main.go", sum.Range, []protocol.Diagnostic{sum}), "Dismiss this Kody suggestion", &res)
	if res.Dismissed != 1 {
		t.Fatalf("Dismiss removed %d findings, want 1", res.Dismissed)
	}
	e.AwaitDiagnostics("main.go", func(ds []protocol.Diagnostic) bool {
		_, sum := ruleDiagnostic(ds, "sum-name")
		return !sum
	})

	// Dismissed stays dismissed: the next save's review does not bring
	// them back.
	e.Save("main.go")
	e.AwaitIdle("")
	ds = e.Diagnostics("main.go")
	if _, loops := ruleDiagnostic(ds, "loops-range"); loops {
		t.Fatalf("a dismissed violation came back: %s", lsptest.Describe(ds))
	}
	if _, sum := ruleDiagnostic(ds, "sum-name"); sum {
		t.Fatalf("a dismissed violation came back: %s", lsptest.Describe(ds))
	}
	e.Shutdown()
}
