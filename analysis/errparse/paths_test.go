package errparse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelativePathsOfAToolRunElsewhere: the relative paths of a tool run
// in a directory of the workspace (Options.Dir) are placed relative to the
// workspace; one leading out of it is not the workspace's.
func TestRelativePathsOfAToolRunElsewhere(t *testing.T) {
	const goOut = "# example.com/svc\n./main.go:6:14: undefined: undefinedThing\n../lib/x.go:3:1: undefined: y\n../../other/z.go:2:1: undefined: z\n"
	for _, c := range []struct {
		name string
		o    Options
		want []string
	}{
		{"no dir", Options{Workspace: "/r/mono"}, []string{"./main.go", "../lib/x.go", "../../other/z.go"}},
		{"the workspace", Options{Workspace: "/r/mono", Dir: "/r/mono/"}, []string{"./main.go", "../lib/x.go", "../../other/z.go"}},
		{"a subdirectory", Options{Workspace: "/r/mono", Dir: "/r/mono/svc"}, []string{"svc/main.go", "lib/x.go", "/r/other/z.go"}},
		{"outside", Options{Workspace: "/r/mono", Dir: "/elsewhere/svc"}, []string{"/elsewhere/svc/main.go", "/elsewhere/lib/x.go", "/other/z.go"}},
	} {
		errs := Parse(goOut, c.o)
		var got []string
		for _, e := range errs {
			got = append(got, e.File)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: files %q, want %q", c.name, got, c.want)
		}
	}

	// A traceback's relative frames: in the workspace once placed;
	// "<frozen …>" stays a pseudo-file.
	py := "Traceback (most recent call last):\n  File \"app.py\", line 7, in <module>\n    main()\n  File \"<frozen runpy>\", line 1, in f\n  File \"../../x.py\", line 5, in main\n    raise ValueError('boom')\nValueError: boom\n"
	errs := Parse(py, Options{Workspace: "/r/mono", Dir: "/r/mono/svc"})
	if len(errs) != 1 {
		t.Fatalf("traceback: %+v", errs)
	}
	e := errs[0]
	if e.File != "svc/app.py" || e.Line != 7 {
		t.Errorf("traceback located at %s:%d, want svc/app.py:7", e.File, e.Line)
	}
	for _, f := range e.Frames {
		switch f.File {
		case "svc/app.py":
			if !f.InWorkspace {
				t.Errorf("frame %+v is the workspace's", f)
			}
		case "<frozen runpy>", "/r/x.py":
			if f.InWorkspace {
				t.Errorf("frame %+v is not the workspace's", f)
			}
		default:
			t.Errorf("unexpected frame %+v", f)
		}
	}
}

// TestPathsThroughALinkToTheWorkspace: an absolute path that reaches the
// workspace through a symbolic link is the workspace's.
func TestPathsThroughALinkToTheWorkspace(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link3")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	out := "Traceback (most recent call last):\n  File \"" + link + "/app.py\", line 7, in <module>\n    main()\n  File \"" + link + "/pkg/m.py\", line 5, in main\n    raise ValueError('boom')\nValueError: boom\n"
	for _, o := range []Options{{Workspace: ws}, {Workspace: link}, {Workspace: ws, Dir: link}} {
		errs := Parse(out, o)
		if len(errs) != 1 || errs[0].File != "pkg/m.py" || len(errs[0].Frames) != 2 || !errs[0].Frames[1].InWorkspace || errs[0].Frames[1].File != "app.py" {
			t.Errorf("%+v: %+v", o, errs)
		}
	}
	// A relative path printed by a tool run in the link.
	errs := Parse("./main.go:3:1: undefined: x\n", Options{Workspace: ws, Dir: filepath.Join(link, "pkg")})
	if len(errs) != 1 || errs[0].File != "pkg/main.go" {
		t.Errorf("relative to the link: %+v", errs)
	}
}
