package taint_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/taint"
)

// The gate looks behind the answer format's own escapes: a backslash
// secret escaped by JSON, a key cut across two JSON strings or CSV cells or
// behind XML entities, is refused under deny; an answer that mentions an
// ordinary word of a private line is not.
func TestGate_matchesThroughFormats(t *testing.T) {
	dir := t.TempDir()
	g, err := taint.New(taint.Launch{Policy: taint.Deny}, nil, dir, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(dir, ".env")
	g.Read([]taint.Source{{Path: env, Text: "DB_PASS=C:\\vault\\k3y-9f8e7d6c5b4a\nHOST=localhost\n"}})
	for _, tc := range []struct{ format, answer string }{
		{"json", `{"pass": "C:\\vault\\k3y-9f8e7d6c5b4a"}`},
		{"json", `{"a": "C:\\vau", "b": "lt\\k3y-9f8e7d6c5b4a"}`},
		{"json", `{"a": "\u0043:\\vault\\k3y-9f8e7d6c5b4a"}`},
		{"csv", "a,b\n\"C:\\vault\\k3y\",\"-9f8e7d6c5b4a\"\n"},
		{"xml", `<p k="C:\vault&#92;k3y-9f8e7d6c5b4a"/>`},
		{"toml", `pass = "C:\\vault\\k3y-9f8e7d6c5b4a"`},
	} {
		out := g.Decide(context.Background(), taint.Call{Sink: "submit_output", What: "this answer", Payload: []string{tc.answer}, Format: tc.format}, nil)
		if out.Allowed {
			t.Errorf("%s answer %q went through", tc.format, tc.answer)
		}
	}
	out := g.Decide(context.Background(), taint.Call{Sink: "submit_output", What: "this answer", Payload: []string{`{"host": "localhost"}`}, Format: "json"}, nil)
	if !out.Allowed {
		t.Errorf("an answer naming localhost was refused: %s", out.Refusal)
	}
}

// A hard link to a private file is the private file: same identity,
// whatever its name.
func TestGate_hardLink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hard links are not looked for on Windows")
	}
	dir := t.TempDir()
	env := filepath.Join(dir, "config", ".env")
	os.MkdirAll(filepath.Dir(env), 0o700)
	if err := os.WriteFile(env, []byte("KEY=sk-live-4f9a8b7c6d5e4f3a2b1c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "notes.txt")
	if err := os.Link(env, link); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	g, _ := taint.New(taint.Launch{Policy: taint.Deny}, nil, dir, []string{dir})
	if _, private := g.Private(link); !private {
		t.Errorf("a hard link to config/.env is not private")
	}
	other := filepath.Join(dir, "other.txt")
	os.WriteFile(other, []byte("x"), 0o600)
	os.Link(other, filepath.Join(dir, "other2.txt"))
	if _, private := g.Private(other); private {
		t.Errorf("a hard link between two ordinary files is private")
	}
	if names := g.Read([]taint.Source{{Path: link, Text: "KEY=sk-live-4f9a8b7c6d5e4f3a2b1c\n"}}); !strings.Contains(names, "notes.txt") {
		t.Errorf("reading the link taints nothing: %q", names)
	}
}

// The head kept of arguments cut at their cap is shown masked in a
// tainted run: the key as written is masked where it stands; a key
// behind JSON's escapes, which masking as written cannot see, leaves
// nothing of the head shown. Untainted, the head is shown as it is.
func TestGate_maskCut(t *testing.T) {
	dir := t.TempDir()
	g, err := taint.New(taint.Launch{Policy: taint.Deny}, nil, dir, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	const key = "sk-proj-4fGh82kLmN0pQrStUvWxYz12f3"
	head := []byte(`{"command":"echo ` + key + ` xxxxxxxx`)
	if got := g.MaskCut(head); string(got) != string(head) {
		t.Errorf("untainted: MaskCut = %q, want the head as it is", got)
	}
	g.Read([]taint.Source{{Path: filepath.Join(dir, ".env"), Text: "API_KEY=" + key + "\n"}})
	if got := string(g.MaskCut(head)); strings.Contains(got, "4fGh82kLmN0p") || !strings.HasPrefix(got, `{"command":"echo sk-…f3 xx`) {
		t.Errorf("MaskCut = %q, want the key masked", got)
	}
	escaped := []byte(`{"command":"echo sk-proj\u002d4fGh\u0038\u0032kLmN\u0030pQrS\u0074UvWx\u0059z12f3 xxxx`)
	if got := g.MaskCut(escaped); got != nil {
		t.Errorf("MaskCut = %q, want nothing of a head that hides the key behind escapes", got)
	}
}
