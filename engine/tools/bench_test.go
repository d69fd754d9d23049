package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
)

func benchWS(b *testing.B) *engine.LocalWorkspace {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return &engine.LocalWorkspace{Dir: dir}
}

// BenchmarkReadFile_Window reads one default window deep inside a 2 GiB
// sparse file (after a text head), as a model paging through a huge log does.
func BenchmarkReadFile_Window(b *testing.B) {
	ws := benchWS(b)
	path := filepath.Join(ws.Dir, "huge.log")
	if err := os.WriteFile(path, []byte(strings.Repeat("line of text é\n", 1000)), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Truncate(path, 2<<30); err != nil {
		b.Skip(err)
	}
	args := json.RawMessage(`{"path": "huge.log", "offset": 1500000000}`)
	call := &engine.Call{ID: "b", Args: args, Workspace: ws, Progress: func(engine.ToolCallEvent) {}}
	b.ReportAllocs()
	for b.Loop() {
		if res := (ReadFile{}).Run(context.Background(), call); res.IsError {
			b.Fatal(res.Output)
		}
	}
}

// BenchmarkGrep_Tree searches 200 files of 500 lines each.
func BenchmarkGrep_Tree(b *testing.B) {
	ws := benchWS(b)
	for i := range 200 {
		var sb strings.Builder
		for j := range 500 {
			fmt.Fprintf(&sb, "func f%d_%d() { return nil } // some padding text here\n", i, j)
		}
		p := filepath.Join(ws.Dir, fmt.Sprintf("d%d", i%10), fmt.Sprintf("f%d.go", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	call := &engine.Call{ID: "b", Args: json.RawMessage(`{"pattern": "f1[0-9]_42\\(", "glob": "*.go"}`), Workspace: ws, Progress: func(engine.ToolCallEvent) {}}
	b.ReportAllocs()
	for b.Loop() {
		if res := (Grep{}).Run(context.Background(), call); res.IsError || !strings.Contains(res.Output, "matches") {
			b.Fatal(res.Output)
		}
	}
}
