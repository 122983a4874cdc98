package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/lsp"
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
	srv := lsp.New(lsp.Options{
		Logger:       logger,
		Version:      currentVersion(),
		OnInitialize: recordWorkspaces(logger),
	})
	logger.Info("kodyls serving on stdio", "version", currentVersion(), "pid", os.Getpid())
	code := srv.Serve(ctx, stdio{Reader: stdin, Writer: stdout})
	logger.Info("kodyls exiting", "code", code)
	return code
}

// recordWorkspaces notes each workspace in the local store, so `kodyls
// doctor` and later the history can tell which projects were seen. A store
// problem is logged and never stops the server.
func recordWorkspaces(logger *slog.Logger) func(ctx context.Context, folders []string) {
	return func(ctx context.Context, folders []string) {
		dir, _, err := index.DataDir(os.Getenv)
		if err != nil {
			logger.Warn("no data directory; history is disabled", "error", err)
			return
		}
		st, err := index.OpenStore(ctx, dir)
		if err != nil {
			logger.Warn("cannot open the local store; history is disabled", "error", err)
			return
		}
		defer st.Close()
		for _, f := range folders {
			if err := st.TouchWorkspace(ctx, f); err != nil {
				logger.Warn("cannot record the workspace", "workspace", f, "error", fmt.Errorf("store: %w", err))
			}
		}
	}
}
