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

func TestSame(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"sh", "shellscript", true}, {"Bash", "shellscript", true}, {"cs", "csharp", true}, {"make", "makefile", true},
		{"typescriptreact", "typescript", true}, {"go", "Go", true}, {"ruby", "python", false}, {"", "go", false},
	} {
		if got := Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
