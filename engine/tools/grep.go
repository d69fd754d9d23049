package tools

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/glob"
	"github.com/coda-acp/coda/internal/rootfs"
	"github.com/coda-acp/coda/internal/textcut"
)

// Caps for grep: matches shown, bytes of a shown line, locations reported,
// and the longest line searched.
const (
	grepMaxMatches   = 100
	grepMaxLineShown = 300
	grepMaxLocations = 20
	grepMaxLine      = 1 << 20
)

// Grep searches files for lines matching a regular expression.
type Grep struct{}

var grepParams = params{
	{Name: "pattern", Type: "string", Required: true, Description: "A regular expression (Go RE2 syntax), matched against each line."},
	{Name: "path", Type: "string", Description: "The file or directory to search, relative to the working directory or absolute (default: the working directory)."},
	{Name: "glob", Type: "string", Description: "Only search files whose paths (relative to path) match this glob, such as `*.go` or `src/**/*.ts`."},
}

type grepArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Glob    string `json:"glob"`
}

// grepTitle is what a call is about, for the editor.
func grepTitle(a grepArgs) (string, []engine.Location) {
	title := fmt.Sprintf("Search %s for %q", cmp.Or(a.Path, "."), a.Pattern)
	if a.Glob != "" {
		title += " in " + a.Glob
	}
	return title, absLocation(a.Path)
}

func (Grep) Run(ctx context.Context, call *engine.Call) engine.ToolResult {
	var a grepArgs
	if err := grepParams.decode(call.Args, &a); err != nil {
		return engine.Errorf("grep: %v", err)
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return engine.Errorf("grep: the pattern is not a valid regular expression: %v", err)
	}
	ws, root, err := target(call, cmp.Or(a.Path, "."))
	if err != nil {
		return engine.Errorf("grep refused: %v", err)
	}
	shown := display(ws, root)
	dk := disk(ws)
	fi, err := dk.Stat(root)
	if err != nil {
		return engine.Errorf("grep: %s", describeErr(shown, err))
	}
	var g *glob.Pattern
	if a.Glob != "" {
		c, err := glob.Compile(a.Glob)
		if err != nil {
			return engine.Errorf("grep: %v", err)
		}
		g = &c
	}

	m := newGrepMatcher(re)
	var found []*grepFile
	switch {
	case fi.IsDir():
		found, err = m.tree(ctx, ws, root, g)
	case fi.Mode().IsRegular():
		f := &grepFile{}
		m.open(f, dk, root, &grepWorker{})
		found = []*grepFile{f}
	default:
		return engine.Errorf("grep: %s is not a regular file (%s)", shown, fi.Mode().Type())
	}
	if err != nil {
		return engine.Errorf("grep: %s", describeErr(shown, err))
	}

	s := grepSummary(ws, root, found)
	if located(ws, root) == nil {
		s.locations = nil // the run's record is coda's, not the project's
	}
	var b strings.Builder
	if s.total == 0 {
		fmt.Fprintf(&b, "No matches for %q under %s (%d files searched", a.Pattern, shown, s.files)
	} else {
		fmt.Fprintf(&b, "%d matches in %d files under %s (%d files searched", s.total, s.matchedFiles, shown, s.files)
	}
	if s.binary > 0 {
		fmt.Fprintf(&b, ", %d binary skipped", s.binary)
	}
	b.WriteString(")\n")
	for _, m := range s.shown {
		b.WriteString(m)
		b.WriteByte('\n')
	}
	if left := s.total - len(s.shown); left > 0 {
		fmt.Fprintf(&b, "[%d more matches not shown; narrow the pattern, the path or the glob]\n", left)
	}
	for _, p := range s.unreadable {
		fmt.Fprintf(&b, "[not searched: %s]\n", p)
	}
	return engine.ToolResult{Output: b.String(), Title: fmt.Sprintf("Search %s for %q", shown, a.Pattern), Locations: s.locations, Sources: s.sources}
}

// A grepFile is what searching one file found. Its path is known by rel
// (under the search's root) and turned into a name only when there is
// something to show.
type grepFile struct {
	rel              string // slash-separated; "" for the root itself
	binary, searched bool
	matches          int
	first            int        // the line of the first match
	lines            []grepLine // the first grepMaxMatches matches
	err              error      // why it could not be read (wholly)
	longLine         int        // the line too long to search, if any
}

type grepLine struct {
	n    int
	text string // clipped for display
}

func (f *grepFile) add(line int, text []byte) {
	if f.matches++; f.matches == 1 {
		f.first = line
	}
	if len(f.lines) < grepMaxMatches {
		f.lines = append(f.lines, grepLine{line, clip(text, grepMaxLineShown)})
	}
}

