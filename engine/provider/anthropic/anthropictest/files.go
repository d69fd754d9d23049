package anthropictest

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// filesBeta is the anthropic-beta value of the Files API.
const filesBeta = "files-api-2025-04-14"

// imageTypes are the types an image block takes.
var imageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// A File is one uploaded to the fake (its Purpose and ExpiresAfter are
// OpenAI's, unused here).
type File = fakekit.File

// Uploads counts the files uploaded; Deletes, those deleted.
func (s *Server) Uploads() int { return s.files.Uploads() }

func (s *Server) Deletes() int { return s.files.Deletes() }

// Files are the files uploaded and not deleted.
func (s *Server) Files() []File { return s.files.List() }

// Received is the bytes of request bodies the server has read, uploads
// included.
func (s *Server) Received() int64 { return s.received.Total() }

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

// serveFiles serves POST and GET /v1/files, and GET and DELETE
// /v1/files/{file_id}.
func (s *Server) serveFiles(w http.ResponseWriter, r *http.Request) {
	if !hasFilesBeta(r.Header) {
		writeError(w, 400, "invalid_request_error", "The Files API is in beta: send the header anthropic-beta: "+filesBeta)
		return
	}
	id, one := strings.CutPrefix(r.URL.Path, "/v1/files/")
	one = one && id != ""
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/files":
		s.upload(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/files":
		data := []any{}
		for _, f := range s.files.List() {
			data = append(data, fileObject(f))
		}
		fakekit.WriteJSON(w, 200, "application/json", map[string]any{"data": data, "has_more": false})
	case r.Method == http.MethodGet && one:
		if f, ok := s.files.Get(id); ok {
			fakekit.WriteJSON(w, 200, "application/json", fileObject(f))
			return
		}
		writeError(w, 404, "not_found_error", "File not found: "+id)
	case r.Method == http.MethodDelete && one:
		if !s.files.Delete(id) {
			writeError(w, 404, "not_found_error", "File not found: "+id)
			return
		}
		fakekit.WriteJSON(w, 200, "application/json", map[string]any{"id": id, "type": "file_deleted"})
	default:
		writeError(w, 404, "not_found_error", "Not Found")
	}
}

// fileObject is f's metadata as the API answers it.
func fileObject(f File) map[string]any {
	return map[string]any{"id": f.ID, "type": "file", "filename": f.Filename, "mime_type": f.MIMEType,
		"size_bytes": f.Bytes, "created_at": "2026-09-22T00:00:00Z", "downloadable": false}
}

// upload reads a multipart upload as it streams, the file's bytes counted,
// not kept.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	u, err := fakekit.ReadUpload(r)
	switch {
	case errors.Is(err, fakekit.ErrNotMultipart):
		writeError(w, 400, "invalid_request_error", "Content-Type must be multipart/form-data")
		return
	case err != nil:
		writeError(w, 400, "invalid_request_error", err.Error())
		return
	}
	delete(u.Fields, "file") // a file part without a filename: no file
	if len(u.Fields) > 0 {
		writeError(w, 400, "invalid_request_error", slices.Min(slices.Collect(maps.Keys(u.Fields)))+": Extra inputs are not permitted")
		return
	}
	if !u.HasFile {
		writeError(w, 400, "invalid_request_error", "file: Field required")
		return
	}
	f := s.files.Add(u.File, func(n int) string { return fmt.Sprintf("file_fake%03d", n) })
	fakekit.WriteJSON(w, 200, "application/json", fileObject(f))
}
