package review

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/patch"
	"github.com/kodustech/kodyls/prompts"
)

// usageLog keeps the token counts the endpoint reported for each call.
type usageLog struct {
	mu sync.Mutex
	us []llm.Usage
}

func (l *usageLog) RecordUsage(_ context.Context, u llm.Usage) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.us = append(l.us, u)
	return nil
}

func (l *usageLog) calls() []llm.Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]llm.Usage(nil), l.us...)
}

// leavesReplyRoom fails the test for each call whose prompt leaves the
// reply less room, in the default window, than the gateway keeps for it.
func leavesReplyRoom(t *testing.T, calls []llm.Usage) {
	t.Helper()
	reply := min(ReplyReserveTokens, llm.DefaultContextWindow/4)
	for i, u := range calls {
		if u.PromptTokens+reply > llm.DefaultContextWindow {
			t.Errorf("call %d: %d prompt tokens leave less than %d for the reply", i+1, u.PromptTokens, reply)
		}
	}
}

// newFilePatch is the patch of a new Go file made of copies of the
// benchmark's handler, each under another package name: about 600 tokens
// per copy.
func newFilePatch(copies int) string {
	var b strings.Builder
	for i := range copies {
		b.WriteString(strings.Replace(benchCurrent, "package orders", fmt.Sprintf("// part %d of orders", i), 1))
	}
	return patch.Diff("internal/orders/handler.go", "", b.String(), -1).Render()
}

// A model with the default 8,192-token window gets the rules of a file
// check in as many calls as its window needs: a bigger patch leaves less
// room, so the same rules take more calls, and no call leaves the reply
// less room than the gateway keeps for it. A patch that fills the window
// still gets every rule checked, one per call.
func TestRuleBatchesFitTheWindow(t *testing.T) {
	rs := benchRules(50)
	run := func(t *testing.T, p string, rs []prompts.RuleRef) (calls []llm.Usage, prompts []string) {
		t.Helper()
		s := newServer(t)
		check := s.On(llmtest.SchemaName(SchemaKodyRules), llmtest.JSON(map[string]any{"violations": []any{}}))
		usage := &usageLog{}
		g := newGateway(t, s.URL, llm.WithUsage(usage))
		if w := g.ContextWindow(g.Model(llm.TaskRules)); w != llm.DefaultContextWindow {
			t.Fatalf("the test model's window is %d, want the default %d", w, llm.DefaultContextWindow)
		}
		_, err := New(g, Options{}).CheckKodyRules(context.Background(), FileInput{Path: "internal/orders/handler.go", Language: "go", Patch: p, Rules: rs})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range s.ChatRequests() {
			prompts = append(prompts, r.Chat.Text())
		}
		if check.Times() != len(prompts) {
			t.Fatalf("%d checks of %d requests", check.Times(), len(prompts))
		}
		return usage.calls(), prompts
	}
	// everyRuleOnce fails unless each rule went to exactly one call.
	everyRuleOnce := func(t *testing.T, rs []prompts.RuleRef, ps []string) {
		t.Helper()
		for _, r := range rs {
			n := 0
			for _, p := range ps {
				n += strings.Count(p, ": "+r.Title+"\n")
			}
			if n != 1 {
				t.Errorf("rule %q sent %d times", r.Title, n)
			}
		}
	}
	window := llm.DefaultContextWindow
	reply := min(ReplyReserveTokens, window/4)

	smallCalls, smallPrompts := run(t, benchPatch(t), rs)
	bigPatch := newFilePatch(6)
	if n := llm.CountTokens("fake-model", bigPatch); n < 2000 {
		t.Fatalf("the big patch has %d tokens, want more than 2,000", n)
	}
	bigCalls, bigPrompts := run(t, bigPatch, rs)
	if len(bigCalls) <= len(smallCalls) {
		t.Fatalf("%d calls with the big patch, %d with the small one: the patch's size is not budgeted", len(bigCalls), len(smallCalls))
	}
	for name, calls := range map[string][]llm.Usage{"small patch": smallCalls, "big patch": bigCalls} {
		for i, u := range calls {
			if u.PromptTokens == 0 || u.PromptTokens+reply > window {
				t.Errorf("%s, call %d: %d prompt tokens leave less than %d of the %d-token window for the reply", name, i+1, u.PromptTokens, reply, window)
			}
		}
	}
	everyRuleOnce(t, rs, smallPrompts)
	everyRuleOnce(t, rs, bigPrompts)

	few := rs[:3]
	_, hugePrompts := run(t, newFilePatch(12), few)
	if len(hugePrompts) != len(few) {
		t.Fatalf("a patch larger than the window: %d calls for %d rules, want one per rule", len(hugePrompts), len(few))
	}
	everyRuleOnce(t, few, hugePrompts)
}

// The budget is the analysis' share of the window less the prompt without
// rules; a large window is not cut by the reply's room, a small one is,
// and a prompt that fills the window leaves nothing (one rule per call).
func TestRuleBatchBudget(t *testing.T) {
	for _, c := range []struct{ window, bare, want int }{
		{8192, 700, 8192 - 2048 - 700 - chatOverheadTokens},
		{128_000, 700, 96_000 - 700 - chatOverheadTokens},
		{8192, 9000, 0},
	} {
		if got := RuleBatchBudget(c.window, c.bare); got != c.want {
			t.Errorf("RuleBatchBudget(%d, %d) = %d, want %d", c.window, c.bare, got, c.want)
		}
	}
}
