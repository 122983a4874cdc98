package errparse

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// heldOutCase is one program of testdata/heldout/programs: the place of its
// bug, written from the program (where the mistake is), not from what the
// parsers return. The column is the one the tool prints for that place (0
// when the tool prints none, as Go and Python stack traces, Java frames,
// bash and ld do); the policy is the package's: the deepest frame in the
// workspace for a stack trace, the root cause of an exception chain, the
// "required from here" line for an error inside a system header, the first
// error (not a warning or note) of a compiler.
type heldOutCase struct {
	fixture string
	dir     string // where the tool ran, relative to the workspace
	file    string // relative to the workspace
	line    int
	column  int
	// wider marks the second set, written (like the first) before the
	// parsers were changed, to take in forms the first set lacked; late
	// marks programs written after the parsers were fixed against the
	// others. Their figures are reported apart too. fresh marks the third
	// batch, written after all of that and first measured on the parsers as
	// they were, before any of its outputs had been looked at. fourth marks
	// the fourth batch (testdata/heldout/captured, see heldOutDir).
	wider, late, fresh, fourth bool
}

var heldOutCases = []heldOutCase{
	// --- Go ---
	{fixture: "go-generics", dir: "go/generics", file: "go/generics/main.go", line: 19, column: 17},
	{fixture: "go-multipkg", dir: "go/multipkg", file: "go/multipkg/inventory/store.go", line: 14, column: 12},
	{fixture: "go-vet-assign", dir: "go/vetassign", file: "go/vetassign/point.go", line: 9, column: 2},
	{fixture: "go-test-subtests", dir: "go/subtests", file: "go/subtests/slug_test.go", line: 13},
	{fixture: "go-panic-goroutine", dir: "go/goroutine", file: "go/goroutine/main.go", line: 9},
	{fixture: "go-test-panic", dir: "go/testpanic", file: "go/testpanic/cache.go", line: 8},
	{fixture: "go-test-helper", dir: "go/helper", file: "go/helper/temp_test.go", line: 14},
	{fixture: "go-missing-return", dir: "go/missingreturn", file: "go/missingreturn/grade.go", line: 12, column: 1},
	{fixture: "go-panic-custom", dir: "go/custompanic", file: "go/custompanic/config/config.go", line: 10},
	{fixture: "go-test-json-subtest", dir: "go/testjson", file: "go/testjson/split_test.go", line: 9},
	// --- Rust ---
	{fixture: "cargo-borrow", dir: "rust/borrow", file: "rust/borrow/src/main.rs", line: 4, column: 23},
	{fixture: "rust-unwrap-none", dir: "rust/unwrapnone", file: "rust/unwrapnone/src/main.rs", line: 4, column: 20},
	{fixture: "rust-index-oob", dir: "rust/indexoob", file: "rust/indexoob/src/main.rs", line: 11, column: 25},
	{fixture: "cargo-test-assert-eq", dir: "rust/asserteq", file: "rust/asserteq/tests/pairs.rs", line: 11, column: 5},
	{fixture: "rust-overflow", dir: "rust/overflow", file: "rust/overflow/src/main.rs", line: 4, column: 9},
	{fixture: "rust-expect", dir: "rust/expect", file: "rust/expect/src/config.rs", line: 4, column: 41},
	{fixture: "cargo-lifetime", dir: "rust/lifetime", file: "rust/lifetime/src/lib.rs", line: 1, column: 37},
	{fixture: "cargo-warning-first", dir: "rust/warnfirst", file: "rust/warnfirst/src/main.rs", line: 3, column: 24},
	{fixture: "rustc-unresolved-import", dir: "rust/single", file: "rust/single/imports.rs", line: 1, column: 5},
	// --- C/C++ ---
	{fixture: "gcc-project-header", dir: "c/header", file: "c/header/include/vec2.h", line: 10, column: 1},
	{fixture: "make-nested-gxx", dir: "c/nested", file: "c/nested/src/net/conn.cpp", line: 6, column: 35},
	// ld names the object; the source is the one of the same name.
	{fixture: "gcc-multiple-definition", dir: "c/multidef", file: "c/multidef/b.c"},
	// The template is the project's own header: the error stays there.
	{fixture: "gxx-project-template", dir: "c/projtemplate", file: "c/projtemplate/include/stack.hpp", line: 8, column: 46},
	{fixture: "gxx-map-key", dir: "c/maptemplate", file: "c/maptemplate/main.cpp", line: 10, column: 19},
	{fixture: "gcc-werror", dir: "c/werror", file: "c/werror/stats.c", line: 6, column: 13},
	{fixture: "clang-implicit", dir: "c/implicit", file: "c/implicit/main.c", line: 5, column: 17},
	{fixture: "clangxx-link", dir: "c/cxxlink", file: "c/cxxlink/main.cpp"},
	{fixture: "cmake-build", dir: "c/cmakebuild", file: "c/cmakebuild/src/ops.c", line: 4, column: 21},
	// --- Python ---
	{fixture: "python-indentation", dir: "python", file: "python/indent.py", line: 5},
	{fixture: "python-module-not-found", dir: "python/modnotfound", file: "python/modnotfound/app/db.py", line: 1},
	{fixture: "python-strptime", dir: "python", file: "python/strptime.py", line: 5},
	{fixture: "python-missing-arg", dir: "python", file: "python/missingarg.py", line: 11},
	{fixture: "python-import-syntax", dir: "python/importsyntax", file: "python/importsyntax/helpers.py", line: 6},
	{fixture: "python-unittest", dir: "python/unittest", file: "python/unittest/test_stack.py", line: 20},
	{fixture: "pytest-parametrize", dir: "python/pytest-param", file: "python/pytest-param/test_slug.py", line: 8},
	{fixture: "pytest-fixture-error", dir: "python/pytest-fixture", file: "python/pytest-fixture/test_users.py", line: 8},
	{fixture: "pytest-raise-in-code", dir: "python/pytest-raise", file: "python/pytest-raise/shop/cart.py", line: 3},
	// --- JavaScript ---
	{fixture: "node-esm-missing-export", dir: "node/esmexport", file: "node/esmexport/main.mjs", line: 1, column: 10},
	{fixture: "node-module-not-found", dir: "node/modnotfound", file: "node/modnotfound/main.js", line: 2, column: 18},
	{fixture: "node-async-rejection", dir: "node/asyncreject", file: "node/asyncreject/main.js", line: 3, column: 11},
	{fixture: "node-json-parse", dir: "node/jsonparse", file: "node/jsonparse/main.js", line: 4, column: 15},
	{fixture: "node-test-describe", dir: "node/nodetest", file: "node/nodetest/inventory.test.js", line: 11, column: 12},
	{fixture: "node-esm-reference", dir: "node/classref", file: "node/classref/shapes.mjs", line: 7, column: 5},
	{fixture: "node-assert-script", dir: "node/assertscript", file: "node/assertscript/main.js", line: 7, column: 8},
	{fixture: "jest-tothrow", dir: "node/jestthrow", file: "node/jestthrow/parse.test.js", line: 8, column: 35},
	{fixture: "jest-toequal", dir: "node/jestequal", file: "node/jestequal/test/merge.test.js", line: 5, column: 60},
	{fixture: "vitest-typeerror", dir: "node/vitestthrow", file: "node/vitestthrow/src/cart.js", line: 2, column: 21},
	{fixture: "vitest-toequal", dir: "node/vitestequal", file: "node/vitestequal/tags.test.js", line: 5, column: 24},
	// --- TypeScript ---
	{fixture: "tsc-multi", dir: "ts/multi", file: "ts/multi/src/api.ts", line: 4, column: 41},
	{fixture: "tsc-project-pretty", dir: "ts/project", file: "ts/project/src/main.ts", line: 4, column: 22},
	{fixture: "tsc-bad-config", dir: "ts/badconfig", file: "ts/badconfig/tsconfig.json", line: 3, column: 5},
	{fixture: "tsc-related-pretty", dir: "ts/related", file: "ts/related/src/settings.ts", line: 7, column: 3},
	{fixture: "tsc-missing-module", dir: "ts/missingmod", file: "ts/missingmod/src/app.ts", line: 1, column: 23},
	// --- Java ---
	{fixture: "javac-multi", dir: "java/multi", file: "java/multi/Util.java", line: 4, column: 16},
	{fixture: "javac-packages", dir: "java/pkgs", file: "java/pkgs/src/com/acme/App.java", line: 8, column: 27},
	{fixture: "java-index-out-of-bounds", dir: "java/aioobe", file: "java/aioobe/src/com/acme/Parser.java", line: 6},
	{fixture: "java-caused-by-npe", dir: "java/chain", file: "java/chain/Store.java", line: 15},
	{fixture: "java-lambda", dir: "java/lambda", file: "java/lambda/Main.java", line: 8},
	{fixture: "mvn-compile", dir: "java/maven", file: "java/maven/src/main/java/com/acme/Billing.java", line: 11, column: 21},
	// --- Shell ---
	{fixture: "bash-syntax", dir: "shell", file: "shell/syntax.sh", line: 6},
	{fixture: "dash-not-found", dir: "shell", file: "shell/dash.sh", line: 4},
	{fixture: "bash-unbound", dir: "shell", file: "shell/unbound.sh", line: 4},
	{fixture: "bash-sourced", dir: "shell/sourced", file: "shell/sourced/lib/common.sh", line: 3},
	{fixture: "shellcheck-error-after-info", dir: "shell", file: "shell/checkerr.sh", line: 6, column: 23},
	// --- the wider second set ---
	{fixture: "go-test-build-failed", dir: "go/testbuild", file: "go/testbuild/queue_test.go", line: 8, column: 7, wider: true},
	{fixture: "go-test-verbose", dir: "go/verbose", file: "go/verbose/internal/money/money_test.go", line: 15, wider: true},
	{fixture: "staticcheck", dir: "go/staticcheck", file: "go/staticcheck/main.go", line: 9, column: 2, wider: true},
	{fixture: "rust-thread-panic", dir: "rust/thread", file: "rust/thread/src/main.rs", line: 6, column: 14, wider: true},
	{fixture: "cargo-trait-bound", dir: "rust/traitbound", file: "rust/traitbound/src/main.rs", line: 9, column: 31, wider: true},
	{fixture: "cargo-clippy", dir: "rust/clippy", file: "rust/clippy/src/main.rs", line: 3, column: 14, wider: true},
	{fixture: "gcc-missing-include", dir: "c/missinginc", file: "c/missinginc/main.c", line: 2, column: 10, wider: true},
	{fixture: "gcc-link-line", dir: "c/ldline", file: "c/ldline/main.c", line: 6, wider: true},
	// The failing command of the recipe: the Makefile's line.
	{fixture: "make-recipe", dir: "c/recipe", file: "c/recipe/Makefile", line: 4, wider: true},
	{fixture: "clang-project-template", dir: "c/clangproj", file: "c/clangproj/include/stack.hpp", line: 8, column: 38, wider: true},
	// The sub-exception of the group is the root cause.
	{fixture: "python-exception-group", dir: "python", file: "python/taskgroup.py", line: 7, wider: true},
	{fixture: "pytest-tb-line", dir: "python/pytest-line", file: "python/pytest-line/test_math.py", line: 6, wider: true},
	{fixture: "pytest-helper", dir: "python/pytest-helper", file: "python/pytest-helper/checks.py", line: 2, wider: true},
	{fixture: "node-test-spec-throw", dir: "node/specthrow", file: "node/specthrow/test/price.test.js", line: 6, column: 10, wider: true},
	{fixture: "node-unhandled-error-event", dir: "node/emitter", file: "node/emitter/main.js", line: 5, column: 22, wider: true},
	{fixture: "jest-typeerror", dir: "node/jesttype", file: "node/jesttype/src/user.js", line: 2, column: 20, wider: true},
	{fixture: "tsc-two-files-pretty", dir: "ts/twofiles", file: "ts/twofiles/src/a.ts", line: 5, column: 7, wider: true},
	{fixture: "javac-lint", dir: "java/lint", file: "java/lint/Main.java", line: 8, column: 33, wider: true},
	{fixture: "java-thread", dir: "java/thread", file: "java/thread/Main.java", line: 4, wider: true},
	{fixture: "bash-arithmetic", dir: "shell", file: "shell/arith.sh", line: 4, wider: true},
	// bash reports the missing fi at the end of the file.
	{fixture: "bash-eof", dir: "shell", file: "shell/parse.sh", line: 5, wider: true},
	{fixture: "shellcheck-tty-parse", dir: "shell", file: "shell/parse.sh", line: 2, column: 1, wider: true},

	// --- written after the parsers were fixed ---
	{fixture: "cmake-link-multidef", dir: "c/cmakelink", file: "c/cmakelink/src/state.c", late: true},
	{fixture: "gxx-override-header", dir: "c/override", file: "c/override/include/shapes/shape.hpp", line: 10, column: 16, late: true},
	{fixture: "go-vet-multipkg", dir: "go/vetmulti", file: "go/vetmulti/util/log.go", line: 6, column: 34, late: true},
	{fixture: "python-recursion", dir: "python", file: "python/recursion.py", line: 2, late: true},
	{fixture: "pytest-class", dir: "python/pytest-class", file: "python/pytest-class/test_account.py", line: 13, late: true},
	{fixture: "node-toplevel-await", dir: "node/toplevel", file: "node/toplevel/main.mjs", line: 3, column: 18, late: true},
	{fixture: "rust-unreachable", dir: "rust/unreachable", file: "rust/unreachable/src/shape.rs", line: 5, column: 18, late: true},
	{fixture: "tsc-nullable-pretty", dir: "ts/nullable", file: "ts/nullable/src/users.ts", line: 5, column: 10, late: true},
	{fixture: "java-concurrent-modification", dir: "java/cme", file: "java/cme/Main.java", line: 6, late: true},
	{fixture: "bash-readonly", dir: "shell", file: "shell/readonly.sh", line: 4, late: true},

	// --- the third batch, written after all the fixes above ---
	{fixture: "go-infer", dir: "go/infer", file: "go/infer/main.go", line: 13, column: 20, fresh: true},
	{fixture: "go-unused-import", dir: "go/unusedimport", file: "go/unusedimport/health.go", line: 6, column: 2, fresh: true},
	{fixture: "go-test-subtest-nil", dir: "go/subtestnil", file: "go/subtestnil/order.go", line: 14, fresh: true},
	{fixture: "go-vet-copylocks", dir: "go/copylock", file: "go/copylock/counter.go", line: 19, column: 15, fresh: true},
	{fixture: "go-slice-bounds", dir: "go/slicebounds", file: "go/slicebounds/ring/ring.go", line: 18, fresh: true},
	{fixture: "staticcheck-sleep", dir: "go/sleep", file: "go/sleep/main.go", line: 14, column: 14, fresh: true},
	{fixture: "cargo-borrow-method", dir: "rust/borrowmethod", file: "rust/borrowmethod/src/main.rs", line: 13, column: 13, fresh: true},
	// The test expected another message: the panic it saw is the error.
	{fixture: "cargo-test-should-panic", dir: "rust/shouldpanic", file: "rust/shouldpanic/src/lib.rs", line: 3, column: 9, fresh: true},
	{fixture: "rust-divide-by-zero", dir: "rust/divzero", file: "rust/divzero/src/stats.rs", line: 3, column: 5, fresh: true},
	{fixture: "cargo-str-type", dir: "rust/strtype", file: "rust/strtype/src/user.rs", line: 7, column: 18, fresh: true},
	{fixture: "cargo-non-exhaustive", dir: "rust/matcharm", file: "rust/matcharm/src/main.rs", line: 9, column: 11, fresh: true},
	{fixture: "cargo-workspace", dir: "rust/workspace", file: "rust/workspace/crates/core/src/lib.rs", line: 4, column: 28, fresh: true},
	// ld names the calling source and no line.
	{fixture: "gcc-undefined-reference", dir: "c/undefref", file: "c/undefref/main.c", fresh: true},
	{fixture: "gcc-incomplete-struct", dir: "c/statsize", file: "c/statsize/size.c", line: 4, column: 17, fresh: true},
	{fixture: "gxx-lambda-capture", dir: "c/lambda", file: "c/lambda/main.cpp", line: 9, column: 20, fresh: true},
	{fixture: "gxx-unique-ptr-copy", dir: "c/uniqueptr", file: "c/uniqueptr/main.cpp", line: 12, column: 23, fresh: true},
	{fixture: "make-dash-c", dir: "c/makec", file: "c/makec/src/parse.c", line: 9, column: 18, fresh: true},
	{fixture: "clang-asan-use-after-free", dir: "c/asanuaf", file: "c/asanuaf/list.c", line: 14, column: 22, fresh: true},
	{fixture: "clang-class-semicolon", dir: "c/classsemi", file: "c/classsemi/include/point.hpp", line: 11, column: 2, fresh: true},
	{fixture: "cmake-unknown-command", dir: "c/cmakeunknown", file: "c/cmakeunknown/CMakeLists.txt", line: 4, fresh: true},
	{fixture: "python-package-import", dir: "python/pkgimport", file: "python/pkgimport/app/service.py", line: 3, fresh: true},
	// raise ... from: the KeyError in the user's code is the root cause.
	{fixture: "python-raise-from", dir: "python/raisefrom", file: "python/raisefrom/settings.py", line: 10, fresh: true},
	{fixture: "python-unittest-discover", dir: "python/unittest-discover", file: "python/unittest-discover/src/billing/invoice.py", line: 2, fresh: true},
	{fixture: "python-fstring", dir: "python", file: "python/fstring.py", line: 3, fresh: true},
	{fixture: "python-module-none", dir: "python/nonetype", file: "python/nonetype/shop/cli.py", line: 9, fresh: true},
	{fixture: "pytest-missing-fixture", dir: "python/pytest-missing", file: "python/pytest-missing/test_api.py", line: 9, fresh: true},
	{fixture: "pytest-tb-native", dir: "python/pytest-native", file: "python/pytest-native/inventory/stock.py", line: 2, fresh: true},
	{fixture: "node-cjs-named-export", dir: "node/cjsnamed", file: "node/cjsnamed/main.mjs", line: 1, column: 10, fresh: true},
	{fixture: "node-timer-this", dir: "node/timerclass", file: "node/timerclass/lib/poller.js", line: 9, column: 24, fresh: true},
	{fixture: "node-test-tap-subtest", dir: "node/testtap", file: "node/testtap/test/config.test.js", line: 8, column: 12, fresh: true},
	// The deepest frame of the overflow, as for any stack trace.
	{fixture: "node-stack-overflow", dir: "node/recursion", file: "node/recursion/tree.js", line: 2, column: 3, fresh: true},
	{fixture: "jest-snapshot", dir: "node/jestsnap", file: "node/jestsnap/greeting.test.js", line: 5, column: 26, fresh: true},
	// A timeout has no stack in the test: the test that timed out.
	{fixture: "jest-timeout", dir: "node/jesttimeout", file: "node/jesttimeout/queue.test.js", line: 4, column: 3, fresh: true},
	{fixture: "vitest-typescript", dir: "node/vitestts", file: "node/vitestts/src/discount.ts", line: 7, column: 23, fresh: true},
	{fixture: "tsc-tsx", dir: "ts/tsx", file: "ts/tsx/src/App.tsx", line: 6, column: 28, fresh: true},
	{fixture: "tsc-constraint", dir: "ts/constraint", file: "ts/constraint/src/cache.ts", line: 15, column: 33, fresh: true},
	{fixture: "tsc-never-pretty", dir: "ts/never", file: "ts/never/src/shape.ts", line: 17, column: 26, fresh: true},
	{fixture: "tsc-implicit-any", dir: "ts/implicitany", file: "ts/implicitany/src/events.ts", line: 9, column: 22, fresh: true},
	{fixture: "javac-generics", dir: "java/generics", file: "java/generics/Main.java", line: 10, column: 34, fresh: true},
	{fixture: "javac-unreported", dir: "java/unreported", file: "java/unreported/Main.java", line: 6, column: 32, fresh: true},
	{fixture: "java-number-format", dir: "java/numfmt", file: "java/numfmt/Main.java", line: 6, fresh: true},
	// Two Caused by: the last one, at its frame in the user's code.
	{fixture: "java-chain-three", dir: "java/chain3", file: "java/chain3/Main.java", line: 15, fresh: true},
	{fixture: "mvn-cannot-find-symbol", dir: "java/mavensym", file: "java/mavensym/src/main/java/com/acme/orders/Report.java", line: 9, column: 21, fresh: true},
	{fixture: "bash-set-u-positional", dir: "shell/positional", file: "shell/positional/lib.sh", line: 3, fresh: true},
	{fixture: "bash-bad-substitution", dir: "shell/subst", file: "shell/subst/release.sh", line: 6, fresh: true},
	{fixture: "bash-cd-set-e", dir: "shell", file: "shell/scripts/deploy.sh", line: 5, fresh: true},
	{fixture: "dash-test-operator", dir: "shell/dashtest", file: "shell/dashtest/check.sh", line: 6, fresh: true},
	// The warning, not the info before it.
	{fixture: "shellcheck-tty-warning", dir: "shell", file: "shell/lint.sh", line: 4, column: 1, fresh: true},

	// --- the fourth batch: outputs of real tools whose programs were not
	// kept (see heldOutDir). Each tool ran in its own workspace ("." is its
	// root); the labels, the place of each bug, came with the outputs.
	// Five more outputs of that capture were left unjudged and are not
	// here: two static_assert errors whose right place is debatable, a
	// DeprecationWarning turned into an error, a cargo doctest whose
	// printed line is not the example's, and ESLint's TAP report.
	{fixture: "bash-sourced-typo", dir: ".", file: "scripts/lib/common.sh", line: 10, fourth: true},
	{fixture: "c-assert", dir: ".", file: "src/queue.c", line: 8, fourth: true},
	{fixture: "cargo-build-script-panic", dir: ".", file: "build.rs", line: 6, column: 43, fourth: true},
	{fixture: "cargo-format-args", dir: ".", file: "src/net/mod.rs", line: 2, column: 14, fourth: true},
	{fixture: "cargo-link-undefined", dir: ".", file: "src/main.rs", line: 7, fourth: true},
	{fixture: "cargo-macro-workspace", dir: ".", file: "crates/core/src/parser/mod.rs", line: 3, column: 43, fourth: true},
	{fixture: "cargo-short-format", dir: ".", file: "src/cfg.rs", line: 3, column: 34, fourth: true},
	{fixture: "cargo-test-integration-unwrap", dir: ".", file: "src/lib.rs", line: 2, column: 46, fourth: true},
	{fixture: "cargo-trait-not-impl", dir: ".", file: "src/main.rs", line: 20, column: 67, fourth: true},
	{fixture: "clangxx-concepts", dir: ".", file: "src/main.cpp", line: 6, column: 18, fourth: true},
	{fixture: "dash-syntax", dir: ".", file: "scripts/build.sh", line: 13, fourth: true},
	{fixture: "doctest", dir: ".", file: "textutil/slug.py", line: 6, fourth: true},
	{fixture: "eslint-compact", dir: ".", file: "src/utils/format.js", line: 2, column: 9, fourth: true},
	{fixture: "eslint-stylish-warn-first", dir: ".", file: "src/b/second.js", line: 2, column: 10, fourth: true},
	{fixture: "eslint-unix", dir: ".", file: "src/utils/format.js", line: 2, column: 9, fourth: true},
	{fixture: "eslint-visualstudio", dir: ".", file: "src/utils/format.js", line: 2, column: 9, fourth: true},
	{fixture: "flake8", dir: ".", file: "pkg/util.py", line: 5, column: 12, fourth: true},
	{fixture: "gcc-fanalyzer", dir: ".", file: "src/buf/buf.c", line: 8, column: 16, fourth: true},
	{fixture: "go-concurrent-map", dir: ".", file: "main.go", line: 13, fourth: true},
	{fixture: "go-deadlock", dir: ".", file: "main.go", line: 14, fourth: true},
	{fixture: "go-fuzz-seed", dir: ".", file: "codec/rev_test.go", line: 14, fourth: true},
	{fixture: "go-generic-constraint", dir: ".", file: "main.go", line: 11, column: 21, fourth: true},
	{fixture: "go-log-lshortfile", dir: ".", file: "config/config.go", line: 11, fourth: true},
	{fixture: "go-mod-directive", dir: ".", file: "go.mod", line: 5, fourth: true},
	{fixture: "go-nested-return", dir: ".", file: "internal/store/store.go", line: 22, column: 9, fourth: true},
	{fixture: "go-syntax-nested", dir: ".", file: "api/v1/handler.go", line: 11, column: 22, fourth: true},
	{fixture: "go-test-panic-lib", dir: ".", file: "internal/parse/parse.go", line: 8, fourth: true},
	{fixture: "go-test-parallel-subtest", dir: ".", file: "pkg/mathx/mathx_test.go", line: 19, fourth: true},
	{fixture: "go-test-v-parallel", dir: ".", file: "pkg/mathx/mathx_test.go", line: 19, fourth: true},
	{fixture: "go-vet-copylocks-param", dir: ".", file: "internal/report/report.go", line: 13, column: 14, fourth: true},
	{fixture: "gxx-concepts", dir: ".", file: "src/main.cpp", line: 6, column: 27, fourth: true},
	{fixture: "java-executor", dir: ".", file: "src/com/acme/jobs/Worker.java", line: 7, fourth: true},
	{fixture: "java-immutable-lib", dir: ".", file: "core/src/main/java/com/acme/core/Repo.java", line: 18, fourth: true},
	{fixture: "java-source-launcher", dir: ".", file: "Tool.java", line: 8, column: 23, fourth: true},
	{fixture: "java-stackoverflow", dir: ".", file: "src/com/acme/tree/Node.java", line: 10, fourth: true},
	{fixture: "java-suppressed", dir: ".", file: "src/com/acme/io/Conn.java", line: 12, fourth: true},
	{fixture: "javac-generics-multimodule", dir: ".", file: "app/src/main/java/com/acme/app/Report.java", line: 9, column: 32, fourth: true},
	{fixture: "javac-werror", dir: ".", file: "src/com/acme/util/Lists.java", line: 13, column: 31, fourth: true},
	{fixture: "jest-each-nested", dir: ".", file: "src/cart/__tests__/price.test.js", line: 10, column: 42, fourth: true},
	{fixture: "jest-throw-in-src", dir: ".", file: "src/cart/price.js", line: 9, column: 30, fourth: true},
	{fixture: "make-werror-format", dir: ".", file: "util/log.c", line: 4, column: 18, fourth: true},
	{fixture: "mypy-nested", dir: ".", file: "pkg/models/user.py", line: 11, column: 32, fourth: true},
	{fixture: "mypy-nocol", dir: ".", file: "pkg/models/user.py", line: 11, fourth: true},
	{fixture: "ninja-compile-error", dir: ".", file: "lib/codec/src/base64.cpp", line: 8, column: 20, fourth: true},
	{fixture: "ninja-undefined-method", dir: ".", file: "app/main.cpp", fourth: true},
	{fixture: "node-async-stack", dir: ".", file: "lib/repo.mjs", line: 4, column: 14, fourth: true},
	{fixture: "node-lib-in-node_modules", dir: ".", file: "src/routes/signup.js", line: 4, column: 17, fourth: true},
	{fixture: "node-no-sourcemap", dir: ".", file: "dist/billing/invoice.js", line: 6, column: 28, fourth: true},
	{fixture: "node-sourcemap", dir: ".", file: "src/billing/invoice.ts", line: 8, column: 27, fourth: true},
	{fixture: "node-worker", dir: ".", file: "workers/resize.js", line: 4, column: 24, fourth: true},
	{fixture: "py-asyncio", dir: ".", file: "svc/fetch.py", line: 6, fourth: true},
	{fixture: "py-json-lib", dir: ".", file: "loader/cfg.py", line: 7, fourth: true},
	{fixture: "py-logging-exception", dir: ".", file: "worker/jobs.py", line: 8, fourth: true},
	{fixture: "py-multiprocessing", dir: ".", file: "etl/transform.py", line: 2, fourth: true},
	{fixture: "py-re-lib", dir: ".", file: "app/util/patterns.py", line: 7, fourth: true},
	{fixture: "py-venv-lib", dir: ".", file: "client/api.py", line: 7, fourth: true},
	{fixture: "py-warning-plain", dir: ".", file: "main.py", line: 3, fourth: true},
	{fixture: "pytest-conftest-import", dir: ".", file: "tests/integration/conftest.py", line: 2, fourth: true},
	{fixture: "pytest-did-not-raise", dir: ".", file: "tests/unit/test_ops.py", line: 11, fourth: true},
	{fixture: "pytest-venv-lib-long", dir: ".", file: "app/repo.py", line: 5, fourth: true},
	{fixture: "pytest-venv-lib-short", dir: ".", file: "app/repo.py", line: 5, fourth: true},
	{fixture: "shellcheck-gcc-multi", dir: ".", file: "scripts/deploy.sh", line: 3, column: 8, fourth: true},
	{fixture: "shellcheck-json1", dir: ".", file: "scripts/deploy.sh", line: 3, column: 8, fourth: true},
	{fixture: "tsc-build-refs", dir: ".", file: "packages/web/src/page.ts", line: 6, column: 9, fourth: true},
	{fixture: "tsc-build-refs-pretty", dir: ".", file: "packages/web/src/page.ts", line: 6, column: 9, fourth: true},
	{fixture: "tsc-lib-dts-first", dir: ".", file: "src/app.ts", line: 5, column: 9, fourth: true},
	{fixture: "tsc-p-sub", dir: "packages/web", file: "packages/web/src/page.ts", line: 1, column: 28, fourth: true},
	{fixture: "ubsan-overflow", dir: ".", file: "src/math/acc.c", line: 6, column: 13, fourth: true},
	{fixture: "ubsan-overflow-gcc", dir: ".", file: "src/math/acc.c", line: 6, column: 13, fourth: true},
	{fixture: "unittest-subtest", dir: ".", file: "tests/test_stock.py", line: 11, fourth: true},
	{fixture: "vitest-async-throw", dir: ".", file: "src/lib/slug.ts", line: 8, column: 11, fourth: true},
	{fixture: "vitest-each", dir: ".", file: "test/slug.test.ts", line: 9, column: 25, fourth: true},
}

