package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// parseCommand parses a command's flags, which may come before, between or
// after its positional arguments ("review . --fail-on high"), and returns
// the positional ones. Help asked for (-h, --help) prints usage and the
// flags on stdout and ends the command with status 0; a bad flag prints
// the flag package's message, then usage and the flags, on stderr and ends
// it with status 2. ok is false when the command must return code.
func parseCommand(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, on the stream that fits
	pos, err := parseHistoryArgs(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(fs, usage, stdout)
		return nil, 0, false
	case err != nil:
		printUsage(fs, usage, stderr)
		return nil, 2, false
	}
	return pos, 0, true
}

// printUsage prints a command's usage text and its flags to w.
func printUsage(fs *flag.FlagSet, usage string, w io.Writer) {
	fmt.Fprint(w, usage)
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// firstArg is the first positional argument, or "".
func firstArg(pos []string) string {
	if len(pos) == 0 {
		return ""
	}
	return pos[0]
}
