// Package tools holds the tools a stage can offer the model: reading,
// listing and searching the user's files, writing and editing them, and
// running shell commands. Each tool is one file with its description for the
// model beside it (name.md), and one entry in the table of table.go, which
// gives its name, kind, arguments and title. Tools reach the user's project only through
// engine.Workspace (the editor over ACP, or the local disk), confine every
// path to the workspace's roots, check their arguments against their JSON
// Schema before running, and ask the user before they change anything.
//
// A tool's failure is a result the model sees (engine.ToolResult with
// IsError), never a Go error or a panic.
package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/gabriel-vasile/mimetype"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/rootfs"
	"github.com/coda-acp/coda/internal/textcut"
)

// sniffLen is how much of a file is looked at to tell text from binary.
const sniffLen = 8 << 10

// maxEditSize caps the files write_file and edit_file load whole (to show a
// diff and to edit).
const maxEditSize = engine.EditorReadLimit

// sniffDisk looks at a file on disk before it is read or changed as text. It
// returns the file's size (-1 when it does not exist: the editor may still
// have a buffer for it), a refusal for the model when it is not a regular
// file or its start is binary or not UTF-8, and an error when it cannot be
// read. Only a regular file is opened: opening a FIFO would block.
func sniffDisk(d rootfs.Disk, path, shown string) (size int64, refusal string, err error) {
	fi, err := d.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	if fi.IsDir() {
		return fi.Size(), fmt.Sprintf("%s is a directory, not a file; use list_files to see what it holds", shown), nil
	}
	if !fi.Mode().IsRegular() {
		return fi.Size(), fmt.Sprintf("%s is not a regular file (%s)", shown, fi.Mode().Type()), nil
	}
	f, err := d.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, "", err
	}
	return fi.Size(), sniffText(head[:n], int64(n) == fi.Size(), shown), nil
}

// sniffText refuses content that is not UTF-8 text, naming its type.
func sniffText(head []byte, whole bool, shown string) string {
	if len(head) == 0 {
		return ""
	}
	valid := head
	if !whole {
		valid = textcut.TrimPartialRune(head)
	}
	if bytes.IndexByte(head, 0) < 0 && utf8.Valid(valid) {
		return ""
	}
	mime := mimetype.Detect(head).String()
	if bytes.IndexByte(head, 0) < 0 && strings.HasPrefix(mime, "text/") {
		return fmt.Sprintf("%s is not UTF-8 text (%s); only UTF-8 text can be read", shown, mime)
	}
	return fmt.Sprintf("%s is a binary file (%s), not text; only text files can be read", shown, mime)
}

// ask requests the user's permission for a call that changes something
// (engine.Ask). It returns nil when the call may go ahead, else the result
// the model gets.
func ask(ctx context.Context, call *engine.Call, tool, title, what string, locs []engine.Location, content []engine.ToolContent) *engine.ToolResult {
	res := engine.Ask(ctx, call, engine.PermissionRequest{
		Key: tool,
		ToolCall: engine.ToolCallEvent{
			Title:     title,
			Kind:      kindOf(tool),
			Locations: locs,
			Content:   content,
		},
	}, "nothing was changed", what)
	if res != nil {
		res.Title, res.Locations = title, locs
	}
	return res
}
