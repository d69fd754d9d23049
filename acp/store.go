package acp

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/bytesize"
	"github.com/coda-acp/coda/internal/textcut"
)

// The sessions' files: STATE/sessions/ID.json, one a session, rewritten
// whole (to a temporary file, then renamed over the old one) at session/new,
// after every turn and whenever an option changes. A reader never sees half
// a file.
//
// The header fields come before the exchanges, so session/list reads only
// the start of each file (readHeader); a corrupt exchange is found by
// session/load, which decodes them all.

// sessionFileVersion is the layout written; a file of a later one is
// refused rather than misread.
const sessionFileVersion = 1

// sessionFile is a session's file.
type sessionFile struct {
	Version               int       `json:"version"`
	ID                    string    `json:"id"`
	Cwd                   string    `json:"cwd"`
	AdditionalDirectories []string  `json:"additionalDirectories,omitempty"`
	Title                 string    `json:"title,omitempty"`
	CreatedAt             time.Time `json:"createdAt"`
	UpdatedAt             time.Time `json:"updatedAt"`
	// Output is the session/new _meta.coda.output level, as the client
	// sent it.
	Output  json.RawMessage `json:"output,omitempty"`
	Options storedOptions   `json:"options"`
	// Taint is what the taint gate keeps of the session (paths only, no
	// content): the files its turns read and wrote from private content.
	Taint *taint.Session `json:"taint,omitempty"`
	// Exchanges are storedExchange objects, every one the session had,
	// oldest first. A rewrite keeps them as they are, undecoded.
	Exchanges []json.RawMessage `json:"exchanges"`
}

// storedOptions are the session's config option values; "" is the default.
type storedOptions struct {
	OutputFormat string `json:"output_format,omitempty"`
	Model        string `json:"model,omitempty"`
	Effort       string `json:"effort,omitempty"`
	Mode         string `json:"mode,omitempty"`
	// Commentary is the session's _meta.coda.commentary.
	Commentary string `json:"commentary,omitempty"`
}

// storedExchange is one finished turn.
type storedExchange struct {
	// Prompt is the user's prompt as session/load shows it again: text
	// and links (an embedded resource is kept as a link to it).
	Prompt []shownBlock `json:"prompt"`
	// History is the turn as the next turns see it (engine.KeepHistory):
	// the prompt the model read and the answer, clipped.
	History engine.Exchange `json:"history"`
	RunID   string          `json:"runId,omitempty"`
	// Closing are the update objects of the chunks the turn closed with,
	// exactly as they were sent: the final answer and its artifacts'
	// links, or the no-answer line.
	Closing []json.RawMessage `json:"closing,omitempty"`
}

// maxSessionID bounds a session id: it is a file name.
const maxSessionID = 128

// checkSessionID refuses a session id that is not a plain name (letters,
// digits, '-', '_' and '.', not leading '.', no "..", at most 128 bytes)
// before it is used as a file name.
func checkSessionID(id string) error {
	bad := id == "" || len(id) > maxSessionID || id[0] == '.' || strings.Contains(id, "..")
	for i := 0; i < len(id) && !bad; i++ {
		c := id[i]
		bad = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	}
	if bad {
		shown := textcut.At(id, 40)
		if len(shown) < len(id) {
			shown += "…"
		}
		return fmt.Errorf("%w: sessionId %q is not a session id coda made (letters, digits, '-', '_' and '.', at most %d)", ErrInvalidParams, shown, maxSessionID)
	}
	return nil
}

// errCorrupt marks a session file that cannot be read as one.
var errCorrupt = errors.New("corrupt session file")

// store reads and writes the sessions' files in dir.
type store struct {
	dir string // STATE/sessions; "" when coda keeps no state
}

func (st *store) path(id string) string { return filepath.Join(st.dir, id+".json") }

// check refuses a decoded file that does not describe session id.
func (f *sessionFile) check(id string) error {
	switch {
	case f.Version != sessionFileVersion:
		return fmt.Errorf("%w: version %d (this coda reads version %d)", errCorrupt, f.Version, sessionFileVersion)
	case f.ID != id:
		return fmt.Errorf("%w: it holds session %q", errCorrupt, f.ID)
	case !filepath.IsAbs(f.Cwd):
		return fmt.Errorf("%w: cwd %q is not an absolute path", errCorrupt, f.Cwd)
	}
	return nil
}

