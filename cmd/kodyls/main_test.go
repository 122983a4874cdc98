package main

import (
	"os"
	"testing"

	"github.com/kodustech/kodyls/lsp/lsptest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	lsptest.RemoveBuiltBinary()
	os.Exit(code)
}
