package errparse

import (
	"testing"
)

// Native build and runtime forms: cargo build scripts, the linker's output
// quoted by rustc, rustc's short format, UndefinedBehaviorSanitizer, the C
// library's assert(), and the gcc-style lines of tools that are not gcc.
// The inputs are real output (rustc 1.95, cargo, gcc 12, clang 14, glibc,
// mypy, nasm), trimmed, unless a case says otherwise.
func TestNativeForms(t *testing.T) {
	cases := []formCase{
		// A cargo build script's output, indented under "Caused by:".
		{
			name: "cargo build script panic",
			ws:   "/tmp/parseaudit/cases/rs2",
			input: `   Compiling withbuild v0.1.0 (/tmp/parseaudit/cases/rs2)
error: failed to run custom build command for ` + "`withbuild v0.1.0 (/tmp/parseaudit/cases/rs2)`" + `
note: To improve backtraces for build dependencies, set the CARGO_PROFILE_DEV_BUILD_OVERRIDE_DEBUG=true environment variable to enable debug information generation.

Caused by:
  process didn't exit successfully: ` + "`/tmp/parseaudit/cases/rs2/target/debug/build/withbuild-78c8057c76127086/build-script-build`" + ` (exit status: 101)
  --- stderr

  thread 'main' (14950) panicked at build.rs:6:43:
  APP_VERSION must be set: NotPresent
  stack backtrace:
     0: __rustc::rust_begin_unwind
               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
     1: core::panicking::panic_fmt
               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
     2: core::result::unwrap_failed
               at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/result.rs:1867:5
     3: core::result::Result<T,E>::expect
     4: build_script_build::main
     5: core::ops::function::FnOnce::call_once
  note: Some details are omitted, run with ` + "`RUST_BACKTRACE=full`" + ` for a verbose backtrace.
`,
			count:  1,
			want:   want{"rust panic", "rust", "build.rs", 6, 43, "error", "panic", "APP_VERSION must be set: NotPresent"},
			detail: "failed to run custom build command for `withbuild v0.1.0 (/tmp/parseaudit/cases/rs2)`",
		},
		{
			name: "cargo build script of a workspace member, with stdout",
			ws:   "/tmp/c/ws",
			input: `   Compiling gen v0.1.0 (/tmp/c/ws/crates/gen)
error: failed to run custom build command for ` + "`gen v0.1.0 (/tmp/c/ws/crates/gen)`" + `

Caused by:
  process didn't exit successfully: ` + "`/tmp/c/ws/target/debug/build/gen-87c78d401634b90e/build-script-build`" + ` (exit status: 101)
  --- stdout
  cargo:rustc-env=V=1

  --- stderr
  checking env

  thread 'main' (13634) panicked at crates/gen/build.rs:4:42:
  GEN_VERSION must be set: NotPresent
  note: run with ` + "`RUST_BACKTRACE=1`" + ` environment variable to display a backtrace
`,
			count:  1,
			want:   want{"rust panic", "rust", "crates/gen/build.rs", 4, 42, "error", "panic", "GEN_VERSION must be set: NotPresent"},
			detail: "failed to run custom build command for `gen v0.1.0 (/tmp/c/ws/crates/gen)`",
		},
		{
			name: "cargo build script that exits with a message",
			ws:   "/tmp/c/ws",
			input: `   Compiling gen v0.1.0 (/tmp/c/ws/crates/gen)
error: failed to run custom build command for ` + "`gen v0.1.0 (/tmp/c/ws/crates/gen)`" + `
note: To improve backtraces for build dependencies, set the CARGO_PROFILE_DEV_BUILD_OVERRIDE_DEBUG=true environment variable to enable debug information generation.

Caused by:
  process didn't exit successfully: ` + "`/tmp/c/ws/target/debug/build/gen-87c78d401634b90e/build-script-build`" + ` (exit status: 1)
  --- stderr
  libfoo.pc not found in PKG_CONFIG_PATH
`,
			count:  1,
			want:   want{"cargo", "rust", "", 0, 0, "error", "", "failed to run custom build command for `gen v0.1.0 (/tmp/c/ws/crates/gen)`"},
			detail: "libfoo.pc not found in PKG_CONFIG_PATH",
		},
		// The linker's output, quoted in the notes of rustc's "linking
		// with `cc` failed".
		{
			name: "rust-lld undefined symbol in rustc's notes",
			ws:   "/tmp/parseaudit/cases/rs6",
			input: `   Compiling ffi v0.1.0 (/tmp/parseaudit/cases/rs6)
error: linking with ` + "`cc`" + ` failed: exit status: 1
  |
  = note:  "cc" "-m64" "/tmp/parseaudit/cases/rs6/target/debug/deps/rustcsFhCUv/symbols.o" "<8 object files omitted>" "-Wl,--as-needed" "-B<sysroot>/lib/rustlib/x86_64-unknown-linux-gnu/bin/gcc-ld" "-fuse-ld=lld" "-o" "/tmp/parseaudit/cases/rs6/target/debug/deps/ffi-46be67b7f7aeb29d" "-nodefaultlibs"
  = note: some arguments are omitted. use ` + "`--verbose`" + ` to show all linker arguments
  = note: rust-lld: error: undefined symbol: fast_hash
          >>> referenced by main.rs:7 (src/main.rs:7)
          >>>               /tmp/parseaudit/cases/rs6/target/debug/deps/ffi-46be67b7f7aeb29d.5h7n4ouoj59la6v3czeszaykx.0w3150q.rcgu.o:(ffi::main::hed5332f7a281a28d)
          collect2: error: ld returned 1 exit status
          

error: could not compile ` + "`ffi`" + ` (bin "ffi") due to 1 previous error
`,
			count:  1,
			want:   want{"ld", "rust", "src/main.rs", 7, 0, "error", "", "undefined symbol: fast_hash"},
			detail: "linking with `cc` failed: exit status: 1",
		},
		{
			name: "GNU ld undefined reference in rustc's notes",
			ws:   "/tmp/c/ffi",
			input: `   Compiling ffi v0.1.0 (/tmp/c/ffi)
error: linking with ` + "`cc`" + ` failed: exit status: 1
  |
  = note:  "cc" "-m64" "/tmp/c/ffi/target/debug/deps/rustcQxwiyG/symbols.o" "<8 object files omitted>" "-o" "/tmp/c/ffi/target/debug/deps/ffi-14119abe6fbed1b8" "-nodefaultlibs"
  = note: some arguments are omitted. use ` + "`--verbose`" + ` to show all linker arguments
  = note: /usr/bin/ld: /tmp/c/ffi/target/debug/deps/ffi-14119abe6fbed1b8.5h7n4ouoj59la6v3czeszaykx.0n8yehx.rcgu.o: in function ` + "`ffi::main':" + `
          /tmp/c/ffi/src/main.rs:7: undefined reference to ` + "`fast_hash'" + `
          collect2: error: ld returned 1 exit status
          
  = note: some ` + "`extern`" + ` functions couldn't be found; some native libraries may need to be installed or have their path specified
  = note: use the ` + "`-l`" + ` flag to specify native libraries to link

error: could not compile ` + "`ffi`" + ` (bin "ffi") due to 1 previous error
`,
			count:  1,
			want:   want{"ld", "rust", "src/main.rs", 7, 0, "error", "", "undefined reference to `fast_hash'"},
			detail: "note: use the `-l` flag to specify native libraries to link",
		},
		{
			name: "GNU ld without debug information names a codegen unit, not a file",
			ws:   "/tmp/c/ffi",
			input: `error: linking with ` + "`cc`" + ` failed: exit status: 1
  |
  = note:  "cc" "-m64" "/tmp/c/ffi/target/release/deps/rustcuRKpFk/symbols.o" "<2 object files omitted>" "-nodefaultlibs"
  = note: some arguments are omitted. use ` + "`--verbose`" + ` to show all linker arguments
  = note: /usr/bin/ld: /tmp/c/ffi/target/release/deps/ffi-d0aa3a5329b4d98d.ffi.81dcabc1c53af598-cgu.0.rcgu.o: in function ` + "`ffi::main':" + `
          ffi.81dcabc1c53af598-cgu.0:(.text._ZN3ffi4main17h3a5bf37618220229E+0xb): undefined reference to ` + "`fast_hash'" + `
          collect2: error: ld returned 1 exit status
          

error: could not compile ` + "`ffi`" + ` (bin "ffi") due to 1 previous error
`,
			count:  1,
			want:   want{"ld", "rust", "", 0, 0, "error", "", "undefined reference to `fast_hash'"},
			detail: "object: ffi.81dcabc1c53af598-cgu.0",
		},
		{
			name: "lld undefined symbol of C code with debug information",
			ws:   "/tmp/c/lldc",
			input: `rust-lld: error: undefined symbol: compute
>>> referenced by main.c:3 (src/main.c:3)
>>>               main.o:(start)
`,
			count: 1,
			want:  want{"ld", "c", "src/main.c", 3, 0, "error", "", "undefined symbol: compute"},
		},
		{
			name: "lld duplicate symbol",
			ws:   "/tmp/c/lldc",
			input: `rust-lld: error: duplicate symbol: dup
>>> defined at a.c:1 (src/a.c:1)
>>>            a.o:(dup)
>>> defined at b.c:1 (src/b.c:1)
>>>            b.o:(.text+0x0)
`,
			count:  1,
			want:   want{"ld", "c", "src/a.c", 1, 0, "error", "", "duplicate symbol: dup"},
			detail: ">>> defined at b.c:1 (src/b.c:1)",
		},
		// rustc --error-format=short, cargo --message-format short.
		{
			name: "cargo --message-format short",
			ws:   "/tmp/parseaudit/cases/rs8",
			input: `    Checking shorty v0.1.0 (/tmp/parseaudit/cases/rs8)
src/cfg.rs:3:34: error[E0425]: cannot find value ` + "`defualt_port`" + ` in this scope: not found in this scope
error: could not compile ` + "`shorty`" + ` (bin "shorty") due to 1 previous error
`,
			count: 1,
			want:  want{"cargo", "rust", "src/cfg.rs", 3, 34, "error", "E0425", "cannot find value `defualt_port` in this scope: not found in this scope"},
		},
		{
			name: "rustc --error-format=short",
			input: `src/cfg.rs:3:18: error[E0425]: cannot find value ` + "`defualt_port`" + ` in this scope: not found in this scope
src/main.rs:4:18: error[E0308]: mismatched types: expected ` + "`i32`, found `&str`" + `
error: aborting due to 2 previous errors
`,
			count: 2,
			want:  want{"rustc", "rust", "src/cfg.rs", 3, 18, "error", "E0425", "cannot find value `defualt_port` in this scope: not found in this scope"},
		},
		{
			name: "cargo clippy --message-format short: the error after warnings",
			input: `    Checking short v0.1.0 (/tmp/c/short)
src/cfg.rs:2:9: warning: unused variable: ` + "`port`: help: if this is intentional, prefix it with an underscore: `_port`" + `
src/main.rs:6:13: error: this comparison involving the minimum or maximum element for this type contains a case that is always true or always false
src/main.rs:5:13: warning: useless use of ` + "`vec!`: help: you can use an array directly: `[1]`" + `
warning: ` + "`short`" + ` (bin "short") generated 4 warnings
error: could not compile ` + "`short`" + ` (bin "short") due to 1 previous error; 4 warnings emitted
`,
			count: 3,
			want:  want{"cargo", "rust", "src/main.rs", 6, 13, "error", "", "this comparison involving the minimum or maximum element for this type contains a case that is always true or always false"},
		},
		// UndefinedBehaviorSanitizer.
		{
			name: "clang ubsan",
			input: `src/math/acc.c:6:13: runtime error: signed integer overflow: 2147483646 + 2 cannot be represented in type 'int'
SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior src/math/acc.c:6:13 in 
-2147483645
`,
			count: 1,
			want:  want{"ubsan", "c", "src/math/acc.c", 6, 13, "error", "undefined-behavior", "signed integer overflow: 2147483646 + 2 cannot be represented in type 'int'"},
		},
		{
			name: "gcc ubsan",
			input: `src/math/acc.c:6:13: runtime error: signed integer overflow: 2147483646 + 2 cannot be represented in type 'int'
-2147483645
`,
			count: 1,
			want:  want{"ubsan", "c", "src/math/acc.c", 6, 13, "error", "undefined-behavior", "signed integer overflow: 2147483646 + 2 cannot be represented in type 'int'"},
		},
		{
			name: "clang ubsan with report_error_type=1",
			input: `src/math/acc.c:6:11: runtime error: signed integer overflow: 2147483646 + 2 cannot be represented in type 'int'
SUMMARY: UndefinedBehaviorSanitizer: signed-integer-overflow src/math/acc.c:6:11 in 
`,
			count: 1,
			want:  want{"ubsan", "c", "src/math/acc.c", 6, 11, "error", "signed-integer-overflow", "signed integer overflow: 2147483646 + 2 cannot be represented in type 'int'"},
		},
		{
			name: "clang ubsan with print_stacktrace=1",
			ws:   "/tmp/c/c1",
			input: `src/math/acc.c:6:11: runtime error: signed integer overflow: 2147483646 + 2 cannot be represented in type 'int'
    #0 0x562d843e9ef5 in acc /tmp/c/c1/src/math/acc.c:6:11
    #1 0x562d843e9d84 in main /tmp/c/c1/src/main.c:7:20
    #2 0x7fb1e46c7249 in __libc_start_call_main csu/../sysdeps/nptl/libc_start_call_main.h:58:16
    #3 0x7fb1e46c7304 in __libc_start_main csu/../csu/libc-start.c:360:3
    #4 0x562d843c1380 in _start (/tmp/c/c1/a.out+0x5380) (BuildId: 093fc4646f833a15a21d566116e1fdf1c35a2411)

SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior src/math/acc.c:6:11 in 
-2147483648
`,
			count: 1,
			want:  want{"ubsan", "c", "src/math/acc.c", 6, 11, "error", "undefined-behavior", "signed integer overflow: 2147483646 + 2 cannot be represented in type 'int'"},
			frames: []Frame{
				{File: "src/math/acc.c", Line: 6, Column: 11, Func: "acc", InWorkspace: true},
				{File: "src/main.c", Line: 7, Column: 20, Func: "main", InWorkspace: true},
				{File: "csu/../sysdeps/nptl/libc_start_call_main.h", Line: 58, Column: 16, Func: "__libc_start_call_main"},
				{File: "csu/../csu/libc-start.c", Line: 360, Column: 3, Func: "__libc_start_main"},
			},
		},
		{
			// gcc's frames have no column: the one of the report stays.
			name: "gcc ubsan with print_stacktrace=1",
			ws:   "/tmp/c/c1",
			input: `src/math/acc.c:6:7: runtime error: signed integer overflow: 2147483646 + 2 cannot be represented in type 'int'
    #0 0x560f74ab62de in acc src/math/acc.c:6
    #1 0x560f74ab61a6 in main src/main.c:7
    #2 0x7f7dfbc45249 in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58
    #3 0x7f7dfbc45304 in __libc_start_main_impl ../csu/libc-start.c:360
    #4 0x560f74ab60b0 in _start (/tmp/c/c1/b.out+0x10b0)

-2147483648
`,
			count: 1,
			want:  want{"ubsan", "c", "src/math/acc.c", 6, 7, "error", "undefined-behavior", "signed integer overflow: 2147483646 + 2 cannot be represented in type 'int'"},
		},
		// assert().
		{
			name:   "glibc assert in C",
			input:  "q: src/queue.c:8: push: Assertion `count < 4 && \"queue full\"' failed.\nAborted\n",
			count:  1,
			want:   want{"assert", "c", "src/queue.c", 8, 0, "error", "assert", `assertion failed: count < 4 && "queue full"`},
			detail: "function: push",
		},
		{
			name:   "glibc assert in a C++ member function",
			input:  "q: src/queue.cpp:5: void Queue::push(int): Assertion `count < 1 && \"queue full\"' failed.\n",
			count:  1,
			want:   want{"assert", "cpp", "src/queue.cpp", 5, 0, "error", "assert", `assertion failed: count < 1 && "queue full"`},
			detail: "function: void Queue::push(int)",
		},
		{
			// The format of musl's assert.c (no musl here).
			name:   "musl assert",
			input:  "Assertion failed: count < 4 && \"queue full\" (src/queue.c: push: 8)\n",
			count:  1,
			want:   want{"assert", "c", "src/queue.c", 8, 0, "error", "assert", `assertion failed: count < 4 && "queue full"`},
			detail: "function: push",
		},
		{
			// The format of macOS's and the BSDs' libc (none here).
			name:   "macOS assert",
			input:  "Assertion failed: (count < 4 && \"queue full\"), function push, file src/queue.c, line 8.\n",
			count:  1,
			want:   want{"assert", "c", "src/queue.c", 8, 0, "error", "assert", `assertion failed: count < 4 && "queue full"`},
			detail: "function: push",
		},
		// "file:line:col: error: msg" from tools that are not gcc.
		{
			name: "mypy",
			input: `pkg/models/user.py:11:32: error: Argument "age" to "User" has incompatible type "str"; expected "int"  [arg-type]
Found 1 error in 1 file (checked 3 source files)
`,
			count: 1,
			want:  want{"mypy", "python", "pkg/models/user.py", 11, 32, "error", "arg-type", `Argument "age" to "User" has incompatible type "str"; expected "int"`},
		},
		{
			name: "mypy note before the error",
			input: `pkg/models/user.py:9:17: note: Revealed type is "builtins.dict[builtins.str, builtins.str]"
pkg/models/user.py:10:14: error: Incompatible types in assignment (expression has type "str", variable has type "int")  [assignment]
pkg/models/user.py:11:39: error: Argument "age" to "User" has incompatible type "str"; expected "int"  [arg-type]
Found 2 errors in 1 file (checked 3 source files)
`,
			count: 3,
			want:  want{"mypy", "python", "pkg/models/user.py", 10, 14, "error", "assignment", `Incompatible types in assignment (expression has type "str", variable has type "int")`},
		},
		{
			name: "mypy --hide-error-codes",
			input: `pkg/models/user.py:10: error: Incompatible types in assignment (expression has type "str", variable has type "int")
Found 1 error in 1 file (checked 3 source files)
`,
			count: 1,
			want:  want{"mypy", "python", "pkg/models/user.py", 10, 0, "error", "", `Incompatible types in assignment (expression has type "str", variable has type "int")`},
		},
		{
			name:  "nasm: a file gcc does not compile",
			input: "src/boot.asm:4: error: invalid combination of opcode and operands\nsrc/boot.asm:5: error: symbol `nowhere' not defined\n",
			count: 2,
			want:  want{"compiler", "", "src/boot.asm", 4, 0, "error", "", "invalid combination of opcode and operands"},
		},
		{
			// A #line directive of a generated parser.
			name: "gcc on a yacc grammar",
			input: `parser.y: In function ‘f’:
parser.y:45:22: error: ‘undefined_tok’ undeclared (first use in this function)
parser.y:45:22: note: each undeclared identifier is reported only once for each function it appears in
`,
			count:  1,
			want:   want{"gcc", "c", "parser.y", 45, 22, "error", "", "‘undefined_tok’ undeclared (first use in this function)"},
			detail: "In function ‘f’",
		},
	}
	runForms(t, cases)
}
