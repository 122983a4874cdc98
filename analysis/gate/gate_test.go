package gate

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/kodustech/kodyls/analysis/kodusconfig"
)

const goSrc = "package x\n\nfunc F() int { return 1 }\n"

func mustNew(t *testing.T, o Options) *Gate {
	t.Helper()
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

type gateCase struct {
	name    string
	path    string
	content string // checked with Check; "" means a small Go source
	want    Reason
}

func runCases(t *testing.T, g *Gate, cases []gateCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			content := c.content
			if content == "" {
				content = goSrc
			}
			if got := g.Check(c.path, []byte(content)); got != c.want {
				t.Errorf("Check(%q) = %q, want %q", c.path, got, c.want)
			}
		})
	}
}

func TestIgnorePaths(t *testing.T) {
	g := mustNew(t, Options{IgnorePaths: []string{
		"dist/**", "**/*.spec.ts", "*.snap", "docs", "/build/out/", "./tmp/*.go", "  ", "src/{a,b}/gen.go",
	}})
	r := func(p string) Reason { return Reason("ignored by kodus-config ignorePaths: " + p) }
	runCases(t, g, []gateCase{
		{"doublestar dir", "dist/app/main.js", "", r("dist/**")},
		{"doublestar suffix", "web/src/app.spec.ts", "", r("**/*.spec.ts")},
		{"doublestar suffix at root", "app.spec.ts", "", r("**/*.spec.ts")},
		{"slashless basename anywhere", "a/b/__snapshots__/x.snap", "", r("*.snap")},
		{"slashless dir anywhere", "site/docs/intro.md", "", r("docs")},
		{"leading and trailing slash", "build/out/x/y.go", "", r("/build/out/")},
		{"leading dot slash", "tmp/scratch.go", "", r("./tmp/*.go")},
		{"braces", "src/b/gen.go", "", r("src/{a,b}/gen.go")},
		{"dot slash path", "./dist/x.js", "", r("dist/**")},
		{"windows separators", `dist\app\main.js`, "", r("dist/**")},

		{"near: other dir", "distro/main.js", "", ""},
		{"near: spec in name only", "web/spec.ts", "", ""},
		{"near: snap in dir name", "x.snap.d/file.go", "", ""},
		{"near: docs as prefix", "docsite/intro.md", "", ""},
		{"near: build/out elsewhere", "a/build/out/x.go", "", ""},
		{"near: tmp nested", "tmp/sub/scratch.go", "", ""},
		{"near: braces", "src/c/gen.go", "", ""},
	})
}

