package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/local"
)

func benchWS(b *testing.B) *local.Workspace {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return &local.Workspace{Dir: dir}
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

// grepTree is a 50,000-file source tree (about 50 MB in 1,000 directories
// two deep, a few files in 100 holding "needle"), built once in the system's
// temporary directory and kept there for later runs and for
// scripts/grepbench.sh, which searches it with grep -rn as well.
func grepTree(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "coda-grep-50k-v1")
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	rng := rand.New(rand.NewPCG(50, 0))
	words := []string{"func", "return", "err", "nil", "if", "for", "range", "ctx", "string", "int", "package", "import", "the", "value", "{", "}", "(", ")", ":=", "//"}
	var sb strings.Builder
	for i := range 50_000 {
		sb.Reset()
		for range 10 + rng.IntN(30) {
			for range 3 + rng.IntN(8) {
				sb.WriteString(words[rng.IntN(len(words))])
				sb.WriteByte(' ')
			}
			if rng.IntN(2500) == 0 {
				sb.WriteString("needle")
			}
			sb.WriteByte('\n')
		}
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%40), fmt.Sprintf("sub%02d", i/40%25), fmt.Sprintf("file%05d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkGrep_50k is grep over grepTree, as a model calls it.
func BenchmarkGrep_50k(b *testing.B) {
	ws := &local.Workspace{Dir: grepTree(b)}
	call := &engine.Call{ID: "b", Args: json.RawMessage(`{"pattern": "needle"}`), Workspace: ws, Progress: func(engine.ToolCallEvent) {}}
	b.ReportAllocs()
	for b.Loop() {
		if res := (Grep{}).Run(context.Background(), call); res.IsError || !strings.Contains(res.Output, "matches in") {
			b.Fatal(res.Output)
		}
	}
}

// BenchmarkGrep_50k_grepRN is GNU grep -rn over the same tree: the
// reference BenchmarkGrep_50k is measured against.
func BenchmarkGrep_50k_grepRN(b *testing.B) {
	dir := grepTree(b)
	if _, err := exec.LookPath("grep"); err != nil {
		b.Skip("no grep")
	}
	for b.Loop() {
		out, err := exec.Command("grep", "-rn", "needle", dir).Output()
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}
