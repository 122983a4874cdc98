package fix

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kodustech/kodyls/agents/planmode"
)

// A verifying build runs on a scratch copy with the model's edits applied,
// before the user has seen them. An edit to a file that defines the build
// would therefore let the model choose what the build runs (a Makefile
// recipe, a package.json script, a build.rs, a gradle file, ...): such
// edits are refused, never written to the scratch copy, and reported as a
// change the user has to make.
//
// The names below are refused whatever the build command is, because
// builds call each other: `npm run build` may run make, and `make` may run
// gradle. The command line itself adds the files it names (`./build.sh`,
// `make -f ci.mk`, `tsc -p tsconfig.build.json`), and the scripts those
// definition files run are added in turn.

// buildFileNames are base names that define or drive a build.
var buildFileNames = map[string]string{
	// make, autotools, cmake, meson, bazel and friends
	"Makefile": "make", "makefile": "make", "GNUmakefile": "make", "BSDmakefile": "make",
	"Makefile.am": "automake", "Makefile.in": "configure", "configure": "configure", "configure.ac": "autoconf", "configure.in": "autoconf",
	"CMakeLists.txt": "cmake", "CMakePresets.json": "cmake", "CMakeUserPresets.json": "cmake",
	"meson.build": "meson", "meson_options.txt": "meson", "meson.options": "meson",
	"BUILD": "bazel", "BUILD.bazel": "bazel", "WORKSPACE": "bazel", "WORKSPACE.bazel": "bazel", "MODULE.bazel": "bazel", ".bazelrc": "bazel", ".bazelversion": "bazel",
	"SConstruct": "scons", "SConscript": "scons", "justfile": "just", "Justfile": "just", ".justfile": "just",
	"Taskfile.yml": "task", "Taskfile.yaml": "task", "Rakefile": "rake", "Earthfile": "earthly", "Tiltfile": "tilt",
	"Dockerfile": "docker", "Containerfile": "docker", "docker-compose.yml": "docker compose", "docker-compose.yaml": "docker compose", "compose.yml": "docker compose", "compose.yaml": "docker compose",
	"flake.nix": "nix", "default.nix": "nix", "shell.nix": "nix",
	// JavaScript and TypeScript
	"package.json": "npm scripts", ".npmrc": "npm", ".yarnrc": "yarn", ".yarnrc.yml": "yarn", ".pnpmfile.cjs": "pnpm", "pnpm-workspace.yaml": "pnpm",
	"bunfig.toml": "bun", "deno.json": "deno", "deno.jsonc": "deno", "turbo.json": "turbo", "nx.json": "nx", "lerna.json": "lerna",
	// Rust
	"build.rs": "cargo build scripts", "Cargo.toml": "cargo", "rust-toolchain": "rustup", "rust-toolchain.toml": "rustup",
	// JVM
	"build.gradle": "gradle", "build.gradle.kts": "gradle", "settings.gradle": "gradle", "settings.gradle.kts": "gradle", "gradle.properties": "gradle",
	"gradlew": "gradle", "gradlew.bat": "gradle", "pom.xml": "maven", "mvnw": "maven", "mvnw.cmd": "maven", "build.xml": "ant", "build.sbt": "sbt",
	// Python
	"setup.py": "setuptools", "setup.cfg": "setuptools", "pyproject.toml": "python build backends", "tox.ini": "tox", "noxfile.py": "nox", "conftest.py": "pytest", "pytest.ini": "pytest",
	// others
	"Gemfile": "bundler", "mix.exs": "mix", "rebar.config": "rebar", "stack.yaml": "stack", "Setup.hs": "cabal", "dune": "dune", "dune-project": "dune",
	"composer.json": "composer", "build.zig": "zig", "build.zig.zon": "zig", "Package.swift": "swift",
	".envrc": "direnv", ".tool-versions": "asdf", "mise.toml": "mise", ".mise.toml": "mise",
}

