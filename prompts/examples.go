package prompts

import "strings"

// examples gives, for every builtin prompt, a function returning a fresh,
// realistic value of its data type. The golden tests render these; an
// override is checked against its prompt's example when it is loaded; and
// the test that every builtin has an example keeps the list complete.
var examples = map[string]func() any{
	"review_mode_select": func() any {
		return ReviewModeData{Language: "go", FileName: exampleFile, Patch: examplePatch}
	},
	"review_analyze_system": func() any {
		return ReviewSystemData{ResponseLanguage: "en-US"}
	},
	"review_analyze_user": func() any {
		return ReviewAnalyzeData{
			Language:    "go",
			FileName:    exampleFile,
			Patch:       examplePatch,
			FileContent: exampleContent,
			Heavy:       true,
			Rules:       exampleRules(),
		}
	},
	"review_severity": func() any {
		return SeverityData{Suggestions: exampleSuggestions()}
	},
	"review_safeguard": func() any {
		return SafeguardData{
			Language:         "go",
			FileName:         exampleFile,
			Patch:            examplePatch,
			FileContent:      exampleContent,
			Suggestions:      exampleSuggestions(),
			ResponseLanguage: "en-US",
		}
	},
	"review_validate_implemented": func() any {
		return ValidateImplementedData{
			Language:    "go",
			FileName:    exampleFile,
			Patch:       exampleFollowUpPatch,
			Suggestions: exampleSuggestions(),
		}
	},
	"review_cluster": func() any {
		s := exampleSuggestions()
		s = append(s, Suggestion{
			ID:                 "5b0d7c1e-93a4-4c2f-8e61-0f2b7d9a4c33",
			RelevantFile:       "internal/billing/refund.go",
			Language:           "go",
			SuggestionContent:  "The rows returned by QueryContext are never closed, so every refund keeps a database connection busy until the garbage collector finalizes it; under load the pool runs dry.",
			ExistingCode:       "rows, err := s.db.QueryContext(ctx, \"SELECT amount FROM charges WHERE id = $1\", chargeID)\nif err != nil {\n\treturn fmt.Errorf(\"query charge: %w\", err)\n}",
			ImprovedCode:       "rows, err := s.db.QueryContext(ctx, \"SELECT amount FROM charges WHERE id = $1\", chargeID)\nif err != nil {\n\treturn fmt.Errorf(\"query charge: %w\", err)\n}\ndefer rows.Close()",
			OneSentenceSummary: "Close the rows returned by QueryContext so the connection goes back to the pool.",
			RelevantLinesStart: 31,
			RelevantLinesEnd:   34,
			Label:              "bug",
			Severity:           "high",
		})
		return ClusterData{Suggestions: s, ResponseLanguage: "en-US"}
	},
	"kodyrules_check": func() any {
		return KodyRulesData{
			Language:         "go",
			FileName:         exampleFile,
			Patch:            examplePatch,
			FileContent:      exampleContent,
			Rules:            exampleRules(),
			ResponseLanguage: "en-US",
		}
	},
	"kodyrules_split": func() any {
		return RuleSplitData{FileName: "AGENTS.md", Content: exampleAgentsFile}
	},
	"kodyrules_pr_check": func() any {
		return PullRequestRulesData{
			Files: []string{exampleFile, "internal/billing/refund_test.go"},
			Patch: examplePatch,
			Rules: []RuleRef{{
				UUID:         "8d3c2f4e-1a5b-4c6d-9e7f-0a1b2c3d4e5f",
				Title:        "Handlers change with their tests",
				Severity:     "high",
				Instructions: "A change to an HTTP handler under internal/api must come with a change to that handler's tests in the same pull request.",
			}},
			ResponseLanguage: "en-US",
			Evidence:         exampleEvidence()[:1],
		}
	},
	"kodyrules_guardian": func() any {
		return GuardianData{Rules: exampleRules(), Suggestions: exampleSuggestions()}
	},
	"plan_execute_plan": func() any {
		return PlanExecutePlanData{Tools: examplePlanTools(), MaxSteps: 6}
	},
	"plan_execute_replan": func() any {
		steps := examplePlanSteps()
		return PlanExecuteReplanData{Tools: examplePlanTools(), Steps: steps, Failed: steps[1], MaxSteps: 5}
	},
	"plan_execute_answer": func() any {
		return PlanExecuteAnswerData{Steps: examplePlanSteps(), Note: "step 2 failed and the plan could not be revised"}
	},
	"rewoo_plan": func() any {
		return ReWooPlanData{Tools: examplePlanTools(), MaxSteps: 6}
	},
	"rewoo_solve": func() any {
		return ReWooSolveData{Evidence: exampleEvidence()}
	},
	"kodyrules_pr_evidence": func() any {
		return PullRequestEvidenceData{
			Files: []string{exampleFile},
			Patch: examplePatch,
			Rules: []RuleRef{{
				UUID:         "8d3c2f4e-1a5b-4c6d-9e7f-0a1b2c3d4e5f",
				Title:        "Handlers change with their tests",
				Severity:     "high",
				Instructions: "A change to an HTTP handler under internal/api must come with a change to that handler's tests in the same pull request.",
			}},
		}
	},
	"rca_system": func() any {
		return RCASystemData{
			Tools: []ToolRef{
				{Name: "read_file", Description: "read lines of a workspace file around a line number"},
				{Name: "search_workspace", Description: "search the workspace for a regular expression"},
				{Name: "find_references", Description: "list the references to the symbol at a position"},
				{Name: "similar_errors", Description: "past errors of this workspace similar to a message, with their root causes"},
				{Name: "local_docs", Description: "local documentation such as go doc or rustc --explain"},
			},
			MaxIterations:    10,
			ResponseLanguage: "en-US",
		}
	},
	"rca_user": func() any {
		return RCAUserData{
			Error: ParsedError{
				Tool:     "go test",
				Language: "go",
				File:     "internal/billing/charge.go",
				Line:     43,
				Severity: "error",
				Message:  "panic: runtime error: invalid memory address or nil pointer dereference",
				Raw: "panic: runtime error: invalid memory address or nil pointer dereference [recovered]\n" +
					"[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x6a1f2c]\n\n" +
					"goroutine 7 [running]:\n" +
					"example.com/shop/internal/billing.(*Service).Charge(0x0, {0x8c2e10, 0xc0000a6000}, {0x7b5f21, 0x6}, 0x3e8)\n" +
					"\t/home/dev/shop/internal/billing/charge.go:43 +0x4c\n" +
					"example.com/shop/internal/billing.TestChargeDebitsAccount(0xc000102820)\n" +
					"\t/home/dev/shop/internal/billing/charge_test.go:18 +0x65",
			},
			Code: CodeContext{
				File:      "internal/billing/charge.go",
				Language:  "go",
				StartLine: 37,
				Text:      lines(exampleContent, 37, 50),
			},
			Similar: []PastError{{
				Message:       "panic: runtime error: invalid memory address or nil pointer dereference",
				File:          "internal/billing/refund_test.go",
				RootCause:     "The test built the service as a nil *Service (var s *billing.Service) instead of calling billing.New, so the first field access panicked.",
				FixGuidelines: []string{"Create the service with `billing.New(db)` in the test.", "Keep `Service` methods from being called on a nil receiver by returning the service from a constructor only."},
				Confidence:    0.9,
			}},
		}
	},
	"fix_system": func() any {
		return FixSystemData{
			Tools: []ToolRef{
				{Name: "read_file", Description: "read lines of a workspace file around a line number"},
				{Name: "search_workspace", Description: "search the workspace for a regular expression"},
			},
			Build:            "go build ./...",
			ResponseLanguage: "en-US",
		}
	},
	"fix_plan": func() any {
		return FixPlanData{
			Error: ParsedError{Tool: "go", Language: "go", File: "internal/billing/charge.go", Line: 43, Column: 9, Severity: "error",
				Message: "cannot use amount (variable of type int) as string value in argument to s.debit",
				Raw:     "# example.com/shop/internal/billing\ninternal/billing/charge.go:43:9: cannot use amount (variable of type int) as string value in argument to s.debit"},
			Code: CodeContext{File: "internal/billing/charge.go", Language: "go", StartLine: 37, Text: lines(exampleContent, 37, 50)},
		}
	},
	"fix_reflect": func() any {
		return FixReflectData{
			Error:   ParsedError{Tool: "go", Language: "go", File: "main.go", Line: 6, Column: 14, Severity: "error", Message: "cannot use n (variable of type int) as string value in return statement"},
			Version: 1,
			Plan: "plan v1 (failed)\n  1. [done] read: read main.go around line 6 (read_file)\n" +
				"  2. [done] edit: return the number as a string (propose_edits) after read\n" +
				"  3. [failed] verify: run go build ./... with the edits (verify_build) after edit",
			BuildOutput: "# example.com/app\n./main.go:6:9: undefined: strconv",
			Round:       1,
			MaxRounds:   3,
		}
	},
	"rca_final": func() any {
		return RCAFinalData{Reason: "the step limit (10) was reached"}
	},
	"json_repair": func() any {
		return JSONRepairData{
			SchemaName: "review_mode",
			Schema:     exampleSchema,
			Reply:      `{"reviewMode": "heavy"}`,
			Error:      `reviewMode: "heavy" is not one of "light_mode", "heavy_mode"`,
		}
	},
	"json_object_fallback": func() any {
		return JSONFallbackData{SchemaName: "review_mode", Schema: exampleSchema}
	},
	"doctor_ping": func() any { return DoctorPingData{} },
}

