package workspace_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/llmtest"
	"github.com/kodustech/kodyls/analysis/changes"
	"github.com/kodustech/kodyls/analysis/workspace"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// wait bounds how long a test waits for a signal that should come at once;
// it only turns a hang into a failure.
const wait = 10 * time.Second

// offlineServices opens services with no model and no store.
func offlineServices(t *testing.T) *workspace.Services {
	t.Helper()
	svc := workspace.Open(context.Background(), workspace.Config{Settings: contract.Defaults(), NoStore: true})
	t.Cleanup(svc.Close)
	return svc
}

// modelSettings are the defaults with the fake endpoint as the model.
func modelSettings(fake *llmtest.Server) contract.Settings {
	s := contract.Defaults()
	s.LLM.BaseURL, s.LLM.Model = fake.URL, "fake-model"
	return s
}

// modelServices opens services talking to fake, with a store in a
// temporary data directory and no retries, so a hanging request stays one
// request and repeated reviews of the same change come from the cache.
func modelServices(t *testing.T, fake *llmtest.Server) *workspace.Services {
	t.Helper()
	data := t.TempDir()
	svc := workspace.Open(context.Background(), workspace.Config{
		Settings: modelSettings(fake),
		Getenv:   env(map[string]string{"KODYLS_DATA_DIR": data}),
		AdjustLLM: func(c *llm.Config) {
			c.MaxRetries, c.BreakerThreshold = -1, 100
		},
	})
	t.Cleanup(svc.Close)
	if svc.StoreErr != nil {
		t.Fatal(svc.StoreErr)
	}
	return svc
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// loadFolder returns the folder of repo with its rules loaded, failing on
// a rule file that does not load.
func loadFolder(t *testing.T, svc *workspace.Services, repo *lsptest.Repo) *workspace.Folder {
	t.Helper()
	f := svc.Folder(repo.Dir)
	if _, errs := f.Reload(context.Background()); len(errs) != 0 {
		t.Fatalf("rule files do not load: %v", errs)
	}
	return f
}

// baseline reads rel's baseline at HEAD, as the editor does off the typing
// path.
func baseline(t *testing.T, f *workspace.Folder, rel string) changes.Baseline {
	t.Helper()
	b, err := f.Engine.RefreshBaseline(context.Background(), filepath.Join(f.Root, filepath.FromSlash(rel)), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
