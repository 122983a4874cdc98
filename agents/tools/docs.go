package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/kodustech/kodyls/agents/agent"
)

// DocsArgs are the arguments of local_docs.
type DocsArgs struct {
	Topic string `json:"topic" jsonschema:"a Rust error code such as E0382, or a Go package or symbol such as fmt.Printf or net/http.Client"`
}

// docsTimeout bounds one documentation lookup: go doc may have to load a
// large module graph, and a stuck toolchain must not stall the agent.
const docsTimeout = 10 * time.Second

var (
	rustCodeRE = regexp.MustCompile(`^E[0-9]{4}$`)
	// goTopicRE is deliberately narrow: the topic becomes a command-line
	// argument, so it must not start with "-" (option injection) and must
	// hold nothing a shell or the go command could read as syntax.
	goTopicRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./-]*$`)
)

// LocalDocs returns the local_docs tool: the documentation of the toolchains
// installed here, so the agent can check a Rust error code or a Go API
// without network access and without guessing from memory.
func LocalDocs() agent.Tool {
	return newTool("local_docs",
		"Look up local documentation: a Rust error code (e.g. E0382, via rustc --explain) or a Go package or symbol (e.g. fmt.Printf, net/http.Client, via go doc). Truncated at 8 KiB.",
		func(ctx context.Context, a DocsArgs) (string, error) {
			topic := strings.TrimSpace(a.Topic)
			if topic == "" {
				return "", errors.New("local_docs needs a topic, e.g. E0382 or fmt.Printf")
			}
			if rustCodeRE.MatchString(topic) {
				return runDocs(ctx, "rustc", "--explain", topic)
			}
			if !goTopicRE.MatchString(topic) {
				return "", fmt.Errorf(`topic %q is not a Rust error code (E0382) or a Go symbol (fmt.Printf): only letters, digits and _ . / - are allowed, and it must not start with "-" or "."`, topic)
			}
			// ".." would let go doc read packages outside the workspace.
			if strings.Contains(topic, "..") {
				return "", fmt.Errorf(`topic %q may not contain ".."`, topic)
			}
			return runDocs(ctx, "go", "doc", topic)
		})
}

// runDocs runs a documentation command and returns its output, capped at
// MaxOutput. Failures come back as errors the model can act on.
func runDocs(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, docsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	// A lookup must never download a toolchain or a module: it would be
	// slow, and a network side effect the user did not ask for.
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return "", fmt.Errorf("%s is not installed here, so %s cannot be looked up: %w", name, args[len(args)-1], err)
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s %s timed out after %s: %w", name, strings.Join(args, " "), docsTimeout, ctx.Err())
	case err != nil:
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return "", fmt.Errorf("%s %s failed: %s: %w", name, strings.Join(args, " "), capText(msg), err)
	}
	return capText(out.String()), nil
}

// capText caps s at MaxOutput the way the other tools do, line by line.
func capText(s string) string {
	var c capped
	for l := range strings.Lines(s) {
		c.line(strings.TrimSuffix(l, "\n"))
	}
	return c.String()
}
