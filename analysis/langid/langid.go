// Package langid names the language of a file from its name, with the
// identifiers editors use (VS Code's language ids, which Neovim's
// filetypes mostly share): "go", "ruby", "shellscript", "dockerfile".
//
// `kodyls review` has no editor to ask, so it names every file this way,
// and the server names an open file this way too, so that a Kody Rule's
// `languages` and a review prompt's language are the same in the editor
// and in CI. The languages whose errors kodyls parses keep the names the
// error parsers give them (a .tsx file is "typescript").
package langid

import (
	"path"
	"strings"

	"github.com/kodustech/kodyls/analysis/errparse"
)

// Of returns the language id of the file at name (a path, either
// separator); "" when unknown.
func Of(name string) string {
	if l := errparse.LanguageOf(name); l != "" {
		return l
	}
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	if l, ok := byName[base]; ok {
		return l
	}
	lower := strings.ToLower(base)
	if l, ok := byName[lower]; ok {
		return l
	}
	if strings.HasPrefix(lower, "dockerfile.") || strings.HasSuffix(lower, ".dockerfile") {
		return "dockerfile"
	}
	return byExt[strings.ToLower(path.Ext(base))]
}

// byName are the files known by their whole name.
var byName = map[string]string{
	"dockerfile": "dockerfile", "containerfile": "dockerfile",
	"makefile": "makefile", "gnumakefile": "makefile",
	"gemfile": "ruby", "rakefile": "ruby", "podfile": "ruby", "vagrantfile": "ruby",
	"jenkinsfile":    "groovy",
	"cmakelists.txt": "cmake",
	".bashrc":        "shellscript", ".bash_profile": "shellscript", ".zshrc": "shellscript", ".profile": "shellscript",
}

// byExt are the extensions of the languages the error parsers do not
// name.
var byExt = map[string]string{
	".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby", ".erb": "erb",
	".php": "php", ".phtml": "php",
	".cs": "csharp", ".csx": "csharp", ".fs": "fsharp", ".fsx": "fsharp", ".vb": "vb",
	".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".sc": "scala", ".groovy": "groovy", ".gradle": "groovy", ".clj": "clojure", ".cljs": "clojure", ".cljc": "clojure",
	".swift": "swift", ".m": "objective-c", ".mm": "objective-cpp",
	".dart": "dart", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hrl": "erlang",
	".hs": "haskell", ".ml": "ocaml", ".mli": "ocaml", ".elm": "elm", ".zig": "zig", ".nim": "nim", ".jl": "julia", ".r": "r",
	".lua": "lua", ".pl": "perl", ".pm": "perl",
	".sh": "shellscript", ".bash": "shellscript", ".zsh": "shellscript", ".ps1": "powershell", ".psm1": "powershell", ".bat": "bat", ".cmd": "bat",
	".sql": "sql", ".graphql": "graphql", ".gql": "graphql", ".proto": "proto3",
	".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".sass": "sass", ".less": "less", ".svelte": "svelte", ".astro": "astro",
	".json": "json", ".jsonc": "jsonc", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".xml": "xml", ".ini": "ini",
	".md": "markdown", ".mdx": "mdx", ".rst": "restructuredtext", ".tex": "latex",
	".tf": "terraform", ".hcl": "hcl", ".cmake": "cmake", ".mk": "makefile", ".nix": "nix", ".sol": "solidity",
}
