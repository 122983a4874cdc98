package workspace

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/analysis/gate"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/prompts"
)

// SchemaRuleSplit names the structured answer of kodyrules_split, the
// model's split of an assistant's instruction file into rules.
const SchemaRuleSplit = "kodyrules_split"

// splitPrompt is the prompt that asks for the split.
const splitPrompt = "kodyrules_split"

// splitFeature names the split's model calls in the usage log.
const splitFeature = "rules-split"

// splitTTL is how long a split stays in the store's cache. The key holds
// the file's content, so an edited file is split again whatever the TTL.
const splitTTL = 90 * 24 * time.Hour

// splitReply is the model's answer to kodyrules_split.
type splitReply struct {
	Rules []rules.SplitRule `json:"rules"`
}

// splitter keeps the models' splits of assistants' files: in the store's
// cache (so that an unchanged file is never split twice, across restarts
// too) and in memory (for a process without a store). A split that failed
// is not asked again in the same process, so a reload after it cannot
// start it over and over. Memory keeps only the current content's entry
// of each file: a file edited all day must not keep every version's
// answer (the store keeps them, with a time to live).
type splitter struct {
	mu       sync.Mutex
	answers  map[string][]rules.SplitRule
	failed   map[string]bool
	inflight map[string]bool
	current  map[string]string // by folder root and file: the key of its content now
}

func newSplitter() *splitter {
	return &splitter{answers: map[string][]rules.SplitRule{}, failed: map[string]bool{}, inflight: map[string]bool{}, current: map[string]string{}}
}

// see records that the file owner (folder root and file) now has the
// content of key, and forgets what memory kept for its other content.
// sp.mu is held.
func (sp *splitter) see(owner, key string) {
	if old, ok := sp.current[owner]; ok && old != key {
		delete(sp.answers, old)
		delete(sp.failed, old)
	}
	sp.current[owner] = key
}

// splitFile is an assistant's file among a folder's rules that a model may
// split: its content, the rules it gave without a model and the cache key
// of its split.
type splitFile struct {
	src     *rules.Assistant
	file    string
	content []byte
	det     []*rules.Rule
	prompt  prompts.Rendered
	key     string
}

// splitFiles returns the assistants' files among rs whose split a model
// may give: none without a model. The files are read again from the
// workspace through os.Root, as the rule sources read them.
func (s *Services) splitFiles(root string, rs []*rules.Rule) []splitFile {
	if !s.ModelConfigured() {
		return nil
	}
	g, _ := s.Gateway()
	if g == nil {
		return nil
	}
	model := g.Model(llm.TaskRules)
	var out []splitFile
	index := map[string]int{}
	for _, r := range rs {
		src, ok := rules.AssistantSource(r.Source)
		if !ok || r.Split {
			continue
		}
		i, seen := index[r.File]
		if !seen {
			i = len(out)
			index[r.File] = i
			out = append(out, splitFile{src: src, file: r.File})
		}
		out[i].det = append(out[i].det, r)
	}
	if len(out) == 0 {
		return nil
	}
	ws, err := os.OpenRoot(root)
	if err != nil {
		return nil
	}
	defer ws.Close()
	// What the model is sent honours the workspace's ignore list, and
	// nothing is sent while kodus-config.yml may have lost part of it.
	privacy, _ := gate.ForConfig(kodusconfig.Load(root))
	kept := out[:0]
	for _, sf := range out {
		if privacy.Refuses(sf.file) {
			continue
		}
		st, err := ws.Stat(sf.file)
		if err != nil || !st.Mode().IsRegular() || st.Size() > rules.MaxFileSize {
			continue
		}
		if sf.content, err = ws.ReadFile(sf.file); err != nil {
			continue
		}
		// The text the rules were read from: a UTF-16 file decoded.
		if sf.content, err = rules.DecodeText(sf.content); err != nil {
			continue
		}
		sf.prompt, err = s.Prompts.Render(splitPrompt, prompts.RuleSplitData{FileName: sf.file, Content: string(sf.content), Globs: sf.det[0].Paths})
		if err != nil {
			s.log.Warn("cannot render the split prompt", "file", sf.file, "error", err)
			continue
		}
		sum := sha256.New()
		for _, part := range []string{sf.prompt.Name, strconv.Itoa(sf.prompt.Version), model, sf.file, string(sf.content)} {
			sum.Write([]byte(part))
			sum.Write([]byte{0})
		}
		sf.key = "kodyrules-split:" + hex.EncodeToString(sum.Sum(nil))
		kept = append(kept, sf)
	}
	return kept
}

// lookupSplit returns the cached split of key, the content of the file
// owner (folder root and file) now.
func (s *Services) lookupSplit(ctx context.Context, owner, key string) ([]rules.SplitRule, bool) {
	sp := s.split
	sp.mu.Lock()
	sp.see(owner, key)
	a, ok := sp.answers[key]
	sp.mu.Unlock()
	if ok || s.Store == nil {
		return a, ok
	}
	b, ok, err := s.Store.KV().Get(ctx, key)
	if err != nil || !ok {
		return nil, false
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, false
	}
	sp.mu.Lock()
	if sp.current[owner] == key {
		sp.answers[key] = a
	}
	sp.mu.Unlock()
	return a, true
}

