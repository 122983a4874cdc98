package llm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Per-message overhead of the chat format (role and separators), as in
// OpenAI's counting guide: about 4 tokens per message plus 3 that prime
// the reply.
const (
	tokensPerMessage = 4
	tokensReplyPrime = 3
)

var (
	loaderOnce sync.Once
	encoders   = map[string]*encoder{
		tiktoken.MODEL_O200K_BASE:  {name: tiktoken.MODEL_O200K_BASE},
		tiktoken.MODEL_CL100K_BASE: {name: tiktoken.MODEL_CL100K_BASE},
	}
)

// encoder loads one BPE table on first use: parsing a table takes tens of
// milliseconds and megabytes, which a session that never counts tokens for
// OpenAI models should not pay.
type encoder struct {
	name string
	once sync.Once
	tk   *tiktoken.Tiktoken
}

func (e *encoder) get() *tiktoken.Tiktoken {
	e.once.Do(func() {
		// The offline loader reads tables embedded in the binary; the
		// default one would download them, and kodyls must work offline.
		loaderOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
		tk, err := tiktoken.GetEncoding(e.name)
		if err == nil {
			e.tk = tk
		}
	})
	return e.tk
}

// encodingFor names the tiktoken encoding of model's family, or "" when
// the family is unknown.
func encodingFor(model string) string {
	m := normModel(model)
	switch {
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "chatgpt-4o"), strings.HasPrefix(m, "gpt-4.1"),
		strings.HasPrefix(m, "gpt-4.5"), strings.HasPrefix(m, "gpt-5"), isOSeries(m):
		return tiktoken.MODEL_O200K_BASE
	case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"), strings.HasPrefix(m, "gpt-35"),
		strings.HasPrefix(m, "text-embedding-"):
		return tiktoken.MODEL_CL100K_BASE
	}
	return ""
}

func isOSeries(m string) bool {
	for _, p := range []string{"o1", "o3", "o4"} {
		if m == p || strings.HasPrefix(m, p+"-") {
			return true
		}
	}
	return false
}

// normModel lower-cases a model name and drops a provider or organisation
// prefix ("openai/gpt-4o", "meta-llama/Llama-3.1-8B").
func normModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return m
}

// CountTokens counts the tokens of text for model. For OpenAI families it
// uses tiktoken (o200k_base for gpt-4o, gpt-4.1, gpt-5 and the o-series;
// cl100k_base for gpt-4, gpt-3.5 and text-embedding models). Other models
// have their own tokenizers, which kodyls does not ship, so their count is
// the estimate ceil(bytes/3.5): code and English average 3.5–4 bytes per
// token in the common BPE vocabularies, and erring on the high side keeps
// trimmed prompts inside the window. Message overhead is not included.
func CountTokens(model, text string) int {
	if text == "" {
		return 0
	}
	if name := encodingFor(model); name != "" {
		if tk := encoders[name].get(); tk != nil {
			return len(tk.EncodeOrdinary(text))
		}
	}
	return estimateTokens(text)
}

func estimateTokens(text string) int {
	return (len(text)*2 + 6) / 7 // ceil(len/3.5)
}

// countMessages estimates the prompt tokens of msgs, overhead included.
func countMessages(model string, msgs []Message) int {
	n := tokensReplyPrime
	for _, m := range msgs {
		n += tokensPerMessage + CountTokens(model, m.Content) + countToolCalls(model, m.ToolCalls)
	}
	return n
}

// countReply estimates the completion tokens of a reply: its text and its
// tool calls, which are most of an agent's replies.
func countReply(model string, r *ChatResponse) int {
	return CountTokens(model, r.Content) + countToolCalls(model, r.ToolCalls)
}

// countToolCalls estimates the tokens of tool calls: each name, its
// arguments and the few tokens that frame a call.
func countToolCalls(model string, calls []ToolCall) int {
	n := 0
	for _, c := range calls {
		n += CountTokens(model, c.Name) + CountTokens(model, string(c.Arguments)) + 3
	}
	return n
}

// contextWindows maps substrings of model names to context sizes; the
// first match wins, so more specific names come first.
var contextWindows = []struct {
	sub    string
	tokens int
}{
	{"gpt-4.1", 1_047_576},
	{"gpt-4o", 128_000},
	{"chatgpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4-1106", 128_000},
	{"gpt-4-0125", 128_000},
	{"gpt-4-32k", 32_768},
	{"gpt-4.5", 128_000},
	{"gpt-5", 400_000},
	{"gpt-4", 8_192},
	{"gpt-3.5-turbo-instruct", 4_096},
	{"gpt-3.5", 16_385},
	{"llama3.1", 131_072},
	{"llama-3.1", 131_072},
	{"llama3.2", 131_072},
	{"llama-3.2", 131_072},
	{"llama3.3", 131_072},
	{"llama-3.3", 131_072},
	{"llama3", 8_192},
	{"llama-3", 8_192},
	{"qwen2.5-coder", 32_768},
	{"qwen2.5", 32_768},
	{"qwen3", 32_768},
	{"codellama", 16_384},
	{"deepseek-coder-v2", 131_072},
	{"deepseek-r1", 131_072},
	{"deepseek-coder", 16_384},
	{"mistral-nemo", 131_072},
	{"mistral", 32_768},
	{"mixtral", 32_768},
	{"codestral", 32_768},
	{"gemma3", 131_072},
	{"gemma", 8_192},
	{"starcoder2", 16_384},
}

