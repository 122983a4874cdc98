package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kodustech/kodyls/analysis/filereview"
	"github.com/kodustech/kodyls/lsp/lsptest"
)

// The change set is what git lists against the base, with the buffers'
// text in place of the disk's: a file changed and saved, a new file, a
// buffer edited but not saved. Unchanged files, ignored files and links
// leading out of the folder are not part of it.
func TestChangeSet(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		".gitignore":              "build/\n",
		"api/handlers/orders.go":  "package handlers\n\nfunc Orders() {}\n",
		"api/handlers/users.go":   "package handlers\n\nfunc Users() {}\n",
		"api/handlers/stable.go":  "package handlers\n",
		"api/handlers/edited.go":  "package handlers\n\nfunc Edited() {}\n",
		"docs/handlers/readme.md": "# handlers\n",
	})
	outside := filepath.Join(t.TempDir(), "secret.go")
	if err := os.WriteFile(outside, []byte("package secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo.Write(map[string]string{
		"api/handlers/orders.go":      "package handlers\n\nfunc Orders() string { return \"on disk\" }\n",
		"api/handlers/orders_test.go": "package handlers\n\nfunc TestOrders(t *testing.T) {}\n",
		"build/out.go":                "package build\n",
	})
	if err := os.Symlink(outside, filepath.Join(repo.Dir, "api", "link.go")); err != nil {
		t.Fatal(err)
	}
	f := loadFolder(t, offlineServices(t), repo)
	open := []filereview.Input{
		// Open with unsaved text: the buffer wins over the disk.
		{Path: "api/handlers/orders.go", Language: "go", Base: "package handlers\n\nfunc Orders() {}\n", Current: "package handlers\n\nfunc Orders() string { return \"in the buffer\" }\n"},
		// Changed in its buffer only.
		{Path: "api/handlers/edited.go", Language: "go", Base: "package handlers\n\nfunc Edited() {}\n", Current: "package handlers\n\nfunc Edited() int { return 1 }\n"},
	}
	got, err := f.ChangeSet(context.Background(), "HEAD", open)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]filereview.Input{}
	var order []string
	for _, in := range got {
		byPath[in.Path] = in
		order = append(order, in.Path)
	}
	want := []string{"api/handlers/orders.go", "api/handlers/edited.go", "api/handlers/orders_test.go"}
	if len(order) != len(want) {
		t.Fatalf("change set %q, want %q", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("change set %q, want %q", order, want)
		}
	}
	if in := byPath["api/handlers/orders.go"]; in.Current != open[0].Current {
		t.Errorf("the open buffer's text was replaced by %q", in.Current)
	}
	test := byPath["api/handlers/orders_test.go"]
	if test.Base != "" || test.Current != "package handlers\n\nfunc TestOrders(t *testing.T) {}\n" || test.Language != "go" {
		t.Errorf("the untracked test, not open: %+v", test)
	}

	// A file committed and changed on disk, not open, comes with its
	// baseline at the base.
	repo.Write(map[string]string{"api/handlers/users.go": "package handlers\n\nfunc Users() []string { return nil }\n"})
	got, err = f.ChangeSet(context.Background(), "HEAD", nil)
	if err != nil {
		t.Fatal(err)
	}
	var users *filereview.Input
	for i := range got {
		if got[i].Path == "api/handlers/users.go" {
			users = &got[i]
		}
	}
	if users == nil || users.Base != "package handlers\n\nfunc Users() {}\n" || users.Current != "package handlers\n\nfunc Users() []string { return nil }\n" {
		t.Fatalf("the changed, committed file: %+v in %d inputs", users, len(got))
	}

	if _, err := f.ChangeSet(context.Background(), "no-such-ref", nil); err == nil {
		t.Fatal("a base that is no commit gave no error")
	}
}

// A workspace folder below the repository's top level (a service of a
// monorepo) has its own change set, with paths relative to itself.
func TestChangeSetOfAFolderInsideARepository(t *testing.T) {
	repo := lsptest.NewRepo(t, map[string]string{
		"svc/orders/handler.go": "package orders\n",
		"svc/billing/charge.go": "package billing\n",
	})
	repo.Write(map[string]string{
		"svc/orders/handler.go":      "package orders\n\nfunc Handle() {}\n",
		"svc/orders/handler_test.go": "package orders\n",
		"svc/billing/charge.go":      "package billing\n\nfunc Charge() {}\n",
	})
	svc := offlineServices(t)
	f := svc.Folder(filepath.Join(repo.Dir, "svc", "orders"))
	got, err := f.ChangeSet(context.Background(), "HEAD", nil)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, in := range got {
		paths = append(paths, in.Path)
	}
	if len(got) != 2 || paths[0] != "handler.go" || paths[1] != "handler_test.go" {
		t.Fatalf("change set %q, want handler.go and handler_test.go", paths)
	}
	if got[0].Base != "package orders\n" {
		t.Fatalf("the baseline of handler.go is %q", got[0].Base)
	}
}
