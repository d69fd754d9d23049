package openaitest

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// A File is one uploaded to the fake: what its form said, and its size.
type File = fakekit.File

// purposes are the Files API's (the API reference's FilePurpose).
var purposes = []string{"assistants", "batch", "fine-tune", "vision", "user_data", "evals"}

// Uploads counts the files uploaded; Deletes, those deleted.
func (s *Server) Uploads() int { return s.files.Uploads() }

func (s *Server) Deletes() int { return s.files.Deletes() }

// Files are the files uploaded and not deleted.
func (s *Server) Files() []File { return s.files.List() }

// Received is the bytes of request bodies the server has read, uploads
// included.
func (s *Server) Received() int64 { return s.received.Total() }

// serveFiles serves POST and GET /files, and GET and DELETE
// /files/{file_id}.
func (s *Server) serveFiles(w http.ResponseWriter, r *http.Request, path string) {
	defer io.Copy(io.Discard, r.Body) // what a refusal left unread, before the answer ends
	id, one := strings.CutPrefix(path, "/files/")
	one = one && id != ""
	switch {
	case s.NoFiles:
		writeError(w, 404, "Invalid URL ("+r.Method+" /v1"+path+")", "", "")
	case r.Method == http.MethodPost && path == "/files" && s.UploadStatus != 0:
		_, _ = io.Copy(io.Discard, r.Body)
		writeError(w, s.UploadStatus, http.StatusText(s.UploadStatus), "", "")
	case r.Method == http.MethodPost && path == "/files":
		s.upload(w, r)
	case r.Method == http.MethodGet && path == "/files":
		data := []any{}
		for _, f := range s.files.List() {
			data = append(data, fileObject(f))
		}
		writeJSON(w, map[string]any{"object": "list", "data": data, "has_more": false})
	case r.Method == http.MethodGet && one:
		if f, ok := s.files.Get(id); ok {
			writeJSON(w, fileObject(f))
			return
		}
		writeError(w, 404, "No such File object: "+id, "id", "")
	case r.Method == http.MethodDelete && one:
		if !s.files.Delete(id) {
			writeError(w, 404, "No such File object: "+id, "id", "")
			return
		}
		writeJSON(w, map[string]any{"id": id, "object": "file", "deleted": true})
	default:
		writeError(w, 404, "Invalid URL ("+r.Method+" /v1"+path+")", "", "")
	}
}

// created is when every file was uploaded.
const created = 1764495600

// fileObject is f as the API answers it.
func fileObject(f File) map[string]any {
	var expires any
	if f.ExpiresAfter > 0 {
		expires = created + f.ExpiresAfter
	}
	return map[string]any{"id": f.ID, "object": "file", "bytes": f.Bytes, "created_at": created, "expires_at": expires,
		"filename": f.Filename, "purpose": f.Purpose, "status": "processed", "status_details": nil}
}

// upload reads a multipart upload as it streams: the fields, and the
// file's bytes counted, not kept.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	u, err := fakekit.ReadUpload(r)
	switch {
	case errors.Is(err, fakekit.ErrNotMultipart):
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		writeError(w, 400, "Invalid Content-Type header ("+mt+"), expected multipart/form-data.", "", "")
		return
	case err != nil:
		writeError(w, 400, "The multipart body could not be read: "+err.Error(), "", "")
		return
	}
	f := u.File
	msg, param := uploadProblem(u)
	if msg != "" {
		writeError(w, 400, msg, param, "")
		return
	}
	f.Purpose = u.Fields["purpose"]
	if secs, ok := u.Fields["expires_after[seconds]"]; ok {
		f.ExpiresAfter, _ = strconv.Atoi(secs)
	}
	f = s.files.Add(f, func(n int) string { return fmt.Sprintf("file-fake%d", n) })
	writeJSON(w, fileObject(f))
}

// uploadProblem is why the API refuses an upload's form, and the field it
// names; "" when it takes it.
func uploadProblem(u fakekit.Upload) (msg, param string) {
	purpose := u.Fields["purpose"]
	switch {
	case !u.HasFile:
		return "Missing required parameter: 'file'.", "file"
	case purpose == "":
		return "Missing required parameter: 'purpose'.", "purpose"
	case !slices.Contains(purposes, purpose):
		return fmt.Sprintf("Invalid value for 'purpose': %q.", purpose), "purpose"
	}
	anchor, hasAnchor := u.Fields["expires_after[anchor]"]
	secs, hasSecs := u.Fields["expires_after[seconds]"]
	if !hasAnchor && !hasSecs {
		return "", ""
	}
	n, err := strconv.Atoi(secs)
	switch {
	case anchor != "created_at":
		return "Invalid value for 'expires_after.anchor': supported anchors are 'created_at'.", "expires_after.anchor"
	case err != nil || n < 3600 || n > 2592000:
		return "Invalid value for 'expires_after.seconds': it must be between 3600 (1 hour) and 2592000 (30 days).", "expires_after.seconds"
	}
	return "", ""
}

// checkImage says why the API would refuse an input_image part, or "".
func (s *Server) checkImage(part map[string]any) string {
	url, byURL := part["image_url"].(string)
	id, byID := part["file_id"].(string)
	switch {
	case byURL == byID:
		return "Invalid input_image: give exactly one of 'image_url' and 'file_id'."
	case byURL && !strings.HasPrefix(url, "data:image/") && !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://"):
		return "Invalid 'image_url': expected a URL or a base64-encoded data URL of an image."
	case byID:
		if _, ok := s.files.Get(id); !ok {
			return fmt.Sprintf("Invalid 'file_id': no file with id '%s'.", id)
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, v any) { fakekit.WriteJSON(w, 200, "application/json", v) }
