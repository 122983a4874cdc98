// Package lsp is kodyls's protocol glue: the connection, the lifecycle, open
// documents, diagnostics publishing, code actions, commands, progress and
// configuration. Handlers stay thin: the work lives in the analysis, agents
// and index packages, which know nothing of LSP.
package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/textdoc"
)

// Options configure a server.
type Options struct {
	// Logger receives the server's logs. Never stdout: that is the protocol
	// channel.
	Logger *slog.Logger
	// Version is reported in serverInfo.
	Version string
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// Services are the store, gateway, prompts, history, reviewers and
	// explainers built by the composition root (workspace.Open). Nil builds
	// services with no local store: nothing is remembered across sessions.
	Services *workspace.Services
	// Commands adds workspace/executeCommand handlers beside the built-in
	// ones; used by tests to exercise cancellation and shutdown with a
	// handler whose duration they control.
	Commands map[string]CommandFunc
	// ConfigurationWait bounds the wait for the editor's answer to
	// workspace/configuration (default 5 s): an editor that never answers
	// (eglot 1.9 can lose a request that arrives while it waits on one of
	// its own) must not keep the rules from loading.
	ConfigurationWait time.Duration
}

// CommandFunc handles one workspace/executeCommand command.
type CommandFunc func(ctx context.Context, args []byte) (any, error)

// Lifecycle states.
const (
	stateNew int32 = iota
	stateInitialized
	stateShutdown
)

// Server is one LSP session. It is protocol glue: the documents, the
// diagnostics publisher and the wiring of requests to the features; the
// features' state lives in the workspace services and in one struct per
// feature (rules, reviews, builds, status).
type Server struct {
	opts Options
	log  *slog.Logger
	svc  *workspace.Services

	conn jsonrpc2.Conn
	ctx  context.Context // lives until exit
	stop context.CancelFunc
	wg   sync.WaitGroup // goroutines the server owns

	state atomic.Int32
	// shutdownPending is set when shutdown set the state as it was read,
	// until its reply.
	shutdownPending atomic.Bool
	exited          chan int
	exitOnce        sync.Once

	docs      *textdoc.Store
	diags     *publisher
	checks    *scheduler // the diagnose pass of each open document
	live      []liveSource
	work      *tracker // pending work per URI, for kodyls/awaitIdle
	encoding  textdoc.Encoding
	clientCap clientCapabilities

	mu          sync.Mutex
	initOptions []byte
	cfg         contract.Resolved
	shownProbs  map[string]bool // the configuration problems of the last resolve, shown to the user
	folders     []*workspace.Folder
	givenRoots  map[string]string   // canonical root → as the client named it, where they differ
	open        map[string]*openDoc // by URI
	progressSeq int
	// baselineTold: the baseline fallbacks told to the user since baseRef
	// last changed.
	baselineTold map[string]bool
	// reviewProbs: the problems of each folder's review configuration
	// (kodus-config.yml, prompt overrides) the user was last told.
	reviewProbs map[string]map[string]bool

	rules ruleState
	// rulesLoaded is closed once the rules were first loaded: a review
	// waits for it, so a save right after start-up is not reviewed
	// without the team's rules.
	rulesLoaded     chan struct{}
	rulesLoadedOnce sync.Once
	// initializedSeen: the client's initialized notification came; the
	// watchers and the first load it starts run once.
	initializedSeen atomic.Bool
	// remoteFolders are the workspace folders that are not file: URIs,
	// as the client named them; kodyls skips them.
	remoteFolders []string
	reviews       *workspace.Reviews
	// changeSet: the pull-request rule violations of the last workspace
	// review, for the panel.
	changeSet changeSetViolations
	build     builds
	status    statusState
	git       gitWatch // the repositories' git directories, watched for baseline moves
	// folderWatch hands the file watcher the workspace folders added and
	// removed during the session.
	folderWatch folderWatches
	// workspaceWatches counts the file watcher's walks of a whole
	// workspace (watchWorkspace), for tests.
	workspaceWatches atomic.Int64
}

