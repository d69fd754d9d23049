package tools

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/glob"
)

// Patterns and texts where a whole-file search could part from a
// line-by-line one: anchors, line endings, classes that take "\n".
var (
	grepPatterns = []string{
		`TODO`, `^func`, `\)$`, `^$`, `^`, `$`, `x*`, `\Afoo`, `foo\z`, `(?-m)^foo$`, `(?m)^foo$`,
		`(?s)a.b`, `a\sb`, `[^x]+`, `a\nb`, `\bfoo\b`, `\Bo`, `(?i)todo`, `foo|^bar$`, `\r`, `\r$`, `o\r?$`,
		`é`, `.`, `^\s*$`, `(^|x)foo($|y)`,
	}
	grepTexts = []string{
		"", "\n", "\r", "\r\n", "foo", "foo\n", "foo\r\n", "bar\r\nfoo\r\n", "a\nb\n", "a\r\nb", "\n\nfoo\n\n",
		"x foo y\nfoo\nbar\n", "func a() {\n}\nfunc b() {}\n", "TODO\x00binary", "line\r\r\n", "é\n\xff\xfe\n",
		"  \n\t\nfoo bar baz\nfoo\r", "a b\na\tb\n", strings.Repeat("TODO x\n", 150),
	}
)

// whole (the prefilter, then only the lines it leads to) finds exactly what
// stream (every line, as grep always searched) does.
func TestGrepMatcher_wholeIsStream(t *testing.T) {
	for _, p := range grepPatterns {
		m := newGrepMatcher(regexp.MustCompile(p))
		if m.pre == nil {
			t.Errorf("%q: no prefilter", p)
		}
		for _, text := range grepTexts {
			checkWholeIsStream(t, m, text)
		}
	}
}

func checkWholeIsStream(t *testing.T, m *grepMatcher, text string) {
	t.Helper()
	var whole, stream grepFile
	m.whole(&whole, []byte(text))
	m.stream(&stream, strings.NewReader(text), &grepWorker{})
	if diff := gocmp.Diff(stream, whole, gocmp.AllowUnexported(grepFile{}, grepLine{})); diff != "" {
		t.Fatalf("pattern %q, text %q (-line by line +whole):\n%s", m.re, text, diff)
	}
}

func FuzzGrepMatcher_whole(f *testing.F) {
	for _, p := range grepPatterns {
		f.Add(p, grepTexts[rand.N(len(grepTexts))])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		re, err := regexp.Compile(pattern)
		if err != nil || len(text) > 4<<10 {
			return
		}
		checkWholeIsStream(t, newGrepMatcher(re), text)
	})
}

// grepReference is grep as it was before it searched files in parallel and
// whole: filepath.WalkDir, every file opened by path and read line by line.
// The output of Grep must stay exactly this.
func grepReference(ws engine.Workspace, pattern, root string, g *glob.Pattern) string {
	re := regexp.MustCompile(pattern)
	var files, binary, matchedFiles, total int
	var shownLines, unreadable []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if g != nil {
			if rel, _ := filepath.Rel(root, p); !g.Match(filepath.ToSlash(rel)) {
				return nil
			}
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			if _, err := resolve(ws, p); err != nil {
				return nil
			}
			if ti, err := os.Stat(p); err == nil && !ti.Mode().IsRegular() {
				return nil
			}
		case !d.Type().IsRegular():
			return nil
		}
		name := display(ws, p)
		f, err := os.Open(p)
		if err != nil {
			unreadable = append(unreadable, describeErr(name, err))
			return nil
		}
		defer f.Close()
		r := bufio.NewReaderSize(f, 64<<10)
		if head, _ := r.Peek(sniffLen); bytes.IndexByte(head, 0) >= 0 {
			binary++
			return nil
		}
		files++
		matched := false
		for line := 1; ; line++ {
			text, err := readLine(r)
			if errors.Is(err, errLineTooLong) {
				unreadable = append(unreadable, fmt.Sprintf("%s from line %d: a line longer than %d bytes", name, line, grepMaxLine))
				return nil
			}
			if text == nil && err != nil {
				return nil
			}
			if re.Match(text) {
				total++
				if !matched {
					matched = true
					matchedFiles++
				}
				if len(shownLines) < grepMaxMatches {
					shownLines = append(shownLines, fmt.Sprintf("%s:%d: %s", name, line, clip(text, grepMaxLineShown)))
				}
			}
			if err != nil {
				return nil
			}
		}
	})
	shown := display(ws, root)
	var b strings.Builder
	if total == 0 {
		fmt.Fprintf(&b, "No matches for %q under %s (%d files searched", pattern, shown, files)
	} else {
		fmt.Fprintf(&b, "%d matches in %d files under %s (%d files searched", total, matchedFiles, shown, files)
	}
	if binary > 0 {
		fmt.Fprintf(&b, ", %d binary skipped", binary)
	}
	b.WriteString(")\n")
	for _, m := range shownLines {
		b.WriteString(m + "\n")
	}
	if left := total - len(shownLines); left > 0 {
		fmt.Fprintf(&b, "[%d more matches not shown; narrow the pattern, the path or the glob]\n", left)
	}
	for _, p := range unreadable {
		fmt.Fprintf(&b, "[not searched: %s]\n", p)
	}
	return b.String()
}

