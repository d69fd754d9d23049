package tools

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/coda-acp/coda/engine"
)

//go:embed grep.md
var grepDescription string

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

func (Grep) Spec() engine.ToolSpec {
	return engine.ToolSpec{Name: "grep", Description: grepDescription, Schema: grepParams.Schema()}
}

func (Grep) Kind() string { return "search" }

func (Grep) Title(args json.RawMessage) (string, []engine.Location) {
	var a grepArgs
	if grepParams.decode(args, &a) != nil {
		return "grep", nil
	}
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
	ws := call.Workspace
	root, err := resolve(ws, cmp.Or(a.Path, "."))
	if err != nil {
		return engine.Errorf("grep refused: %v", err)
	}
	shown := display(ws, root)
	fi, err := os.Stat(root)
	if err != nil {
		return engine.Errorf("grep: %s", describeErr(shown, err))
	}
	var g *glob
	if a.Glob != "" {
		c, err := compileGlob(a.Glob)
		if err != nil {
			return engine.Errorf("grep: %v", err)
		}
		g = &c
	}

	s := &grepSearch{re: re, ws: ws}
	if fi.IsDir() {
		err = walkFiles(ctx, root, g, func(abs string, d fs.DirEntry) error {
			// Only regular files are searched: opening a FIFO would block.
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				// Follow a symlinked file only to a place inside the workspace.
				if _, err := resolve(ws, abs); err != nil {
					return nil
				}
				if ti, err := os.Stat(abs); err == nil && !ti.Mode().IsRegular() {
					return nil
				}
			case !d.Type().IsRegular():
				return nil
			}
			s.file(abs)
			return nil
		})
	} else if fi.Mode().IsRegular() {
		s.file(root)
	} else {
		return engine.Errorf("grep: %s is not a regular file (%s)", shown, fi.Mode().Type())
	}
	if err != nil {
		return engine.Errorf("grep: %s", describeErr(shown, err))
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
	return engine.ToolResult{Output: b.String(), Title: fmt.Sprintf("Search %s for %q", shown, a.Pattern), Locations: s.locations}
}

type grepSearch struct {
	re *regexp.Regexp
	ws engine.Workspace
	r  *bufio.Reader // reused from file to file

	files, binary, matchedFiles, total int
	shown                              []string
	locations                          []engine.Location
	unreadable                         []string
}

// file searches one file on disk, line by line.
func (s *grepSearch) file(abs string) {
	name := display(s.ws, abs)
	f, err := os.Open(abs)
	if err != nil {
		s.unreadable = append(s.unreadable, describeErr(name, err))
		return
	}
	defer f.Close()
	if s.r == nil {
		s.r = bufio.NewReaderSize(f, 64<<10)
	} else {
		s.r.Reset(f)
	}
	r := s.r
	if head, _ := r.Peek(sniffLen); bytes.IndexByte(head, 0) >= 0 {
		s.binary++
		return
	}
	s.files++
	matched := false
	for line := 1; ; line++ {
		text, err := readLine(r)
		if errors.Is(err, errLineTooLong) {
			s.unreadable = append(s.unreadable, fmt.Sprintf("%s from line %d: a line longer than %d bytes", name, line, grepMaxLine))
			return
		}
		if text == nil && err != nil {
			if !errors.Is(err, io.EOF) {
				s.unreadable = append(s.unreadable, describeErr(name, err))
			}
			return
		}
		if s.re.Match(text) {
			s.total++
			if !matched {
				matched = true
				s.matchedFiles++
				if len(s.locations) < grepMaxLocations {
					s.locations = append(s.locations, engine.Location{Path: abs, Line: line})
				}
			}
			if len(s.shown) < grepMaxMatches {
				s.shown = append(s.shown, fmt.Sprintf("%s:%d: %s", name, line, clip(text, grepMaxLineShown)))
			}
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
	cut := n
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + " […]"
}
