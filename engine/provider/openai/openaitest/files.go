package openaitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// A File is one uploaded to the fake: what its form said, and its size.
type File struct {
	ID, Filename, MIMEType, Purpose string
	Bytes                           int64
	// ExpiresAfter is expires_after[seconds]; 0 when none was given.
	ExpiresAfter int
}

// purposes are the Files API's (the API reference's FilePurpose).
var purposes = []string{"assistants", "batch", "fine-tune", "vision", "user_data", "evals"}

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

// serveFiles serves POST /files and DELETE /files/{file_id}.
func (s *Server) serveFiles(w http.ResponseWriter, r *http.Request, path string) {
	defer io.Copy(io.Discard, r.Body) // what a refusal left unread, before the answer ends
	switch {
	case s.NoFiles:
		writeError(w, 404, "Invalid URL ("+r.Method+" /v1"+path+")", "", "")
	case r.Method == http.MethodPost && path == "/files" && s.UploadStatus != 0:
		_, _ = io.Copy(io.Discard, r.Body)
		writeError(w, s.UploadStatus, http.StatusText(s.UploadStatus), "", "")
	case r.Method == http.MethodPost && path == "/files":
		s.upload(w, r)
	case r.Method == http.MethodDelete && strings.HasPrefix(path, "/files/"):
		id := strings.TrimPrefix(path, "/files/")
		s.mu.Lock()
		_, ok := s.files[id]
		if ok {
			delete(s.files, id)
			s.deletes++
		}
		s.mu.Unlock()
		if !ok {
			writeError(w, 404, "No such File object: "+id, "id", "")
			return
		}
		writeJSON(w, map[string]any{"id": id, "object": "file", "deleted": true})
	default:
		writeError(w, 404, "Invalid URL ("+r.Method+" /v1"+path+")", "", "")
	}
}

// upload reads a multipart upload as it streams: the fields, and the
// file's bytes counted, not kept.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		writeError(w, 400, "Invalid Content-Type header ("+mt+"), expected multipart/form-data.", "", "")
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, 400, err.Error(), "", "")
		return
	}
	fields := map[string]string{}
	var f File
	hasFile := false
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			writeError(w, 400, "The multipart body could not be read: "+err.Error(), "", "")
			return
		}
		if p.FormName() == "file" && p.FileName() != "" {
			n, err := io.Copy(io.Discard, p)
			if err != nil {
				writeError(w, 400, "The file could not be read: "+err.Error(), "file", "")
				return
			}
			hasFile, f.Filename, f.MIMEType, f.Bytes = true, p.FileName(), p.Header.Get("Content-Type"), n
			continue
		}
		v, _ := io.ReadAll(io.LimitReader(p, 4<<10))
		fields[p.FormName()] = string(v)
	}
	switch {
	case !hasFile:
		writeError(w, 400, "Missing required parameter: 'file'.", "file", "")
		return
	case fields["purpose"] == "":
		writeError(w, 400, "Missing required parameter: 'purpose'.", "purpose", "")
		return
	case !slices.Contains(purposes, fields["purpose"]):
		writeError(w, 400, fmt.Sprintf("Invalid value for 'purpose': %q.", fields["purpose"]), "purpose", "")
		return
	}
	f.Purpose = fields["purpose"]
	anchor, hasAnchor := fields["expires_after[anchor]"]
	secs, hasSecs := fields["expires_after[seconds]"]
	if hasAnchor || hasSecs {
		n, err := strconv.Atoi(secs)
		switch {
		case anchor != "created_at":
			writeError(w, 400, "Invalid value for 'expires_after.anchor': supported anchors are 'created_at'.", "expires_after.anchor", "")
			return
		case err != nil || n < 3600 || n > 2592000:
			writeError(w, 400, "Invalid value for 'expires_after.seconds': it must be between 3600 (1 hour) and 2592000 (30 days).", "expires_after.seconds", "")
			return
		}
		f.ExpiresAfter = n
	}
	s.mu.Lock()
	s.uploads++
	f.ID = fmt.Sprintf("file-fake%d", s.uploads)
	s.files[f.ID] = f
	s.mu.Unlock()
	const created = 1764495600
	var expires any
	if f.ExpiresAfter > 0 {
		expires = created + f.ExpiresAfter
	}
	writeJSON(w, map[string]any{"id": f.ID, "object": "file", "bytes": f.Bytes, "created_at": created, "expires_at": expires,
		"filename": f.Filename, "purpose": f.Purpose, "status": "processed", "status_details": nil})
}

// checkImage says why the API would refuse an input_image part, or "";
// the caller holds s.mu.
func (s *Server) checkImage(part map[string]any) string {
	url, byURL := part["image_url"].(string)
	id, byID := part["file_id"].(string)
	switch {
	case byURL == byID:
		return "Invalid input_image: give exactly one of 'image_url' and 'file_id'."
	case byURL && !strings.HasPrefix(url, "data:image/") && !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://"):
		return "Invalid 'image_url': expected a URL or a base64-encoded data URL of an image."
	case byID:
		if _, ok := s.files[id]; !ok {
			return fmt.Sprintf("Invalid 'file_id': no file with id '%s'.", id)
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
