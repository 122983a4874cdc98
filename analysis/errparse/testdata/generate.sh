#!/usr/bin/env bash
# generate.sh runs the REAL tools on the small broken programs in
# testdata/programs and writes what they print to testdata/outputs/<name>.txt.
# The fixtures the errparse tests read are therefore captured output, never
# text typed by hand.
#
# What it does:
#   - copies programs/ into a fresh temporary directory (the "workspace"), so
#     builds never write into the repository and every run starts clean;
#   - runs each tool there, capturing stdout and stderr together (2>&1, in the
#     order the tool wrote them) and ignoring the exit code;
#   - replaces the temporary workspace's absolute path with the literal
#     placeholder $WORKSPACE, so the fixtures do not depend on the machine or
#     the run. Nothing else is rewritten: GOROOT paths, node:internal frames,
#     timings and addresses stay exactly as the tools printed them. The tests
#     substitute a fixed path (/work/ws) for $WORKSPACE and pass that path as
#     Options.Workspace.
#
# Tools: go, gcc/g++, python3, node, javac/java, rustc/cargo are taken from
# PATH (~/.cargo/bin is added). On Debian/Ubuntu, run as root, the script
# installs what is missing of clang, cmake, make, shellcheck and
# python3-pytest with apt-get (idempotent: installed packages are skipped).
# tsc, eslint@8, jest and vitest are installed with npm into a prefix that
# is kept between runs (ERRPARSE_NPM_PREFIX, default ~/.cache/kodyls-gen).
# The testify fixture fetches github.com/stretchr/testify through the Go
# module proxy. A tool that is missing is reported and its fixtures are left
# as they are.
#
# Usage: bash analysis/errparse/testdata/generate.sh [PATTERN...]
# With patterns (shell globs such as 'rust-*' or pytest-long), only the
# fixtures whose names match are written; the others stay untouched, so
# adding a fixture does not rewrite what newer tool versions would print
# differently.
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=capture.sh
source "$here/capture.sh" "$@"

# Debian packages for the C, shell and pytest fixtures; skipped when present
# or when apt-get cannot be used (not root, not Debian).
debs=()
for pair in clang:clang cmake:cmake make:make shellcheck:shellcheck; do
	have "${pair%%:*}" || debs+=("${pair#*:}")
