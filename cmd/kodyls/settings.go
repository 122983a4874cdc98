package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
)

// resolveSettings resolves the configuration of a command (the
// environment: a command has no editor) and tells each problem on stderr,
// `kodyls CMD: configuration: …`, so that a value that was set and
// dropped is never met later as "set it". `kodyls review` notes them in
// its report instead, and `kodyls doctor` lists them.
func resolveSettings(cmd string, stderr io.Writer) contract.Resolved {
	res := contract.Resolve(os.Getenv, nil, nil)
	for _, p := range res.Problems {
		fmt.Fprintf(stderr, "kodyls %s: configuration: %s\n", cmd, p)
	}
	return res
}

// openServices opens the composition root as workspace.Open does, and
// adds to a store that could not be opened in a data directory that
// cannot be written what to do: sqlite says no more than "unable to open
// database file".
func openServices(ctx context.Context, cfg workspace.Config) *workspace.Services {
	svc := workspace.Open(ctx, cfg)
	if svc.StoreErr == nil || strings.Contains(svc.StoreErr.Error(), "KODYLS_DATA_DIR") {
		return svc
	}
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if dir, _, err := index.DataDir(getenv); err == nil {
		if werr := index.Unwritable(dir); werr != nil {
			svc.StoreErr = fmt.Errorf("%w: %v", svc.StoreErr, werr)
		}
	}
	return svc
}