// buildFileDirs are directories whose files configure a build tool.
var buildFileDirs = map[string]string{".cargo": "cargo", "buildSrc": "gradle", "gradle": "gradle", ".mvn": "maven", ".husky": "git hooks", ".yarn": "yarn"}

// buildFileSuffixes are name endings of build definitions.
var buildFileSuffixes = []struct{ suffix, tool string }{
	{".mk", "make"}, {".make", "make"}, {".cmake", "cmake"}, {".gradle", "gradle"}, {".gradle.kts", "gradle"}, {".bzl", "bazel"},
	{".cabal", "cabal"}, {".gemspec", "bundler"}, {".nix", "nix"},
	{".sh", "shell scripts"}, {".bash", "shell scripts"}, {".zsh", "shell scripts"}, {".ps1", "PowerShell scripts"}, {".bat", "batch scripts"}, {".cmd", "batch scripts"},
}

// configScript matches JavaScript tool configurations, which are programs
// the tool runs (vite.config.ts, webpack.config.js, babel.config.cjs,
// .eslintrc.js, jest.config.mjs, ...).
var configScript = regexp.MustCompile(`(^|[.-])(config|rc)\.(js|cjs|mjs|ts|cts|mts)$|^\.[a-z]+rc\.(js|cjs|mjs|ts)$`)

// Directives of go.mod and go.work that choose the toolchain the go
// command downloads and runs, or tools it runs.
var goModExec = regexp.MustCompile(`(?m)^\s*(go|toolchain|tool|godebug)\b`)

// tsconfig options that load code into the compiler.
var tsconfigExec = regexp.MustCompile(`"(plugins|extends|transform|transformers)"`)

// interpreters are command words whose next argument is a program.
var interpreters = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "source": true, ".": true,
	"node": true, "nodejs": true, "deno": true, "bun": true, "tsx": true, "ts-node": true, "python": true, "python3": true,
	"perl": true, "ruby": true, "php": true, "pwsh": true, "lua": true, "exec": true, "env": true, "xargs": true}

// configFlags are options whose argument is a file that defines the
// build: make -f, tsc -p, gradle -b, docker compose -f, --config of many
// tools.
var configFlags = map[string]bool{"-f": true, "--file": true, "--makefile": true, "-p": true, "--project": true,
	"-b": true, "--build-file": true, "--settings-file": true, "--config": true, "--config-file": true,
	"--manifest-path": true, "--rcfile": true}

// configSuffixes are endings of files a command line names as its
// configuration rather than as a source to compile.
var configSuffixes = []string{".json", ".jsonc", ".toml", ".yaml", ".yml", ".xml", ".ini", ".cfg", ".conf", ".properties", ".rsp", ".opts"}

func hasConfigSuffix(rel string) bool {
	for _, s := range configSuffixes {
		if strings.HasSuffix(rel, s) {
			return true
		}
	}
	return false
}

// buildGuard tells which workspace files define the build a command runs.
type buildGuard struct {
	root    string
	command string
	// named maps the files the command line and the build definitions
	// name (scripts, included makefiles) to the reason.
	named map[string]string
}

