package tools

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coda-acp/coda/engine"
)

// editorWS reads files the way the ACP workspace does when the editor
// offers fs/read_text_file: the whole text, then windows of it in memory.
type editorWS struct {
	*testWS
	text map[string]string // path → the editor's (unsaved) text
}

type stringFile struct{ *strings.Reader }

func (stringFile) Close() error { return nil }

func (w editorWS) OpenFile(_ context.Context, path string) (engine.File, error) {
	if s, ok := w.text[path]; ok {
		return stringFile{strings.NewReader(s)}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return stringFile{strings.NewReader(string(b))}, nil
}

func decodeRead(t *testing.T, res engine.ToolResult) readResult {
	t.Helper()
	wantOK(t, res)
	var r readResult
	if err := json.Unmarshal([]byte(res.Output), &r); err != nil {
		t.Fatalf("read_file output is not JSON: %v\n%s", err, res.Output)
	}
	return r
}

// readAll follows next_offset from 0 and concatenates the windows.
func readAll(t *testing.T, ws engine.Workspace, path string, limit int) string {
	t.Helper()
	var b strings.Builder
	offset := int64(0)
	for i := 0; ; i++ {
		if i > 1<<16 {
			t.Fatal("read_file never reached the end")
		}
		r := decodeRead(t, run(t, ReadFile{}, ws, map[string]any{"path": path, "offset": offset, "limit": limit}))
		if r.Offset != offset {
			t.Fatalf("window asked at %d starts at %d", offset, r.Offset)
		}
		if !utf8.ValidString(r.Content) {
			t.Fatalf("window at %d splits a character: %q", offset, r.Content)
		}
		b.WriteString(r.Content)
		if r.NextOffset == nil {
			if got := r.Offset + int64(len(r.Content)); got != r.Size {
				t.Fatalf("last window ends at %d, size %d", got, r.Size)
			}
			return b.String()
		}
		if *r.NextOffset <= offset {
			t.Fatalf("next_offset %d does not move past %d", *r.NextOffset, offset)
		}
		offset = *r.NextOffset
	}
}

// randomText mixes 1- to 4-byte characters and line breaks.
func randomText(rng *rand.Rand, n int) string {
	alphabet := []rune("ab \n\tzé€😀ü中𝄞\r")
	var b strings.Builder
	for range n {
		b.WriteRune(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

func TestReadFile_WindowsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ws := newWS(t)
	for i := range 200 {
		text := randomText(rng, rng.IntN(300))
		path := ws.write(t, "f.txt", text)
		limit := 1 + rng.IntN(40)
		if got := readAll(t, ws, path, limit); got != text {
			t.Fatalf("case %d (limit %d): windows give %q, file is %q", i, limit, got, text)
		}
		// The same through the editor's text.
		ed := editorWS{testWS: ws}
		if got := readAll(t, ed, "f.txt", limit); got != text {
			t.Fatalf("case %d (limit %d) through the editor: windows give %q, file is %q", i, limit, got, text)
		}
	}
}

func FuzzReadFile_Windows(f *testing.F) {
	f.Add("héllo wörld €😀", 3)
	f.Add("", 1)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if !utf8.ValidString(text) || strings.ContainsRune(text, 0) || limit < 1 || limit > readMaxLimit {
			t.Skip()
		}
		ws := newWS(t)
		ws.write(t, "f.txt", text)
		if got := readAll(t, ws, "f.txt", limit); got != text {
			t.Fatalf("limit %d: windows give %q, file is %q", limit, got, text)
		}
	})
}

func TestReadFile_OffsetInsideACharacter(t *testing.T) {
	ws := newWS(t)
	ws.write(t, "f.txt", "a😀b")
	// Byte 2 is inside the 4-byte emoji that starts at 1.
	r := decodeRead(t, run(t, ReadFile{}, ws, map[string]any{"path": "f.txt", "offset": 2}))
	if r.Offset != 1 || r.Content != "😀b" {
		t.Errorf("offset 2: window at %d %q, want at 1 %q", r.Offset, r.Content, "😀b")
	}
	// A limit smaller than a character still makes progress.
	r = decodeRead(t, run(t, ReadFile{}, ws, map[string]any{"path": "f.txt", "offset": 1, "limit": 1}))
	if r.Content != "😀" || r.NextOffset == nil || *r.NextOffset != 5 {
		t.Errorf("limit 1 at 1: %q next %v", r.Content, r.NextOffset)
	}
}

func TestReadFile_EditorBufferWins(t *testing.T) {
	ws := newWS(t)
	path := ws.write(t, "f.txt", "on disk")
	ed := editorWS{testWS: ws, text: map[string]string{path: "unsaved edit"}}
	r := decodeRead(t, run(t, ReadFile{}, ed, map[string]any{"path": "f.txt"}))
	if r.Content != "unsaved edit" || r.Size != int64(len("unsaved edit")) {
		t.Errorf("read %q (size %d), want the editor's text", r.Content, r.Size)
	}
}

func TestReadFile_Result(t *testing.T) {
	ws := newWS(t)
	path := ws.write(t, "dir/f.txt", "hello\n")
	res := run(t, ReadFile{}, ws, `{"path": "dir/f.txt"}`)
	r := decodeRead(t, res)
	if r.Path != "dir/f.txt" || r.Size != 6 || r.Offset != 0 || r.NextOffset != nil || r.Content != "hello\n" {
		t.Errorf("result = %+v", r)
	}
	if !strings.Contains(res.Output, `"next_offset":null`) {
		t.Errorf("the output does not carry next_offset null: %s", res.Output)
	}
	if len(res.Locations) != 1 || res.Locations[0].Path != path {
		t.Errorf("locations = %v, want %s", res.Locations, path)
	}
	title, locs := Builtin()["read_file"].(engine.Titler).Title(json.RawMessage(`{"path": "` + path + `"}`))
	if title != "Read "+path || len(locs) != 1 || locs[0].Path != path {
		t.Errorf("Title = %q, %v", title, locs)
	}
}

func TestReadFile_Refusals(t *testing.T) {
	ws := newWS(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	ws.write(t, "dir/x.txt", "x")
	ws.write(t, "image.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	ws.write(t, "latin1.txt", "caf\xe9 cr\xe8me\n")
	ws.write(t, "small.txt", "abc")

	tests := []struct {
		name string
		args string
		want []string
	}{
		{"dot-dot", `{"path": "../secret"}`, []string{"refused", "outside the workspace"}},
		{"absolute outside", `{"path": "` + filepath.Join(outside, "secret") + `"}`, []string{"outside the workspace"}},
		{"symlink out", `{"path": "link"}`, []string{"link resolves to", "outside the workspace"}},
		{"directory", `{"path": "dir"}`, []string{"dir is a directory", "list_files"}},
		{"binary", `{"path": "image.png"}`, []string{"image.png is a binary file (image/png)"}},
		{"not utf-8", `{"path": "latin1.txt"}`, []string{"not UTF-8 text"}},
		{"missing", `{"path": "nope.txt"}`, []string{"nope.txt does not exist"}},
		{"offset past end", `{"path": "small.txt", "offset": 4}`, []string{"offset 4 is past the end of small.txt (3 bytes)"}},
		{"no path", `{}`, []string{"path is required"}},
		{"offset as string", `{"path": "small.txt", "offset": "3"}`, []string{"offset must be an integer"}},
		{"negative offset", `{"path": "small.txt", "offset": -1}`, []string{"offset must be at least 0"}},
		{"limit too big", `{"path": "small.txt", "limit": 100000000}`, []string{"limit must be at most"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, run(t, ReadFile{}, ws, tt.args), tt.want...)
		})
	}
	// The end of a file is an empty window, not an error.
	r := decodeRead(t, run(t, ReadFile{}, ws, `{"path": "small.txt", "offset": 3}`))
	if r.Content != "" || r.NextOffset != nil {
		t.Errorf("offset at the end: %+v", r)
	}
}

func TestReadFile_HugeFileIsWindowed(t *testing.T) {
	ws := newWS(t)
	path := ws.write(t, "huge.log", strings.Repeat("line of text\n", 1000))
	const size = 2 << 30 // 2 GiB, sparse
	if err := os.Truncate(path, size); err != nil {
		t.Skipf("cannot make a sparse file: %v", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := decodeRead(t, run(t, ReadFile{}, ws, `{"path": "huge.log"}`))
	if r.Size != size || r.NextOffset == nil || *r.NextOffset != readDefaultLimit || !strings.HasPrefix(r.Content, "line of text\n") {
		t.Errorf("first window: size %d next %v content %.20q", r.Size, r.NextOffset, r.Content)
	}
	r = decodeRead(t, run(t, ReadFile{}, ws, map[string]any{"path": "huge.log", "offset": size - 10}))
	if r.NextOffset != nil || len(r.Content) != 10 {
		t.Errorf("last window: next %v, %d bytes", r.NextOffset, len(r.Content))
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("reading two windows of a 2 GiB file allocated %d bytes", alloc)
	}
}