// sameFile reports whether got, a File as Parse returns it, names want (a
// path relative to the workspace) for a tool that ran in dir: the same
// path, the path relative to dir, or a trailing part of it (a Java frame
// names Parser.java for src/com/acme/Parser.java), which is how an editor
// finds such a file in the workspace.
func sameFile(got, dir, want string) bool {
	if got == "" {
		return false
	}
	got = path.Clean(filepath.ToSlash(got))
	if got == want || path.Join(dir, got) == want {
		return true
	}
	return !strings.HasPrefix(got, "../") && !path.IsAbs(got) && strings.HasSuffix(want, "/"+got)
}

// heldOutDir is where a case's output is. The first three batches are in
// outputs/, written by generate.sh from programs/. The fourth batch is in
// captured/: outputs of real tools run on programs that were not kept, so
// generate.sh cannot write them again. Each of those programs was a
// project of its own, the tool run at its root (in a subdirectory of it
// for one of them, c.dir); the project's absolute path was replaced by
// $WORKSPACE when the outputs were copied in, nothing else changed, so
// each output reads as if its tool had run in the test workspace (or in
// c.dir under it), as the others do.
func heldOutDir(fourth bool) string {
	if fourth {
		return "captured"
	}
	return "outputs"
}

func parseHeldOut(t testing.TB, name string) []Error {
	t.Helper()
	return parseHeldOutIn(t, "outputs", name)
}

