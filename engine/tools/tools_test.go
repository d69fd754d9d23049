package tools

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/local"
)

// testWS is a local workspace in a temporary directory that records the
// permission requests it is asked and answers them with allow.
type testWS struct {
	local.Workspace
	mu    sync.Mutex
	asked []engine.PermissionRequest
	allow bool
}

func newWS(t *testing.T) *testWS {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &testWS{allow: true}
	w.Dir = dir
	w.Approve = func(_ context.Context, req engine.PermissionRequest) (bool, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.asked = append(w.asked, req)
		return w.allow, nil
	}
	return w
}

func (w *testWS) write(t *testing.T, rel, content string) string {
	t.Helper()
	p := filepath.Join(w.Dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *testWS) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.Dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// run calls a tool with args (a JSON string or a value to marshal).
func run(t *testing.T, tool runner, ws engine.Workspace, args any) engine.ToolResult {
	t.Helper()
	return runCtx(context.Background(), t, tool, ws, args)
}

func runCtx(ctx context.Context, t *testing.T, tool runner, ws engine.Workspace, args any) engine.ToolResult {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	return tool.Run(ctx, &engine.Call{ID: "t-1", Args: json.RawMessage(raw), Workspace: ws, Progress: func(engine.ToolCallEvent) {}})
}

func wantError(t *testing.T, res engine.ToolResult, parts ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want an error result, got success: %s", res.Output)
	}
	for _, p := range parts {
		if !strings.Contains(res.Output, p) {
			t.Errorf("error %q does not say %q", res.Output, p)
		}
	}
}

func wantOK(t *testing.T, res engine.ToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("want success, got error: %s", res.Output)
	}
}

func TestBuiltin(t *testing.T) {
	want := []string{"read_file", "list_files", "grep", "write_file", "edit_file", "shell", "ask_user"}
	b := Builtin()
	if len(b) != len(want) {
		t.Errorf("Builtin has %d tools, want %d", len(b), len(want))
	}
	for _, name := range want {
		tool, ok := b[name]
		if !ok {
			t.Errorf("Builtin lacks %s", name)
			continue
		}
		spec := tool.Spec()
		if spec.Name != name || strings.TrimSpace(spec.Description) == "" {
			t.Errorf("%s: spec %q with description %q", name, spec.Name, spec.Description)
		}
		var schema map[string]any
		if err := json.Unmarshal(spec.Schema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %s is not an object schema (%v)", name, spec.Schema, err)
		}
		if _, ok := tool.(engine.Titler); !ok {
			t.Errorf("%s is not a Titler", name)
		}
		// Bad input is a result for the model, never a panic.
		for _, args := range []string{`[]`, `"x"`, `{"nope": 1}`, `{`} {
			res := run(t, tool, newWS(t), args)
			wantError(t, res)
		}
	}
}

// The table and the descriptions beside the tools agree: each entry has
// its name.md, each .md is an entry's, and only shell reaches off the
// machine.
func TestTable(t *testing.T) {
	mds, err := fs.Glob(descriptions, "*.md")
	if err != nil {
		t.Fatal(err)
	}
	b := Builtin()
	for _, md := range mds {
		if _, ok := b[strings.TrimSuffix(md, ".md")]; !ok {
			t.Errorf("%s describes no tool of the table", md)
		}
	}
	if len(mds) != len(table)+1 {
		t.Errorf("%d descriptions for %d tools and ask_user", len(mds), len(table))
	}
	for name, tool := range b {
		if name == "ask_user" {
			continue // no entry of the table (ask_user_test.go)
		}
		if e, ok := tool.(engine.Egress); !ok || e.Egress() != (name == "shell") {
			t.Errorf("%s: Egress %v", name, ok && e.Egress())
		}
		if tool.Kind() != kindOf(name) || tool.Kind() == "" {
			t.Errorf("%s: kind %q", name, tool.Kind())
		}
		if title, _ := tool.(engine.Titler).Title(json.RawMessage(`{`)); title != name {
			t.Errorf("%s: a call whose arguments do not decode is titled %q", name, title)
		}
	}
}