type clientCapabilities struct {
	workDoneProgress bool
	configuration    bool
	showDocument     bool
	resolveEdit      bool // codeAction/resolve can fill in the edit
	// commandResults: a kodyls plugin that shows command results itself
	// (contract.ClientExperimental); a generic client drops them.
	commandResults bool
	// previewEdits: the client shows annotated edits that need
	// confirmation to the user before applying them
	// (workspaceEdit.changeAnnotationSupport).
	previewEdits bool
}

// New returns a server; Serve runs it on a connection.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	s := &Server{
		opts:   opts,
		log:    opts.Logger,
		exited: make(chan int, 1),
		docs:   textdoc.NewStore(),
		work:   newTracker(),
		open:   map[string]*openDoc{},
		rules:  ruleState{docs: map[string]*docViolations{}},

		rulesLoaded: make(chan struct{}),
		build:       builds{shown: map[string][]uri.URI{}},
		folderWatch: folderWatches{wake: make(chan struct{}, 1)},
	}
	s.reviews = workspace.NewReviews(s.edits)
	s.live = []liveSource{ruleChecks{s}, liveReview{s}}
	s.cfg = contract.Resolve(opts.Getenv, nil, nil)
	s.svc = opts.Services
	if s.svc == nil {
		s.svc = workspace.Open(context.Background(), workspace.Config{Settings: s.cfg.Settings, Getenv: opts.Getenv, Log: opts.Logger, NoStore: true})
	}
	s.svc.SetSettings(s.cfg.Settings)
	s.svc.OnLLMStatus(s.llmStatusChanged)
	return s
}

// Serve speaks LSP over rwc until the client sends exit or closes the
// stream. It returns the process exit code the protocol prescribes: 0 after
// shutdown then exit, 1 otherwise.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) int {
	s.ctx, s.stop = context.WithCancel(ctx)
	defer s.stop()
	stream := newStream(rwc, s.log)
	s.conn = jsonrpc2.NewConn(stream, jsonrpc2.WithCodec(codec{}))
	s.diags = newPublisher(s.conn, s.log, s.currentVersion)
	s.checks = newScheduler(s.ctx, s.diagnose, s.work)
	s.conn.Go(s.ctx, s.handler())

	code := 1
	select {
	case code = <-s.exited:
	case <-stream.ended:
		// The work still running is for an editor that is gone: it is
		// cancelled below, not waited for.
		select {
		case code = <-s.exited: // an exit read just before the end of input
		default:
			s.connectionEnded(stream.readErr)
		}
	case <-s.conn.Done():
		s.connectionEnded(s.conn.Err())
	case <-ctx.Done():
	}
	s.shutdownWork()
	// Close waits for in-flight handlers, which observe s.ctx and return at
	// once; but a reader blocked on a stdin pipe cannot always be woken, so
	// the wait is bounded and the process exits regardless.
	closed := make(chan struct{})
	go func() {
		_ = s.conn.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(200 * time.Millisecond):
		s.log.Debug("connection did not close within 200ms (stdin still open); exiting anyway")
	}
	return code
}

// connectionEnded logs why the editor's connection ended without exit.
func (s *Server) connectionEnded(err error) {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		s.log.Info("client closed the connection without exit")
		return
	}
	s.log.Warn("connection ended", "error", err)
}

// shutdownWork cancels everything the server started and waits for it.
func (s *Server) shutdownWork() {
	s.stop()
	s.checks.Stop()
	for _, od := range s.openDocs() {
		s.stopIdle(od)
	}
	if s.opts.Services == nil {
		defer s.svc.Close()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
		s.log.Warn("background work did not stop within 500ms")
	}
}

// goBackground runs fn on a goroutine the server owns and waits for at
// shutdown.
func (s *Server) goBackground(fn func(ctx context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn(s.ctx)
	}()
}