func parseHeldOutIn(t testing.TB, dir, name string) []Error {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "heldout", dir, name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return Parse(strings.ReplaceAll(string(b), "$WORKSPACE", testWorkspace), Options{Workspace: testWorkspace})
}

// TestHeldOutAccuracy measures the primary error's location on the outputs
// of programs the parsers were not written against (testdata/heldout,
// written by heldout/generate.sh). It reports the figures per toolchain
// (go test -v -run TestHeldOutAccuracy) and fails below 95% overall; the
// README's held-out figures come from here.
func TestHeldOutAccuracy(t *testing.T) {
	type tally struct{ right, total int }
	by := map[string]*tally{}
	var all, first, wider, late, fresh, fourth tally
	freshBy, fourthBy := map[string]*tally{}, map[string]*tally{}
	var misses []string
	for _, c := range heldOutCases {
		tc := toolchain(c.fixture)
		if by[tc] == nil {
			by[tc] = &tally{}
		}
		errs := parseHeldOutIn(t, heldOutDir(c.fourth), c.fixture)
		p := Primary(errs)
		got := "no error found"
		ok := false
		if p >= 0 {
			e := errs[p]
			got = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
			ok = sameFile(e.File, c.dir, c.file) && e.Line == c.line && e.Column == c.column
		}
		for _, n := range []*tally{by[tc], &all} {
			n.total++
			if ok {
				n.right++
			}
		}
		set := &first
		switch {
		case c.wider:
			set = &wider
		case c.late:
			set = &late
		case c.fresh:
			set = &fresh
			if freshBy[tc] == nil {
				freshBy[tc] = &tally{}
			}
			freshBy[tc].total++
			if ok {
				freshBy[tc].right++
			}
		case c.fourth:
			set = &fourth
			if fourthBy[tc] == nil {
				fourthBy[tc] = &tally{}
			}
			fourthBy[tc].total++
			if ok {
				fourthBy[tc].right++
			}
		}
		set.total++
		if ok {
			set.right++
		}
		if !ok {
			misses = append(misses, fmt.Sprintf("%s: got %s, want %s:%d:%d", c.fixture, got, c.file, c.line, c.column))
		}
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%-10s %2d/%-2d located right", n, by[n].right, by[n].total)
	}
	t.Logf("%-10s %2d/%-2d located right (%.0f%%)", "all", all.right, all.total, 100*float64(all.right)/float64(all.total))
	t.Logf("first set %d/%d, wider set %d/%d, written after the fixes %d/%d, third batch %d/%d, fourth batch %d/%d (%.0f%%)", first.right, first.total, wider.right, wider.total, late.right, late.total, fresh.right, fresh.total, fourth.right, fourth.total, 100*float64(fourth.right)/float64(fourth.total))
	for _, n := range names {
		if f := freshBy[n]; f != nil {
			t.Logf("third batch %-10s %2d/%-2d located right", n, f.right, f.total)
		}
	}
	for _, n := range names {
		if f := fourthBy[n]; f != nil {
			t.Logf("fourth batch %-10s %2d/%-2d located right", n, f.right, f.total)
		}
	}
	for _, m := range misses {
		t.Log("miss: " + m)
	}
	// The aim; measured 213/216 (the third batch 45/48 before
	// its fixes, the fourth 57/72).
	if all.right*100 < all.total*95 {
		t.Errorf("%d/%d held-out outputs located right, below 95%%", all.right, all.total)
	}
}