// grepTotals is a search's result, summed over its files in order.
type grepTotals struct {
	files, binary, matchedFiles, total int
	shown                              []string
	locations                          []engine.Location
	unreadable                         []string
	sources                            []taint.Source // each file's lines shown, for the taint gate
}

// grepSummary adds up the files in the order they were found, keeping the
// first matches and locations: the output does not depend on which file was
// searched first.
func grepSummary(ws engine.Workspace, root string, found []*grepFile) grepTotals {
	var s grepTotals
	for _, f := range found {
		if f.binary {
			s.binary++
		}
		if f.searched {
			s.files++
		}
		if f.matches == 0 && f.err == nil && f.longLine == 0 {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(f.rel))
		name := display(ws, abs)
		if f.matches > 0 {
			s.total += f.matches
			s.matchedFiles++
			if len(s.locations) < grepMaxLocations {
				s.locations = append(s.locations, engine.Location{Path: abs, Line: f.first})
			}
			var text strings.Builder
			for _, l := range f.lines {
				if len(s.shown) == grepMaxMatches {
					break
				}
				s.shown = append(s.shown, fmt.Sprintf("%s:%d: %s", name, l.n, l.text))
				text.WriteString(l.text)
				text.WriteByte('\n')
			}
			if text.Len() > 0 {
				s.sources = append(s.sources, taint.Source{Path: abs, Text: text.String()})
			}
		}
		switch {
		case f.longLine > 0:
			s.unreadable = append(s.unreadable, fmt.Sprintf("%s from line %d: a line longer than %d bytes", name, f.longLine, grepMaxLine))
		case f.err != nil:
			s.unreadable = append(s.unreadable, describeErr(name, f.err))
		}
	}
	return s
}

// A grepMatcher finds a pattern's matching lines in files.
type grepMatcher struct {
	re *regexp.Regexp
	// pre matches somewhere in a file's text wherever re matches one of
	// its lines, and first where the first such line is (see
	// newGrepMatcher); nil when no such pattern could be made.
	pre *regexp.Regexp
	// ends says pre holds an end-of-line assertion, which a line's "\r"
	// (dropped before re sees the line) would hide from it.
	ends bool
}

// newGrepMatcher makes re's matcher. Its prefilter is re with every
// assertion of the text's start or end turned into one of a line's, so that
// run over a whole file it matches wherever re matches one of its lines, and
// starts no later than the first such line: the file is scanned by one
// search rather than line by line, and only the lines it leads to are tried.
// Matches it finds across lines (a class that takes "\n") are tried and
// passed over.
func newGrepMatcher(re *regexp.Regexp) *grepMatcher {
	m := &grepMatcher{re: re}
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return m
	}
	var walk func(*syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpBeginText:
			r.Op = syntax.OpBeginLine
		case syntax.OpEndText:
			r.Op = syntax.OpEndLine
			m.ends = true
		case syntax.OpEndLine:
			m.ends = true
		}
		for _, s := range r.Sub {
			walk(s)
		}
	}
	walk(t)
	if pre, err := regexp.Compile(t.String()); err == nil {
		m.pre = pre
	}
	return m
}

// grepWorkers bounds the files searched at once.
var grepWorkers = min(runtime.GOMAXPROCS(0), 8)

// A grepJob is a file to search: by name in its open directory, or (a
// symlink, dir nil) by its path through the workspace's roots.
type grepJob struct {
	f    *grepFile
	dir  *walkDir
	name string // in dir, or the path
}

// tree searches every regular file under root matching g, walking in order
// while a bounded pool of workers searches the files; the results keep the
// walk's order.
func (m *grepMatcher) tree(ctx context.Context, ws engine.Workspace, root string, g *glob.Pattern) ([]*grepFile, error) {
	dk := disk(ws)
	jobs := make(chan grepJob, 4*grepWorkers)
	var wg sync.WaitGroup
	for range grepWorkers {
		wg.Go(func() {
			var w grepWorker
			for j := range jobs {
				if j.dir == nil {
					m.open(j.f, dk, j.name, &w)
					continue
				}
				n, more, err := readIn(j.dir, j.name, w.buffer())
				j.dir.release()
				m.search(j.f, &w, n, more, err)
			}
		})
	}
	var found []*grepFile
	err := walkFiles(ctx, dk, root, g, func(e walkEntry) error {
		// Only regular files are searched: opening a FIFO would block.
		j := grepJob{f: &grepFile{rel: e.rel}}
		switch {
		case e.typ&fs.ModeSymlink != 0:
			// Follow a symlinked file only to a place inside the workspace.
			abs := filepath.Join(root, filepath.FromSlash(e.rel))
			if _, err := resolve(ws, abs); err != nil {
				return nil
			}
			if ti, err := dk.Stat(abs); err == nil && !ti.Mode().IsRegular() {
				return nil
			}
			j.name = abs
		case !e.typ.IsRegular():
			return nil
		default:
			e.dir.hold()
			j.dir, j.name = e.dir, e.name
		}
		found = append(found, j.f)
		jobs <- j
		return nil
	})
	close(jobs)
	wg.Wait()
	return found, err
}

