package outputspec

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A minimal PNG: signature and the start of an IHDR chunk, enough to sniff.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")

// artifactRoot lays out a working directory and a file outside it.
func artifactRoot(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "work")
	outside = filepath.Join(base, "secret.txt")
	files := map[string][]byte{
		"work/out/report.md":  []byte("<!-- generated -->\n# Report\n\nAll good.\n"),
		"work/media/clip.png": pngBytes,
		"work/data.json":      []byte(`{"a": [1, 2]}`),
		"work/notes.yaml":     []byte("a: 1\n"),
		"work/notes.txt":      []byte("notes\n"),
		"work/blob":           {0, 1, 2, 3, 0xff},
		"secret.txt":          []byte("outside"),
	}
	for name, body := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"work/link-out":   outside,
		"work/link-in.md": filepath.Join(root, "out/report.md"),
		"work/dangling":   filepath.Join(root, "gone"),
		"work/dir-out":    base,
	} {
		if err := os.Symlink(target, filepath.Join(base, filepath.FromSlash(link))); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	return root, outside
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestContract_Check_artifacts(t *testing.T) {
	root, outside := artifactRoot(t)
	report, _ := os.ReadFile(filepath.Join(root, "out/report.md"))
	tests := []struct {
		name      string
		declared  []ArtifactDecl
		artifacts string // JSON array
		root      string // default: root
		want      []Artifact
		refused   []string // substrings of the feedback, in order
	}{
		{
			name:      "a path, typed by extension where content says html, hashed and sized",
			artifacts: `["out/report.md"]`,
			want:      []Artifact{{Name: "report", Path: "out/report.md", MimeType: "text/markdown", Size: int64(len(report)), SHA256: sha(report)}},
		},
		{
			name:      "sniffed by content: png, json; yaml by extension; bytes",
			artifacts: `["media/clip.png", {"name": "d", "path": "./data.json"}, "notes.yaml", "blob"]`,
			want: []Artifact{
				{Name: "clip", Path: "media/clip.png", MimeType: "image/png", Size: int64(len(pngBytes)), SHA256: sha(pngBytes)},
				{Name: "d", Path: "data.json", MimeType: "application/json", Size: 13, SHA256: sha([]byte(`{"a": [1, 2]}`))},
				{Name: "notes", Path: "notes.yaml", MimeType: "application/yaml", Size: 5, SHA256: sha([]byte("a: 1\n"))},
				{Name: "blob", Path: "blob", MimeType: "application/octet-stream", Size: 5, SHA256: sha([]byte{0, 1, 2, 3, 0xff})},
			},
		},
		{
			name:      "an absolute path inside the root is recorded relative",
			artifacts: `["` + filepath.ToSlash(filepath.Join(root, "data.json")) + `"]`,
			want:      []Artifact{{Name: "data", Path: "data.json", MimeType: "application/json", Size: 13, SHA256: sha([]byte(`{"a": [1, 2]}`))}},
		},
		{
			name:      "a symlink inside the root is followed",
			artifacts: `["link-in.md"]`,
			want:      []Artifact{{Name: "link-in", Path: "out/report.md", MimeType: "text/markdown", Size: int64(len(report)), SHA256: sha(report)}},
		},
		{
			name:      "a given type wins in the record",
			artifacts: `[{"name": "clip", "path": "media/clip.png", "type": "Video/MP4; codecs=avc1"}]`,
			want:      []Artifact{{Name: "clip", Path: "media/clip.png", MimeType: "video/mp4", Size: int64(len(pngBytes)), SHA256: sha(pngBytes)}},
		},
		{
			name:      "a declared type is checked against what the file is, not the type given",
			declared:  []ArtifactDecl{{Name: "clip", Type: "video/*", Required: true}},
			artifacts: `[{"name": "clip", "path": "media/clip.png", "type": "video/mp4"}]`,
			refused:   []string{`artifact "clip" (media/clip.png) is image/png by its content (not video/mp4 as given), but "clip" is declared video/*`},
		},
		{
			name:      "text given as a video is still text",
			declared:  []ArtifactDecl{{Name: "clip", Type: "video/*"}},
			artifacts: `[{"name": "clip", "path": "notes.txt", "type": "video/mp4"}]`,
			refused:   []string{`artifact "clip" (notes.txt) is text/plain by its content (not video/mp4 as given), but "clip" is declared video/*`},
		},
		{
			name:     "a given type refines what sniffing cannot tell: unknown bytes, plain text",
			declared: []ArtifactDecl{{Name: "blob", Type: "application/x-acme"}, {Name: "notes", Type: "text/x-notes"}},
			artifacts: `[{"name": "blob", "path": "blob", "type": "application/x-acme"},` +
				` {"name": "notes", "path": "notes.txt", "type": "text/x-notes"}]`,
			want: []Artifact{
				{Name: "blob", Path: "blob", MimeType: "application/x-acme", Size: 5, SHA256: sha([]byte{0, 1, 2, 3, 0xff})},
				{Name: "notes", Path: "notes.txt", MimeType: "text/x-notes", Size: 6, SHA256: sha([]byte("notes\n"))},
			},
		},
		{
			name:      "declared types match exactly, by alias and by wildcard",
			declared:  []ArtifactDecl{{Name: "report", Type: "text/x-markdown", Required: true}, {Name: "clip", Type: "image/*"}, {Name: "notes", Type: "text/yaml"}},
			artifacts: `["out/report.md", "media/clip.png", "notes.yaml"]`,
			want: []Artifact{
				{Name: "report", Path: "out/report.md", MimeType: "text/markdown", Size: int64(len(report)), SHA256: sha(report)},
				{Name: "clip", Path: "media/clip.png", MimeType: "image/png", Size: int64(len(pngBytes)), SHA256: sha(pngBytes)},
				{Name: "notes", Path: "notes.yaml", MimeType: "application/yaml", Size: 5, SHA256: sha([]byte("a: 1\n"))},
			},
		},
		{
			name:      "no artifacts, none required",
			declared:  []ArtifactDecl{{Name: "report"}},
			artifacts: `[]`,
			want:      []Artifact{},
		},
		{
			name:      "escape via ..",
			artifacts: `["out/../../secret.txt"]`,
			refused:   []string{"The submission was refused for its artifacts:\n- ", `artifact "out/../../secret.txt" is outside the working directory`},
		},
		{
			name:      "escape via an absolute path",
			artifacts: `["` + filepath.ToSlash(outside) + `"]`,
			refused:   []string{`is outside the working directory`},
		},
		{
			name:      "escape via a symlink",
			artifacts: `["link-out"]`,
			refused:   []string{`artifact "link-out" resolves outside the working directory through a symbolic link`},
		},
		{
			name:      "escape via a symlinked directory",
			artifacts: `["dir-out/secret.txt"]`,
			refused:   []string{`artifact "dir-out/secret.txt" resolves outside the working directory`},
		},
		{
			name:      "missing file and dangling link, both listed; the good one does not save it",
			artifacts: `["data.json", "out/nope.md", "dangling"]`,
			refused:   []string{`artifact "out/nope.md" does not exist`, `artifact "dangling" does not exist (or is a broken link)`},
		},
		{
			name:      "a directory",
			artifacts: `["out"]`,
			refused:   []string{`artifact "out" is a directory, not a file`},
		},
		{
			name:      "required missing",
			declared:  []ArtifactDecl{{Name: "report", Type: "text/markdown", Required: true}},
			artifacts: `["data.json"]`,
			refused:   []string{`the required artifact "report" is missing: add {"name": "report", "path": "..."} to artifacts`},
		},
		{
			name:      "required missing with no artifacts at all",
			declared:  []ArtifactDecl{{Name: "report", Required: true}},
			artifacts: `null`,
			refused:   []string{`the required artifact "report" is missing`},
		},
		{
			name:      "type mismatch names both types",
			declared:  []ArtifactDecl{{Name: "clip", Type: "video/*"}},
			artifacts: `["media/clip.png"]`,
			refused:   []string{`artifact "clip" (media/clip.png) is image/png, but "clip" is declared video/*`},
		},
		{
			name:      "two artifacts with one name",
			artifacts: `["out/report.md", {"name": "report", "path": "data.json"}]`,
			refused:   []string{`artifacts "out/report.md" and "data.json" are both named "report"`},
		},
		{
			name:      "a given type that is not a MIME type",
			artifacts: `[{"path": "data.json", "type": "json"}]`,
			refused:   []string{`artifact "data.json" has type "json", which is not a MIME type`},
		},
		{
			name:      "no working directory",
			artifacts: `["data.json"]`,
			root:      "-",
			refused:   []string{"no file can be handed back: this session has no working directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCompile(t, Spec{Format: "text", Artifacts: tt.declared})
			r := root
			if tt.root == "-" {
				r = ""
			}
			args := json.RawMessage(`{"content": "see the files", "artifacts": ` + tt.artifacts + `}`)
			v := c.Check(context.Background(), Submission{Args: args, Root: r})
			if tt.refused != nil {
				expect(t, v, false, tt.refused...)
				return
			}
			expect(t, v, true)
			if diff := cmp.Diff(tt.want, v.Artifacts); diff != "" {
				t.Errorf("artifacts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	for _, tt := range []struct {
		head []byte
		ext  string
		want string
	}{
		{[]byte("# Title\n"), ".md", "text/markdown"},
		{[]byte("<!-- c -->\n<p>x</p>"), ".md", "text/markdown"},
		{[]byte("<!-- c -->\n<p>x</p>"), ".html", "text/html"},
		{[]byte("a = 1\n"), ".toml", "application/toml"},
		{[]byte("a,b\n1,2\n"), ".csv", "text/csv"},
		{[]byte("plain words"), "", "text/plain"},
		{[]byte("plain words"), ".unknownext", "text/plain"},
		{pngBytes, ".txt", "image/png"},
		{[]byte(`{"a":1}`), ".txt", "application/json"},
		{[]byte{}, ".png", "image/png"},
	} {
		if got := sniff(tt.head, tt.ext); got != tt.want {
			t.Errorf("sniff(%q, %q) = %q, want %q", tt.head, tt.ext, got, tt.want)
		}
	}
}

func TestTypeMatches(t *testing.T) {
	for _, tt := range []struct {
		pattern, actual string
		want            bool
	}{
		{"video/*", "video/mp4", true},
		{"video/*", "image/png", false},
		{"*/*", "image/png", true},
		{"text/markdown", "text/markdown; charset=utf-8", true},
		{"TEXT/Markdown", "text/markdown", true},
		{"text/x-markdown", "text/markdown", true},
		{"application/xml", "text/xml", true},
		{"application/json", "application/yaml", false},
		{"application/zip", "application/x-zip-compressed", true},
		{"video/*", "videos/mp4", false},
	} {
		if got := typeMatches(tt.pattern, tt.actual); got != tt.want {
			t.Errorf("typeMatches(%q, %q) = %v, want %v", tt.pattern, tt.actual, got, tt.want)
		}
	}
}

func TestWithin(t *testing.T) {
	root := filepath.FromSlash("/w/root")
	for _, tt := range []struct {
		p    string
		want bool
	}{
		{"/w/root", true}, {"/w/root/a", true}, {"/w/root/..a", true}, {"/w/rootx/a", false}, {"/w", false}, {"/w/root/../x", false},
	} {
		if got := within(root, filepath.Clean(filepath.FromSlash(tt.p))); got != tt.want {
			t.Errorf("within(%q, %q) = %v, want %v", root, tt.p, got, tt.want)
		}
	}
}
