package lsp_test

import (
	"os"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// TestExplanationShownToGenericClients: Helix and eglot run "Explain this
// error" from the code action and drop the command's result, so the server
// shows the explanation itself: a Markdown document when the client opens
// it, else (the client answers window/showDocument with an error) a
// message. A kodyls plugin, which renders the result, gets neither.
func TestExplanationShownToGenericClients(t *testing.T) {
	explain := func(t *testing.T, o lsptest.InitOptions) (*lsptest.Session, contract.ExplainResult) {
		repo := newWorkspace(t)
		data := t.TempDir()
		s := start(t, repo.Dir, lsp.Options{Getenv: func(k string) string {
			if k == "KODYLS_DATA_DIR" {
				return data
			}
			return ""
		}})
		s.Initialize(o)
		s.AwaitIdle("")
		var res contract.ExplainResult
		err := s.ExecuteCommand(contract.CommandExplainError, contract.ExplainArgs{
			URI: s.URI("main.go"), Message: "undefined: fmt.Printx", Source: "compiler", Offline: true,
			Range: &protocol.Range{Start: protocol.Position{Line: 5, Character: 1}},
		}, &res)
		if err != nil {
			t.Fatal(err)
		}
		s.AwaitIdle("")
		return s, res
	}
	messages := func(s *lsptest.Session) []string {
		var out []string
		for _, m := range s.Messages() {
			if strings.HasPrefix(m, "kodyls: undefined: fmt.Printx") {
				out = append(out, m)
			}
		}
		return out
	}

	t.Run("showDocument", func(t *testing.T) {
		s, res := explain(t, lsptest.InitOptions{Generic: true})
		shown := s.Shown()
		if len(shown) != 1 || len(messages(s)) != 0 {
			t.Fatalf("shown %+v, messages %q; want one document and no message", shown, messages(s))
		}
		doc, err := os.ReadFile(shown[0].URI.FsPath())
		if err != nil {
			t.Fatal(err)
		}
		if string(doc) != res.Markdown || !strings.Contains(string(doc), "### Root cause") || !strings.HasSuffix(string(shown[0].URI), ".md") {
			t.Fatalf("the document shown is not the explanation:\n%s", doc)
		}
		if shown[0].TakeFocus == nil || !*shown[0].TakeFocus {
			t.Error("the explanation is opened without the focus")
		}
		s.Shutdown()
	})
	t.Run("message", func(t *testing.T) {
		s, res := explain(t, lsptest.InitOptions{Generic: true, NoShowDocument: true})
		msgs := messages(s)
		_, cause, _ := strings.Cut(res.Markdown, "### Root cause\n\n")
		cause, _, _ = strings.Cut(cause, "\n")
		if len(msgs) != 1 || cause == "" || !strings.Contains(msgs[0], "Root cause: "+cause) || !strings.Contains(msgs[0], "1. ") {
			t.Fatalf("messages %q; want the root cause and the fix steps", msgs)
		}
		s.Shutdown()
	})
	t.Run("plugin", func(t *testing.T) {
		s, res := explain(t, lsptest.InitOptions{})
		if len(s.Shown()) != 0 || len(messages(s)) != 0 || !strings.Contains(res.Markdown, "### Root cause") {
			t.Fatalf("a plugin that renders the result got shown %+v, messages %q", s.Shown(), messages(s))
		}
		s.Shutdown()
	})
}