// Example returns realistic data for the named builtin prompt, of the type
// its template expects: a new value on every call. It is what the golden
// files show and what overrides are checked against; kodyls can use it to
// preview a prompt. ok is false for an unknown name.
func Example(name string) (data any, ok bool) {
	f, ok := examples[name]
	if !ok {
		return nil, false
	}
	return f(), true
}

const exampleFile = "internal/billing/charge.go"

const examplePatch = `## file: 'internal/billing/charge.go'

@@ -40,13 +40,18 @@ func (s *Service) Charge(ctx context.Context, customerID string, cents int64) error {
__new hunk__
40  	if cents <= 0 {
41  		return ErrInvalidAmount
42  	}
43 +	rows, err := s.db.QueryContext(ctx, "SELECT balance FROM accounts WHERE id = '"+customerID+"'")
44 +	if err != nil {
45 +		return fmt.Errorf("query balance: %w", err)
46 +	}
47 +	var balance int64
48 +	if rows.Next() {
49 +		rows.Scan(&balance)
50 +	}
51  	if balance < cents {
52  		return ErrInsufficientFunds
53  	}
54 +	fmt.Println("charging", customerID, cents)
55  	_, err = s.db.ExecContext(ctx, "UPDATE accounts SET balance = balance - $1 WHERE id = $2", cents, customerID)
56  	return err
57  }
__old hunk__
 	if cents <= 0 {
 		return ErrInvalidAmount
 	}
-	balance, err := s.balance(ctx, customerID)
-	if err != nil {
-		return err
-	}
 	if balance < cents {
 		return ErrInsufficientFunds
 	}
 	_, err = s.db.ExecContext(ctx, "UPDATE accounts SET balance = balance - $1 WHERE id = $2", cents, customerID)
 	return err
 }
`

