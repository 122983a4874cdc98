#!/usr/bin/env bash
# generate.sh writes the held-out fixtures: it runs the REAL tools on the
# broken programs in heldout/programs and writes what they print to
# heldout/outputs/<name>.txt. The conventions are those of ../generate.sh:
# a fresh copy of the programs as the workspace, stdout and stderr captured
# together, the workspace path replaced by $WORKSPACE and nothing else
# rewritten, patterns to regenerate only some fixtures.
#
# These programs are not the ones the parsers were written against: they
# measure how well the parsers locate errors in output they have not seen
# (TestHeldOutAccuracy). Run ../generate.sh first once: it installs the
# Debian and npm tools both scripts use. The Maven fixture runs offline
# against Debian's maven-repo (libmaven-compiler-plugin-java and
# libmaven-resources-plugin-java and junit5, whose BOM the compiler plugin
# needs; installed here when missing).
#
# Usage: bash analysis/errparse/testdata/heldout/generate.sh [PATTERN...]
set -u

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=capture.sh
source "$here/../capture.sh" "$@"

# --- Go -------------------------------------------------------------------
if have go; then
	capture go-generics go/generics go build ./...
	capture go-multipkg go/multipkg go build ./...
	capture go-vet-assign go/vetassign go vet ./...
	capture go-test-subtests go/subtests go test ./...
	capture go-panic-goroutine go/goroutine go run .
	capture go-test-panic go/testpanic go test ./...
	capture go-test-helper go/helper go test ./...
	capture go-missing-return go/missingreturn go build .
	capture go-panic-custom go/custompanic go run .
	capture go-test-json-subtest go/testjson go test -json ./...
	# A wider second set, written before the parsers were changed too.
	capture go-test-build-failed go/testbuild go test ./...
	capture go-test-verbose go/verbose go test -v ./...
	if [ -x "$HOME/go/bin/staticcheck" ]; then
		capture staticcheck go/staticcheck "$HOME/go/bin/staticcheck" ./...
	else
		skip staticcheck "not installed in ~/go/bin"
	fi
else
	skip go "not installed"
fi

# --- Rust -------------------------------------------------------------------
if have cargo; then
	capture cargo-borrow rust/borrow cargo build --offline --color never
	capture rust-unwrap-none rust/unwrapnone cargo run --offline --color never -q
	capture rust-index-oob rust/indexoob cargo run --offline --color never -q
	capture cargo-test-assert-eq rust/asserteq cargo test --offline --color never
	capture rust-overflow rust/overflow cargo run --offline --color never -q
	capture rust-expect rust/expect env RUST_BACKTRACE=1 cargo run --offline --color never -q
	capture cargo-lifetime rust/lifetime cargo build --offline --color never
	capture cargo-warning-first rust/warnfirst cargo build --offline --color never
	capture rust-thread-panic rust/thread cargo run --offline --color never -q
	capture cargo-trait-bound rust/traitbound cargo build --offline --color never
	capture cargo-clippy rust/clippy cargo clippy --offline --color never -- -D warnings
else
	skip cargo "not installed"
fi
if have rustc; then
	capture rustc-unresolved-import rust/single rustc --edition 2021 --color never -o "$tmp/rustbin" imports.rs
else
	skip rustc "not installed"
fi

# --- C / C++ ----------------------------------------------------------------
if have gcc; then
	capture gcc-project-header c/header gcc -fdiagnostics-color=never -Iinclude -c main.c -o "$tmp/main.o"
	capture make-nested-gxx c/nested make
	capture gcc-multiple-definition c/multidef sh -c "gcc -c a.c b.c && gcc a.o b.o -o '$tmp/multidef'"
	capture gxx-project-template c/projtemplate g++ -fdiagnostics-color=never -Iinclude -c main.cpp -o "$tmp/stack.o"
	capture gxx-map-key c/maptemplate g++ -fdiagnostics-color=never -c main.cpp -o "$tmp/map.o"
	capture gcc-werror c/werror gcc -fdiagnostics-color=never -Wall -Werror -c stats.c -o "$tmp/stats.o"
	capture gcc-missing-include c/missinginc gcc -fdiagnostics-color=never -c main.c -o "$tmp/missinginc.o"
	# With -g the linker names the source line of the call.
	capture gcc-link-line c/ldline sh -c "gcc -g -c '$ws/c/ldline/main.c' -o main.o && gcc main.o -o '$tmp/ldline'"
	capture make-recipe c/recipe make
