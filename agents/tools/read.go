package tools

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kodustech/kodyls/agents/agent"
	"github.com/kodustech/kodyls/agents/redact"
)

// ReadFileArgs are the arguments of read_file.
type ReadFileArgs struct {
	Path   string `json:"path" jsonschema:"file path relative to the workspace root"`
	Line   int    `json:"line,omitempty" jsonschema:"1-based line to read around; omit to read the whole file"`
	Radius int    `json:"radius,omitempty" jsonschema:"lines to show before and after line (default 20, at most 200)"`
}

const (
	defaultRadius = 20
	maxRadius     = 200
)

// ReadFile returns the read_file tool: the lines around a 1-based line,
// numbered so the model can cite them, or the whole file up to MaxOutput.
func (w Workspace) ReadFile() agent.Tool {
	return newTool("read_file",
		"Read a workspace file: the lines around a 1-based line (numbered), or the whole file when line is omitted (truncated at 8 KiB).",
		func(_ context.Context, a ReadFileArgs) (string, error) {
			if a.Path == "" {
				return "", fmt.Errorf("read_file needs a path")
			}
			return w.read(a)
		})
}

// Contents returns the whole file at rel (relative to Root), for code
// the agents put into a prompt themselves: the same checks as read_file
// (inside the workspace, not on the privacy list as named or where its
// links lead, not a binary file), without read_file's cut.
func (w Workspace) Contents(rel string) ([]byte, error) {
	clean, err := w.clean(rel)
	if err != nil {
		return nil, err
	}
	if text, ok := w.Overlay[clean]; ok {
		if binary([]byte(text)) {
			return nil, fmt.Errorf("%s is a binary file", clean)
		}
		return []byte(text), nil
	}
	root, err := w.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := w.openFile(root, clean)
	if err != nil {
		return nil, rootErr(clean, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", clean, err)
	}
	if binary(data) {
		return nil, fmt.Errorf("%s is a binary file", clean)
	}
	return data, nil
}

func (w Workspace) read(a ReadFileArgs) (string, error) {
	rel, err := w.clean(a.Path)
	if err != nil {
		return "", err
	}
	var f io.ReadSeeker
	var size int64
	if text, ok := w.Overlay[rel]; ok {
		f, size = strings.NewReader(text), int64(len(text))
	} else {
		root, err := w.open()
		if err != nil {
			return "", err
		}
		defer root.Close()
		file, err := w.openFile(root, rel)
		if err != nil {
			return "", rootErr(rel, err)
		}
		defer file.Close()
		st, err := file.Stat()
		if err != nil {
			return "", fmt.Errorf("stat %s: %w", rel, err)
		}
		if st.IsDir() {
			return "", fmt.Errorf("%s is a directory; use list_files", rel)
		}
		f, size = file, st.Size()
	}
	head := make([]byte, 8000)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	if binary(head[:n]) {
		return "", fmt.Errorf("%s is a binary file", rel)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}

	if a.Line <= 0 {
		// Read past the cut, so that a secret across it is whole when
		// the text is redacted before the cut.
		data, err := io.ReadAll(io.LimitReader(f, 2*MaxOutput))
		if err != nil {
			return "", fmt.Errorf("read %s: %w", rel, err)
		}
		// Redacted, a file over the limit may fit whole: only a file
		// with something left out gets the note.
		head, cut := redact.Cut(string(data), MaxOutput)
		if cut || size > int64(len(data)) {
			return head + fmt.Sprintf("\n[output truncated at %d KiB of %d bytes; pass line and radius to read further]\n", MaxOutput>>10, size), nil
		}
		return head, nil
	}

	radius := a.Radius
	if radius <= 0 {
		radius = defaultRadius
	}
	radius = min(radius, maxRadius)
	from, to := max(1, a.Line-radius), a.Line+radius
	var out capped
	last := 0
	err = eachLine(f, func(n int, line string) bool {
		last = n
		if n >= from {
			out.line(fmt.Sprintf("%6d\t%s", n, line))
		}
		return n < to
	})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	if last < a.Line {
		return "", fmt.Errorf("%s has %d lines; line %d does not exist", rel, last, a.Line)
	}
	return out.String(), nil
}