const exampleFollowUpPatch = `## file: 'internal/billing/charge.go'

@@ -43,5 +43,6 @@ func (s *Service) Charge(ctx context.Context, customerID string, cents int64) error {
__new hunk__
43 +	rows, err := s.db.QueryContext(ctx, "SELECT balance FROM accounts WHERE id = $1", customerID)
44  	if err != nil {
45  		return fmt.Errorf("query balance: %w", err)
46  	}
47 +	defer rows.Close()
48  	var balance int64
__old hunk__
-	rows, err := s.db.QueryContext(ctx, "SELECT balance FROM accounts WHERE id = '"+customerID+"'")
 	if err != nil {
 		return fmt.Errorf("query balance: %w", err)
 	}
 	var balance int64
`

const exampleContent = `// Package billing charges customers' prepaid balances.
package billing

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrInvalidAmount is returned for a charge of zero or less.
var ErrInvalidAmount = errors.New("billing: invalid amount")

// ErrInsufficientFunds is returned when the balance does not cover a charge.
var ErrInsufficientFunds = errors.New("billing: insufficient funds")

// Service charges accounts stored in db.
type Service struct {
	db *sql.DB
}

// New returns a Service using db.
func New(db *sql.DB) *Service { return &Service{db: db} }

func (s *Service) balance(ctx context.Context, customerID string) (int64, error) {
	var b int64
	err := s.db.QueryRowContext(ctx, "SELECT balance FROM accounts WHERE id = $1", customerID).Scan(&b)
	return b, err
}

// Charge debits cents from the customer's balance.
//
// It fails with ErrInvalidAmount when cents is not positive and with
// ErrInsufficientFunds when the balance does not cover the charge.
//
// The caller must not hold a transaction on s.db: Charge runs its own
// statements, and a held transaction on a single-connection pool would
// deadlock.
func (s *Service) Charge(ctx context.Context, customerID string, cents int64) error {
	if cents <= 0 {
		return ErrInvalidAmount
	}
	rows, err := s.db.QueryContext(ctx, "SELECT balance FROM accounts WHERE id = '"+customerID+"'")
	if err != nil {
		return fmt.Errorf("query balance: %w", err)
	}
	var balance int64
	if rows.Next() {
		rows.Scan(&balance)
	}
	if balance < cents {
		return ErrInsufficientFunds
	}
	fmt.Println("charging", customerID, cents)
	_, err = s.db.ExecContext(ctx, "UPDATE accounts SET balance = balance - $1 WHERE id = $2", cents, customerID)
	return err
}
`