else
	skip gcc "not installed"
fi
if have clang; then
	capture clang-implicit c/implicit clang -fno-color-diagnostics -Werror -c main.c -o "$tmp/implicit.o"
	capture clangxx-link c/cxxlink sh -c "clang++ -c main.cpp -o main.o && clang++ main.o -o '$tmp/cxxlink'"
	capture clang-project-template c/clangproj clang++ -fno-color-diagnostics -Iinclude -c main.cpp -o "$tmp/clangproj.o"
else
	skip clang "not installed"
fi
if have cmake; then
	capture cmake-build c/cmakebuild sh -c 'cmake -S . -B build >/dev/null && cmake --build build'
else
	skip cmake "not installed"
fi

# --- Python -----------------------------------------------------------------
if have python3; then
	capture python-indentation python python3 "$ws/python/indent.py"
	capture python-module-not-found python/modnotfound python3 main.py
	capture python-strptime python /usr/bin/python3 "$ws/python/strptime.py"
	capture python-missing-arg python python3 "$ws/python/missingarg.py"
	capture python-import-syntax python/importsyntax python3 main.py
	capture python-unittest python/unittest python3 -m unittest test_stack
	capture python-exception-group python python3 "$ws/python/taskgroup.py"
else
	skip python3 "not installed"
fi
if /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1; then
	capture pytest-parametrize python/pytest-param /usr/bin/python3 -m pytest -p no:cacheprovider --color=no
	capture pytest-fixture-error python/pytest-fixture /usr/bin/python3 -m pytest -p no:cacheprovider --color=no
	capture pytest-raise-in-code python/pytest-raise /usr/bin/python3 -m pytest -p no:cacheprovider --color=no --tb=short
	capture pytest-tb-line python/pytest-line /usr/bin/python3 -m pytest -p no:cacheprovider --color=no --tb=line
	capture pytest-helper python/pytest-helper /usr/bin/python3 -m pytest -p no:cacheprovider --color=no
else
	skip pytest "python3-pytest not installed"
fi

# --- JavaScript -------------------------------------------------------------
npmprefix=${ERRPARSE_NPM_PREFIX:-$HOME/.cache/kodyls-gen}
if have node; then
	capture node-esm-missing-export node/esmexport node main.mjs
	capture node-module-not-found node/modnotfound node main.js
	capture node-async-rejection node/asyncreject node main.js
	capture node-json-parse node/jsonparse node main.js
	capture node-test-describe node/nodetest node --test
	capture node-esm-reference node/classref node main.mjs
	capture node-assert-script node/assertscript node main.js
	capture node-test-spec-throw node/specthrow node --test --test-reporter=spec
	capture node-unhandled-error-event node/emitter node main.js
else
	skip node "not installed"
fi
jest=$npmprefix/node_modules/.bin/jest
vitest=$npmprefix/node_modules/.bin/vitest
if [ -x "$jest" ]; then
	capture jest-tothrow node/jestthrow "$jest" --ci --colors=false --rootDir .
	capture jest-toequal node/jestequal "$jest" --ci --colors=false --rootDir .
	capture jest-typeerror node/jesttype "$jest" --ci --colors=false --rootDir .
else
	skip jest "run ../generate.sh first"
fi
if [ -x "$vitest" ]; then
	for d in vitestthrow vitestequal; do
		ln -sfn "$npmprefix/node_modules" "$ws/node/$d/node_modules"
	done
	capture vitest-typeerror node/vitestthrow "$vitest" run --color=false --root .
	capture vitest-toequal node/vitestequal "$vitest" run --color=false --root .
	rm -f "$ws/node/vitestthrow/node_modules" "$ws/node/vitestequal/node_modules"
else
	skip vitest "run ../generate.sh first"
fi

# --- TypeScript ---------------------------------------------------------------
tsc=$npmprefix/node_modules/.bin/tsc
if [ -x "$tsc" ]; then
	capture tsc-multi ts/multi "$tsc" --noEmit --strict --pretty false src/model.ts src/api.ts
	capture tsc-project-pretty ts/project "$tsc" -p . --pretty
	capture tsc-bad-config ts/badconfig "$tsc" -p . --pretty false
	capture tsc-related-pretty ts/related "$tsc" --noEmit --strict --pretty true src/settings.ts
	capture tsc-missing-module ts/missingmod "$tsc" --noEmit --strict --pretty false src/app.ts
	capture tsc-two-files-pretty ts/twofiles "$tsc" --noEmit --strict --pretty true src/a.ts src/b.ts
