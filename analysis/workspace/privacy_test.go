package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestPrivacyListFollowsIgnorePaths: what an explanation or a fix never
// reads is the default privacy list and kodus-config.yml's ignorePaths. A
// "!" pattern beside them is left out and the others stay in force; a
// configuration that may have lost a path to ignore refuses every file.
func TestPrivacyListFollowsIgnorePaths(t *testing.T) {
	svc := offlineServices(t)
	for _, tt := range []struct {
		name, cfg string
		refused   map[string]bool
	}{
		{"patterns", "ignorePaths:\n  - private/**\n", map[string]bool{"private/notes.txt": true, ".env": true, "main.go": false}},
		{"negation", "ignorePaths:\n  - private/**\n  - \"!private/README.md\"\n", map[string]bool{"private/notes.txt": true, "private/README.md": true, "main.go": false}},
		{"broken glob", "ignorePaths:\n  - private/**\n  - \"src/[a-\"\n", map[string]bool{"private/notes.txt": true, "main.go": true}},
		{"invalid YAML", "ignorePaths:\n\t- private/**\n", map[string]bool{"private/notes.txt": true, "main.go": true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.WriteFile(filepath.Join(root, "kodus-config.yml"), []byte(tt.cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			explain := svc.Explainer(context.Background(), root).Ignore
			fix := svc.Fixer(root).Ignore
			for rel, want := range tt.refused {
				if explain(rel) != want || fix(rel) != want {
					t.Errorf("%s refused by the explanation %v, the fix %v; want %v", rel, explain(rel), fix(rel), want)
				}
			}
		})
	}
}