const exampleSchema = `{"type":"object","properties":{"reviewMode":{"type":"string","enum":["light_mode","heavy_mode"]}},"required":["reviewMode"],"additionalProperties":false}`

func exampleRules() []RuleRef {
	return []RuleRef{
		{
			UUID:         "6f1c2a9e-0b7d-4a55-9c1e-2d3f4a5b6c7d",
			Title:        "No fmt.Println in library code",
			Severity:     "high",
			Instructions: "Library packages must not print to standard output. Use the structured logger (log/slog) passed in by the caller instead.",
			Examples: []RuleExample{
				{Good: false, Language: "go", Code: `fmt.Println("charging", id)`},
				{Good: true, Language: "go", Code: `s.log.Info("charging", "customer", id)`},
			},
		},
		{
			UUID:         "a3e8d5b2-7c14-4f6e-b9a0-51d2c8e7f403",
			Title:        "Parameterise every SQL query",
			Severity:     "critical",
			Instructions: "Pass values to SQL as query parameters ($1, $2, …). Never build a query by concatenating or formatting strings.",
		},
	}
}

func exampleSuggestions() []Suggestion {
	return []Suggestion{
		{
			ID:                 "c2f4e6a8-1b3d-4f5a-9c7e-0d2b4f6a8c1e",
			RelevantFile:       exampleFile,
			Language:           "go",
			SuggestionContent:  "The balance query concatenates customerID into the SQL text. A customer ID such as `x' OR '1'='1` changes the query; pass it as a parameter instead.",
			ExistingCode:       `rows, err := s.db.QueryContext(ctx, "SELECT balance FROM accounts WHERE id = '"+customerID+"'")`,
			ImprovedCode:       `rows, err := s.db.QueryContext(ctx, "SELECT balance FROM accounts WHERE id = $1", customerID)`,
			OneSentenceSummary: "Pass customerID as a query parameter to prevent SQL injection.",
			RelevantLinesStart: 43,
			RelevantLinesEnd:   43,
			Label:              "security",
			Severity:           "critical",
		},
		{
			ID:                 "e4a6c8b0-2d4f-4b6c-8e0a-1f3d5b7c9e2a",
			RelevantFile:       exampleFile,
			Language:           "go",
			SuggestionContent:  "The rows returned by QueryContext are never closed, so each charge holds a database connection until the rows are garbage collected; under load the pool runs dry and charges block.",
			ExistingCode:       "rows, err := s.db.QueryContext(ctx, \"SELECT balance FROM accounts WHERE id = '\"+customerID+\"'\")\nif err != nil {\n\treturn fmt.Errorf(\"query balance: %w\", err)\n}",
			ImprovedCode:       "rows, err := s.db.QueryContext(ctx, \"SELECT balance FROM accounts WHERE id = '\"+customerID+\"'\")\nif err != nil {\n\treturn fmt.Errorf(\"query balance: %w\", err)\n}\ndefer rows.Close()",
			OneSentenceSummary: "Close the rows returned by QueryContext so the connection goes back to the pool.",
			RelevantLinesStart: 43,
			RelevantLinesEnd:   46,
			Label:              "bug",
			Severity:           "high",
		},
		{
			ID:                 "f1b3d5e7-9a2c-4e4f-a6b8-3c5e7a9b1d4f",
			RelevantFile:       exampleFile,
			Language:           "go",
			SuggestionContent:  "The error of rows.Scan is ignored: when the scan fails, balance stays 0 and the charge is refused with ErrInsufficientFunds instead of reporting the real error.",
			ExistingCode:       "if rows.Next() {\n\trows.Scan(&balance)\n}",
			ImprovedCode:       "if rows.Next() {\n\tif err := rows.Scan(&balance); err != nil {\n\t\treturn fmt.Errorf(\"scan balance: %w\", err)\n\t}\n}",
			OneSentenceSummary: "Check the error of rows.Scan instead of treating a failed scan as a zero balance.",
			RelevantLinesStart: 48,
			RelevantLinesEnd:   50,
			Label:              "bug",
			Severity:           "medium",
		},
		{
			ID:                 "0a2c4e6f-8b1d-4f3a-b5c7-9e1f3a5c7e8b",
			RelevantFile:       exampleFile,
			Language:           "go",
			SuggestionContent:  "The balance is read and then updated in two statements without a transaction or a conditional UPDATE, so two concurrent charges can both pass the check and overdraw the account.",
			ExistingCode:       "_, err = s.db.ExecContext(ctx, \"UPDATE accounts SET balance = balance - $1 WHERE id = $2\", cents, customerID)\nreturn err",
			ImprovedCode:       "res, err := s.db.ExecContext(ctx, \"UPDATE accounts SET balance = balance - $1 WHERE id = $2 AND balance >= $1\", cents, customerID)\nif err != nil {\n\treturn err\n}\nif n, _ := res.RowsAffected(); n == 0 {\n\treturn ErrInsufficientFunds\n}\nreturn nil",
			OneSentenceSummary: "Make the balance check and the debit one conditional UPDATE so concurrent charges cannot overdraw.",
			RelevantLinesStart: 55,
			RelevantLinesEnd:   56,
			Label:              "bug",
			Severity:           "high",
		},
	}
}