else
	skip tsc "run ../generate.sh first"
fi

# --- Java -------------------------------------------------------------------
if have javac; then
	capture javac-multi java/multi javac -d "$tmp/multi" Main.java Util.java
	capture javac-packages java/pkgs sh -c "javac -d '$tmp/pkgs' \$(find src -name '*.java' | sort)"
	capture javac-lint java/lint javac -Xlint:all -d "$tmp/lint" Main.java
fi
if have javac && have java; then
	capture java-index-out-of-bounds java/aioobe sh -c "javac -d '$tmp/aioobe' \$(find src -name '*.java' | sort) && java -cp '$tmp/aioobe' com.acme.Main"
	capture java-caused-by-npe java/chain java Store.java
	capture java-lambda java/lambda java Main.java
	capture java-thread java/thread java Main.java
else
	skip java "not installed"
fi
if have mvn; then
	if [ ! -d /usr/share/maven-repo/org/apache/maven/plugins/maven-compiler-plugin ] && [ "$(id -u)" = 0 ] && have apt-get; then
		apt-get install -y libmaven-compiler-plugin-java libmaven-resources-plugin-java junit5 >/dev/null 2>&1 ||
			skip apt-get "could not install the Maven plugins"
	fi
	# Offline, against a private copy of Debian's repository so that
	# nothing is written to ~/.m2.
	cp -RL /usr/share/maven-repo "$tmp/m2" 2>/dev/null
	capture mvn-compile java/maven mvn -q -o -B -Dmaven.repo.local="$tmp/m2" compile
else
	skip mvn "not installed"
fi

# --- Shell ------------------------------------------------------------------
capture bash-syntax shell bash syntax.sh
capture dash-not-found shell sh dash.sh
capture bash-unbound shell bash unbound.sh
capture bash-sourced shell/sourced bash main.sh
capture bash-arithmetic shell bash arith.sh
capture bash-eof shell bash parse.sh
if have shellcheck; then
	capture shellcheck-error-after-info shell shellcheck -f gcc checkerr.sh
	capture shellcheck-tty-parse shell shellcheck -f tty --color=never parse.sh
else
	skip shellcheck "not installed"
fi

# --- Written after the parsers were fixed against the sets above ------------
if have cmake; then
	capture cmake-link-multidef c/cmakelink sh -c 'cmake -S . -B build >/dev/null && cmake --build build'
fi
if have g++; then
	capture gxx-override-header c/override g++ -fdiagnostics-color=never -Iinclude -c "$ws/c/override/main.cpp" -o "$tmp/override.o"
fi
if have go; then
	capture go-vet-multipkg go/vetmulti go vet ./...
fi
if have python3; then
	capture python-recursion python python3 "$ws/python/recursion.py"
fi
if /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1; then
	capture pytest-class python/pytest-class /usr/bin/python3 -m pytest -p no:cacheprovider --color=no -q --tb=short
fi
if have node; then
	capture node-toplevel-await node/toplevel node main.mjs
fi
if have cargo; then
	capture rust-unreachable rust/unreachable cargo run --offline --color never -q
fi
if [ -x "$tsc" ]; then
	capture tsc-nullable-pretty ts/nullable "$tsc" -p . --pretty
fi
if have java; then
	capture java-concurrent-modification java/cme java Main.java
fi
capture bash-readonly shell bash readonly.sh

# --- A third batch, written after all the fixes above -----------------------
# Measured on the parsers as they were before anything in this batch was
# looked at; see heldout_test.go (fresh) and the README.
if have go; then
	capture go-infer go/infer go build .
	capture go-unused-import go/unusedimport go build .
	capture go-test-subtest-nil go/subtestnil go test ./...
	capture go-vet-copylocks go/copylock go vet .
	capture go-slice-bounds go/slicebounds go run ./cmd/tool
	if [ -x "$HOME/go/bin/staticcheck" ]; then
		capture staticcheck-sleep go/sleep "$HOME/go/bin/staticcheck" ./...
	fi