// TestSameFile pins the file comparison the held-out figures rest on.
func TestSameFile(t *testing.T) {
	for _, c := range []struct {
		got, dir, want string
		ok             bool
	}{
		{"go/a/main.go", "go/a", "go/a/main.go", true},
		{"./main.go", "go/a", "go/a/main.go", true},
		{"Parser.java", "java", "java/src/com/acme/Parser.java", true},
		{"com/acme/Parser.java", "java", "java/src/com/acme/Parser.java", true},
		{"other.go", "go/a", "go/a/main.go", false},
		{"ain.go", "go/a", "go/a/main.go", false},
		{"", "go/a", "go/a/main.go", false},
		{"../b/main.go", "go/a", "go/a/main.go", false},
	} {
		if got := sameFile(c.got, c.dir, c.want); got != c.ok {
			t.Errorf("sameFile(%q, %q, %q) = %v, want %v", c.got, c.dir, c.want, got, c.ok)
		}
	}
}

// TestHeldOutForms checks, on held-out outputs, what the location figure
// does not: the errors around the primary one.
func TestHeldOutForms(t *testing.T) {
	// The sub-exception of an ExceptionGroup is the root cause; the group
	// follows it.
	errs := parseHeldOut(t, "python-exception-group")
	if len(errs) != 2 || errs[0].Code != "ValueError" || errs[1].Code != "ExceptionGroup" {
		t.Fatalf("exception group: %+v", errs)
	}
	// pytest --tb=line and its summary line are one failure, named.
	errs = parseHeldOut(t, "pytest-tb-line")
	if len(errs) != 1 || !slices.Contains(errs[0].Details, "test: test_half_odd") {
		t.Fatalf("pytest --tb=line: %+v", errs)
	}
	// A failed test's t.Log line stays, after the failure.
	errs = parseHeldOut(t, "go-test-verbose")
	if len(errs) != 2 || errs[0].Message != "Cents(0.29) = 28, want 29" || errs[1].Message != "converting 0.29 euros" {
		t.Fatalf("go test -v: %+v", errs)
	}
	// make's own failure only when no compiler error explains it.
	errs = parseHeldOut(t, "make-recipe")
	if len(errs) != 1 || errs[0].Tool != "make" || errs[0].Message != "make: gen-version: No such file or directory" {
		t.Fatalf("make recipe: %+v", errs)
	}
	for _, e := range parseHeldOut(t, "make-nested-gxx") {
		if e.Tool == "make" {
			t.Errorf("make's echo of a compiler error reported as an error: %+v", e)
		}
	}
	// ld names the object; the source and the object are both given.
	errs = parseHeldOut(t, "gcc-multiple-definition")
	if len(errs) != 1 || !slices.Contains(errs[0].Details, "object: b.o") {
		t.Fatalf("ld multiple definition: %+v", errs)
	}
	// A fixture pytest cannot find: one error at the test, its summary
	// line folded in; the same for a test method's failure.
	errs = parseHeldOut(t, "pytest-missing-fixture")
	if len(errs) != 1 || errs[0].Message != "fixture 'clinet' not found" || !slices.Contains(errs[0].Details, "test: test_status") {
		t.Fatalf("pytest missing fixture: %+v", errs)
	}
	if errs = parseHeldOut(t, "pytest-class"); len(errs) != 1 {
		t.Fatalf("pytest test method: %+v", errs)
	}
	// --tb=native: the exception and the whole stack, as Python prints them.
	errs = parseHeldOut(t, "pytest-tb-native")
	if len(errs) != 1 || errs[0].Code != "ZeroDivisionError" || len(errs[0].Frames) != 4 {
		t.Fatalf("pytest --tb=native: %+v", errs)
	}
	// shellcheck's tty report: the warning, not the info before it.
	errs = parseHeldOut(t, "shellcheck-tty-warning")
	if p := Primary(errs); len(errs) != 2 || errs[p].Code != "SC2164" {
		t.Fatalf("shellcheck tty: %+v", errs)
	}
	// tsc's error in a package's .d.ts stays in the list, after the
	// user's as primary.
	errs = parseHeldOutIn(t, "captured", "tsc-lib-dts-first")
	if p := Primary(errs); len(errs) != 2 || p != 1 || errs[0].File != "node_modules/badtypes/index.d.ts" {
		t.Fatalf("tsc with a dependency's error first: %+v", errs)
	}
	// flake8: both findings, the undefined name primary.
	errs = parseHeldOutIn(t, "captured", "flake8")
	if p := Primary(errs); len(errs) != 2 || errs[p].Code != "F821" {
		t.Fatalf("flake8: %+v", errs)
	}
	// Maven prints the compiler error twice: reported once.
	errs = parseHeldOut(t, "mvn-compile")
	if len(errs) != 1 || errs[0].Message != "';' expected" {
		t.Fatalf("maven: %+v", errs)
	}
}
