// Package workspace is kodyls's composition root and its view of a
// workspace. [Open] builds, from one resolved configuration, everything the
// features need — the local store, the prompts, the LLM gateway, the error
// history, the reviewer and the explainer of each folder — and both the
// language server and every CLI command obtain them from it, so that the
// editor and `kodyls review` give the same findings for the same change.
//
// A [Folder] is one workspace root: its Kody Rules, the baselines of its
// files and its reviewer. A [Snapshot] answers, for one document version,
// everything a check needs: text, baseline, changed lines, applicable rules
// and settings. [Reviews] keeps the review findings of the open documents
// and moves them with the user's edits.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"github.com/kodustech/kodyls/agents/strategies"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kodustech/kodyls/agents/fix"
	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/rca"
	"github.com/kodustech/kodyls/agents/redact"
	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/analysis/gate"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/analysis/rules"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/prompts"
)

// Config is the one resolved configuration the services are built from.
type Config struct {
	// Settings is the resolved configuration (contract.Resolve).
	Settings contract.Settings
	// Getenv reads the environment (os.Getenv when nil); it locates the
	// data directory.
	Getenv func(string) string
	// Log receives the logs; never stdout.
	Log *slog.Logger
	// Offline forbids the model even when one is configured.
	Offline bool
	// NoStore opens no local store: nothing is cached or remembered (an
	// evaluation measures the model, not the cache).
	NoStore bool
	// Probe is `kodyls doctor`'s endpoint probe: it sends no user text, so
	// nothing is redacted, and the gateway is built even when no model is
	// set, to list the models the endpoint serves.
	Probe bool
	// Store is an already open local store to use instead of opening one;
	// Close leaves it open (tests share one between processes).
	Store *index.Store
	// AdjustLLM, when set, adjusts the gateway's configuration before it is
	// built (tests turn retries off).
	AdjustLLM func(*llm.Config)
}

// Services are the building blocks shared by every feature of one process.
type Services struct {
	log       *slog.Logger
	getenv    func(string) string
	offline   bool
	probe     bool
	adjust    func(*llm.Config)
	ownsStore bool

	// Store is the local store, nil when it could not be opened (StoreErr
	// says why) or was not wanted.
	Store    *index.Store
	StoreErr error
	// Prompts are the built-in prompt templates.
	Prompts *prompts.Set

	mu         sync.Mutex
	onStatus   []func(llm.Status)
	settings   contract.Settings
	gateway    *llm.Gateway
	gatewayCfg contract.LLM
	gatewayErr error
	history    index.History
	// historyIndexed: history was opened requiring the search index.
	historyIndexed bool
	// pruned: History pruned the history to rca.HistoryLimit.
	pruned    bool
	folders   map[string]*Folder
	dismissed map[string]map[string]bool // when there is no store
	split     *splitter
}

// Open builds the services. It never fails: a store that cannot be opened
// is reported in StoreErr and the features work without memory.
func Open(ctx context.Context, cfg Config) *Services {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	s := &Services{
		log: cfg.Log, getenv: cfg.Getenv, offline: cfg.Offline, probe: cfg.Probe, adjust: cfg.AdjustLLM,
		Store:     cfg.Store,
		Prompts:   prompts.Builtin(),
		settings:  cfg.Settings,
		folders:   map[string]*Folder{},
		dismissed: map[string]map[string]bool{},
		split:     newSplitter(),
	}
	if s.Store == nil && !cfg.NoStore {
		dir, _, err := index.DataDir(cfg.Getenv)
		if err == nil {
			s.Store, err = index.OpenStore(ctx, dir)
		}
		if err != nil {
			s.Store, s.StoreErr = nil, storeError(dir, err)
		}
		s.ownsStore = s.Store != nil
		if s.Store != nil && s.Store.Notice() != nil {
			s.log.Warn(s.Store.Notice().Error())
		}
	}
	return s
}

// lowDisk is the free space under which a failure to open the store is
// put down to a full disk: sqlite needs room for its journal and
// shared-memory files before it can read anything.
const lowDisk = 1 << 20

// smallFileLimit is the file-size limit under which a failure to open the
// store is put down to it.
const smallFileLimit = 64 << 20