// eachExchange reads session id's file as load and resume need it, one
// exchange at a time: the header, then each exchange decoded in turn and
// handed to each, so that a long session costs the memory of its longest
// exchange, not of the file. Every exchange is decoded before eachExchange
// returns: a file with a corrupt one wraps errCorrupt, whatever each was
// handed before it. A missing file is fs.ErrNotExist.
func (st *store) eachExchange(id string, each func(storedExchange)) (*sessionFile, error) {
	file, err := os.Open(st.path(id))
	if err != nil {
		return nil, err
	}
	defer file.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(file, 64<<10))
	f, atExchanges, err := decodeHeader(dec, id)
	if err != nil || !atExchanges {
		return f, err
	}
	// coda writes the exchanges last (save): an array, then the file's end.
	tok, err := dec.Token()
	if err != nil || (tok != json.Delim('[') && tok != nil) { // null: none
		return nil, corruptf("exchanges: not an array (%v)", eofUnexpected(err))
	}
	if tok != nil {
		for dec.More() {
			var ex storedExchange
			if err := dec.Decode(&ex); err != nil {
				return nil, corruptf("exchanges: %v", eofUnexpected(err))
			}
			each(ex)
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
			return nil, corruptf("exchanges: the array does not end (%v)", eofUnexpected(err))
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, corruptf("exchanges: want the file's end after them (%v)", eofUnexpected(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, corruptf("data after the session's object")
	}
	return f, nil
}

// readHeader reads the fields before the exchanges: what session/list
// shows. It stops at "exchanges", so a long session costs no more to list
// than a short one.
func readHeader(path, id string) (*sessionFile, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	f, _, err := decodeHeader(json.NewDecoder(bufio.NewReaderSize(file, 4<<10)), id)
	return f, err
}

// decodeHeader reads a session file's fields up to "exchanges", leaving dec
// at the exchanges' value; atExchanges is false when the file has none.
func decodeHeader(dec *json.Decoder, id string) (f *sessionFile, atExchanges bool, err error) {
	f = &sessionFile{}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false, corruptf("not a JSON object (%v)", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false, corruptf("%v", eofUnexpected(err))
		}
		var v any
		switch tok {
		case "exchanges":
			return f, true, f.check(id)
		case "version":
			v = &f.Version
		case "id":
			v = &f.ID
		case "cwd":
			v = &f.Cwd
		case "additionalDirectories":
			v = &f.AdditionalDirectories
		case "title":
			v = &f.Title
		case "createdAt":
			v = &f.CreatedAt
		case "updatedAt":
			v = &f.UpdatedAt
		case "output":
			v = &f.Output
		case "options":
			v = &f.Options
		case "taint":
			v = &f.Taint
		default:
			v = new(json.RawMessage)
		}
		if err := dec.Decode(v); err != nil {
			return nil, false, corruptf("%s: %v", tok, eofUnexpected(err))
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, false, corruptf("%v", eofUnexpected(err))
	}
	return f, false, f.check(id)
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
}

// eofUnexpected makes a file's early end an unexpected one.
func eofUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// save writes session f's file anew, atomically: f's fields (its
// Exchanges unused), then the exchanges the file holds already, then add
// when not nil. The old exchanges are copied through a small buffer, never
// held: saving a long session costs little memory and no decoding, where
// reading the file whole cost several times the file after every turn. An
// old file that is not a session's file is set aside (setAside) and the new
// one holds add alone; corrupt says why.
func (st *store) save(f *sessionFile, add json.RawMessage) (corrupt, err error) {
	write := func(copyOld bool) error {
		// A turn's exchange is synced to the disk before the prompt is
		// answered; the rest (a new session, an option) is rewritten
		// atomically but not synced: a crash can lose only what the editor
		// can set again, and session/new stays off the disk's latency.
		return st.replace(f.ID, add != nil, func(w *bufio.Writer) error {
			h := *f
			h.Exchanges = []json.RawMessage{}
			head, err := json.Marshal(&h)
			if err != nil {
				return err
			}
			w.Write(bytes.TrimSuffix(head, []byte("]}"))) // the exchanges stay open
			some := false
			if copyOld {
				if some, err = st.copyExchanges(w, f.ID); err != nil {
					return err
				}
			}
			if add != nil {
				if some {
					w.WriteByte(',')
				}
				w.Write(add)
			}
			w.WriteString("]}")
			return nil
		})
	}
	err = write(true)
	if errors.Is(err, errCorrupt) {
		corrupt = err
		if err := st.setAside(f.ID); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return corrupt, err
		}
		err = write(false)
	}
	return corrupt, err
}

// copyExchanges copies the exchanges of session id's file to w, as they
// are (comma-separated), and reports whether there were any. A missing file
// has none; one that is not a session's file is errCorrupt. The bytes are
// copied, not decoded: coda writes the exchanges last, so they run from
// the header's end to the file's closing "]}". (A file edited by hand so
// that it does not end so is set aside.)
func (st *store) copyExchanges(w *bufio.Writer, id string) (some bool, err error) {
	file, err := os.Open(st.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer file.Close()
	dec := json.NewDecoder(file)
	_, atExchanges, err := decodeHeader(dec, id)
	if err != nil || !atExchanges {
		return false, err
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return false, corruptf("exchanges: not an array (%v)", eofUnexpected(err))
	}
	start, some := dec.InputOffset(), dec.More()
	fi, err := file.Stat()
	if err != nil {
		return false, err
	}
	tail := make([]byte, min(fi.Size()-start, 64))
	tailAt := fi.Size() - int64(len(tail))
	if _, err := file.ReadAt(tail, tailAt); err != nil {
		return false, err
	}
	const space = " \t\r\n"
	rest, closed := bytes.CutSuffix(bytes.TrimRight(tail, space), []byte("}"))
	rest, ended := bytes.CutSuffix(bytes.TrimRight(rest, space), []byte("]"))
	if !closed || !ended {
		return false, corruptf("it does not end with its exchanges")
	}
	if !some {
		return false, nil
	}
	end := tailAt + int64(len(rest)) // where the closing ']' is
	if _, err := file.Seek(start, io.SeekStart); err != nil {
		return false, err
	}
	// Flushed first, the copy goes file to file in the kernel where it can.
	if err := w.Flush(); err != nil {
		return false, err
	}
	if _, err := io.CopyN(w, file, end-start); err != nil {
		return false, corruptf("exchanges: %v", eofUnexpected(err))
	}
	return true, nil
}

// replace writes session id's file anew through fill, atomically (a
// temporary file, synced when sync is set, renamed over the old one).
func (st *store) replace(id string, sync bool, fill func(w *bufio.Writer) error) error {
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(st.dir, "."+id+".*.tmp")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(tmp)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), st.path(id))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// setAside renames a corrupt file out of the way (ID.json.corrupt), so a
// rewrite does not destroy what may still be read by hand.
func (st *store) setAside(id string) error {
	return os.Rename(st.path(id), st.path(id)+".corrupt")
}

// shownBlock is a prompt block as the session's file keeps it.
type shownBlock struct {
	Type     string `json:"type"` // "text" or "resource_link"
	Text     string `json:"text,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	Title    string `json:"title,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// shownPrompt is the prompt as session/load replays it: text and links;
// an embedded resource becomes a link to it and an image a line naming it,
// so the file does not keep a copy of every file or picture the user
// attached, and other content a one-word stand-in.
func shownPrompt(blocks []contentBlock) []shownBlock {
	out := make([]shownBlock, 0, len(blocks))
	for _, c := range blocks {
		switch c.Type {
		case "text":
			out = append(out, shownBlock{Type: "text", Text: c.Text})
		case "resource_link":
			out = append(out, shownBlock{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title, MimeType: c.MimeType})
		case "resource":
			if c.Resource != nil {
				out = append(out, shownBlock{Type: "resource_link", URI: c.Resource.URI, Name: linkName(c.Resource.URI), MimeType: c.Resource.MimeType})
			}
		case "image":
			out = append(out, shownBlock{Type: "text", Text: imageStandIn(c)})
		default:
			out = append(out, shownBlock{Type: "text", Text: "[" + c.Type + "]"})
		}
	}
	return out
}

// imageStandIn names an attached image where a replay shows it: "[image
// chart.png, image/png, 2 KB]".
func imageStandIn(c contentBlock) string {
	var parts []string
	if c.URI != "" {
		parts = append(parts, linkName(c.URI))
	}
	size := base64.RawStdEncoding.DecodedLen(len(strings.TrimRight(c.Data, "=")))
	parts = append(parts, c.MimeType, bytesize.Format(size))
	return "[image " + strings.Join(parts, ", ") + "]"
}

// linkName is a resource's name for its link: the last element of its URI.
func linkName(uri string) string {
	name := uri
	if i := strings.LastIndexByte(strings.TrimRight(uri, "/"), '/'); i >= 0 {
		name = strings.TrimRight(uri, "/")[i+1:]
	}
	if name == "" {
		return uri
	}
	return name
}
