package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

func (s *Server) initialize(_ context.Context, params []byte) (any, error) {
	var p protocol.InitializeParams
	if err := decode(params, &p); err != nil {
		return nil, invalidParams(protocol.MethodInitialize, err)
	}
	if p.ProcessID != nil {
		s.watchParent(int(*p.ProcessID))
	}
	caps := p.Capabilities
	s.encoding = negotiateEncoding(caps.General)
	if w := caps.Window; w != nil {
		s.clientCap.workDoneProgress = w.WorkDoneProgress != nil && *w.WorkDoneProgress
		s.clientCap.showDocument = w.ShowDocument != nil && w.ShowDocument.Support
	}
	if len(caps.Experimental) > 0 {
		var exp map[string]json.RawMessage
		var ours contract.ClientExperimental
		if json.Unmarshal(caps.Experimental, &exp) == nil && json.Unmarshal(exp[contract.ExperimentalKey], &ours) == nil {
			s.clientCap.commandResults = ours.CommandResults
		}
	}
	if w := caps.Workspace; w != nil {
		s.clientCap.configuration = w.Configuration != nil && *w.Configuration
		s.clientCap.previewEdits = w.WorkspaceEdit != nil && w.WorkspaceEdit.ChangeAnnotationSupport != nil
	}
	if td := caps.TextDocument; td != nil && td.CodeAction != nil {
		for _, prop := range td.CodeAction.ResolveSupport.Properties {
			if prop == "edit" {
				s.clientCap.resolveEdit = true
			}
		}
	}

	folders, remote := workspaceFolders(&p)
	s.mu.Lock()
	s.remoteFolders = remote
	s.initOptions = append([]byte(nil), p.InitializationOptions...)
	s.cfg = contract.Resolve(s.opts.Getenv, s.initOptions, nil)
	roots := make([]string, len(folders))
	for i, f := range folders {
		roots[i] = f.root
		s.folders = append(s.folders, s.svc.Folder(f.root))
		if f.given != f.root {
			if s.givenRoots == nil {
				s.givenRoots = map[string]string{}
			}
			s.givenRoots[f.root] = f.given
		}
	}
	cfg := s.cfg
	s.mu.Unlock()
	s.svc.SetSettings(cfg.Settings)
	s.log.Info("initialize", "client", p.ClientInfo.Name, "folders", roots, "positionEncoding", s.encoding.String())

	var commands []string
	for _, c := range contract.Commands {
		commands = append(commands, c.Name)
	}
	for name := range s.opts.Commands {
		commands = append(commands, name)
	}
	syncKind := protocol.TextDocumentSyncKindIncremental
	resolve := true
	openClose := true
	supported := true
	result := &protocol.InitializeResult{
		ServerInfo: protocol.ServerInfo{Name: "kodyls", Version: protocol.NewOptional(s.opts.Version)},
		Capabilities: protocol.ServerCapabilities{
			PositionEncoding: protocol.PositionEncodingKind(s.encoding.String()),
			TextDocumentSync: &protocol.TextDocumentSyncOptions{
				OpenClose: &openClose,
				Change:    &syncKind,
				Save:      protocol.Boolean(true),
			},
			CodeActionProvider: &protocol.CodeActionOptions{
				CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix},
				ResolveProvider: &resolve,
			},
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: commands},
			// Folders added to and removed from the workspace during the
			// session are followed (workspace/didChangeWorkspaceFolders).
			Workspace: &protocol.WorkspaceOptions{WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
				Supported:           &supported,
				ChangeNotifications: protocol.Boolean(true),
			}},
		},
	}
	s.state.Store(stateInitialized)
	return result, nil
}

// negotiateEncoding picks the first encoding in the client's preference
// list that kodyls supports; UTF-16 is the protocol's default.
func negotiateEncoding(g *protocol.GeneralClientCapabilities) textdoc.Encoding {
	if g == nil {
		return textdoc.UTF16
	}
	for _, k := range g.PositionEncodings {
		if enc, ok := textdoc.ParseEncoding(string(k)); ok {
			return enc
		}
	}
	return textdoc.UTF16
}

