package fakekit

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// A File is one uploaded to a fake: what its form said, and its size (its
// bytes are counted, not kept).
type File struct {
	ID, Filename, MIMEType string
	// Purpose is OpenAI's purpose field; "" elsewhere.
	Purpose string
	Bytes   int64
	// ExpiresAfter is OpenAI's expires_after[seconds]; 0 when none was
	// given.
	ExpiresAfter int
}

// Files is a fake's Files API store: the files uploaded and not deleted,
// and how many were uploaded and deleted.
type Files struct {
	mu      sync.Mutex
	files   map[string]File
	uploads int
	deletes int
}

// Add keeps f under the id name gives the n-th upload (from 1), and
// returns it with its id.
func (fs *Files) Add(f File, name func(n int) string) File {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.files == nil {
		fs.files = map[string]File{}
	}
	fs.uploads++
	f.ID = name(fs.uploads)
	fs.files[f.ID] = f
	return f
}

// Get is the file of id, if it is kept.
func (fs *Files) Get(id string) (File, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, ok := fs.files[id]
	return f, ok
}

// Delete forgets the file of id, and reports whether it was kept.
func (fs *Files) Delete(id string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, ok := fs.files[id]; !ok {
		return false
	}
	delete(fs.files, id)
	fs.deletes++
	return true
}

// List are the files kept, by id.
func (fs *Files) List() []File {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]File, 0, len(fs.files))
	for _, f := range fs.files {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Uploads counts the files uploaded; Deletes, those deleted.
func (fs *Files) Uploads() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.uploads
}

func (fs *Files) Deletes() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.deletes
}

// An Upload is a multipart/form-data upload as read: its file part (the
// bytes counted, not kept) and its other fields (each at most 4 KiB).
type Upload struct {
	File    File
	HasFile bool
	Fields  map[string]string
}

// Upload errors: what a fake words as its own refusal.
var (
	ErrNotMultipart = errors.New("content type must be multipart/form-data")
	ErrUnreadable   = errors.New("the multipart body could not be read")
)

// ReadUpload reads r's multipart body as it streams; the file is the part
// named file with a filename. Its error wraps ErrNotMultipart or
// ErrUnreadable.
func ReadUpload(r *http.Request) (Upload, error) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		return Upload{}, fmt.Errorf("%w (%s)", ErrNotMultipart, mt)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return Upload{}, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	u := Upload{Fields: map[string]string{}}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return u, nil
		}
		if err != nil {
			return u, fmt.Errorf("%w: %v", ErrUnreadable, err)
		}
		if p.FormName() != "file" || p.FileName() == "" {
			v, _ := io.ReadAll(io.LimitReader(p, 4<<10))
			u.Fields[p.FormName()] = string(v)
			continue
		}
		n, err := io.Copy(io.Discard, p)
		if err != nil {
			return u, fmt.Errorf("%w: file: %v", ErrUnreadable, err)
		}
		u.HasFile, u.File.Filename, u.File.MIMEType, u.File.Bytes = true, p.FileName(), p.Header.Get("Content-Type"), n
	}
}