done
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || debs+=(python3-pytest)
if [ ${#debs[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && have apt-get; then
	apt-get install -y "${debs[@]}" >/dev/null 2>&1 || skip apt-get "could not install ${debs[*]}"
fi

# --- Go -------------------------------------------------------------------
if have go; then
	capture go-build go/build go build ./...
	capture go-build-json go/build go build -json ./...
	# vet type-checks first; on a package that does not compile it prints
	# the type errors itself, prefixed with "vet: ".
	capture go-vet-typecheck go/build go vet ./...
	capture go-vet go/vet go vet ./...
	capture go-vet-json go/vet go vet -json ./...
	capture go-build-vet go sh -c 'cd build && go build ./...; cd ../vet && go vet ./...'
	capture go-panic-nilmap go/panic go run .
	capture go-panic-nilptr go/nilptr go run .
	capture go-test go/gotest go test ./...
	capture go-test-json go/gotest go test -json ./...
	# A data race between two goroutines of a test, and a test that blocks
	# until go test's alarm fires.
	capture go-test-race go/race go test -race ./...
	capture go-test-timeout go/timeout go test -timeout 2s ./...
	# testify's report (Error Trace / Error / Test blocks); testify comes
	# from the module proxy, the only fixture that needs the network.
	# The module cache goes inside the workspace so that its path is
	# written as $WORKSPACE/.cache/go/pkg/mod, not this machine's GOPATH.
	selected go-testify && (cd "$ws/go/testify" && GOMODCACHE="$ws/.cache/go/pkg/mod" GOPROXY=https://proxy.golang.org GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1)
	capture go-testify go/testify env GOMODCACHE="$ws/.cache/go/pkg/mod" GOFLAGS=-mod=mod go test ./...
	# assert.Equal on a struct and on a multi-line string: testify adds a
	# Diff: block after a blank line, before Test: and Messages:.
	selected go-testify-diff && (cd "$ws/go/testifydiff" && GOMODCACHE="$ws/.cache/go/pkg/mod" GOPROXY=https://proxy.golang.org GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1)
	capture go-testify-diff go/testifydiff env GOMODCACHE="$ws/.cache/go/pkg/mod" GOFLAGS=-mod=mod go test ./...
else
	skip go "not installed"
fi

# --- TypeScript (tsc) and ESLint, installed into a temporary npm prefix -----
npmprefix=${ERRPARSE_NPM_PREFIX:-$HOME/.cache/kodyls-gen}
if have npm && { [ ! -x "$npmprefix/node_modules/.bin/tsc" ] || [ ! -x "$npmprefix/node_modules/.bin/vitest" ]; }; then
	mkdir -p "$npmprefix"
	npm install --silent --no-audit --no-fund --prefix "$npmprefix" typescript eslint@8 jest@30 vitest@4 >/dev/null 2>&1 ||
		skip npm "npm install typescript eslint@8 jest vitest failed"
fi
tsc=$npmprefix/node_modules/.bin/tsc
eslint=$npmprefix/node_modules/.bin/eslint
if [ -x "$tsc" ]; then
	capture tsc ts "$tsc" --noEmit --strict --pretty false src/user.ts src/count.ts src/point.ts src/handler.ts
	capture tsc-pretty ts "$tsc" --noEmit --strict --pretty true src/user.ts src/count.ts src/point.ts src/handler.ts
else
	skip tsc "typescript could not be installed"
fi
jest=$npmprefix/node_modules/.bin/jest
vitest=$npmprefix/node_modules/.bin/vitest
if [ -x "$jest" ]; then
	capture jest node/jest "$jest" --ci --colors=false --rootDir .
else
	skip jest "jest could not be installed"
fi
if [ -x "$vitest" ]; then
	# vitest resolves the 'vitest' import from the test file's directory.
	ln -sfn "$npmprefix/node_modules" "$ws/node/vitest/node_modules"
	capture vitest node/vitest "$vitest" run --color=false --root .
	rm -f "$ws/node/vitest/node_modules"
else
	skip vitest "vitest could not be installed"
fi
if [ -x "$eslint" ]; then
	export ESLINT_USE_FLAT_CONFIG=false
	capture eslint-stylish eslint "$eslint" --no-color -f stylish .
	capture eslint-json eslint "$eslint" -f json .
else
	skip eslint "eslint could not be installed"
fi

# --- Rust -------------------------------------------------------------------
if have rustc; then
	# Type errors stop rustc before the borrow checker runs, so each kind
	# of error lives in its own file.
	capture rustc-moved rust/single rustc --edition 2021 --color never -o "$tmp/rustbin" moved.rs
	capture rustc-mismatch rust/single rustc --edition 2021 --color never -o "$tmp/rustbin" mismatch.rs
	capture rustc-json rust/single rustc --edition 2021 --error-format=json -o "$tmp/rustbin" moved.rs
else
	skip rustc "not installed"
fi
if have cargo; then
	# A workspace of two crates (one type error, one borrow error), built
	# one after the other: one cargo build of both orders them by chance.
	capture cargo rust/cargo sh -c 'cargo build --offline --color never -p mismatch; cargo build --offline --color never -p moved'
	capture cargo-json rust/cargo sh -c 'cargo build --offline --message-format=json -p mismatch; cargo build --offline --message-format=json -p moved'
	# Panics: cargo run (Rust 1.89+ prints the thread id), the same with a
	# backtrace, and two failing tests (an assertion, a division by zero).
	capture rust-panic rust/panic env CARGO_TARGET_DIR="$ws/.target" RUST_BACKTRACE=0 cargo run --offline --color never -q
	capture rust-panic-backtrace rust/panic env CARGO_TARGET_DIR="$ws/.target" RUST_BACKTRACE=1 cargo run --offline --color never -q
	capture cargo-test rust/cargotest env CARGO_TARGET_DIR="$ws/.target" cargo test --offline --color never
else
	skip cargo "not installed"
fi

# --- C / C++ ----------------------------------------------------------------
if have gcc; then
	capture gcc-undeclared c gcc -fdiagnostics-color=never -Wall -c undeclared.c -o "$tmp/undeclared.o"
	# Compile first so the linker names link.o, not a random /tmp/cc*.o.
	capture gcc-link c sh -c "gcc -c link.c -o link.o && gcc link.o -o '$tmp/link'"
	# An absolute source path, as build systems pass it.
	capture gxx-overload c g++ -fdiagnostics-color=never -c "$ws/c/overload.cpp" -o "$tmp/overload.o"
	# The error is reported inside the standard library's headers; the
	# user's line is the "required from here" one.
	capture gxx-template c g++ -fdiagnostics-color=never -c template.cpp -o "$tmp/template.o"
	# A recursive make: the compiler names util.c relative to lib/.
	capture make-recursive c/make make
	# AddressSanitizer: built with the sources' absolute path, as build
	# systems do, and run without leak checking (ptrace may be missing).
	capture gcc-asan c/asan sh -c "gcc -g -fsanitize=address '$ws/c/asan/asan.c' -o asan && ASAN_OPTIONS=detect_leaks=0 ./asan"
	# Built with relative paths, as by hand: the top frames are the
	# sanitizer's interceptors (memcpy, malloc), not the user's code.
	capture gcc-asan-memcpy c/sanlib sh -c 'gcc -g -fsanitize=address src/memcp.c -o memcp && ./memcp'
	capture gcc-asan-strcpy c/sanlib sh -c 'gcc -g -fsanitize=address src/strcp.c -o strcp && ./strcp'
	# LeakSanitizer needs ptrace; where it is denied the report is missing.
	capture gcc-lsan-leak c/sanlib sh -c 'gcc -g -fsanitize=address src/leak.c -o leak && ./leak'
	# Errors inside the standard library's headers after the first one of
	# an instantiation (std::thread), and SFINAE's "In substitution of"
	# context (a failed candidate, then an unrelated error).
	capture gxx-thread c g++ -fdiagnostics-color=never -c thread.cpp -o "$tmp/thread.o"
	capture gxx-substitution c g++ -fdiagnostics-color=never -c substitution.cpp -o "$tmp/substitution.o"
else
	skip gcc "not installed"
fi
if have cmake; then
	capture cmake c/cmake cmake -S . -B build
else
	skip cmake "not installed"
fi
if have clang; then
	capture clang-undeclared c clang -fno-color-diagnostics -Wall -c undeclared.c -o "$tmp/undeclared.o"
	capture clang-link c sh -c "clang -c link.c -o link.o && clang link.o -o '$tmp/link'"
	capture clang-template c clang++ -fno-color-diagnostics -c template.cpp -o "$tmp/template.o"
else
	skip clang "not installed on this machine"
fi

# --- Python -----------------------------------------------------------------
if have python3; then
	capture python-nameerror python python3 "$ws/python/nameerror.py"
	capture python-nameerror-other python python3 "$ws/python/other_nameerror.py"
	capture python-syntaxerror python python3 "$ws/python/syntax.py"
	capture python-valueerror python python3 "$ws/python/valueerror.py"
	capture python-chained python python3 "$ws/python/chained.py"
	# "During handling of the above exception, another exception occurred"
	# The system interpreter, so that json's frames are in /usr/lib.
	capture python-during python /usr/bin/python3 "$ws/python/during.py"
else
	skip python3 "not installed"
fi
# pytest from Debian (python3-pytest) runs under the system interpreter.
if /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1; then
	capture pytest-long python/pytest /usr/bin/python3 -m pytest -p no:cacheprovider --color=no
	capture pytest-short python/pytest /usr/bin/python3 -m pytest -p no:cacheprovider --color=no --tb=short
	# Only the summary lines, as CI logs often show them.
	capture pytest-summary python/pytest /usr/bin/python3 -m pytest -p no:cacheprovider --color=no -q --tb=no
	# Exception chains ("raise ... from e", "During handling of …") in a
	# test and in a fixture's setup, in the three traceback styles.
	capture pytest-chain-long python/pytestchain /usr/bin/python3 -m pytest -p no:cacheprovider --color=no
	capture pytest-chain-short python/pytestchain /usr/bin/python3 -m pytest -p no:cacheprovider --color=no --tb=short
	capture pytest-chain-line python/pytestchain /usr/bin/python3 -m pytest -p no:cacheprovider --color=no --tb=line
else
	skip pytest "python3-pytest not installed"
fi

# --- Java -------------------------------------------------------------------
if have javac; then
	capture javac java/compile javac -d "$tmp/classes" Main.java
	capture javac-raw java/compile javac -XDrawDiagnostics -d "$tmp/classes-raw" Main.java
else
	skip javac "not installed"
fi
if have java; then
	# Single-file source launch (Java 11+): compiles in memory and runs.
	capture java-npe java/npe java Main.java
	# A wrapped exception: "Caused by:" with "... N more".
	capture java-caused-by java/cause java Main.java
else
	skip java "not installed"
fi

# --- Node.js ----------------------------------------------------------------
if have node; then
	capture node-notfunction node node "$ws/node/main.js"
	capture node-typeerror node node "$ws/node/undefined.js"
	# Thrown inside node:fs: the primary frame must skip node:internal ones.
	capture node-enoent node node "$ws/node/readfile.js"
	# An ES module: frames are file:// URLs, some without a function name.
	capture node-esm node node "$ws/node/esm.mjs"
	# An Error with { cause }: Node prints the cause as "[cause]: …".
	capture node-cause node/cause node "$ws/node/cause/cause.js"
	# A SyntaxError in a required module, reported from the require call.
	capture node-require-syntax node/syntax node "$ws/node/syntax/main.js"
	capture node-throw node node "$ws/node/throw.js"
	# The built-in test runner with its two reporters.
	capture node-test-spec node/nodetest node --test --test-reporter=spec
	capture node-test-tap node/nodetest node --test --test-reporter=tap
else
	skip node "not installed"
fi

# --- Shell --------------------------------------------------------------------
capture bash-error shell bash deploy.sh /srv/app
# A syntax error: bash echoes the offending line after the message.
capture bash-syntax-echo shell bash scripts/syn.sh
# Command strings, as CI steps and Makefiles run them: bash names itself
# ("bash: line 3: …", "bash: -c: line 1: syntax error …"), not a file.
capture bash-c shell bash -c 'echo "deploying"
cd .
deplyo --now
bash -c "if true; then echo ok; fi fi"'
if have shellcheck; then
	capture shellcheck-gcc shell shellcheck -f gcc deploy.sh
	capture shellcheck-tty shell shellcheck -f tty --color=never deploy.sh
else
	skip shellcheck "not installed"
fi
