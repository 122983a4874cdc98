package errparse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParse measures parsing throughput over every real fixture output
// (all tools) concatenated.
func BenchmarkParse(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("testdata", "outputs", "*.txt"))
	var sb strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		sb.WriteString(strings.ReplaceAll(string(data), "$WORKSPACE", "/work/ws"))
		sb.WriteString("\n")
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(Parse(text, Options{Workspace: "/work/ws"})) == 0 {
			b.Fatal("nothing parsed")
		}
	}
}
