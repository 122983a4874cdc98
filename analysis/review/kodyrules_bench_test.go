package review

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/analysis/patch"
	"github.com/kodustech/kodyls/prompts"
)

// benchModel is the model whose tokenizer counts the prompts: gpt-4o has
// an exact tokenizer, so the numbers are real tokens, not estimates.
const benchModel = "gpt-4o"

// benchRuleTopic is one realistic Kody Rule; bad and good are Go
// snippets, empty for a rule written as prose only.
type benchRuleTopic struct {
	title, instructions, bad, good string
}

// benchTopics are rules a Go team writes: two to five sentences of
// instructions, about half with a bad and a good example.
var benchTopics = []benchRuleTopic{
	{"Wrap errors with context",
		"Every error returned from a call into another package is wrapped with fmt.Errorf and %w. The message says what was being done, in lower case, without \"failed to\". Bare returns of another package's error lose the call site.",
		"if err != nil {\n\treturn err\n}", "if err != nil {\n\treturn fmt.Errorf(\"load user %s: %w\", id, err)\n}"},
	{"Handlers never panic",
		"HTTP handlers must not call panic or log.Fatal. A handler that cannot continue writes an error response with the right status code and returns. The recovery middleware is a safety net, not an error path.",
		"if user == nil {\n\tpanic(\"no user\")\n}", "if user == nil {\n\thttp.Error(w, \"user not found\", http.StatusNotFound)\n\treturn\n}"},
	{"Use the repository for database access",
		"Handlers and services do not call database/sql directly. Every query goes through a repository type of the internal/store package, so that queries are tested and instrumented in one place.",
		"rows, err := db.QueryContext(ctx, \"SELECT * FROM orders WHERE id = $1\", id)", "order, err := s.orders.Find(ctx, id)"},
	{"Pass the request context",
		"Functions that do I/O take a context.Context as their first parameter and pass it on. Inside a handler, use r.Context(); never context.Background() or context.TODO(). This keeps cancellation and deadlines working end to end.",
		"order, err := s.orders.Find(context.Background(), id)", "order, err := s.orders.Find(r.Context(), id)"},
	{"Validate request input",
		"Every handler validates its decoded input before using it. Required fields are checked, numbers are range-checked and strings are length-limited. An invalid request gets 400 with a message naming the field.",
		"", ""},
	{"No fmt.Println in production code",
		"Production code logs through the injected *slog.Logger, never fmt.Println or the log package. Log lines carry structured attributes, not formatted strings.",
		"fmt.Println(\"created order\", order.ID)", "s.log.Info(\"created order\", \"order\", order.ID)"},
	{"Close response bodies",
		"Every http.Response body is closed with defer right after the error check. Drain it first when the connection should be reused.",
		"", ""},
	{"Money is never a float",
		"Amounts of money are int64 cents or the decimal type of internal/money, never float32 or float64. Rounding errors in floats have caused wrong invoices before. Conversions for display happen at the edge only.",
		"type Invoice struct {\n\tTotal float64\n}", "type Invoice struct {\n\tTotal money.Cents\n}"},
	{"Timeouts on outgoing HTTP calls",
		"Outgoing HTTP requests use the shared client of internal/httpx, which has timeouts. http.DefaultClient and http.Get have none and can hang a worker forever.",
		"", ""},
	{"Goroutines have an owner",
		"A goroutine is started only by code that also stops it: it takes a context or a done channel and is waited for with a WaitGroup or errgroup. Fire-and-forget goroutines leak under load and hide errors.",
		"go sendEmail(order)", "g.Go(func() error { return s.mail.Send(ctx, order) })"},
	{"Exported identifiers are documented",
		"Every exported type, function and constant has a doc comment that starts with its name and says what it is for. Comments explain why, in full sentences.",
		"", ""},
	{"Return early",
		"Handle errors and edge cases first and return; keep the happy path at the left margin. Avoid else after a return. Deeply nested conditions are hard to review.",
		"if err == nil {\n\tif ok {\n\t\treturn process(v)\n\t}\n} else {\n\treturn err\n}", "if err != nil {\n\treturn err\n}\nif !ok {\n\treturn nil\n}\nreturn process(v)"},
	{"No secrets in code",
		"API keys, passwords and tokens are read from the configuration, never written in code or tests. Test fixtures use obviously fake values such as \"test-key\". A leaked key must be rotated, which takes a day.",
		"", ""},
	{"Use transactions for multi-step writes",
		"Writes that change more than one table run inside store.WithTx. A partial write leaves orders without their lines. The transaction is passed down, never opened twice.",
		"s.orders.Insert(ctx, o)\ns.lines.Insert(ctx, o.Lines)", "return s.store.WithTx(ctx, func(tx store.Tx) error {\n\tif err := tx.Orders().Insert(ctx, o); err != nil {\n\t\treturn err\n\t}\n\treturn tx.Lines().Insert(ctx, o.Lines)\n})"},
	{"Respond with JSON through the helper",
		"Handlers write JSON responses with httpx.JSON, which sets the content type and status and logs encoding errors. Encoding by hand forgets the header.",
		"", ""},
	{"Table-driven tests",
		"Tests of a function with several cases are table-driven with t.Run per case. Each case has a name that says what it checks. Copy-pasted test functions drift apart.",
		"", ""},
	{"No global mutable state",
		"Packages do not keep mutable package-level variables; state lives in a struct that is passed in. Globals make tests order-dependent and race under t.Parallel.",
		"var cache = map[string]*User{}", "type Users struct {\n\tmu    sync.Mutex\n\tcache map[string]*User\n}"},
	{"Limit request body size",
		"Handlers that decode a body wrap it with http.MaxBytesReader first. The limit is 1 MiB unless the endpoint uploads files.",
		"", ""},
	{"Check the error of Close on writers",
		"The error of Close on a file or writer that was written to is checked and returned, since it reports failed writes. Deferred Close on a reader needs no check.",
		"defer f.Close()\n_, err = f.Write(data)\nreturn err", "if _, err := f.Write(data); err != nil {\n\tf.Close()\n\treturn err\n}\nreturn f.Close()"},
	{"Authorize before loading",
		"Handlers check that the caller may access a resource before loading it, through authz.Require. Loading first and checking later leaks existence through timing and error messages. Admin-only endpoints say so in their route.",
		"", ""},
	{"Time is injected",
		"Code that depends on the current time takes a clock (internal/clock) instead of calling time.Now. Tests set the clock; sleeping in tests is not allowed.",
		"if time.Now().After(o.Expires) {", "if s.clock.Now().After(o.Expires) {"},
	{"Constants for status strings",
		"Order, payment and shipment states are typed constants, never string literals. A typo in a literal compiles and breaks a state machine silently.",
		"", ""},
	{"Prefer small interfaces at the consumer",
		"Interfaces are declared by the package that uses them and list only the methods it calls. Return concrete types. Large provider-side interfaces make mocking and evolution hard.",
		"type Store interface {\n\tFind(ctx context.Context, id string) (*Order, error)\n\tInsert(ctx context.Context, o *Order) error\n\tDelete(ctx context.Context, id string) error\n\tList(ctx context.Context) ([]*Order, error)\n}", "type orderFinder interface {\n\tFind(ctx context.Context, id string) (*Order, error)\n}"},
	{"Metrics for new endpoints",
		"A new endpoint is registered through router.Handle, which records latency and status metrics. Registering on the mux directly leaves it invisible on the dashboards.",
		"", ""},
	{"SQL is parameterized",
		"SQL statements never build values into the query string with fmt.Sprintf or concatenation. Values go in as parameters. Table and column names that vary come from a fixed allow-list.",
		"q := fmt.Sprintf(\"SELECT * FROM users WHERE email = '%s'\", email)", "row := db.QueryRowContext(ctx, \"SELECT * FROM users WHERE email = $1\", email)"},
}

