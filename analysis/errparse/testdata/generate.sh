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
# PATH (~/.cargo/bin is added). tsc and eslint@8 are installed with npm into a
# temporary prefix (set ERRPARSE_NPM_PREFIX to reuse an existing one). A tool
# that is missing is reported and its fixtures are left as they are; clang is
# used only when installed.
#
# Usage: bash analysis/errparse/testdata/generate.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
out=$here/outputs
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/errparse.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ws=$tmp/ws
cp -R "$here/programs" "$ws"
# The physical path too, for systems where the temp dir is behind a symlink.
wsreal=$(cd "$ws" && pwd -P)

export PATH="$PATH:$HOME/.cargo/bin"
# Deterministic, offline, uncoloured where the tool allows it.
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS= GOWORK=off
export CARGO_TARGET_DIR=$tmp/target CARGO_TERM_COLOR=never
export NO_COLOR=1 FORCE_COLOR=0
# gcc prints typographic quotes (‘x’) in a UTF-8 locale, as most users see.
export LC_ALL=C.UTF-8 LANG=C.UTF-8

have() { command -v "$1" >/dev/null 2>&1; }

# capture NAME DIR CMD...: runs CMD in $ws/DIR, writes outputs/NAME.txt.
capture() {
	local name=$1 dir=$2
	shift 2
	local raw=$tmp/$name.raw
	(cd "$ws/$dir" && "$@") >"$raw" 2>&1
	# Longest path first so the physical path is not half-replaced.
	sed -e "s|$wsreal|\$WORKSPACE|g" -e "s|$ws|\$WORKSPACE|g" "$raw" >"$out/$name.txt"
	echo "wrote outputs/$name.txt ($(wc -l <"$out/$name.txt") lines)"
}

skip() { echo "skip $1: $2" >&2; }

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
else
	skip go "not installed"
fi

# --- TypeScript (tsc) and ESLint, installed into a temporary npm prefix -----
npmprefix=${ERRPARSE_NPM_PREFIX:-$tmp/npm}
if have npm && [ ! -x "$npmprefix/node_modules/.bin/tsc" ]; then
	npm install --silent --no-audit --no-fund --prefix "$npmprefix" typescript eslint@8 >/dev/null 2>&1 ||
		skip npm "npm install typescript eslint@8 failed"
fi
tsc=$npmprefix/node_modules/.bin/tsc
eslint=$npmprefix/node_modules/.bin/eslint
if [ -x "$tsc" ]; then
	capture tsc ts "$tsc" --noEmit --strict --pretty false src/user.ts src/count.ts src/point.ts src/handler.ts
	capture tsc-pretty ts "$tsc" --noEmit --strict --pretty true src/user.ts src/count.ts src/point.ts src/handler.ts
else
	skip tsc "typescript could not be installed"
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
else
	skip gcc "not installed"
fi
if have clang; then
	capture clang-undeclared c clang -fno-color-diagnostics -Wall -c undeclared.c -o "$tmp/undeclared.o"
	capture clang-link c sh -c "clang -c link.c -o link.o && clang link.o -o '$tmp/link'"
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
else
	skip python3 "not installed"
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
else
	skip node "not installed"
fi