// ContextWindowFor returns the context size of a known model family, and
// DefaultContextWindow otherwise.
func ContextWindowFor(model string) int {
	m := normModel(model)
	if isOSeries(m) {
		if strings.HasPrefix(m, "o1-mini") {
			return 128_000
		}
		return 200_000
	}
	for _, w := range contextWindows {
		if strings.Contains(m, w.sub) {
			return w.tokens
		}
	}
	return DefaultContextWindow
}

// assemble turns parts into messages that fit the model's context window
// minus the reply reserve. When they do not fit, whole parts are dropped,
// lowest priority first (and among equals the later one, as callers put the
// most relevant context first); parts with the highest priority (system
// prompt, the question) are never dropped. If that is not enough, the
// least important remaining part is cut to its first lines. Every text is
// redacted before it is counted, since that is the text sent.
func (g *Gateway) assemble(model string, parts []Part, maxTokens int) ([]Message, []string) {
	type piece struct {
		Part
		idx     int
		tokens  int
		dropped bool
	}
	window := g.ContextWindow(model)
	reserve := maxTokens
	if reserve <= 0 {
		reserve = min(4096, window/4)
	}
	budget := window - reserve
	if budget < window/4 {
		budget = window / 4 // a reply budget bigger than the window is a caller error; keep a usable prompt
	}
	ps := make([]*piece, len(parts))
	total := tokensReplyPrime
	maxPrio := parts[0].Priority
	for i, p := range parts {
		p.Text = g.redact(p.Text)
		if p.Role == "" {
			p.Role = "user"
		}
		if p.Label == "" {
			p.Label = fmt.Sprintf("part %d", i+1)
		}
		ps[i] = &piece{Part: p, idx: i, tokens: CountTokens(model, p.Text)}
		total += ps[i].tokens + tokensPerMessage
		maxPrio = max(maxPrio, p.Priority)
	}
	byImportance := func(a, b *piece) int { // least important first
		if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
			return c
		}
		return cmp.Compare(b.idx, a.idx)
	}
	order := slices.Clone(ps)
	slices.SortStableFunc(order, byImportance)

	var trimmed []string
	for _, p := range order {
		if total <= budget {
			break
		}
		if p.Priority == maxPrio {
			continue
		}
		p.dropped = true
		total -= p.tokens + tokensPerMessage
		trimmed = append(trimmed, fmt.Sprintf("dropped %s (priority %d, %d tokens)", p.Label, p.Priority, p.tokens))
	}
	for _, p := range order {
		if total <= budget {
			break
		}
		if p.dropped {
			continue
		}
		target := p.tokens - (total - budget)
		text, kept, all := truncateLines(model, p.Text, target)
		n := CountTokens(model, text)
		total -= p.tokens - n
		p.Text, p.tokens = text, n
		trimmed = append(trimmed, fmt.Sprintf("truncated %s to %d of %d lines", p.Label, kept, all))
	}
	if len(trimmed) > 0 {
		g.log.Info("llm prompt trimmed to fit the context window", "model", model, "window", window,
			"reserve", reserve, "tokens", total, "trimmed", trimmed)
	}

	var msgs []Message
	for _, p := range ps {
		if p.dropped {
			continue
		}
		if n := len(msgs); n > 0 && msgs[n-1].Role == p.Role {
			msgs[n-1].Content += "\n\n" + p.Text
			continue
		}
		msgs = append(msgs, Message{Role: p.Role, Content: p.Text})
	}
	return msgs, trimmed
}

// truncateLines keeps the first lines of text that fit in target tokens,
// followed by a marker saying how much was cut, so the model knows the
// text is incomplete. A first line too long on its own is cut by bytes.
func truncateLines(model, text string, target int) (out string, kept, total int) {
	lines := strings.SplitAfter(text, "\n")
	total = len(lines)
	marker := func(cut int) string {
		return fmt.Sprintf("\n[… %d lines trimmed to fit the context window]", cut)
	}
	room := target - CountTokens(model, marker(total))
	var b strings.Builder
	used := 0
	for _, l := range lines {
		n := CountTokens(model, l)
		if used+n > room {
			break
		}
		b.WriteString(l)
		used += n
		kept++
	}
	if kept == 0 && room > 0 && len(lines) > 0 {
		// Cut the first line by bytes, at a rune boundary, assuming the
		// estimate's 3.5 bytes per token.
		l := lines[0]
		cut := min(len(l), room*7/2)
		for cut > 0 && cut < len(l) && !utf8.RuneStart(l[cut]) {
			cut--
		}
		b.WriteString(l[:cut])
	}
	if kept == total {
		return text, kept, total
	}
	return strings.TrimRight(b.String(), "\n") + marker(total-kept), kept, total
}
