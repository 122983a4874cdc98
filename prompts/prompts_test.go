package prompts

import (
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// builtinNames is the complete list of builtin prompts. A prompt added or
// removed must be added or removed here too, which keeps the list and the
// callers' expectations in step.
var builtinNames = []string{
	"doctor_ping",
	"fix_plan",
	"fix_reflect",
	"fix_system",
	"json_object_fallback",
	"json_repair",
	"kodyrules_check",
	"kodyrules_guardian",
	"kodyrules_pr_check",
	"kodyrules_pr_evidence",
	"kodyrules_split",
	"plan_execute_answer",
	"plan_execute_plan",
	"plan_execute_replan",
	"rca_final",
	"rca_system",
	"rca_user",
	"review_analyze_system",
	"review_analyze_user",
	"review_cluster",
	"review_mode_select",
	"review_safeguard",
	"review_severity",
	"review_validate_implemented",
	"rewoo_plan",
	"rewoo_solve",
}

func TestBuiltinLoads(t *testing.T) {
	sub, err := fs.Sub(builtinFS, "templates")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(sub); err != nil {
		t.Fatalf("embedded templates: %v", err)
	}
	if builtin.err != nil {
		t.Fatalf("Builtin: %v", builtin.err)
	}
	if defaultsErr != nil {
		t.Fatalf("kodus_defaults.yml: %v", defaultsErr)
	}
}

// TestBuiltinHeaders checks each embedded file on its own, so that a broken
// header is reported against its file.
func TestBuiltinHeaders(t *testing.T) {
	files, err := fs.Glob(builtinFS, "templates/*.tmpl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded templates: %v", err)
	}
	for _, f := range files {
		src, err := fs.ReadFile(builtinFS, f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := parseBuiltinHeader(src)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if want := strings.TrimSuffix(f[len("templates/"):], ".tmpl"); h.Name != want {
			t.Errorf("%s: header name %q, want %q", f, h.Name, want)
		}
		if len(h.Purpose) < 20 {
			t.Errorf("%s: purpose %q says too little", f, h.Purpose)
		}
	}
}

func TestListSortedAndComplete(t *testing.T) {
	var names []string
	for _, p := range Builtin().List() {
		names = append(names, p.Name)
		if p.Source != BuiltinSource || p.Version < 1 || p.Purpose == "" {
			t.Errorf("%s: %+v", p.Name, p)
		}
		got, ok := Builtin().Get(p.Name)
		if !ok || got != p {
			t.Errorf("Get(%q) = %+v, %v; want %+v", p.Name, got, ok, p)
		}
	}
	if !slices.Equal(names, builtinNames) {
		t.Errorf("List() names:\n got %q\nwant %q", names, builtinNames)
	}
	if _, ok := Builtin().Get("nope"); ok {
		t.Error("Get of an unknown name succeeded")
	}
}

func TestExamplesComplete(t *testing.T) {
	for _, name := range builtinNames {
		if _, ok := Example(name); !ok {
			t.Errorf("builtin %s has no example data", name)
		}
	}
	for name := range examples {
		if _, ok := Builtin().Get(name); !ok {
			t.Errorf("example for %s, which is not a builtin", name)
		}
	}
	if _, ok := Example("nope"); ok {
		t.Error("Example of an unknown name succeeded")
	}
}

// TestEveryBuiltinRenders renders each builtin with its example data and
// with the zero value of the same type: neither may fail or leave a
// placeholder behind.
func TestEveryBuiltinRenders(t *testing.T) {
	for _, name := range builtinNames {
		ex, _ := Example(name)
		zero := reflect.New(reflect.TypeOf(ex)).Elem().Interface()
		for what, data := range map[string]any{"example": ex, "zero value": zero} {
			r, err := Builtin().Render(name, data)
			if err != nil {
				t.Errorf("%s with its %s: %v", name, what, err)
				continue
			}
			if r.Name != name || r.Source != BuiltinSource || r.Version < 1 {
				t.Errorf("%s: Rendered = %+v", name, r)
			}
			if strings.TrimSpace(r.Text) == "" || strings.Contains(r.Text, "<no value>") {
				t.Errorf("%s with its %s rendered %q", name, what, r.Text)
			}
		}
	}
}

func TestRenderMissingKey(t *testing.T) {
	// A map lacking a key the template uses.
	_, err := Builtin().Render("rca_final", map[string]any{"Reasonn": "typo"})
	if err == nil || !strings.Contains(err.Error(), `map has no entry for key "Reason"`) {
		t.Errorf("map without the key: err = %v", err)
	}
	// A struct of the wrong type.
	_, err = Builtin().Render("rca_final", DoctorPingData{})
	if err == nil || !strings.Contains(err.Error(), "can't evaluate field Reason") {
		t.Errorf("struct without the field: err = %v", err)
	}
	if err != nil && !strings.Contains(err.Error(), "rca_final") {
		t.Errorf("error does not name the prompt: %v", err)
	}
	// The right keys in a map are fine.
	if _, err := Builtin().Render("rca_final", map[string]any{"Reason": "time is up"}); err != nil {
		t.Errorf("complete map: %v", err)
	}
}

func TestRenderUnknownPrompt(t *testing.T) {
	_, err := Builtin().Render("review_everything", nil)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"review_everything"`, "known:", "review_analyze_user", "rca_system"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestRenderFillsOverrides: a zero Overrides field gets the Set's, an
// explicit one is kept, and the caller's value is never modified.
func TestRenderFillsOverrides(t *testing.T) {
	data := &SeverityData{}
	r, err := Builtin().Render("review_severity", data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text, defaults.SeverityFlags["critical"]) {
		t.Error("zero Overrides did not render the default severity flags")
	}
	if !reflect.DeepEqual(*data, SeverityData{}) {
		t.Errorf("caller's data modified: %+v", *data)
	}

	own := Overrides{SeverityFlags: map[string]string{"critical": "- The build server catches fire"}}
	r, err = Builtin().Render("review_severity", SeverityData{Overrides: own})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text, "The build server catches fire") {
		t.Error("explicit Overrides not rendered")
	}
	if !strings.Contains(r.Text, defaults.SeverityFlags["low"]) {
		t.Error("levels missing from explicit Overrides do not fall back to the defaults")
	}
}

// TestKodyRulesNeverShowUUIDs: rules are numbered from 1 and their UUIDs
// never reach the model, which would copy them back with digits missing.
func TestKodyRulesNeverShowUUIDs(t *testing.T) {
	for _, name := range []string{"kodyrules_check", "kodyrules_guardian", "review_analyze_user"} {
		ex, _ := Example(name)
		r, err := Builtin().Render(name, ex)
		if err != nil {
			t.Fatal(err)
		}
		for _, rule := range exampleRules() {
			if strings.Contains(r.Text, rule.UUID) {
				t.Errorf("%s shows the UUID of rule %q", name, rule.Title)
			}
		}
		for _, s := range exampleSuggestions() {
			if strings.Contains(r.Text, s.ID) {
				t.Errorf("%s shows the ID of suggestion %q", name, s.OneSentenceSummary)
			}
		}
	}
	ex, _ := Example("kodyrules_check")
	r, _ := Builtin().Render("kodyrules_check", ex)
	if !strings.Contains(r.Text, "### Rule 1: No fmt.Println") || !strings.Contains(r.Text, "### Rule 2: Parameterise") {
		t.Errorf("rules are not numbered from 1:\n%s", r.Text)
	}
}

// TestReviewModeHeavyOnlyAddsFile: the whole file appears in heavy mode
// only.
func TestReviewAnalyzeHeavy(t *testing.T) {
	ex, _ := Example("review_analyze_user")
	heavy := ex.(ReviewAnalyzeData)
	light := heavy
	light.Heavy = false
	rh, err := Builtin().Render("review_analyze_user", heavy)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := Builtin().Render("review_analyze_user", light)
	if err != nil {
		t.Fatal(err)
	}
	const marker = "39 | func (s *Service) Charge("
	if !strings.Contains(rh.Text, marker) {
		t.Error("heavy mode lacks the numbered file")
	}
	if strings.Contains(rl.Text, marker) || strings.Contains(rl.Text, "The whole file") {
		t.Error("light mode shows the file")
	}
}

func TestRenderConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		for _, name := range builtinNames {
			wg.Go(func() {
				ex, _ := Example(name)
				if _, err := Builtin().Render(name, ex); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
}

func TestTemplateErrorPosition(t *testing.T) {
	_, err := parseTemplate("x.tmpl", []byte("a\nb\n{{if}}\n"))
	if err == nil {
		t.Fatal("no parse error")
	}
	if got := templateErrorLine("x.tmpl", err); got != 3 {
		t.Errorf("parse error line = %d, want 3 (%v)", got, err)
	}
	if msg := templateErrorMsg("x.tmpl", err); strings.HasPrefix(msg, "template:") || msg == "" {
		t.Errorf("message keeps the prefix: %q", msg)
	}
	tm, err := parseTemplate("x.tmpl", []byte("a\n\n  {{.Nope}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = execute(tm, DoctorPingData{})
	if err == nil {
		t.Fatal("no exec error")
	}
	if got := templateErrorLine("x.tmpl", err); got != 3 {
		t.Errorf("exec error line = %d, want 3 (%v)", got, err)
	}
	if msg := templateErrorMsg("x.tmpl", err); !strings.HasPrefix(msg, "executing") {
		t.Errorf("exec message = %q", msg)
	}
}

// TestGatewayDataRenders renders the JSON prompts with structs shaped like
// the LLM gateway's own data types (agents/llm.RepairPrompt and
// FallbackPrompt), which it passes to Render through its prompt hook.
func TestGatewayDataRenders(t *testing.T) {
	type repairPrompt struct {
		SchemaName, Schema, Reply, Error string
		Truncated                        bool
	}
	type fallbackPrompt struct{ SchemaName, Schema string }
	r, err := Builtin().Render("json_repair", repairPrompt{SchemaName: "s", Schema: "{}", Error: "bad", Reply: "{"})
	if err != nil || !strings.Contains(r.Text, "failed validation") || !strings.Contains(r.Text, "Validation error: bad") {
		t.Errorf("repair: %q, %v", r.Text, err)
	}
	r, err = Builtin().Render("json_repair", repairPrompt{Schema: "{}", Truncated: true})
	if err != nil || !strings.Contains(r.Text, "cut off at the token limit") || strings.Contains(r.Text, "Validation error") {
		t.Errorf("truncated repair: %q, %v", r.Text, err)
	}
	r, err = Builtin().Render("json_object_fallback", fallbackPrompt{SchemaName: "s", Schema: `{"type":"object"}`})
	if err != nil || !strings.Contains(r.Text, `{"type":"object"}`) {
		t.Errorf("fallback: %q, %v", r.Text, err)
	}
}
