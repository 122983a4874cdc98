// Command kodyls is the kodyls language server and its command-line tools:
// AI code review and build-error explanation for any LSP editor.
//
//	kodyls [serve]   speak LSP on stdin/stdout (the default)
//	kodyls doctor    show how configuration was resolved and what is wrong
//	kodyls version   print the version
//
// Logs go to stderr or --log-file, never to stdout, which is the protocol
// channel.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// the module version recorded by the Go toolchain is used.
var version = ""

func currentVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

const usage = `kodyls: AI code review and build-error explanation in your editor

Usage:
  kodyls [global flags] [command] [command flags]

Commands:
  serve     speak the Language Server Protocol on stdin/stdout (default)
  review    review the working tree's changes (text, json or sarif)
  explain   explain the primary error of compiler or test output (FILE or stdin)
  fix       fix the primary error of compiler output, verified by the build
  history   search, summarise or forget remembered build errors
  rules     list, check or test the workspace's Kody Rules
  eval      measure explanations (rca), fixes (fix) or reviews (review) on canonical cases
  doctor    print how configuration was resolved; exit 1 if something is wrong
  version   print the version

Run kodyls help COMMAND (or kodyls COMMAND -h) for a command's usage and flags.

Global flags (--log-file and --log-level may also follow the command):
  --log-file PATH    append logs to PATH instead of stderr
  --log-level LEVEL  debug, info, warn or error (default info)
  --verbose          kodyls review: print the log's warnings on stderr too (by
                     default it prints its own progress and problem lines only)
  --stdio            accepted and ignored: stdin/stdout is the only transport

Interrupted by SIGINT (Ctrl-C) or SIGTERM, a command says so on stderr and
exits 130 or 143; a second signal ends kodyls at once.

Environment:
  KODYLS_LLM_BASE_URL, KODYLS_LLM_API_KEY, KODYLS_LLM_MODEL   the OpenAI-compatible endpoint
  (OPENAI_BASE_URL and OPENAI_API_KEY are used when the KODYLS_ ones are unset;
  OPENAI_API_KEY is sent only to OPENAI_BASE_URL's endpoint or https://api.openai.com)
  KODYLS_SETTINGS    any settings as JSON, e.g. '{"llm":{"timeoutMs":20000}}'
  KODYLS_DATA_DIR    where the history and index live, an absolute path
                     (default $XDG_DATA_HOME/kodyls)
`

