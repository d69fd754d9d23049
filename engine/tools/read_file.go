package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"unicode/utf8"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/textcut"
)

// Window sizes for read_file, in bytes.
const (
	readDefaultLimit = 32 << 10
	readMaxLimit     = 256 << 10
)

// ReadFile reads a window of a text file. Concatenating the windows that
// next_offset leads through gives the file back byte for byte: window edges
// fall on UTF-8 character boundaries.
type ReadFile struct{}

var readFileParams = params{
	{Name: "path", Type: "string", Required: true, Description: "The file, relative to the working directory or absolute."},
	{Name: "offset", Type: "integer", Min: bound(0), Description: "Byte offset to start at (default 0); pass the previous result's next_offset to read on."},
	{Name: "limit", Type: "integer", Min: bound(1), Max: bound(readMaxLimit), Description: fmt.Sprintf("Most bytes to return (default %d, at most %d).", readDefaultLimit, readMaxLimit)},
}

type readFileArgs struct {
	Path   string `json:"path"`
	Offset *int64 `json:"offset"`
	Limit  *int64 `json:"limit"`
}

// readFileTitle is what a call is about, for the editor.
func readFileTitle(a readFileArgs) (string, []engine.Location) {
	title := "Read " + a.Path
	if a.Offset != nil && *a.Offset > 0 {
		title += fmt.Sprintf(" (from byte %d)", *a.Offset)
	}
	return title, absLocation(a.Path)
}

// readResult is what the model is sent, as JSON.
type readResult struct {
	Path       string `json:"path"`
	Size       int64  `json:"size"`
	Offset     int64  `json:"offset"`
	NextOffset *int64 `json:"next_offset"` // null at the end of the file
	// InvalidUTF8 says bytes that are not UTF-8 were replaced (U+FFFD) in
	// content, so this window does not give the file back byte for byte.
	InvalidUTF8 bool   `json:"invalid_utf8,omitempty"`
	Content     string `json:"content"`
}

func (ReadFile) Run(ctx context.Context, call *engine.Call) engine.ToolResult {
	var a readFileArgs
	if err := readFileParams.decode(call.Args, &a); err != nil {
		return engine.Errorf("read_file: %v", err)
	}
	ws, path, err := target(call, a.Path)
	if err != nil {
		return engine.Errorf("read_file refused: %v", err)
	}
	shown := display(ws, path)
	locs := located(ws, path)
	fail := func(format string, args ...any) engine.ToolResult {
		r := engine.Errorf(format, args...)
		r.Locations = locs
		return r
	}

	_, refusal, err := sniffDisk(disk(ws), path, shown)
	if err != nil {
		return fail("read_file: %s", describeErr(shown, err))
	}
	if refusal != "" {
		return fail("read_file refused: %s", refusal)
	}
	f, err := ws.OpenFile(ctx, path)
	if err != nil {
		return fail("read_file: %s", describeErr(shown, err))
	}
	defer f.Close()

	offset := int64(0)
	if a.Offset != nil {
		offset = *a.Offset
	}
	limit := int64(readDefaultLimit)
	if a.Limit != nil {
		limit = *a.Limit
	}
	size := f.Size()
	if offset > size {
		return fail("read_file: offset %d is past the end of %s (%d bytes)", offset, shown, size)
	}
	if offset == 0 && size > 0 {
		head := make([]byte, min(size, sniffLen))
		if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
			return fail("read_file: %s", describeErr(shown, err))
		}
		if refusal := sniffText(head, int64(len(head)) == size, shown); refusal != "" {
			return fail("read_file refused: %s", refusal)
		}
	}
	start, data, err := window(f, offset, limit)
	if err != nil {
		return fail("read_file: %s", describeErr(shown, err))
	}

	res := readResult{Path: shown, Size: size, Offset: start, Content: string(data)}
	if end := start + int64(len(data)); end < size {
		res.NextOffset = &end
	}
	res.InvalidUTF8 = !utf8.Valid(data)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return fail("read_file: %v", err)
	}
	title := "Read " + shown
	if start > 0 || res.NextOffset != nil {
		title += fmt.Sprintf(" (bytes %d–%d of %d)", start, start+int64(len(data)), size)
	}
	return engine.ToolResult{
		Output:    out.String(),
		Title:     title,
		Locations: locs,
		// The editor is shown what was read, not the JSON around it.
		Content: []engine.ToolContent{{Text: string(data)}},
		Sources: []taint.Source{{Path: path, Text: res.Content}},
	}
}

// window reads about limit bytes of f from offset, with both edges moved to
// UTF-8 character boundaries: the start back to the beginning of the
// character it falls in, the end back before a character the window would
// split (or forward past it, when the window holds nothing else). It returns
// the window's actual start.
func window(f engine.File, offset, limit int64) (int64, []byte, error) {
	size := f.Size()
	start := offset
	if start > 0 && start < size {
		var back [utf8.UTFMax]byte
		from := max(0, start-(utf8.UTFMax-1))
		n, err := f.ReadAt(back[:start-from+1], from)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, err
		}
		b := back[:n]
		// b ends with the byte at start; step back over continuation bytes
		// to the leading byte of a character that spans start.
		if i := len(b) - 1; i >= 0 && !utf8.RuneStart(b[i]) {
			for j := i - 1; j >= 0; j-- {
				if utf8.RuneStart(b[j]) {
					if runeLen(b[j]) > i-j {
						start = from + int64(j)
					}
					break
				}
			}
		}
	}
	if start >= size {
		return start, nil, nil
	}
	buf := make([]byte, min(limit+utf8.UTFMax-1, size-start))
	n, err := f.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, nil, err
	}
	buf = buf[:n]
	if int64(len(buf)) <= limit {
		return start, buf, nil // the rest of the file
	}
	data := textcut.TrimPartialRune(buf[:limit])
	if len(data) == 0 {
		// The window holds only part of one character: take all of it.
		data = buf[:min(runeLen(buf[0]), len(buf))]
	}
	return start, data, nil
}

// runeLen is the length a UTF-8 sequence claims by its leading byte; 1 for a
// byte that cannot lead one.
func runeLen(b byte) int {
	switch {
	case b >= 0xF0 && b <= 0xF4:
		return 4
	case b >= 0xE0 && b < 0xF0:
		return 3
	case b >= 0xC2 && b < 0xE0:
		return 2
	}
	return 1
}

// absLocation is the location of a path the model gave, when it is absolute
// (ACP locations are absolute; relative ones are known only once resolved).
func absLocation(p string) []engine.Location {
	if filepath.IsAbs(p) {
		return []engine.Location{{Path: filepath.Clean(p)}}
	}
	return nil
}