// benchScopes make the same topic a different rule, as teams write one
// rule per service.
var benchScopes = []string{"orders", "billing", "accounts", "shipping", "catalog", "search", "notifications", "reports"}

// benchRules returns n rules, the same n every time.
func benchRules(n int) []prompts.RuleRef {
	sev := []string{"critical", "high", "medium", "low"}
	out := make([]prompts.RuleRef, n)
	for i := range out {
		t := benchTopics[i%len(benchTopics)]
		scope := benchScopes[(i/len(benchTopics))%len(benchScopes)]
		r := prompts.RuleRef{
			UUID:         fmt.Sprintf("rule-%03d", i),
			Title:        fmt.Sprintf("%s (%s service)", t.title, scope),
			Severity:     sev[i%len(sev)],
			Instructions: fmt.Sprintf("Applies to the %s service. %s", scope, t.instructions),
		}
		if t.bad != "" {
			r.Examples = []prompts.RuleExample{{Good: false, Language: "go", Code: t.bad}, {Good: true, Language: "go", Code: t.good}}
		}
		out[i] = r
	}
	return out
}

// benchBase is a Go handler of about sixty lines; benchCurrent changes it
// in two places far apart, so the patch has two hunks.
const benchBase = `package orders

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"example.com/shop/internal/httpx"
	"example.com/shop/internal/store"
)

// Handler serves the orders API.
type Handler struct {
	orders *store.Orders
	log    *slog.Logger
}

// createRequest is the body of POST /orders.
type createRequest struct {
	CustomerID string   ` + "`json:\"customerId\"`" + `
	Items      []string ` + "`json:\"items\"`" + `
	Coupon     string   ` + "`json:\"coupon\"`" + `
}

// Create stores a new order for the customer.
func (h *Handler) Create(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "invalid body", http.StatusBadRequest)
		return
	}
	if req.CustomerID == "" || len(req.Items) == 0 {
		http.Error(w, "customerId and items are required", http.StatusBadRequest)
		return
	}
	order, err := h.orders.Create(r.Context(), req.CustomerID, req.Items)
	if err != nil {
		h.log.Error("create order", "error", err)
		http.Error(w, "cannot create the order", http.StatusInternalServerError)
		return
	}
	httpx.JSON(w, http.StatusCreated, order)
}

// Get returns one order.
func (h *Handler) Get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	order, err := h.orders.Find(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		http.Error(w, "no such order", http.StatusNotFound)
		return
	case err != nil:
		h.log.Error("find order", "order", id, "error", err)
		http.Error(w, "cannot load the order", http.StatusInternalServerError)
		return
	}
	httpx.JSON(w, http.StatusOK, order)
}
`