// workspaceFolder is a workspace root, canonical (see canonicalPath) and
// as the client named it (through a symbolic link, say).
type workspaceFolder struct{ root, given string }

// workspaceFolders returns the roots in the order the client gave them:
// workspaceFolders, else rootUri, else rootPath. Folders that are not
// file: URIs (a remote or virtual workspace) have no local path: they
// are returned apart, as the client named them.
func workspaceFolders(p *protocol.InitializeParams) (local []workspaceFolder, remote []string) {
	var out []workspaceFolder
	seen := map[string]bool{}
	add := func(path string) {
		if path == "" {
			return
		}
		if f := localFolder(path); !seen[f.root] {
			seen[f.root] = true
			out = append(out, f)
		}
	}
	addURI := func(u uri.URI) {
		if u == "" {
			return
		}
		if !u.IsFile() {
			if !slices.Contains(remote, string(u)) {
				remote = append(remote, string(u))
			}
			return
		}
		add(u.FsPath())
	}
	if wf, ok := p.WorkspaceFolders.Get(); ok {
		for _, f := range wf {
			addURI(f.URI)
		}
	}
	// Older clients (Neovim 0.7 among them) send only rootUri or rootPath.
	//lint:ignore SA1019 the deprecated fields are what those clients send
	if len(out) == 0 && len(remote) == 0 && p.RootURI != nil {
		addURI(*p.RootURI) //lint:ignore SA1019 as above
	}
	if len(out) == 0 && len(remote) == 0 {
		//lint:ignore SA1019 as above
		if rp, ok := p.RootPath.Get(); ok {
			add(rp)
		}
	}
	return out, remote
}

// localFolder is the workspace folder at path, canonical and as named.
func localFolder(path string) workspaceFolder {
	given := path
	if abs, err := filepath.Abs(path); err == nil {
		given = abs
	}
	return workspaceFolder{root: canonicalPath(path), given: filepath.Clean(given)}
}

// canonicalPath makes a path absolute and resolves symlinks when it can, so
// that a file and its workspace root compare equal however they were named.
func canonicalPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return filepath.Clean(path)
}

// initialized starts the session's background work: the client's
// configuration, the rules, the file watcher.
func (s *Server) initialized() {
	if !s.clientCap.configuration {
		// Otherwise the settings fetched next are reported with these.
		s.mu.Lock()
		problems := s.cfg.Problems
		s.mu.Unlock()
		s.reportConfigProblems(problems)
	}
	if err := s.svc.StoreErr; err != nil && s.conn != nil {
		// Said once, where the user looks: the log alone would leave them
		// wondering why nothing is remembered.
		msg := fmt.Sprintf("kodyls: %v; working without the local store (no error history, review cache or dismissals)", err)
		if nerr := s.conn.Notify(context.WithoutCancel(s.ctx), protocol.MethodWindowShowMessage,
			&protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg}); nerr != nil {
			s.log.Debug("showMessage failed", "error", nerr)
		}
	}
	if st := s.svc.Store; st != nil && s.conn != nil {
		// Told once too: a history lost at open, and a database found
		// damaged or not writable only in use (damage away from the pages
		// read at open shows when a query reaches it).
		show := func(err error) {
			if nerr := s.conn.Notify(context.WithoutCancel(s.ctx), protocol.MethodWindowShowMessage,
				&protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: "kodyls: " + err.Error()}); nerr != nil {
				s.log.Debug("showMessage failed", "error", nerr)
			}
		}
		if n := st.Notice(); n != nil {
			show(n)
		}
		st.OnFault(func(err error) {
			s.log.Warn("local store", "error", err)
			show(err)
		})
	}
	s.mu.Lock()
	remote := s.remoteFolders
	s.mu.Unlock()
	s.tellRemoteFolders(remote)
	s.tellUnreadableFolders(s.allFolders())
	done := s.work.add("")
	s.goBackground(func(ctx context.Context) {
		defer done()
		s.fetchConfiguration(ctx)
		s.reloadRules(ctx, nil)
		s.rulesLoadedOnce.Do(func() { close(s.rulesLoaded) })
		s.sendStatus()
		var roots []string
		for _, f := range s.allFolders() {
			roots = append(roots, f.Root)
		}
		s.svc.RecordWorkspaces(ctx, roots)
	})
	watching := s.work.add("")
	s.goBackground(func(ctx context.Context) { s.watchFiles(ctx, watching) })
	// The error history (and its search index, held open by the server)
	// opens now, off the read loop and outside the idle signal, so the
	// first "Explain this error" does not pay for it.
	s.goBackground(func(ctx context.Context) { s.svc.History(ctx) })
}