// newBuildGuard reads the command line, run in dir (relative to root,
// slash-separated; "" is root), and the build definitions at root and in
// dir. Nothing is executed.
func newBuildGuard(root, dir, command string) *buildGuard {
	g := &buildGuard{root: root, command: command, named: map[string]string{}}
	if command == "" {
		return g
	}
	rootFS, err := os.OpenRoot(root)
	if err != nil {
		return g
	}
	defer rootFS.Close()
	// The files the command line runs or reads its build configuration
	// from. The sources it compiles (gcc -fsyntax-only main.c, javac
	// Main.java, tsc index.ts) are what a fix edits, and stay editable.
	var queue []string
	words := shellWords(command)
	for i, w := range words {
		at := strings.TrimPrefix(w, "@") // gcc and javac read arguments from @file
		name := at
		if dir != "" && !filepath.IsAbs(at) {
			name = path.Join(dir, at)
		}
		rel, ok := g.existing(rootFS, name)
		if !ok {
			continue
		}
		flag, prev := "", ""
		if i > 0 {
			flag, prev = words[i-1], path.Base(words[i-1])
		}
		var why string
		switch {
		case interpreters[prev]:
			why = fmt.Sprintf("the build command %q runs it with %s", command, prev)
		case at != w:
			why = fmt.Sprintf("the build command %q reads its arguments from it", command)
		case configFlags[flag]:
			why = fmt.Sprintf("the build command %q reads its build definition from it (%s)", command, flag)
		case g.executable(rootFS, rel), hasScriptSuffix(rel), hasConfigSuffix(rel):
			why = fmt.Sprintf("the build command %q runs or reads it as its build definition", command)
		default:
			continue
		}
		g.named[rel] = why
		queue = append(queue, rel)
	}
	// The scripts that the top-level definitions and the named files run,
	// transitively, a bounded number of files deep.
	for _, d := range []string{".", dir} {
		if d == "" {
			continue
		}
		for _, def := range []string{"Makefile", "makefile", "GNUmakefile", "package.json", "justfile", "Justfile", "Taskfile.yml", "Taskfile.yaml"} {
			queue = append(queue, path.Join(d, def))
		}
	}
	seen := map[string]bool{}
	for n := 0; len(queue) > 0 && n < 64; n++ {
		rel := queue[0]
		queue = queue[1:]
		if seen[rel] {
			continue
		}
		seen[rel] = true
		data, err := rootFS.ReadFile(filepath.FromSlash(rel))
		if err != nil || len(data) > 1<<20 {
			continue
		}
		for _, script := range g.scriptsIn(rootFS, rel, string(data)) {
			if _, ok := g.named[script]; !ok {
				g.named[script] = fmt.Sprintf("%s runs it", rel)
			}
			queue = append(queue, script)
		}
	}
	return g
}

// existing returns w as a workspace-relative path when it names a
// regular file inside the workspace.
func (g *buildGuard) existing(r *os.Root, w string) (string, bool) {
	w = strings.TrimSpace(w)
	if w == "" || strings.ContainsAny(w, "$*?[{") {
		return "", false
	}
	if filepath.IsAbs(w) {
		rel, err := filepath.Rel(g.root, w)
		if err != nil {
			return "", false
		}
		w = rel
	}
	rel := path.Clean(filepath.ToSlash(w))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	st, err := r.Stat(filepath.FromSlash(rel))
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	return rel, true
}

// scriptsIn lists the workspace files that the definition rel runs:
// programs after an interpreter word, executables, shell scripts and
// included makefiles. Files a definition only lists (a Makefile's
// prerequisites, say) are the sources being built, not build
// definitions.
func (g *buildGuard) scriptsIn(r *os.Root, rel, text string) []string {
	if path.Base(rel) == "package.json" {
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal([]byte(text), &pkg) != nil {
			return nil
		}
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(pkg.Scripts)) {
			b.WriteString(pkg.Scripts[k] + "\n")
		}
		text = b.String()
	}
	dir := path.Dir(rel)
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		words := shellWords(line)
		for i, w := range words {
			cand, ok := g.existing(r, w)
			if !ok && dir != "." {
				cand, ok = g.existing(r, path.Join(dir, w))
			}
			if !ok {
				continue
			}
			prev := ""
			if i > 0 {
				prev = path.Base(words[i-1])
			}
			if interpreters[prev] || isIncludeWord(prev) || g.executable(r, cand) || hasScriptSuffix(cand) {
				out = append(out, cand)
			}
		}
	}
	return out
}

func isIncludeWord(w string) bool {
	return w == "include" || w == "-include" || w == "sinclude" || w == "-f" || w == "--file" || w == "--makefile"
}