var benchCurrent = strings.NewReplacer(
	"	order, err := h.orders.Create(r.Context(), req.CustomerID, req.Items)\n",
	"	total := 0.0\n	for _, it := range req.Items {\n		total += prices[it]\n	}\n	order, err := h.orders.Create(context.Background(), req.CustomerID, req.Items)\n	fmt.Println(\"order total\", total)\n",
	"	order, err := h.orders.Find(r.Context(), id)\n",
	"	if id == \"\" {\n		panic(\"no id\")\n	}\n	order, err := h.orders.Find(r.Context(), id)\n",
).Replace(benchBase)

func benchPatch(tb testing.TB) string {
	fp := patch.Diff("internal/orders/handler.go", benchBase, benchCurrent, -1)
	if len(fp.Hunks) != 2 {
		tb.Fatalf("the change has %d hunks, want 2", len(fp.Hunks))
	}
	return fp.Render()
}

// checkPrompts renders the kodyrules_check prompts of one file check for a
// model with a context window of window tokens: one per batch of rules.
func checkPrompts(tb testing.TB, set *prompts.Set, p string, rs []prompts.RuleRef, window int) []string {
	data := prompts.KodyRulesData{Language: "go", FileName: "internal/orders/handler.go", Patch: p}
	bare, err := set.Render("kodyrules_check", data)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, batch := range batchRules(rs, benchModel, RuleBatchBudget(window, llm.CountTokens(benchModel, bare.Text))) {
		data.Rules = batch
		msg, err := set.Render("kodyrules_check", data)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, msg.Text)
	}
	return out
}

// Windows of the benchmark: the default for a model the gateway does not
// know (a local model served with its default context) and gpt-4o's.
const (
	smallWindow = llm.DefaultContextWindow
	largeWindow = 128_000
)

// BenchmarkKodyRulesPromptTokens measures what the Kody Rules check of one
// file change costs: the prompt tokens for 50 realistic rules, how many
// calls 50 and 200 rules take and the largest prompt, with an 8,192-token
// window and a 128k one, and the time to batch and render 50 rules for
// the large window (ns/op).
func BenchmarkKodyRulesPromptTokens(b *testing.B) {
	set := prompts.Builtin()
	p := benchPatch(b)
	rules50, rules200 := benchRules(50), benchRules(200)

	tokens := func(ps []string) (total, largest int) {
		for _, s := range ps {
			n := llm.CountTokens(benchModel, s)
			total += n
			largest = max(largest, n)
		}
		return total, largest
	}
	ruleTokens := 0
	for _, r := range rules50 {
		ruleTokens += RuleTokens(benchModel, r)
	}
	// The prompt without rules: the instructions, the diff and the output
	// format, paid once per batch.
	bare, err := set.Render("kodyrules_check", prompts.KodyRulesData{Language: "go", FileName: "internal/orders/handler.go", Patch: p})
	if err != nil {
		b.Fatal(err)
	}
	type windowCase struct {
		name   string
		window int
	}
	cases := []windowCase{{"8k-window", smallWindow}, {"128k-window", largeWindow}}

	b.ResetTimer()
	for b.Loop() {
		checkPrompts(b, set, p, rules50, largeWindow)
	}
	b.StopTimer()
	for _, c := range cases {
		ps50 := checkPrompts(b, set, p, rules50, c.window)
		ps200 := checkPrompts(b, set, p, rules200, c.window)
		total50, largest50 := tokens(ps50)
		_, largest200 := tokens(ps200)
		b.ReportMetric(float64(total50), "prompt-tokens/50-rules/"+c.name)
		b.ReportMetric(float64(len(ps50)), "batches/50-rules/"+c.name)
		b.ReportMetric(float64(largest50), "largest-prompt-tokens/50-rules/"+c.name)
		b.ReportMetric(float64(len(ps200)), "batches/200-rules/"+c.name)
		b.ReportMetric(float64(largest200), "largest-prompt-tokens/200-rules/"+c.name)
	}
	b.ReportMetric(float64(ruleTokens)/float64(len(rules50)), "tokens/rule")
	b.ReportMetric(float64(llm.CountTokens(benchModel, bare.Text)), "tokens-without-rules")
}