// lines returns lines from to to (1-based, inclusive) of s.
func lines(s string, from, to int) string {
	all := strings.Split(s, "\n")
	return strings.Join(all[from-1:to], "\n") + "\n"
}

func examplePlanTools() []PlanTool {
	return []PlanTool{
		{Name: "read_file", Description: "read lines of a workspace file around a line number", Parameters: `{"type":"object","required":["path"],"properties":{"path":{"type":"string"},"line":{"type":"integer"}}}`},
		{Name: "search_workspace", Description: "search the workspace for a regular expression", Parameters: `{"type":"object","required":["pattern"],"properties":{"pattern":{"type":"string"}}}`},
		{Name: "list_files", Description: "list the files under a directory", Parameters: `{"type":"object","properties":{"dir":{"type":"string"}}}`},
	}
}

func examplePlanSteps() []PlanStepResult {
	return []PlanStepResult{
		{ID: "1", Description: "read the refund handler around the error", Tool: "read_file", Args: `{"line":42,"path":"internal/billing/refund.go"}`, Status: "done",
			Result: "41\tfunc Refund(w http.ResponseWriter, r *http.Request) {\n42\t\tamount := r.URL.Query().Get(\"amount\")"},
		{ID: "2", Description: "read the refund tests", Tool: "read_file", Args: `{"path":"internal/billing/refund_tests.go"}`, Status: "failed",
			Result: "error: internal/billing/refund_tests.go does not exist"},
		{ID: "3", Description: "find the callers of Refund", Tool: "search_workspace", Args: `{"pattern":"Refund\\("}`, Status: "pending"},
	}
}

func exampleEvidence() []EvidenceRef {
	return []EvidenceRef{
		{ID: "E1", Tool: "list_files", Args: `{"dir":"internal/billing"}`, Reason: "the tests beside the handler", Text: "internal/billing/refund.go\ninternal/billing/refund_test.go"},
		{ID: "E2", Tool: "read_file", Args: `{"path":"#E1"}`, Reason: "what the tests cover", Text: "error: path is outside the workspace", Failed: true},
	}
}

// exampleAgentsFile is an AGENTS.md mixing workflow steps with code rules.
const exampleAgentsFile = `# AGENTS.md
## Setup
- Install deps with ` + "`go mod download`" + `.
- Run ` + "`make test`" + ` before you open a PR.
## Code style
- Never use fmt.Println in production code; use the logger.
- Every exported function must have a doc comment.
- Wrap errors with %w and context.
## Commit messages
- Use Conventional Commits.
`
