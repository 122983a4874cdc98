package tools_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/internal/tooltest"
	"github.com/kodustech/kodyls/agents/tools"
)

func TestLocalDocsGo(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := call(t, tools.LocalDocs(), map[string]string{"topic": "fmt.Printf"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Printf") {
		t.Errorf("go doc fmt.Printf:\n%s", out)
	}
	if len(out) > tools.MaxOutput+200 {
		t.Errorf("output not capped: %d bytes", len(out))
	}
}

func TestLocalDocsRust(t *testing.T) {
	tooltest.Need(t, "rustc")
	out, err := call(t, tools.LocalDocs(), map[string]string{"topic": "E0382"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "moved") {
		t.Errorf("rustc --explain E0382:\n%s", out)
	}
}

func TestLocalDocsMissingToolchain(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := call(t, tools.LocalDocs(), map[string]string{"topic": "E0382"})
	if err == nil || !strings.Contains(err.Error(), "rustc is not installed here") {
		t.Errorf("got %v", err)
	}
}

func TestLocalDocsRefusesBadTopics(t *testing.T) {
	for _, topic := range []string{"", "-h", "--explain", "fmt.Printf; rm -rf /", "$(id)", "/etc/passwd", "../secret", "a b", ".hidden"} {
		out, err := call(t, tools.LocalDocs(), map[string]string{"topic": topic})
		if err == nil {
			t.Errorf("topic %q accepted: %s", topic, out)
		}
	}
}