// handler wires dispatch: $/cancelRequest is handled at once, in wire order;
// notifications (text synchronization above all) run inline on the read loop
// so edits are applied in the order they were sent; every call releases the
// read loop with jsonrpc2.Async so that no request waits behind another.
func (s *Server) handler() jsonrpc2.Handler {
	h, cancel := jsonrpc2.CancelHandler(s.dispatch)
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.IsCall() && req.Method() == protocol.MethodShutdown {
			// Marked before the read loop moves on: the exit the editor
			// sends right behind shutdown must find it, or the process
			// would end with 1 as if shutdown never came.
			if s.state.CompareAndSwap(stateInitialized, stateShutdown) {
				s.shutdownPending.Store(true)
			}
		}
		if req.IsCall() {
			// Every call is released from the read loop before anything
			// derives a context from it: the request (and its context) is
			// pooled and recycled once a synchronous handler returns, which
			// would race with the watcher goroutine of a derived context.
			// Released requests are never recycled.
			jsonrpc2.Async(ctx)
		}
		if req.Method() == protocol.MethodCancelRequest {
			if id, ok := cancelID(req.Params()); ok {
				cancel(id)
			} else {
				s.log.Warn("ignoring $/cancelRequest with a malformed id", "params", prefix(req.Params(), 80))
			}
			return nil, nil
		}
		return h(ctx, req)
	}
}

func cancelID(params []byte) (jsonrpc2.ID, bool) {
	var p protocol.CancelParams
	if err := protocol.Unmarshal(params, &p); err != nil {
		return jsonrpc2.ID{}, false
	}
	switch id := p.ID.(type) {
	case protocol.Integer:
		return jsonrpc2.NewNumberID(int64(id)), true
	case protocol.String:
		return jsonrpc2.NewStringID(string(id)), true
	}
	return jsonrpc2.ID{}, false
}

// inline lists the notifications handled on the read loop, in wire order.
// They only update in-memory state and schedule work, so they stay fast.
var inline = map[string]bool{
	protocol.MethodInitialized:                     true,
	protocol.MethodExit:                            true,
	protocol.MethodTextDocumentDidOpen:             true,
	protocol.MethodTextDocumentDidChange:           true,
	protocol.MethodTextDocumentDidClose:            true,
	protocol.MethodTextDocumentDidSave:             true,
	protocol.MethodWorkspaceDidChangeConfiguration: true,
	protocol.MethodWorkspaceDidChangeWatchedFiles:  true,
	// The folder list changes in wire order with the buffers' opening.
	protocol.MethodWorkspaceDidChangeWorkspaceFolders: true,
}

var errNotInitialized = jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server is not initialized: send initialize first")

func (s *Server) dispatch(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	method := req.Method()
	isCall := req.IsCall()
	if method == protocol.MethodExit {
		s.exit()
		return nil, nil
	}
	switch s.state.Load() {
	case stateNew:
		if method == protocol.MethodInitialize {
			return s.initialize(ctx, req.Params())
		}
		if isCall {
			return nil, errNotInitialized
		}
		return nil, nil // notifications before initialize are dropped
	case stateShutdown:
		if method == protocol.MethodShutdown && s.shutdownPending.CompareAndSwap(true, false) {
			return nil, nil // the shutdown that set the state as it was read
		}
		if isCall {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shutting down: only exit is accepted")
		}
		return nil, nil
	}
	if !isCall {
		if !inline[method] {
			s.log.Debug("ignoring notification", "method", method)
			return nil, nil
		}
		// An error returned from a notification handler would close the
		// connection: bad parameters are logged and the session goes on.
		if err := s.notification(ctx, method, req.Params()); err != nil {
			s.log.Warn("notification rejected", "method", method, "error", err)
		}
		return nil, nil
	}
	if method == protocol.MethodInitialize {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize may be sent only once")
	}
	res, err := s.call(ctx, method, req.Params())
	if ctx.Err() != nil && s.state.Load() != stateShutdown {
		return nil, protocol.ErrRequestCancelled
	}
	return res, err
}