const versionUsage = `Usage: kodyls version

Prints the version.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	global := flag.NewFlagSet("kodyls", flag.ContinueOnError)
	global.SetOutput(stderr)
	global.Usage = func() {} // printed below: stdout for -h, stderr after an error
	logFile := global.String("log-file", "", "append logs to this file instead of stderr")
	logLevel := global.String("log-level", "info", "debug, info, warn or error")
	verbose := global.Bool("verbose", false, "print the log on stderr in one-shot commands too")
	// LSP clients commonly start a server with --stdio; it is the only
	// transport, so `kodyls --stdio` serves as `kodyls serve --stdio` does.
	_ = global.Bool("stdio", true, "accepted and ignored: stdin/stdout is the only transport")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "\n%s", usage)
		return 2
	}
	rest := global.Args()
	cmd := "serve"
	if len(rest) > 0 {
		cmd, rest = rest[0], rest[1:]
	}
	// --log-file and --log-level may also follow the command, as its own
	// flags do: every command accepts them.
	rest, lateLevel, err := lateGlobalFlags(rest, logFile, logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls %s: %v\n", cmd, err)
		return 2
	}
	logger, level, closeLog, err := newLogger(*logFile, *logLevel, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kodyls: %v\n", err)
		return 2
	}
	defer closeLog()
	cli := cliLog{level: level, keep: *verbose || *logFile != "" || lateLevel}
	global.Visit(func(f *flag.Flag) { cli.keep = cli.keep || f.Name == "log-level" })

	ctx, stop := notifyInterrupt()
	defer stop()
	code := runCommand(ctx, cmd, rest, stdin, stdout, stderr, logger, cli)
	if sig := interruptedBy(ctx); sig != nil {
		// The command stopped early: whatever it printed is incomplete,
		// and its status must not read as a result.
		fmt.Fprintf(stderr, "kodyls %s: interrupted\n", commandName(cmd, rest))
		return signalStatus(sig)
	}
	return code
}

// runCommand runs one command and returns its exit status.
func runCommand(ctx context.Context, cmd string, rest []string, stdin io.Reader, stdout, stderr io.Writer, logger *slog.Logger, cli cliLog) int {
	switch cmd {
	case "help", "-h", "--help":
		if len(rest) == 0 || isHelp(rest[0]) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		if !commands[rest[0]] {
			fmt.Fprintf(stderr, "kodyls help: unknown command %q\n\n%s", rest[0], usage)
			return 2
		}
		// A command's help is what its -h prints, on stdout.
		cmd, rest = rest[0], []string{"-h"}
	}
	switch cmd {
	case "serve":
		return serve(ctx, rest, stdin, stdout, logger, stderr)
	case "doctor":
		return doctor(ctx, rest, stdout, stderr)
	case "review":
		return reviewCmd(ctx, rest, stdout, stderr, logger, cli)
	case "explain":
		return explainCmd(ctx, rest, stdin, stdout, stderr, logger)
	case "fix":
		return fixCmd(ctx, rest, stdin, stdout, stderr, logger)
	case "history":
		return historyCmd(ctx, rest, stdout, stderr)
	case "rules":
		return rulesCmd(ctx, rest, stdout, stderr, logger)
	case "eval":
		return evalCmd(ctx, rest, stdout, stderr, logger)
	case "version":
		fs := flag.NewFlagSet("version", flag.ContinueOnError)
		pos, code, ok := parseCommand(fs, rest, versionUsage, stdout, stderr)
		if !ok {
			return code
		}
		if len(pos) > 0 {
			fmt.Fprintf(stderr, "kodyls version: unexpected argument %q\n", pos[0])
			return 2
		}
		fmt.Fprintf(stdout, "kodyls %s\n", currentVersion())
		return 0
	default:
		fmt.Fprintf(stderr, "kodyls: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

// commands are the names `kodyls help` knows.
var commands = map[string]bool{
	"serve": true, "review": true, "explain": true, "fix": true, "history": true,
	"rules": true, "eval": true, "doctor": true, "version": true, "help": true,
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

// newLogger returns the process's logger and the level it logs at, which
// a command may raise (see cliLog).
func newLogger(path, level string, stderr io.Writer) (*slog.Logger, *slog.LevelVar, func(), error) {
	lv := new(slog.LevelVar)
	if err := lv.UnmarshalText([]byte(strings.ToLower(level))); err != nil {
		return nil, nil, nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	out, closeFn := stderr, func() {}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		out, closeFn = f, func() { _ = f.Close() }
	}
	// Libraries that log through the standard logger (bleve does) must not
	// write anywhere but our log destination either.
	log.SetOutput(out)
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: lv})), lv, closeFn, nil
}

// cliLog lets a one-shot command that tells the user about every problem
// in its own words (kodyls review: its progress and endpoint lines, the
// report's notes) keep the log's warnings off the terminal, where they
// would repeat those words in key=value form. The log stays as configured
// when the user asked for it: --verbose, --log-level or --log-file.
type cliLog struct {
	level *slog.LevelVar
	keep  bool
}

// quiet logs errors only, unless the user asked for the log (verbose is
// the command's own --verbose).
func (c cliLog) quiet(verbose bool) {
	if c.level == nil || c.keep || verbose || c.level.Level() >= slog.LevelError {
		return
	}
	c.level.Set(slog.LevelError)
}

// lateGlobalFlags takes --log-file and --log-level out of a command's
// arguments, where they may stand as well as before the command, and sets
// them; levelSet reports a --log-level among them. What follows "--" is
// left alone.
func lateGlobalFlags(args []string, logFile, logLevel *string) (rest []string, levelSet bool, err error) {
	rest = make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), levelSet, nil
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if name == a {
			rest = append(rest, a)
			continue
		}
		name, value, hasValue := strings.Cut(name, "=")
		if name != "log-file" && name != "log-level" {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return nil, false, fmt.Errorf("flag needs an argument: -%s", name)
			}
			i++
			value = args[i]
		}
		if name == "log-file" {
			*logFile = value
		} else {
			*logLevel, levelSet = value, true
		}
	}
	return rest, levelSet, nil
}

// commandName is the command as messages name it, with its subcommand:
// "eval rca", "rules test".
func commandName(cmd string, args []string) string {
	switch cmd {
	case "history", "rules", "eval":
		if len(args) > 0 && args[0] != "" && !strings.HasPrefix(args[0], "-") {
			return cmd + " " + args[0]
		}
	}
	return cmd
}
