package outputspec

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// capturedPaths are the paths of what a capture kept, and of what it
// skipped with the reason's first words.
func capturedPaths(kept []Artifact, skipped []Skipped) (k []string, s map[string]string) {
	s = map[string]string{}
	for _, a := range kept {
		k = append(k, a.Path)
	}
	for _, x := range skipped {
		s[x.Path] = x.Reason
	}
	return k, s
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Capture keeps the files its globs match (** at any depth, a bare name at
// any depth), typed and hashed; it never enters a pruned folder, never
// follows a link out of the working directory, and skips a file over 10
// MB, saying why.
func TestContract_Capture(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"reports/a.xml":                  "<a/>",
		"reports/deep/er/b.xml":          "<b/>",
		"reports/notes.txt":              "not xml",
		"other/c.xml":                    "<c/>",
		"shots/one.png":                  "\x89PNG\r\n\x1a\n",
		"shots/sub/two.png":              "\x89PNG\r\n\x1a\n",
		"node_modules/pkg/reports/x.xml": "<x/>",
		"reports/.git/d.xml":             "<d/>",
		"reports/dist/e.xml":             "<e/>",
		"reports/target/f.xml":           "<f/>",
	})
	big := filepath.Join(dir, "reports", "big.xml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxCaptureFile + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.xml": "<s/>"})
	links := runtime.GOOS != "windows"
	if links {
		if err := os.Symlink(filepath.Join(outside, "secret.xml"), filepath.Join(dir, "reports", "out.xml")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, "reports", "outdir")); err != nil {
			t.Fatal(err)
		}
	}

	c := mustCompile(t, Spec{Format: "markdown", Capture: []string{"reports/**/*.xml", "*.png"}})
	kept, skipped := c.Capture(dir, nil, nil)
	got, why := capturedPaths(kept, skipped)
	want := []string{"reports/a.xml", "reports/deep/er/b.xml", "shots/one.png", "shots/sub/two.png"}
	if !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
	if r := why["reports/big.xml"]; !strings.Contains(r, "over the 10 MB") {
		t.Errorf("big.xml skipped for %q, want its size", r)
	}
	if links {
		if r := why["reports/out.xml"]; !strings.Contains(r, "outside the working directory") {
			t.Errorf("the link out skipped for %q", r)
		}
	}
	for _, p := range []string{"node_modules/pkg/reports/x.xml", "reports/.git/d.xml", "reports/dist/e.xml", "reports/target/f.xml", "reports/outdir/secret.xml"} {
		if _, ok := why[p]; ok || slices.Contains(got, p) {
			t.Errorf("%s was looked at", p)
		}
	}
	for _, a := range kept {
		if a.Name != a.Path || len(a.SHA256) != 64 || a.Size == 0 || a.MimeType == "" {
			t.Errorf("kept %+v: want it named by its path, hashed, sized and typed", a)
		}
	}
	if kept[0].MimeType != "application/xml" && kept[0].MimeType != "text/xml" {
		t.Errorf("a.xml typed %s", kept[0].MimeType)
	}

	// skip has the last word.
	kept, skipped = c.Capture(dir, nil, func(abs string) string {
		if filepath.Base(abs) == "a.xml" {
			return "private"
		}
		return ""
	})
	got, why = capturedPaths(kept, skipped)
	if slices.Contains(got, "reports/a.xml") || why["reports/a.xml"] != "private" {
		t.Errorf("a skipped file was kept: %q, %q", got, why)
	}
}

