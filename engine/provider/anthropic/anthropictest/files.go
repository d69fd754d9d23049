package anthropictest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
)

// filesBeta is the anthropic-beta value of the Files API.
const filesBeta = "files-api-2025-04-14"

// imageTypes are the types an image block takes.
var imageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// A File is one uploaded to the fake.
type File struct {
	ID, Filename, MIMEType string
	Bytes                  int64
}

// Uploads counts the files uploaded; Deletes, those deleted.
func (s *Server) Uploads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uploads
}

func (s *Server) Deletes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deletes
}

// Files are the files uploaded and not deleted.
func (s *Server) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]File, 0, len(s.files))
	for _, f := range s.files {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Received is the bytes of request bodies the server has read, uploads
// included.
func (s *Server) Received() int64 { return atomic.LoadInt64(&s.received) }

// counted is a request body whose bytes the server counts as it reads.
type counted struct {
	io.ReadCloser
	s *Server
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	atomic.AddInt64(&c.s.received, int64(n))
	return n, err
}

// hasFilesBeta reports whether h names the Files API's beta.
func hasFilesBeta(h http.Header) bool {
	for _, v := range h.Values("Anthropic-Beta") {
		for b := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(b) == filesBeta {
				return true
			}
		}
	}
	return false
}

// serveFiles serves POST /v1/files and DELETE /v1/files/{file_id}.
func (s *Server) serveFiles(w http.ResponseWriter, r *http.Request) {
	if !hasFilesBeta(r.Header) {
		writeError(w, 400, "invalid_request_error", "The Files API is in beta: send the header anthropic-beta: "+filesBeta)
		return
	}
	switch id, one := strings.CutPrefix(r.URL.Path, "/v1/files/"); {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/files":
		s.upload(w, r)
	case r.Method == http.MethodDelete && one && id != "":
		s.mu.Lock()
		_, ok := s.files[id]
		if ok {
			delete(s.files, id)
			s.deletes++
		}
		s.mu.Unlock()
		if !ok {
			writeError(w, 404, "not_found_error", "File not found: "+id)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "file_deleted"})
	default:
		writeError(w, 404, "not_found_error", "Not Found")
	}
}

// upload reads a multipart upload as it streams, the file's bytes counted,
// not kept.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		writeError(w, 400, "invalid_request_error", "Content-Type must be multipart/form-data")
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, 400, "invalid_request_error", err.Error())
		return
	}
	var f File
	has := false
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			writeError(w, 400, "invalid_request_error", "the multipart body could not be read: "+err.Error())
			return
		}
		if p.FormName() != "file" {
			writeError(w, 400, "invalid_request_error", p.FormName()+": Extra inputs are not permitted")
			return
		}
		n, err := io.Copy(io.Discard, p)
		if err != nil {
			writeError(w, 400, "invalid_request_error", "file: "+err.Error())
			return
		}
		has, f.Filename, f.MIMEType, f.Bytes = true, p.FileName(), p.Header.Get("Content-Type"), n
	}
	if !has || f.Filename == "" {
		writeError(w, 400, "invalid_request_error", "file: Field required")
		return
	}
	s.mu.Lock()
	s.uploads++
	f.ID = fmt.Sprintf("file_fake%03d", s.uploads)
	s.files[f.ID] = f
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": f.ID, "type": "file", "filename": f.Filename, "mime_type": f.MIMEType,
		"size_bytes": f.Bytes, "created_at": "2026-09-22T00:00:00Z", "downloadable": false})
}

// checkImages says why the API refuses req's image blocks: the status,
// error type and message; "" when it takes them.
func (s *Server) checkImages(req *Request) (int, string, string) {
	for i, m := range req.Body.Messages {
		for j, raw := range m.Content {
			var blk struct {
				Type   string `json:"type"`
				Source *struct {
					Type      string `json:"type"`
					MediaType string `json:"media_type"`
					Data      string `json:"data"`
					FileID    string `json:"file_id"`
				} `json:"source"`
			}
			if json.Unmarshal(raw, &blk) != nil || blk.Type != "image" {
				continue
			}
			at := fmt.Sprintf("messages.%d.content.%d.image.source", i, j)
			src := blk.Source
			switch {
			case src == nil:
				return 400, "invalid_request_error", at + ": Field required"
			case src.Type == "base64":
				if !slices.Contains(imageTypes, src.MediaType) || src.Data == "" {
					return 400, "invalid_request_error", at + ".base64: media_type must be one of " + strings.Join(imageTypes, ", ") + ", with data"
				}
			case src.Type == "file":
				if !hasFilesBeta(req.Header) {
					return 400, "invalid_request_error", at + ".file: the Files API is in beta: send the header anthropic-beta: " + filesBeta
				}
				s.mu.Lock()
				f, ok := s.files[src.FileID]
				s.mu.Unlock()
				if !ok {
					return 404, "not_found_error", "File not found: " + src.FileID
				}
				if !slices.Contains(imageTypes, f.MIMEType) {
					return 400, "invalid_request_error", fmt.Sprintf("%s: file %s is %s, not an image", at, f.ID, f.MIMEType)
				}
			default:
				return 400, "invalid_request_error", at + ".type: Input tag '" + src.Type + "' found using 'type' does not match any of the expected tags: 'base64', 'file', 'url'"
			}
		}
	}
	return 0, "", ""
}