fi
if have cargo; then
	capture cargo-borrow-method rust/borrowmethod cargo build --offline --color never
	capture cargo-test-should-panic rust/shouldpanic cargo test --offline --color never
	capture rust-divide-by-zero rust/divzero env RUST_BACKTRACE=0 cargo run --offline --color never -q
	capture cargo-str-type rust/strtype cargo build --offline --color never
	capture cargo-non-exhaustive rust/matcharm cargo build --offline --color never
	capture cargo-workspace rust/workspace cargo build --offline --color never
fi
if have gcc; then
	capture gcc-undefined-reference c/undefref sh -c "gcc -c main.c config.c && gcc main.o config.o -o '$tmp/undefref'"
	capture gcc-incomplete-struct c/statsize gcc -fdiagnostics-color=never -Wall -c size.c -o "$tmp/size.o"
	capture gxx-lambda-capture c/lambda g++ -fdiagnostics-color=never -std=c++17 -c main.cpp -o "$tmp/lambda.o"
	capture gxx-unique-ptr-copy c/uniqueptr g++ -fdiagnostics-color=never -std=c++17 -c main.cpp -o "$tmp/uniqueptr.o"
	capture make-dash-c c/makec make -C src
fi
if have clang; then
	capture clang-asan-use-after-free c/asanuaf sh -c "clang -g -fsanitize=address main.c list.c -o asan && ASAN_OPTIONS=detect_leaks=0 ./asan"
	capture clang-class-semicolon c/classsemi clang++ -fno-color-diagnostics -Iinclude -c main.cpp -o "$tmp/classsemi.o"
fi
if have cmake; then
	capture cmake-unknown-command c/cmakeunknown cmake -S . -B build
fi
if have python3; then
	capture python-package-import python/pkgimport python3 main.py
	capture python-raise-from python/raisefrom env -u DATABASE_URL python3 app.py
	capture python-unittest-discover python/unittest-discover python3 -m unittest discover -s tests -t .
	capture python-fstring python python3 fstring.py
	capture python-module-none python/nonetype python3 -m shop.cli
fi
if /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1; then
	capture pytest-missing-fixture python/pytest-missing /usr/bin/python3 -m pytest -p no:cacheprovider --color=no
	capture pytest-tb-native python/pytest-native /usr/bin/python3 -m pytest -p no:cacheprovider --color=no --tb=native
fi
if have node; then
	capture node-cjs-named-export node/cjsnamed node main.mjs
	capture node-timer-this node/timerclass node main.js
	capture node-test-tap-subtest node/testtap node --test --test-reporter=tap
	capture node-stack-overflow node/recursion node tree.js
fi
if [ -x "$jest" ]; then
	capture jest-snapshot node/jestsnap "$jest" --ci --colors=false --rootDir .
	capture jest-timeout node/jesttimeout "$jest" --ci --colors=false --rootDir .
fi
if [ -x "$vitest" ]; then
	ln -sfn "$npmprefix/node_modules" "$ws/node/vitestts/node_modules"
	capture vitest-typescript node/vitestts "$vitest" run --color=false --root .
	rm -f "$ws/node/vitestts/node_modules"
fi
if [ -x "$tsc" ]; then
	capture tsc-tsx ts/tsx "$tsc" -p . --pretty false
	capture tsc-constraint ts/constraint "$tsc" --noEmit --strict --pretty false src/cache.ts
	capture tsc-never-pretty ts/never "$tsc" --noEmit --strict --pretty true src/shape.ts
	capture tsc-implicit-any ts/implicitany "$tsc" -p .
fi
if have javac; then
	capture javac-generics java/generics javac -d "$tmp/generics" Main.java
	capture javac-unreported java/unreported javac -d "$tmp/unreported" Main.java
fi
if have java; then
	capture java-number-format java/numfmt java Main.java
	capture java-chain-three java/chain3 java Main.java
fi
if have mvn; then
	capture mvn-cannot-find-symbol java/mavensym mvn -q -o -B -Dmaven.repo.local="$tmp/m2" compile
fi
capture bash-set-u-positional shell/positional bash backup.sh
capture bash-bad-substitution shell/subst bash release.sh
capture bash-cd-set-e shell bash scripts/deploy.sh
capture dash-test-operator shell/dashtest sh check.sh
if have shellcheck; then
	capture shellcheck-tty-warning shell shellcheck -f tty --color=never lint.sh
fi