// storeError explains why the store could not be opened in dir. sqlite
// reports a full disk as a generic "disk I/O error" when the shared-memory
// file cannot grow, so the free space is checked to say what to do. Only
// an error that may come from a full disk is put down to one: a missing,
// read-only or forbidden directory is reported as it is, whatever the
// free space (a pseudo file system such as /proc reports none).
func storeError(dir string, err error) error {
	msg := err.Error()
	mayBeFull := errors.Is(err, syscall.ENOSPC) || strings.Contains(msg, "database or disk is full") ||
		strings.Contains(msg, "no space left on device") || strings.Contains(msg, "disk I/O error")
	// The data directory may not exist yet: ask the nearest one that does.
	for d := dir; mayBeFull && d != ""; d = filepath.Dir(d) {
		if free, ok := freeBytes(d); ok {
			if free < lowDisk {
				return fmt.Errorf("local store: the disk holding %s is full (%d KB free); free some space, kodyls works without its store until then: %w", dir, free>>10, err)
			}
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	// A file-size limit (`ulimit -f`) fails writes as a full disk does,
	// with plenty of space free.
	if limit, ok := fileSizeLimit(); ok && limit < smallFileLimit && (strings.Contains(err.Error(), "disk I/O error") || strings.Contains(err.Error(), "file too large")) {
		return fmt.Errorf("local store: kodyls may not write files larger than %d KB (ulimit -f), too small for its store in %s; raise the limit, kodyls works without its store until then: %w", limit>>10, dir, err)
	}
	return fmt.Errorf("local store: %w", err)
}

// OnLLMStatus adds a function told when the endpoint goes down or comes
// back. Add it before the first Gateway call.
func (s *Services) OnLLMStatus(fn func(llm.Status)) {
	s.mu.Lock()
	s.onStatus = append(s.onStatus, fn)
	s.mu.Unlock()
}

// Close releases the gateway and the store.
func (s *Services) Close() {
	s.mu.Lock()
	if s.gateway != nil {
		s.gateway.Close()
		s.gateway = nil
	}
	h := s.history
	s.history = nil
	s.mu.Unlock()
	// The history holds the search index open; let go of it before the
	// store it writes its queue to.
	if c, ok := h.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	if s.ownsStore {
		_ = s.Store.Close()
	}
}

// Log is the process's logger.
func (s *Services) Log() *slog.Logger { return s.log }

// Settings returns the current configuration.
func (s *Services) Settings() contract.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// SetSettings replaces the configuration (the editor sent new settings). The
// reviewers are rebuilt when the model changed; it reports whether it did.
func (s *Services) SetSettings(cfg contract.Settings) (llmChanged bool) {
	s.mu.Lock()
	llmChanged = !sameLLM(s.settings.LLM, cfg.LLM)
	s.settings = cfg
	folders := make([]*Folder, 0, len(s.folders))
	for _, f := range s.folders {
		folders = append(folders, f)
	}
	s.mu.Unlock()
	if llmChanged {
		for _, f := range folders {
			f.resetReviewer()
		}
	}
	return llmChanged
}

// ModelConfigured reports whether reviews and explanations may use a model:
// an endpoint and a model are set, and the model is not forbidden.
func (s *Services) ModelConfigured() bool {
	return !s.offline && s.Settings().LLMConfigured()
}

// Gateway returns the LLM gateway for the current settings: nil with no
// error when no model is configured (or Offline), nil and the reason when
// it cannot be built.
func (s *Services) Gateway() (*llm.Gateway, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gatewayLocked()
}

func (s *Services) gatewayLocked() (*llm.Gateway, error) {
	cfg := s.settings
	if s.offline || cfg.LLM.BaseURL == "" || !cfg.LLMConfigured() && !s.probe {
		return nil, nil
	}
	if (s.gateway != nil || s.gatewayErr != nil) && sameLLM(s.gatewayCfg, cfg.LLM) {
		return s.gateway, s.gatewayErr
	}
	if s.gateway != nil {
		s.gateway.Close()
	}
	s.gateway, s.gatewayErr = s.newGateway(cfg)
	s.gatewayCfg = cfg.LLM
	if s.gatewayErr != nil {
		s.log.Warn("LLM not available; working offline", "error", s.gatewayErr)
	}
	return s.gateway, s.gatewayErr
}

// newGateway builds the gateway: the store keeps the response cache and the
// usage log, so an identical request costs no call across restarts; the
// prompts render its repair and fallback messages; every text is redacted.
func (s *Services) newGateway(cfg contract.Settings) (*llm.Gateway, error) {
	models := map[llm.TaskClass]string{}
	for task, m := range cfg.LLM.Models {
		models[llm.TaskClass(task)] = m
	}
	opts := []llm.Option{llm.WithLogger(s.log)}
	if !s.probe {
		opts = append(opts, llm.WithRedactor(redact.Default()))
	}
	if hooks := s.onStatus; len(hooks) > 0 {
		opts = append(opts, llm.WithStatusHook(func(st llm.Status) {
			for _, h := range hooks {
				h(st)
			}
		}))
	}
	if s.Store != nil {
		opts = append(opts, llm.WithCache(s.Store.KV()), llm.WithUsage(usageLog{s.Store}))
	}
	prm := s.Prompts
	opts = append(opts, llm.WithPrompts(func(name string, data any) (string, error) {
		r, err := prm.Render(name, data)
		return r.Text, err
	}))
	lc := llm.Config{
		BaseURL:       cfg.LLM.BaseURL,
		APIKey:        cfg.LLM.APIKey,
		Model:         cfg.LLM.Model,
		Models:        models,
		Timeout:       time.Duration(cfg.LLM.TimeoutMS) * time.Millisecond,
		MaxConcurrent: cfg.LLM.MaxConcurrent,
	}
	if s.adjust != nil {
		s.adjust(&lc)
	}
	g, err := llm.New(lc, opts...)
	if err != nil {
		return nil, fmt.Errorf("llm gateway: %w", err)
	}
	return g, nil
}

// usageLog adapts the sqlite store to the gateway's usage sink.
type usageLog struct{ st *index.Store }

func (u usageLog) RecordUsage(ctx context.Context, r llm.Usage) error {
	return u.st.RecordUsage(ctx, index.UsageRecord{
		At: r.At, Feature: r.Feature, Model: r.Model,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens,
		Latency: r.Latency, Cached: r.Cached, Attempts: r.Attempts, Err: r.Err,
	})
}

func sameLLM(a, b contract.LLM) bool {
	if a.BaseURL != b.BaseURL || a.APIKey != b.APIKey || a.Model != b.Model ||
		a.TimeoutMS != b.TimeoutMS || a.MaxConcurrent != b.MaxConcurrent || len(a.Models) != len(b.Models) {
		return false
	}
	for k, v := range a.Models {
		if b.Models[k] != v {
			return false
		}
	}
	return true
}

// History returns the error history of the features that record errors
// (explaining, the server), opened on first use; nil without a store. The
// first call prunes it to rca.HistoryLimit errors, the most recently seen,
// over all workspaces. Similar errors fall back to fingerprints when the
// search index cannot be opened.
func (s *Services) History(ctx context.Context) index.History {
	h, err := s.OpenHistory(ctx, false)
	if err != nil {
		s.log.Warn("error history unavailable; nothing is remembered", "error", err)
		return nil
	}
	s.mu.Lock()
	prune := !s.pruned
	s.pruned = true
	s.mu.Unlock()
	if prune {
		if _, err := h.Prune(ctx, rca.HistoryLimit); err != nil {
			// Cancelled: the session ended first; the next one prunes.
			s.logUnlessCancelled(ctx, "cannot prune the error history", "error", err)
		}
	}
	return h
}

// OpenHistory is History with the reason when there is none, and without
// pruning: `kodyls history` and `kodyls doctor` read the history as it
// is. With requireIndex it also fails when the search index cannot be
// opened (`kodyls history search` needs it; explaining degrades without
// it).
func (s *Services) OpenHistory(ctx context.Context, requireIndex bool) (index.History, error) {
	if s.Store == nil {
		if s.StoreErr != nil {
			return nil, s.StoreErr
		}
		return nil, errors.New("no local store")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.history != nil && (!requireIndex || s.historyIndexed) {
		return s.history, nil
	}
	h, err := index.OpenHistory(ctx, s.Store, index.HistoryOptions{RequireIndex: requireIndex, Log: s.log, Hold: true})
	if err != nil {
		return nil, err
	}
	if old, ok := s.history.(interface{ Close() error }); ok {
		_ = old.Close()
	}
	s.history, s.historyIndexed = h, requireIndex
	return h, nil
}

// Explainer returns the explainer of a workspace root with the current
// model, the history and the prompts.
func (s *Services) Explainer(ctx context.Context, root string) *rca.Explainer {
	g, _ := s.Gateway()
	x := &rca.Explainer{
		Workspace: root, Gateway: g, History: s.History(ctx),
		Prompts: s.Prompts, Ignore: s.privacyList(root), Log: s.log,
	}
	if s.Store != nil {
		// An explanation cut short by a crash resumes from its last step.
		x.Checkpoints = s.Store.Checkpoints()
	}
	if st, err := strategies.ForRCA(strategies.DefaultRCA); err == nil {
		x.Strategy = st
	}
	return x
}

// privacyList is what an explanation or a fix in root never reads into a
// prompt nor edits: the default privacy list and the ignorePaths of the
// workspace's kodus-config.yml, as for the review (gate.ForConfig). When a
// problem of that file may have lost a path to ignore it refuses every file
// rather than read one the team meant to keep private (the doctor and the
// editor report the broken configuration).
func (s *Services) privacyList(root string) func(rel string) bool {
	g, _ := gate.ForConfig(kodusconfig.Load(root))
	if why := g.Incomplete(); why != "" {
		s.log.Warn("kodus-config ignorePaths incomplete: explanations and fixes read no workspace file", "workspace", root, "problem", why)
	}
	return g.Refuses
}

// Fixer returns the "Fix this error" feature of a workspace root with the
// current model and the prompts; its Gateway is nil when no model is
// configured, and Fix then says so.
func (s *Services) Fixer(root string) *fix.Fixer {
	g, _ := s.Gateway()
	x := &fix.Fixer{Workspace: root, Gateway: g, Prompts: s.Prompts, Ignore: s.privacyList(root), Log: s.log}
	if s.Store != nil {
		// A fix cut short by a crash resumes from its last step.
		x.Checkpoints = s.Store.Checkpoints()
	}
	return x
}

// Folder returns the workspace folder at root (absolute, symlink-free),
// creating it on first use. Its rules are loaded by [Folder.Reload].
func (s *Services) Folder(root string) *Folder {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.folders[root]
	if f == nil {
		f = newFolder(s, root)
		s.folders[root] = f
	}
	return f
}

// logUnlessCancelled warns of a failure of background work, unless ctx was
// cancelled (the session is ending): that is no fault, and is only logged
// at debug level.
func (s *Services) logUnlessCancelled(ctx context.Context, msg string, args ...any) {
	if ctx.Err() != nil {
		s.log.Debug(msg, args...)
		return
	}
	s.log.Warn(msg, args...)
}

// RecordWorkspaces notes each workspace in the local store, so `kodyls
// doctor` and the history can tell which projects were seen.
func (s *Services) RecordWorkspaces(ctx context.Context, roots []string) {
	if s.Store == nil {
		return
	}
	for _, r := range roots {
		if err := s.Store.TouchWorkspace(ctx, r); err != nil {
			s.logUnlessCancelled(ctx, "cannot record the workspace", "workspace", r, "error", err)
		}
	}
}

// Dismiss remembers that the user dismissed a finding (or every finding
// with a label in a file), in the store when there is one.
func (s *Services) Dismiss(ctx context.Context, d index.Dismissal) error {
	if s.Store != nil {
		if err := s.Store.Dismiss(ctx, d); err != nil {
			return fmt.Errorf("remember the dismissal: %w", err)
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := d.Workspace + "\x00" + d.File + "\x00" + d.Kind
	if s.dismissed[k] == nil {
		s.dismissed[k] = map[string]bool{}
	}
	s.dismissed[k][d.Key] = true
	return nil
}

// WithoutDismissed drops the findings the user dismissed in a file.
func (s *Services) WithoutDismissed(ctx context.Context, root, rel string, fs []filereview.Finding) []filereview.Finding {
	if len(fs) == 0 {
		return fs
	}
	dismissed := s.Dismissed(ctx, root, rel)
	out := make([]filereview.Finding, 0, len(fs))
	for _, f := range fs {
		if !dismissed(f) {
			out = append(out, f)
		}
	}
	return out
}

// Dismissed reports whether a finding in a file is one the user
// dismissed: its id, its label, or its group (see
// filereview.Finding.DismissGroup). What was dismissed is read at the
// first question.
func (s *Services) Dismissed(ctx context.Context, root, rel string) func(filereview.Finding) bool {
	var ids, labels map[string]bool
	read := sync.OnceFunc(func() {
		if s.Store != nil {
			var err error
			if ids, labels, err = s.Store.Dismissed(ctx, root, rel); err != nil {
				s.log.Warn("cannot read dismissed findings", "error", err)
			}
			return
		}
		s.mu.Lock()
		ids = maps.Clone(s.dismissed[root+"\x00"+rel+"\x00"+index.DismissFinding])
		labels = maps.Clone(s.dismissed[root+"\x00"+rel+"\x00"+index.DismissLabel])
		s.mu.Unlock()
	})
	return func(f filereview.Finding) bool {
		read()
		return ids[f.ID] || labels[f.Label] || labels[f.DismissGroup()]
	}
}

// reviewer builds the reviewer of a folder for its rules and the current
// model, with the problems met in the folder's configuration files.
func (s *Services) reviewer(root string, rs []*rules.Rule) (*filereview.Reviewer, []string) {
	g, _ := s.Gateway()
	w := filereview.Workspace{Root: root, Gateway: g, Rules: rs, Log: s.log}
	if s.Store != nil {
		w.Cache = s.Store.KV()
	}
	return filereview.ForWorkspace(w)
}