func (s *Server) notification(ctx context.Context, method string, params []byte) error {
	switch method {
	case protocol.MethodInitialized:
		if !s.initializedSeen.CompareAndSwap(false, true) {
			s.log.Warn("ignoring a repeated initialized notification")
			return nil
		}
		s.initialized()
	case protocol.MethodTextDocumentDidOpen:
		var p protocol.DidOpenTextDocumentParams
		if err := decode(params, &p); err != nil {
			return err
		}
		s.didOpen(&p)
	case protocol.MethodTextDocumentDidChange:
		var p protocol.DidChangeTextDocumentParams
		if err := decode(params, &p); err != nil {
			return err
		}
		if err := checkChangeRanges(params); err != nil {
			s.editRejected(p.TextDocument.URI, err)
			return err
		}
		if err := s.didChange(&p); err != nil {
			s.editRejected(p.TextDocument.URI, err)
			return err
		}
	case protocol.MethodTextDocumentDidClose:
		var p protocol.DidCloseTextDocumentParams
		if err := decode(params, &p); err != nil {
			return err
		}
		s.didClose(ctx, &p)
	case protocol.MethodTextDocumentDidSave:
		var p protocol.DidSaveTextDocumentParams
		if err := decode(params, &p); err != nil {
			return err
		}
		s.didSave(&p)
	case protocol.MethodWorkspaceDidChangeConfiguration:
		var p protocol.DidChangeConfigurationParams
		if err := decode(params, &p); err != nil {
			return err
		}
		s.didChangeConfiguration(p.Settings)
	case protocol.MethodWorkspaceDidChangeWatchedFiles:
		var p protocol.DidChangeWatchedFilesParams
		if err := decode(params, &p); err != nil {
			return err
		}
		s.didChangeWatchedFiles(&p)
	case protocol.MethodWorkspaceDidChangeWorkspaceFolders:
		var p protocol.DidChangeWorkspaceFoldersParams
		if err := decode(params, &p); err != nil {
			return err
		}
		s.didChangeWorkspaceFolders(ctx, &p.Event)
	}
	return nil
}

func (s *Server) call(ctx context.Context, method string, params []byte) (any, error) {
	switch method {
	case protocol.MethodShutdown:
		s.state.Store(stateShutdown) // already, when handler() marked it
		return nil, nil
	case protocol.MethodTextDocumentCodeAction:
		var p protocol.CodeActionParams
		if err := decode(params, &p); err != nil {
			return nil, invalidParams(method, err)
		}
		return s.codeAction(ctx, &p)
	case protocol.MethodWorkspaceExecuteCommand:
		var p protocol.ExecuteCommandParams
		if err := decode(params, &p); err != nil {
			return nil, invalidParams(method, err)
		}
		return s.executeCommand(ctx, &p)
	case contract.RequestAwaitIdle:
		var p contract.AwaitIdleParams
		if bytes.Equal(bytes.TrimSpace(params), []byte("[]")) {
			params = nil // some clients (Neovim's Lua) send an empty table as []
		}
		if err := decode(params, &p); err != nil {
			return nil, invalidParams(method, err)
		}
		return s.awaitIdle(ctx, &p)
	case protocol.MethodCodeActionResolve:
		var p protocol.CodeAction
		if err := decode(params, &p); err != nil {
			return nil, invalidParams(method, err)
		}
		return s.resolveCodeAction(&p)
	}
	return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, fmt.Sprintf("method not supported by kodyls: %s", method))
}

func decode(params []byte, v any) error {
	if len(params) == 0 {
		params = []byte("{}")
	}
	return protocol.Unmarshal(params, v)
}

func invalidParams(method string, err error) error {
	return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("invalid params for %s: %v", method, err))
}

// exit ends the session: Serve returns 0 if shutdown came first, else 1.
func (s *Server) exit() {
	s.exitOnce.Do(func() {
		code := 1
		if s.state.Load() == stateShutdown {
			code = 0
		}
		s.exited <- code
	})
}

// settings returns the current configuration.
func (s *Server) settings() contract.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Settings
}

// Document returns the server's copy of an open buffer and its version.
// Tests use it to check that edits were applied in order.
func (s *Server) Document(u string) (text string, version int32, ok bool) {
	d, ok := s.docs.Get(u)
	if !ok {
		return "", 0, false
	}
	return d.Text(), d.Version(), true
}
