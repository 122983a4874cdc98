package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/prompts"
)

// stdio joins stdin and stdout into the server's stream.
type stdio struct {
	io.Reader
	io.Writer
}

func (stdio) Close() error { return os.Stdin.Close() }

func serve(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer, logger *slog.Logger, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// Editors commonly pass --stdio; it is the only transport, so accept it.
	_ = fs.Bool("stdio", true, "speak LSP on stdin/stdout (the only transport)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// The store keeps the review cache, dismissals and usage. Without it
	// kodyls still serves; it only forgets more.
	var st *index.Store
	if dir, _, err := index.DataDir(os.Getenv); err != nil {
		logger.Warn("no data directory; nothing is remembered across sessions", "error", err)
	} else if st, err = index.OpenStore(ctx, dir); err != nil {
		logger.Warn("cannot open the local store; nothing is remembered across sessions", "error", err)
		st = nil
	} else {
		defer st.Close()
	}
	prm := prompts.Builtin()
	srv := lsp.New(lsp.Options{
		Logger:       logger,
		Version:      currentVersion(),
		OnInitialize: recordWorkspaces(logger, st),
		Store:        st,
		NewGateway: func(cfg contract.Settings, onStatus func(llm.Status)) (*llm.Gateway, error) {
			return newGateway(cfg, st, prm, defaultRedactor(), logger, llm.WithStatusHook(onStatus))
		},
	})
	logger.Info("kodyls serving on stdio", "version", currentVersion(), "pid", os.Getpid())
	code := srv.Serve(ctx, stdio{Reader: stdin, Writer: stdout})
	logger.Info("kodyls exiting", "code", code)
	return code
}

// recordWorkspaces notes each workspace in the local store, so `kodyls
// doctor` and later the history can tell which projects were seen. A store
// problem is logged and never stops the server.
func recordWorkspaces(logger *slog.Logger, st *index.Store) func(ctx context.Context, folders []string) {
	return func(ctx context.Context, folders []string) {
		if st == nil {
			return
		}
		for _, f := range folders {
			if err := st.TouchWorkspace(ctx, f); err != nil {
				logger.Warn("cannot record the workspace", "workspace", f, "error", fmt.Errorf("store: %w", err))
			}
		}
	}
}