// initLayer is the initializationOptions layer to resolve under the
// client's settings raw. An answer to workspace/configuration that is an
// object holds all the settings the user has set (editors send only those),
// so it replaces initializationOptions: layered over them, a setting the
// user reset would come back with the value the editor started with. A null
// answer (no such section) leaves initializationOptions in force, and so do
// settings pushed in didChangeConfiguration by a client that cannot be asked,
// which may be only the changed ones. s.mu is held.
func (s *Server) initLayer(raw []byte) []byte {
	if s.clientCap.configuration && contract.IsObject(raw) {
		return nil
	}
	return s.initOptions
}

// tellRemoteFolders tells the user that the workspace folders that are
// not file: URIs are skipped.
func (s *Server) tellRemoteFolders(remote []string) {
	if len(remote) == 0 {
		return
	}
	msg := fmt.Sprintf("kodyls works on local folders; %s skipped: Kody Rules and reviews are off there", strings.Join(remote, ", "))
	s.log.Warn("workspace folder not local", "folders", remote)
	if s.conn != nil {
		if nerr := s.conn.Notify(context.WithoutCancel(s.ctx), protocol.MethodWindowShowMessage,
			&protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: "kodyls: " + msg}); nerr != nil {
			s.log.Debug("showMessage failed", "error", nerr)
		}
	}
}

// tellUnreadableFolders tells the user which of folders are not
// directories kodyls can read.
func (s *Server) tellUnreadableFolders(folders []*workspace.Folder) {
	var unreadable []string
	for _, f := range folders {
		if st, err := os.Stat(f.Root); err != nil || !st.IsDir() {
			unreadable = append(unreadable, f.Root)
		}
	}
	if len(unreadable) == 0 {
		return
	}
	msg := fmt.Sprintf("kodyls: the workspace folder %s is not a directory kodyls can read; Kody Rules and reviews are off there", strings.Join(unreadable, ", "))
	s.log.Warn("workspace folder unreadable", "folders", unreadable)
	if s.conn != nil {
		if nerr := s.conn.Notify(context.WithoutCancel(s.ctx), protocol.MethodWindowShowMessage,
			&protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg}); nerr != nil {
			s.log.Debug("showMessage failed", "error", nerr)
		}
	}
}

// fetchConfiguration asks the client for section "kodyls" and re-resolves
// the settings.
func (s *Server) fetchConfiguration(ctx context.Context) {
	if !s.clientCap.configuration {
		return
	}
	section := contract.Section
	var result []json.RawMessage
	wait := s.opts.ConfigurationWait
	if wait <= 0 {
		wait = 5 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, wait)
	err := protocol.Call(cctx, s.conn, protocol.MethodWorkspaceConfiguration,
		&protocol.ConfigurationParams{Items: []protocol.ConfigurationItem{{Section: &section}}}, &result)
	timedOut := cctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err != nil {
		if timedOut {
			err = fmt.Errorf("no answer within %v", wait)
		}
		s.log.Warn("workspace/configuration failed; keeping current settings", "error", err)
		s.mu.Lock()
		problems := s.cfg.Problems
		s.mu.Unlock()
		s.reportConfigProblems(problems)
		return
	}
	var raw []byte
	if len(result) > 0 {
		raw = result[0]
	}
	s.applyClientConfig(raw)
}