// refineRules is the folder's rule hook: every assistant's file whose
// split is cached is replaced by its split's rules; the others keep the
// rules split without a model and wait for SplitRules. It never calls the
// model.
func (f *Folder) refineRules(ctx context.Context, rs []*rules.Rule) []*rules.Rule {
	files := f.s.splitFiles(f.Root, rs)
	var pending []splitFile
	replace := map[*rules.Rule][]*rules.Rule{} // by the file's first rule
	drop := map[*rules.Rule]bool{}
	for _, sf := range files {
		answer, ok := f.s.lookupSplit(ctx, f.Root+"\x00"+sf.file, sf.key)
		if !ok {
			f.s.split.mu.Lock()
			failed := f.s.split.failed[sf.key]
			f.s.split.mu.Unlock()
			if !failed {
				pending = append(pending, sf)
			}
			continue
		}
		out, _, ok := sf.src.ApplySplit(sf.content, sf.det, answer)
		if !ok {
			continue
		}
		for _, r := range sf.det {
			drop[r] = true
		}
		replace[sf.det[0]] = out
	}
	f.mu.Lock()
	f.pendingSplit = pending
	f.mu.Unlock()
	if len(replace) == 0 {
		return rs
	}
	out := make([]*rules.Rule, 0, len(rs))
	for _, r := range rs {
		if refined, ok := replace[r]; ok {
			out = append(out, refined...)
		}
		if !drop[r] {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b *rules.Rule) int {
		if a.File != b.File {
			return cmp.Compare(a.File, b.File)
		}
		return a.Line - b.Line
	})
	return out
}

// SplitPending reports whether, at the last Reload, some assistant's file
// had no cached split that SplitRules could ask the model for.
func (f *Folder) SplitPending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pendingSplit) > 0
}

// PendingSplitFiles names the assistants' files (relative to the folder)
// that SplitRules would ask the model to split, so that a command can say
// what it waits for.
func (f *Folder) PendingSplitFiles() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.pendingSplit))
	for _, sf := range f.pendingSplit {
		out = append(out, sf.file)
	}
	return out
}

// SplitRules asks the model, one call per file, to split the assistants'
// files that had no cached split at the last Reload, and caches the usable
// answers. It reports whether a file got a new split: a Reload then uses
// it. A file whose answer is unusable (an error, garbage, no rule that
// passes ApplySplit's checks) keeps its rules split without a model and
// is not asked again by this process.
func (f *Folder) SplitRules(ctx context.Context) bool {
	f.mu.Lock()
	pending := f.pendingSplit
	f.pendingSplit = nil
	f.mu.Unlock()
	g, _ := f.s.Gateway()
	if g == nil || len(pending) == 0 {
		return false
	}
	sp := f.s.split
	changed := false
	for _, sf := range pending {
		sp.mu.Lock()
		busy := sp.inflight[sf.key] || sp.failed[sf.key]
		if _, done := sp.answers[sf.key]; done {
			busy = true
		}
		if !busy {
			sp.inflight[sf.key] = true
		}
		sp.mu.Unlock()
		if busy {
			continue
		}
		answer, err := f.s.askSplit(ctx, g, sf)
		sp.mu.Lock()
		delete(sp.inflight, sf.key)
		// Kept only while the file still has this content.
		if sp.current[f.Root+"\x00"+sf.file] == sf.key {
			switch {
			case err == nil:
				sp.answers[sf.key] = answer
			case ctx.Err() == nil:
				sp.failed[sf.key] = true
			}
		}
		sp.mu.Unlock()
		if err != nil {
			if ctx.Err() == nil {
				f.s.log.Warn("the model could not split an assistant's rule file; its sections and bullets stay the rules", "file", sf.file, "error", err)
			}
			continue
		}
		if f.s.Store != nil {
			if b, err := json.Marshal(answer); err == nil {
				if err := f.s.Store.KV().Put(context.WithoutCancel(ctx), sf.key, b, splitTTL); err != nil {
					f.s.log.Warn("cannot cache the split of an assistant's rule file", "file", sf.file, "error", err)
				}
			}
		}
		changed = true
	}
	return changed
}

// ReloadAndSplit is Reload for a command that runs once: with a model
// configured, the assistants' files whose split is not cached are split
// first, so that the rules returned are the refined ones.
func (f *Folder) ReloadAndSplit(ctx context.Context) ([]*rules.Rule, []*rules.LoadError) {
	rs, errs := f.Reload(ctx)
	if f.SplitPending() && f.SplitRules(ctx) {
		rs, errs = f.Reload(ctx)
	}
	return rs, errs
}

// errSplitUnusable is an answer none of whose rules passed the checks.
var errSplitUnusable = errors.New("no rule of the answer passed the checks")

// askSplit asks the model for the split of one file and checks it. The
// rules the checks drop are logged; an answer left with none is an error.
func (s *Services) askSplit(ctx context.Context, g *llm.Gateway, sf splitFile) ([]rules.SplitRule, error) {
	req := llm.StructuredRequest{
		ChatRequest: llm.ChatRequest{
			Feature: splitFeature, Task: llm.TaskRules,
			Messages:   []llm.Message{{Role: "user", Content: sf.prompt.Text}},
			PromptName: sf.prompt.Name, PromptVersion: sf.prompt.Version,
		},
		SchemaName: SchemaRuleSplit,
	}
	reply, res, err := llm.Structured[splitReply](ctx, g, req, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", splitPrompt, err)
	}
	if len(res.Dropped) > 0 {
		s.log.Warn("invalid rules dropped from the split of an assistant's rule file", "file", sf.file, "dropped", res.Dropped)
	}
	out, dropped, ok := sf.src.ApplySplit(sf.content, sf.det, reply.Rules)
	for _, d := range dropped {
		s.log.Warn("a rule of the model's split was dropped", "file", sf.file, "reason", d)
	}
	if !ok {
		return nil, errSplitUnusable
	}
	s.log.Info("split an assistant's rule file with the model", "file", sf.file, "rules", len(out), "without model", len(sf.det))
	if reply.Rules == nil {
		reply.Rules = []rules.SplitRule{}
	}
	return reply.Rules, nil
}