// A capture keeps at most 100 files and 50 MB in all; what is past the
// caps is skipped, saying which cap.
func TestContract_Capture_limits(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range MaxCaptureFiles + 3 {
		files[filepath.ToSlash(filepath.Join("many", strings.Repeat("f", 1)+string(rune('a'+i/26))+string(rune('a'+i%26))+".txt"))] = "x"
	}
	writeTree(t, dir, files)
	c := mustCompile(t, Spec{Capture: []string{"many/*.txt"}})
	kept, skipped := c.Capture(dir, nil, nil)
	if len(kept) != MaxCaptureFiles || len(skipped) != 3 || !strings.Contains(skipped[0].Reason, "100 files") {
		t.Errorf("kept %d, skipped %d (%+v); want 100 and 3, for the file cap", len(kept), len(skipped), skipped[:min(len(skipped), 1)])
	}

	// Past the first 100 skips, the record counts them in one line.
	dir = t.TempDir()
	files = map[string]string{}
	for i := range MaxCaptureFiles + maxCaptureSkipped + 5 {
		files[fmt.Sprintf("many/f%03d.txt", i)] = "x"
	}
	writeTree(t, dir, files)
	kept, skipped = c.Capture(dir, nil, nil)
	if len(kept) != MaxCaptureFiles || len(skipped) != maxCaptureSkipped+1 {
		t.Fatalf("kept %d, skipped %d; want 100, and 100 skips named and one line more", len(kept), len(skipped))
	}
	if last := skipped[maxCaptureSkipped]; last.Path != "…" || last.Reason != "5 more files skipped: a capture names the first 100" {
		t.Errorf("the last skip is %+v, want the 5 not named counted", last)
	}

	dir = t.TempDir()
	for i := range 6 { // 6 × 9 MB: the sixth is past 50 MB
		f, err := os.Create(filepath.Join(dir, string(rune('a'+i))+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(9 << 20); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	c = mustCompile(t, Spec{Capture: []string{"*.bin"}})
	kept, skipped = c.Capture(dir, nil, nil)
	if len(kept) != 5 || len(skipped) != 1 || skipped[0].Path != "f.bin" || !strings.Contains(skipped[0].Reason, "50 MB") {
		t.Errorf("kept %d, skipped %+v; want 5, and f.bin past the 50 MB", len(kept), skipped)
	}
}

// A capture glob that is absolute, climbs out, or is malformed is refused
// with the spec.
func TestSpec_Validate_capture(t *testing.T) {
	for _, g := range []string{"/etc/*.conf", "../up/*.xml", "reports/../../x", "[unclosed"} {
		if err := (Spec{Capture: []string{g}}).Validate(); err == nil || !strings.Contains(err.Error(), "capture") {
			t.Errorf("capture %q: %v, want it refused", g, err)
		}
	}
	if err := (Spec{Capture: []string{"reports/**/*.xml", "*.png"}}).Validate(); err != nil {
		t.Error(err)
	}
}

// A capture walks every root of the session: the working directory, then
// each additional one, its globs matched relative to the root that holds
// the file, each file named relative to the working directory. A root
// inside another, or given twice, is walked once; the limits count over
// all roots.
func TestContract_Capture_roots(t *testing.T) {
	base := t.TempDir()
	cwd, extra := filepath.Join(base, "proj"), filepath.Join(base, "data")
	writeTree(t, cwd, map[string]string{"reports/a.xml": "<a/>", "sub/reports/in.xml": "<in/>"})
	writeTree(t, extra, map[string]string{"reports/b.xml": "<b/>", "reports/skip.xml": "<s/>"})
	c := mustCompile(t, Spec{Capture: []string{"reports/*.xml"}})
	kept, skipped := c.Capture(cwd, []string{cwd, extra, filepath.Join(cwd, "sub"), extra}, func(abs string) string {
		if filepath.Base(abs) == "skip.xml" {
			return "private"
		}
		return ""
	})
	got, why := capturedPaths(kept, skipped)
	if want := []string{"reports/a.xml", "../data/reports/b.xml"}; !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
	if why["../data/reports/skip.xml"] != "private" || len(skipped) != 1 {
		t.Errorf("skipped %+v, want ../data/reports/skip.xml", skipped)
	}
	for _, a := range kept {
		if a.Name != a.Path || len(a.SHA256) != 64 {
			t.Errorf("kept %+v", a)
		}
	}
	// sub, a root inside the working directory, is not walked on its own:
	// its reports/in.xml is sub/reports/in.xml, which the glob does not
	// match.
	if slices.Contains(got, "sub/reports/in.xml") {
		t.Errorf("a root inside the working directory was walked again")
	}
}