// Searching in parallel changes nothing of grep's output: the same
// matches, caps, counts and order as a walk that searches one file after
// another, whichever worker finishes first.
func TestGrep_sameAsOneFileAtATime(t *testing.T) {
	defer func(n int) { grepWorkers = n }(grepWorkers)
	grepWorkers = 8
	ws := newWS(t)
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"TODO", "func", "return", "nil", "foo", "bar", "é", "x", "\t", " ", "(", ")"}
	for i := range 300 {
		var b strings.Builder
		for range rng.IntN(40) {
			for range rng.IntN(8) {
				b.WriteString(words[rng.IntN(len(words))])
			}
			b.WriteString([]string{"\n", "\r\n", "\n"}[rng.IntN(3)])
		}
		name := fmt.Sprintf("d%d/s%d/f%03d.%s", i%7, i%3, i, []string{"go", "txt", "md"}[i%3])
		ws.write(t, name, b.String())
	}
	ws.write(t, "bin/blob.dat", "TODO\x00\x01")
	ws.write(t, "big/huge.txt", strings.Repeat("TODO "+strings.Repeat("y", 200)+"\n", 6000)) // searched as a stream
	ws.write(t, "big/longline.txt", "TODO\n"+strings.Repeat("z", grepMaxLine+100<<10)+"\nTODO\n")
	ws.write(t, ".git/x", "TODO\n")
	ws.write(t, "d1/.git/y", "TODO\n")
	if err := os.Symlink("../d0/s0/f000.go", filepath.Join(ws.Dir, "d1", "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(ws.Dir, "d1", "outside.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(ws.Dir, "d2", "dangling.go")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ pattern, glob, path string }{
		{`TODO`, "", ""}, {`^func`, "*.go", ""}, {`\)$`, "", "d1"}, {`nothing-like-this`, "", ""},
		{`(?i)todo.*nil`, "**/s1/*", ""}, {`^$`, "*.md", ""}, {`TODO`, "", "big"}, {`x`, "", "d0/s0/f000.go"},
	} {
		root, err := resolve(ws, cmp.Or(tt.path, "."))
		if err != nil {
			t.Fatal(err)
		}
		var g *glob.Pattern
		if tt.glob != "" {
			c, err := glob.Compile(tt.glob)
			if err != nil {
				t.Fatal(err)
			}
			g = &c
		}
		want := grepReference(ws, tt.pattern, root, g)
		args := fmt.Sprintf(`{"pattern": %q, "glob": %q, "path": %q}`, tt.pattern, tt.glob, tt.path)
		for range 3 {
			res := run(t, Grep{}, ws, args)
			wantOK(t, res)
			if diff := gocmp.Diff(want, res.Output); diff != "" {
				t.Fatalf("%s (-one file at a time +now):\n%s", args, diff)
			}
		}
	}
}
