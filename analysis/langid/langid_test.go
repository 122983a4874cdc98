package langid

import "testing"

func TestOf(t *testing.T) {
	for name, want := range map[string]string{
		"main.go":               "go",
		"web/App.tsx":           "typescript", // the error parsers' name
		"lib/tasks/deploy.rake": "ruby",
		"app/models/user.rb":    "ruby",
		"Gemfile":               "ruby",
		`src\Program.cs`:        "csharp",
		"build/Dockerfile":      "dockerfile",
		"Dockerfile.prod":       "dockerfile",
		"scripts/release.sh":    "shellscript",
		"Makefile":              "makefile",
		"config/app.YML":        "yaml",
		"README":                "",
		"data.bin":              "",
	} {
		if got := Of(name); got != want {
			t.Errorf("Of(%q) = %q, want %q", name, got, want)
		}
	}
}