func (s *Server) applyClientConfig(raw []byte) {
	s.mu.Lock()
	old, oldBadURL := s.cfg.Settings, s.cfg.Rejected["llm.baseUrl"]
	s.cfg = contract.Resolve(s.opts.Getenv, s.initLayer(raw), raw)
	cfg := s.cfg
	s.mu.Unlock()
	s.reportConfigProblems(cfg.Problems)
	modelChanged := s.svc.SetSettings(cfg.Settings)
	if modelChanged || oldBadURL != cfg.Rejected["llm.baseUrl"] {
		// The status names a refused llm.baseUrl, which changes no
		// setting the model uses.
		s.sendStatus()
	}
	if modelChanged {
		// The model's split of assistants' rule files depends on the
		// model: reload, unless the first load is still to come.
		select {
		case <-s.rulesLoaded:
			done := s.work.add("")
			s.goBackground(func(ctx context.Context) {
				defer done()
				s.reloadRules(ctx, nil)
			})
		default:
		}
	}
	if old.Rules.Scope != cfg.Settings.Rules.Scope || !maps.Equal(old.Severity, cfg.Settings.Severity) {
		s.recheckAll()
	}
	if old.Build.OnSave != cfg.Settings.Build.OnSave {
		// The last build's errors came from a command no longer run on
		// save: they would stay until a build that never comes.
		s.stopBuilds(func(string) bool { return true })
	}
	if old.BaseRef != cfg.Settings.BaseRef {
		// A baseRef that cannot be read is told again when it is set again.
		s.mu.Lock()
		s.baselineTold = nil
		s.mu.Unlock()
		s.refreshBaselines()
	}
}

// reportConfigProblems logs the problems of the settings and shows, in one
// warning, those the previous resolve did not have: a setting the editor
// sent that kodyls cannot use must not be noticed only in a log. An
// unchanged problem is not repeated at every change of the settings, but
// one that was fixed and comes back is shown again.
func (s *Server) reportConfigProblems(problems []string) {
	var fresh []string
	now := make(map[string]bool, len(problems))
	s.mu.Lock()
	for _, pr := range problems {
		// A client that sends its settings both as initializationOptions
		// and through workspace/configuration (the Neovim plugin does)
		// has each problem twice, once per layer: told once.
		key := pr
		for _, origin := range []string{contract.OriginInit, contract.OriginClient} {
			key = strings.TrimPrefix(key, origin+": ")
		}
		if !s.shownProbs[key] && !now[key] {
			fresh = append(fresh, pr)
		}
		now[key] = true
	}
	s.shownProbs = now
	s.mu.Unlock()
	for _, pr := range fresh {
		s.log.Warn("configuration problem", "problem", pr)
	}
	if len(fresh) == 0 || s.conn == nil {
		return
	}
	msg := "kodyls settings: " + strings.Join(fresh, "; ")
	if err := s.conn.Notify(context.WithoutCancel(s.ctx), protocol.MethodWindowShowMessage,
		&protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: msg}); err != nil {
		s.log.Debug("showMessage failed", "error", err)
	}
}

// didChangeConfiguration: clients either push the settings or send null and
// expect the server to pull them.
func (s *Server) didChangeConfiguration(pushed []byte) {
	if s.clientCap.configuration {
		done := s.work.add("")
		s.goBackground(func(ctx context.Context) {
			defer done()
			s.fetchConfiguration(ctx)
		})
		return
	}
	s.applyClientConfig(pushed)
}

// clientURI is the URI the editor knows the file at the canonical path
// by: an open buffer's own URI, else the path under the workspace root as
// the client named it (a workspace opened through a symbolic link keeps
// the link's paths), else the path itself.
func (s *Server) clientURI(path string) uri.URI {
	for _, od := range s.openDocs() {
		if od.path == path {
			return od.uri
		}
	}
	s.mu.Lock()
	best, given := "", ""
	for root, g := range s.givenRoots {
		if rel, err := filepath.Rel(root, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && len(root) > len(best) {
			best, given = root, filepath.Join(g, rel)
		}
	}
	s.mu.Unlock()
	if given != "" {
		return uri.File(given)
	}
	return uri.File(path)
}