func hasScriptSuffix(rel string) bool {
	for _, s := range buildFileSuffixes {
		if strings.HasSuffix(rel, s.suffix) {
			return true
		}
	}
	return false
}

func (g *buildGuard) executable(r *os.Root, rel string) bool {
	st, err := r.Stat(filepath.FromSlash(rel))
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// reason says why an edit of rel from oldText to newText changes what
// the build runs, or returns "" when it does not.
func (g *buildGuard) reason(rel, oldText, newText string) string {
	if g == nil || g.command == "" {
		return ""
	}
	base := path.Base(rel)
	if why, ok := g.named[rel]; ok {
		return why
	}
	switch {
	case base == "go.mod" || base == "go.work":
		if goModExec.MatchString(oldText) || goModExec.MatchString(newText) {
			return "its go, toolchain, tool and godebug lines choose the programs the go command runs"
		}
		return ""
	case strings.HasPrefix(base, "tsconfig") && strings.HasSuffix(base, ".json"), base == "jsconfig.json":
		if tsconfigExec.MatchString(oldText) || tsconfigExec.MatchString(newText) {
			return "its plugins and extends load code into the TypeScript compiler"
		}
		return ""
	}
	if tool, ok := buildFileNames[base]; ok {
		return fmt.Sprintf("it defines the build (%s)", tool)
	}
	for _, s := range buildFileSuffixes {
		if strings.HasSuffix(base, s.suffix) {
			return fmt.Sprintf("it defines the build (%s)", s.tool)
		}
	}
	if configScript.MatchString(base) {
		return "it is a tool's configuration, which the tool runs as code"
	}
	for _, d := range strings.Split(path.Dir(rel), "/") {
		if tool, ok := buildFileDirs[d]; ok {
			return fmt.Sprintf("it configures the build (%s)", tool)
		}
	}
	r, err := os.OpenRoot(g.root)
	if err != nil {
		return ""
	}
	defer r.Close()
	if g.executable(r, rel) {
		return "it is an executable the build may run"
	}
	if crate := g.procMacroCrate(r, rel); crate != "" {
		return fmt.Sprintf("it is part of the procedural macro crate %s, which cargo runs while it compiles", crate)
	}
	return ""
}

// procMacroCrate returns the Cargo.toml of the crate rel belongs to when
// that crate is a procedural macro: its code runs inside the compiler.
func (g *buildGuard) procMacroCrate(r *os.Root, rel string) string {
	if !strings.HasSuffix(rel, ".rs") {
		return ""
	}
	for dir := path.Dir(rel); ; dir = path.Dir(dir) {
		manifest := path.Join(dir, "Cargo.toml")
		data, err := r.ReadFile(filepath.FromSlash(manifest))
		if err == nil {
			if procMacro.Match(data) {
				return manifest
			}
			return ""
		} else if !isNotExist(err) {
			return ""
		}
		if dir == "." {
			return ""
		}
	}
}

var procMacro = regexp.MustCompile(`(?m)^\s*proc[-_]macro\s*=\s*true`)

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// shellWords splits a command line into words, good enough to find the
// file names in it: quotes are dropped and shell operators separate words.
func shellWords(line string) []string {
	if i := strings.Index(line, "#"); i == 0 || (i > 0 && (line[i-1] == ' ' || line[i-1] == '\t')) {
		line = line[:i]
	}
	return strings.FieldsFunc(line, func(r rune) bool {
		switch r {
		case ' ', '\t', '\r', ';', '&', '|', '(', ')', '<', '>', '`', '\'', '"', '=', ':', ',':
			return true
		}
		return false
	})
}

// ErrBuildDefinition marks edits refused because they change what the
// build runs.
var ErrBuildDefinition = errors.New("edits to a file that defines the build are refused")

// RefusedEdit is an edit refused because it changes the build's own
// definition or kodyls's own configuration.
type RefusedEdit struct {
	Edit
	Reason string `json:"reason"`
}

// OwnConfiguration reports whether the edit was refused because it
// changes kodyls's own configuration rather than the build's definition.
func (r RefusedEdit) OwnConfiguration() bool {
	return strings.HasPrefix(r.Reason, OwnConfigurationReason)
}

// refused says why an edit of rel is refused: it changes kodyls's own
// configuration (whatever the build command) or what the build runs; ""
// when it is not refused.
func (g *buildGuard) refused(rel, oldText, newText string) string {
	if why := ownConfiguration(g.root, rel); why != "" {
		return why
	}
	return g.reason(rel, oldText, newText)
}

// refusal says which of edits, once validated, touch kodyls's own
// configuration (ErrOwnConfiguration) or the build's definition
// (ErrBuildDefinition), or returns nil.
func refusal(root string, ignore func(string) bool, guard *buildGuard, edits []Edit) error {
	var build, own []string
	for i, e := range edits {
		rel, err := newChecker(root, ignore).relPath(e.File)
		if err != nil {
			continue
		}
		r := guard.refused(rel, e.OldText, e.NewText)
		if r == "" {
			continue
		}
		why := fmt.Sprintf("edit %d: %s: %s; make this change yourself if it is right, and propose a fix that leaves it alone", i+1, rel, r)
		if strings.HasPrefix(r, OwnConfigurationReason) {
			own = append(own, why)
		} else {
			build = append(build, why)
		}
	}
	var errs []error
	if len(own) > 0 {
		errs = append(errs, fmt.Errorf("%w: %s", ErrOwnConfiguration, strings.Join(own, "; ")))
	}
	if len(build) > 0 {
		errs = append(errs, fmt.Errorf("%w: %s", ErrBuildDefinition, strings.Join(build, "; ")))
	}
	return errors.Join(errs...)
}

// refusedEdits collects, over every plan version, the proposed edits the
// guard refused, each once, in the order they were first proposed.
func refusedEdits(root string, guard *buildGuard, versions []planmode.Plan) []RefusedEdit {
	var out []RefusedEdit
	seen := map[Edit]bool{}
	for _, p := range versions {
		for _, s := range p.Steps {
			if s.Tool != ToolProposeEdits || s.Status != planmode.StepFailed ||
				!strings.Contains(s.Result, ErrBuildDefinition.Error()) && !strings.Contains(s.Result, ErrOwnConfiguration.Error()) {
				continue
			}
			edits, err := decodeEdits(s.Input)
			if err != nil {
				continue
			}
			for _, e := range edits {
				rel, err := newChecker(root, nil).relPath(e.File)
				if err != nil {
					continue
				}
				e.File = rel
				r := guard.refused(rel, e.OldText, e.NewText)
				if r == "" || seen[e] {
					continue
				}
				seen[e] = true
				out = append(out, RefusedEdit{Edit: e, Reason: r})
			}
		}
	}
	return out
}

// refusedDiff renders the refused edits that still apply to the files as
// a unified diff, for the user to read.
func refusedDiff(root string, refused []RefusedEdit) string {
	var b strings.Builder
	for _, r := range refused {
		d, err := Diff(root, nil, []Edit{r.Edit})
		if err == nil {
			b.WriteString(d)
		}
	}
	return b.String()
}

// BuildDefinitionEdits returns the edits that change what the build
// command runs in the workspace at root, each with the reason; a fix
// is never verified with them. With no build command it returns none.
func BuildDefinitionEdits(root, build string, edits []Edit) []RefusedEdit {
	g := newBuildGuard(root, "", build)
	var out []RefusedEdit
	for _, e := range edits {
		rel, err := newChecker(root, nil).relPath(e.File)
		if err != nil {
			continue
		}
		if r := g.reason(rel, e.OldText, e.NewText); r != "" {
			e.File = rel
			out = append(out, RefusedEdit{Edit: e, Reason: r})
		}
	}
	return out
}