func TestNewErrors(t *testing.T) {
	for _, p := range []string{"src/[a-", "a\\", "!dist/**", "/", "./"} {
		_, err := New(Options{IgnorePaths: []string{"ok/**", p}})
		if err == nil {
			t.Errorf("New accepted %q", p)
			continue
		}
		if !strings.Contains(err.Error(), "\""+strings.ReplaceAll(p, `\`, `\\`)+"\"") {
			t.Errorf("error for %q does not name it: %v", p, err)
		}
	}
	if _, err := New(Options{}); err != nil {
		t.Errorf("New with no options: %v", err)
	}
}

func TestSecrets(t *testing.T) {
	g := mustNew(t, Options{})
	r := func(p string) Reason { return Reason("may contain secrets (always ignored: " + p + ")") }
	runCases(t, g, []gateCase{
		{".env", ".env", "", r(".env")},
		{".env.local nested", "services/api/.env.local", "", r(".env.*")},
		{"docker env file", "deploy/prod.env", "", r("*.env")},
		{"envrc", ".envrc", "", r(".envrc")},
		{"pem", "certs/server.pem", "", r("*.pem")},
		{"key", "tls/private.key", "", r("*.key")},
		{"ssh key", "home/id_rsa", "", r("id_rsa*")},
		{"ssh pub key", "id_ed25519.pub", "", r("id_ed25519*")},
		{"npmrc", ".npmrc", "", r(".npmrc")},
		{"tfstate backup", "infra/terraform.tfstate.backup", "", r("*.tfstate.*")},

		{"near: env.go", "config/env.go", "", ""},
		{"near: environment.ts", "src/environment.ts", "", ""},
		// A directory named like an env file is skipped whole: the privacy
		// ignore list errs on the side of not sending.
		{".env.d directory", ".env.d/README.md", "", "may contain secrets (on the privacy ignore list)"},
		{"near: keys.go", "crypto/keys.go", "", ""},
		{"near: monkey.go", "zoo/monkey.go", "", ""},
		{"near: pem in name", "pem_parser.go", "", ""},
	})
	// A user pattern is reported in preference to a secret default.
	g = mustNew(t, Options{IgnorePaths: []string{"**/.env*"}})
	if got := g.CheckPath(".env"); got != "ignored by kodus-config ignorePaths: **/.env*" {
		t.Errorf("CheckPath(.env) = %q", got)
	}
}

func TestVendored(t *testing.T) {
	runCases(t, mustNew(t, Options{}), []gateCase{
		{"go vendor", "vendor/github.com/x/y/z.go", "", "vendored (vendor/)"},
		{"nested vendor", "tools/vendor/a.go", "", "vendored (vendor/)"},
		{"node_modules", "web/node_modules/react/index.js", "", "vendored (node_modules/)"},
		{"third_party", "third_party/zlib/zlib.c", "", "vendored (third_party/)"},
		{"yarn", ".yarn/releases/yarn-4.cjs", "", "vendored (.yarn/)"},

		{"near: vendors.go", "billing/vendors.go", "", ""},
		{"near: vendor.go", "vendor.go", "", ""},
		{"near: vendors dir", "vendors/list.go", "", ""},
		{"near: third-party dir", "third-party-notes/x.md", "", ""},
		{"near: node_modules_test", "node_modules_test.go", "", ""},
	})
}

func TestLockFiles(t *testing.T) {
	cases := []gateCase{}
	for _, p := range []string{
		"go.sum", "mod/go.work.sum", "package-lock.json", "web/yarn.lock", "pnpm-lock.yaml",
		"Cargo.lock", "poetry.lock", "Pipfile.lock", "composer.lock", "Gemfile.lock",
		"bun.lockb", "uv.lock", "ios/Podfile.lock", "Package.resolved", "flake.lock",
	} {
		cases = append(cases, gateCase{p, p, "", "lock file"})
	}
	for _, p := range []string{"lock.go", "internal/lock/lock.go", "unlock.ts", "go.summary", "yarn.lock.md", "clock.lockstep.go", ".lock"} {
		cases = append(cases, gateCase{"near: " + p, p, "", ""})
	}
	runCases(t, mustNew(t, Options{}), cases)
}

func TestGenerated(t *testing.T) {
	lic := strings.Repeat("// Licensed under the Apache License, Version 2.0.\n", 15)
	runCases(t, mustNew(t, Options{}), []gateCase{
		{"pb.go", "api/v1/service.pb.go", "", "generated file (*.pb.go)"},
		{"python protobuf", "api/service_pb2.py", "", "generated file (*_pb2.py)"},
		{"_generated", "src/schema_generated.ts", "", "generated file (*_generated.*)"},
		{"gen.go", "internal/db/models.gen.go", "", "generated file (*.gen.go)"},
		{"designer.cs", "Forms/Main.Designer.cs", "", "generated file (*.designer.cs)"},
		{"source map", "static/app.js.map", "", "generated file (*.js.map)"},

		{"go header", "x/stringer.go", "// Code generated by \"stringer -type=Kind\"; DO NOT EDIT.\n\npackage x\n",
			"generated file (Code generated … DO NOT EDIT)"},
		{"go header CRLF after license", "x/y.go", "// Copyright.\r\n\r\n// Code generated by mockgen. DO NOT EDIT.\r\npackage x\r\n",
			"generated file (Code generated … DO NOT EDIT)"},
		{"go header after long license", "x/y.go", lic + "\n// Code generated by sqlc. DO NOT EDIT.\npackage x\n",
			"generated file (Code generated … DO NOT EDIT)"},
		{"@generated", "gen/schema.js", "/**\n * @generated SignedSource<<abc>>\n */\nexport const a = 1;\n", "generated file (@generated)"},
		{"@generated hash", "BUCK.py", "# @generated by autodeps\nx = 1\n", "generated file (@generated)"},
		{"protoc python", "a/b.py", "# -*- coding: utf-8 -*-\n# Generated by the protocol buffer compiler.  DO NOT EDIT!\n", "generated file (Generated by)"},
		{"thrift", "gen/Foo.java", "/**\n * Autogenerated by Thrift Compiler (0.9.3)\n *\n * DO NOT EDIT UNLESS YOU ARE SURE\n */\n", "generated file (Autogenerated by)"},
		{"csharp", "Api.cs", "//------\n// <auto-generated>\n//     This code was generated by a tool.\n// </auto-generated>\n", "generated file (<auto-generated)"},
		{"this file was generated", "x.ts", "/* This file was automatically generated by openapi-ts. */\nexport {}\n",
			"generated file (This file was automatically generated)"},
		{"code generated ts", "client.ts", "// Code generated by ogen, DO NOT EDIT.\nexport {}\n", "generated file (Code generated … DO NOT EDIT)"},

		{"near: mention mid-comment", "lint/gen.go",
			"// Package lint skips files whose header says \"// Code generated ... DO NOT EDIT.\".\n" +
				"// Code generated files are recognised by go/ast.IsGenerated.\npackage lint\n", ""},
		{"near: generator source", "cmd/gen/main.go",
			"package main\n\nconst header = \"// Code generated by gen. DO NOT EDIT.\"\nconst meta = \"// @generated\"\n", ""},
		{"near: generator doc", "gen.go", "// This code generates the tables; do not edit them by hand.\npackage x\n", ""},
		{"near: marker after the header", "x.go", "package x\n" + strings.Repeat("\n", 50) + "// Code generated by x. DO NOT EDIT.\n", ""},
		{"near: generated IDs", "ids.py", "# Generated IDs are unique per tenant.\ndef new_id(): ...\n", ""},
		{"near: generator.go", "gen/generator.go", "", ""},
		{"near: genesis.go", "genesis.go", "", ""},
		{"near: protobuf.go", "protobuf.go", "", ""},
	})
}

func TestMinified(t *testing.T) {
	js := "!function(e,t){\"use strict\";var n=function(e){return e*2};" // 58 bytes
	minJS := strings.Repeat(js, 200)                                     // 11.6 KB on one line
	paragraph := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	longish := "package x\n\nvar table = \"" + strings.Repeat("a", 450) + "\"\n\nfunc F() {}\n"
	runCases(t, mustNew(t, Options{}), []gateCase{
		{"min.js", "static/app.min.js", "", "minified (*.min.js)"},
		{"min.css", "static/site.min.css", "", "minified (*.min.css)"},
		{"minified content", "static/bundle.js", minJS, "minified (average line 11600 bytes)"},
		{"minified json", "data/big.json", "{" + strings.Repeat(`"k":[1,2,3],`, 100) + "\"z\":0}", "minified (average line 1207 bytes)"},

		{"near: min in name", "admin.js", "", ""},
		{"near: .min.js alone", ".min.js", "", ""},
		{"near: long-ish line", "x.go", longish, ""},
		{"near: prose paragraphs", "README.md", "# Title\n\n" + paragraph + "\n\n" + paragraph + "\n", ""},
		{"near: one long line of 400 bytes", "x.txt", strings.Repeat("x", 400), ""},
	})
}

func TestBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(128 + r.IntN(128)) // high bytes: no NUL, mostly invalid UTF-8
	}
	lateNUL := append(bytes.Repeat([]byte("text\n"), 2000), 0) // NUL past 8 KiB
	latin1 := []byte("// R\xe9sum\xe9 of the caf\xe9 module.\npackage x\n")
	// "é" split by the 8 KiB limit: 819 lines of 10 bytes, one more byte,
	// then the two bytes of "é" on either side of the limit.
	cut := append(bytes.Repeat([]byte("text line\n"), 819), []byte("aé and more text\n")...)
	runCases(t, mustNew(t, Options{}), []gateCase{
		{"png", "img/logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary (NUL byte)"},
		{"utf16", "x.txt", "\xff\xfeh\x00i\x00", "binary (NUL byte)"},
		{"noise", "blob.dat", string(noise), "binary (invalid UTF-8)"},

		{"near: NUL after 8 KiB", "x.txt", string(lateNUL), ""},
		{"near: latin-1 accents", "x.go", string(latin1), ""},
		{"near: rune cut at the sniff limit", "x.txt", string(cut), ""},
		{"near: utf-8 text", "x.txt", "日本語のテキスト\nemoji 🌍\n", ""},
	})
}

func TestTooLarge(t *testing.T) {
	g := mustNew(t, Options{})
	big := bytes.Repeat([]byte("x = 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 15 + 16\n"), 32600) // 2.3 MiB
	if got, want := g.Check("big.py", big), Reason("too large (2.3 MiB > 1 MiB)"); got != want {
		t.Errorf("Check(big) = %q, want %q", got, want)
	}
	justOver := bytes.Repeat([]byte("a\n"), DefaultMaxBytes/2)
	justOver = append(justOver, 'b')
	if got, want := g.Check("x.txt", justOver), Reason("too large (1,048,577 bytes > 1,048,576)"); got != want {
		t.Errorf("Check(just over) = %q, want %q", got, want)
	}
	exact := bytes.Repeat([]byte("line\n"), 10000) // 50 KB, 10,000 lines
	if got := g.Check("x.txt", exact); got != "" {
		t.Errorf("Check(10,000 lines) = %q", got)
	}
	lines := bytes.Repeat([]byte("a\n"), 25000)
	if got, want := g.Check("x.txt", lines), Reason("too large (25,000 lines > 20,000)"); got != want {
		t.Errorf("Check(25,000 lines) = %q, want %q", got, want)
	}
	if got := g.Check("x.txt", lines[:2*DefaultMaxLines]); got != "" {
		t.Errorf("Check(exactly %d lines) = %q", DefaultMaxLines, got)
	}

	small := mustNew(t, Options{MaxBytes: 100, MaxLines: 3})
	if got, want := small.Check("x.txt", bytes.Repeat([]byte("a"), 1500)), Reason("too large (1.5 KiB > 100 B)"); got != want {
		t.Errorf("small limits: %q, want %q", got, want)
	}
	if got, want := small.Check("x.txt", []byte("a\nb\nc\nd")), Reason("too large (4 lines > 3)"); got != want {
		t.Errorf("small limits: %q, want %q", got, want)
	}
	unlimited := mustNew(t, Options{MaxBytes: -1, MaxLines: -1})
	if got := unlimited.Check("x.txt", lines); got != "" {
		t.Errorf("no limits: %q", got)
	}
}

func TestCheckPathAndNilContent(t *testing.T) {
	g := mustNew(t, Options{IgnorePaths: []string{"dist/**"}})
	if got := g.CheckPath("dist/a.js"); got == "" {
		t.Error("CheckPath missed an ignored path")
	}
	if got := g.Check("src/a.go", nil); got != "" {
		t.Errorf("nil content: %q", got)
	}
	if got := g.Check("src/a.go", []byte{}); got != "" {
		t.Errorf("empty content: %q", got)
	}
	if !Reason("x").Skip() || Reason("").Skip() {
		t.Error("Skip")
	}
}

func TestPrecedence(t *testing.T) {
	// The user's configuration wins, then secrets, vendoring, lock files,
	// generated names and minified names; content rules come last.
	g := mustNew(t, Options{IgnorePaths: []string{"node_modules/**"}, MaxBytes: 10})
	for path, want := range map[string]Reason{
		"node_modules/x/.env":           "ignored by kodus-config ignorePaths: node_modules/**",
		"vendor/x/.env":                 "may contain secrets (always ignored: .env)",
		"vendor/x/go.sum":               "vendored (vendor/)",
		"api/x.pb.go":                   "generated file (*.pb.go)",
		"static/app.min.js":             "minified (*.min.js)",
		"src/big_but_named_generated.x": "generated file (*_generated.*)",
	} {
		if got := g.Check(path, bytes.Repeat([]byte("\x00"), 100)); got != want {
			t.Errorf("Check(%q) = %q, want %q", path, got, want)
		}
	}
	if got := g.Check("a.bin", bytes.Repeat([]byte("\x00"), 100)); got != "binary (NUL byte)" {
		t.Errorf("binary before too large: %q", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	g := mustNew(t, Options{IgnorePaths: []string{"dist/**", "*.snap"}})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				if g.Check("dist/a.js", []byte("x")) == "" || g.Check("src/a.go", []byte(goSrc)) != "" {
					t.Error("inconsistent result")
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestFormat(t *testing.T) {
	for n, want := range map[int]string{0: "0 B", 900: "900 B", 1024: "1 KiB", 1536: "1.5 KiB", 1 << 20: "1 MiB", 5 << 30: "5 GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 20000: "20,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := formatCount(n); got != want {
			t.Errorf("formatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestPrivacyIgnoreListIsEnforced(t *testing.T) {
	g, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"infra/prod.tfvars", "deploy/.kube/config", "creds/client_secret_123.json", ".aws/credentials"} {
		if !g.CheckPath(p).Skip() {
			t.Errorf("%s is on the privacy ignore list but would be reviewed", p)
		}
	}
}

// TestForConfigKeepsTheGoodPatterns: a kodus-config.yml whose ignorePaths
// hold a negation, the root or a broken glob beside good patterns still
// ignores what the good ones match; only a problem that may have lost a
// path to ignore makes the list Incomplete, so that readers of files
// nobody named refuse them all.
func TestForConfigKeepsTheGoodPatterns(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		incomplete bool
	}{
		{"negation", "ignorePaths:\n  - private/**\n  - \"!private/README.md\"\n", false},
		{"root", "ignorePaths:\n  - private/**\n  - /\n", true},
		{"leading slash", "ignorePaths:\n  - /private/**\n", false},
		{"broken glob", "ignorePaths:\n  - private/**\n  - \"src/[a-\"\n", true},
		{"set twice", "ignorePaths:\n  - private/**\nignorePaths:\n  - other/**\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, probs := kodusconfig.Parse("kodus-config.yml", []byte(tt.yaml))
			cfg.Problems = probs
			g, _ := ForConfig(cfg)
			for _, p := range []string{"private/notes.txt", "private/README.md", "PRIVATE/Notes.txt"} {
				if r := g.CheckPath(p); !strings.HasPrefix(string(r), "ignored by kodus-config ignorePaths: ") {
					t.Errorf("CheckPath(%q) = %q, want it ignored by the good pattern", p, r)
				}
				if !g.Private(p).Skip() || !g.Refuses(p) || g.IgnoredBy(p) == "" {
					t.Errorf("%s is not private", p)
				}
			}
			if g.CheckPath("main.go").Skip() || g.Private("main.go").Skip() {
				t.Error("main.go is ignored")
			}
			if got := g.Incomplete() != ""; got != tt.incomplete {
				t.Errorf("Incomplete() = %q, want set: %v", g.Incomplete(), tt.incomplete)
			}
			if g.Refuses("main.go") != tt.incomplete {
				t.Errorf("Refuses(main.go) = %v with Incomplete %q", g.Refuses("main.go"), g.Incomplete())
			}
		})
	}
}

// TestCompileLeavesOutOnlyTheBadPatterns: Compile reports each pattern it
// cannot use and applies the others; New refuses them.
func TestCompileLeavesOutOnlyTheBadPatterns(t *testing.T) {
	g, errs := Compile(Options{IgnorePaths: []string{"dist/**", "!dist/keep.js", "/", "src/[a-"}})
	if len(errs) != 3 {
		t.Fatalf("errors %v, want 3", errs)
	}
	if r := g.CheckPath("dist/keep.js"); r != "ignored by kodus-config ignorePaths: dist/**" {
		t.Errorf("CheckPath(dist/keep.js) = %q", r)
	}
	if g.CheckPath("src/a.go").Skip() {
		t.Error("the root pattern ignored every file")
	}
	if g.Incomplete() != "" {
		t.Errorf("Compile set Incomplete: %q", g.Incomplete())
	}
}