// wholeMax is the largest file searched whole, in memory. It is below the
// longest line a file searched as a stream may have (grepMaxLine and the
// reader's buffer), so that no line of a file searched whole is too long.
const wholeMax = 1 << 20

// A grepWorker holds one searcher's buffers, reused from file to file.
type grepWorker struct {
	buf []byte
	br  *bufio.Reader
}

func (w *grepWorker) buffer() []byte {
	if w.buf == nil {
		w.buf = make([]byte, wholeMax+1)
	}
	return w.buf
}

// open searches the file at path (through the workspace's roots) into f.
func (m *grepMatcher) open(f *grepFile, dk rootfs.Disk, path string, w *grepWorker) {
	file, err := dk.Open(path)
	if err != nil {
		f.err = err
		return
	}
	n, more, err := readOpen(file, w.buffer())
	m.search(f, w, n, more, err)
}

// search searches a file into f, given what reading it gave (see readOpen):
// whole when it fits the buffer, else as a stream of what was read and the
// rest.
func (m *grepMatcher) search(f *grepFile, w *grepWorker, n int, more io.ReadCloser, err error) {
	switch {
	case err != nil:
		f.err = err
	case more == nil:
		m.whole(f, w.buf[:n])
	default:
		defer more.Close()
		m.stream(f, io.MultiReader(bytes.NewReader(w.buf[:n]), more), w)
	}
}

// whole searches a file held whole in buf. It finds what stream would, line
// for line, but asks the prefilter where the next line worth trying is
// instead of trying every line.
func (m *grepMatcher) whole(f *grepFile, buf []byte) {
	if bytes.IndexByte(buf[:min(len(buf), sniffLen)], 0) >= 0 {
		f.binary = true
		return
	}
	f.searched = true
	pre := m.pre
	if m.ends && bytes.IndexByte(buf, '\r') >= 0 {
		pre = nil
	}
	line, pos := 1, 0
	for pos < len(buf) {
		if pre != nil {
			loc := pre.FindIndex(buf[pos:])
			if loc == nil {
				return
			}
			start := pos + bytes.LastIndexByte(buf[pos:pos+loc[0]], '\n') + 1
			line += bytes.Count(buf[pos:start], []byte("\n"))
			pos = start
		}
		end := bytes.IndexByte(buf[pos:], '\n')
		last := end < 0
		if last {
			end = len(buf)
		} else {
			end += pos
		}
		text := bytes.TrimSuffix(buf[pos:end], []byte("\r"))
		if last && len(text) == 0 {
			return // what follows the last line ending is not a line
		}
		if m.re.Match(text) {
			f.add(line, text)
		}
		pos, line = end+1, line+1
	}
}

// stream searches a file line by line as it is read.
func (m *grepMatcher) stream(f *grepFile, r io.Reader, w *grepWorker) {
	if w.br == nil {
		w.br = bufio.NewReaderSize(r, 64<<10)
	} else {
		w.br.Reset(r)
	}
	br := w.br
	defer br.Reset(nil)
	if head, _ := br.Peek(sniffLen); bytes.IndexByte(head, 0) >= 0 {
		f.binary = true
		return
	}
	f.searched = true
	for line := 1; ; line++ {
		text, err := readLine(br)
		if errors.Is(err, errLineTooLong) {
			f.longLine = line
			return
		}
		if text == nil && err != nil {
			if !errors.Is(err, io.EOF) {
				f.err = err
			}
			return
		}
		if m.re.Match(text) {
			f.add(line, text)
		}
		if err != nil {
			return
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its line ending; at the end of the
// file it returns the last unterminated line (if any) with io.EOF.
func readLine(r *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			if len(long) > grepMaxLine {
				return nil, errLineTooLong
			}
			continue
		}
		if long != nil {
			chunk = append(long, chunk...)
		}
		chunk = bytes.TrimSuffix(bytes.TrimSuffix(chunk, []byte("\n")), []byte("\r"))
		if err != nil && len(chunk) == 0 && long == nil {
			return nil, err
		}
		return chunk, err
	}
}

// clip shortens a line for display at a character boundary.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(textcut.At(b, n)) + " […]"
}
