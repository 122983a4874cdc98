package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
)

const serveUsage = `Usage: kodyls [serve] [--stdio]

Speaks the Language Server Protocol on stdin/stdout, the only transport
(--stdio is accepted and ignored). Logs go to stderr or --log-file, never
to stdout.
`

// stdio joins stdin and stdout into the server's stream.
type stdio struct {
	io.Reader
	io.Writer
}

func (stdio) Close() error { return os.Stdin.Close() }

func serve(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer, logger *slog.Logger, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	// Editors commonly pass --stdio; it is the only transport, so accept it.
	_ = fs.Bool("stdio", true, "speak LSP on stdin/stdout (the only transport)")
	pos, code, ok := parseCommand(fs, args, serveUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "kodyls serve: unexpected argument %q\n", pos[0])
		return 2
	}
	// The services keep the review cache, dismissals, usage and history.
	// Without a store kodyls still serves; it only forgets more.
	res := contract.Resolve(os.Getenv, nil, nil)
	svc := openServices(ctx, workspace.Config{Settings: res.Settings, Getenv: os.Getenv, Log: logger})
	defer svc.Close()
	if svc.StoreErr != nil {
		logger.Warn("nothing is remembered across sessions", "error", svc.StoreErr)
	}
	srv := lsp.New(lsp.Options{Logger: logger, Version: currentVersion(), Services: svc})
	logger.Info("kodyls serving on stdio", "version", currentVersion(), "pid", os.Getpid())
	code = srv.Serve(ctx, stdio{Reader: stdin, Writer: stdout})
	logger.Info("kodyls exiting", "code", code)
	return code
}
