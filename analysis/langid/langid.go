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
	".swift": "swift", ".mm": "objective-cpp", // .m is Objective-C or MATLAB: the editor says which
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

// aliases map the other names of a language (Neovim's filetypes, short
// forms rule authors write) to the id Of gives.
var aliases = map[string]string{
	"sh": "shellscript", "bash": "shellscript", "zsh": "shellscript", "shell": "shellscript",
	"cs": "csharp", "c#": "csharp", "fs": "fsharp", "f#": "fsharp",
	"make": "makefile", "objc": "objective-c", "objcpp": "objective-cpp",
	"typescriptreact": "typescript", "tsx": "typescript", "ts": "typescript",
	"javascriptreact": "javascript", "jsx": "javascript", "js": "javascript",
	"golang": "go", "py": "python", "python3": "python", "rb": "ruby", "rs": "rust",
	"c++": "cpp", "kt": "kotlin", "yml": "yaml", "md": "markdown", "ps1": "powershell",
	"tf": "terraform", "proto": "proto3", "docker": "dockerfile",
}

// Same reports whether a and b name the same language: equal ignoring
// case, or one an alias of the other ("sh" and "shellscript").
func Same(a, b string) bool {
	return strings.EqualFold(a, b) || a != "" && b != "" && canonical(a) == canonical(b)
}

func canonical(id string) string {
	id = strings.ToLower(id)
	if c, ok := aliases[id]; ok {
		return c
	}
	return id
}
