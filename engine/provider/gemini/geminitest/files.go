package geminitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// maxRequest is the most a generateContent request may be (20 MB).
const maxRequest = 20 << 20

// An upload is a resumable upload begun: the size and type declared.
type upload struct {
	size int
	mime string
}

// Received is how many bytes of request bodies the server was sent,
// uploads included.
func (s *Server) Received() int64 { return s.received.Total() }

// Uploaded counts the files uploaded.
func (s *Server) Uploaded() int { return s.files.Uploads() }

// upload serves the Files API's resumable upload: its start, then its
// bytes.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	s.received.Add(len(raw))
	switch {
	case r.Method != http.MethodPost:
		writeError(w, 404, "NOT_FOUND", "unknown path "+r.URL.String())
	case r.URL.Path == "/upload/v1beta/files":
		s.begin(w, r, raw)
	default:
		s.finish(w, r, raw)
	}
}

// begin answers an upload's start with the URL its bytes go to.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, raw []byte) {
	size, err := strconv.Atoi(r.Header.Get("X-Goog-Upload-Header-Content-Length"))
	mime := r.Header.Get("X-Goog-Upload-Header-Content-Type")
	switch {
	case r.Header.Get("X-Goog-Upload-Protocol") != "resumable" || r.Header.Get("X-Goog-Upload-Command") != "start":
		writeError(w, 400, "INVALID_ARGUMENT", "an upload starts with X-Goog-Upload-Protocol: resumable and X-Goog-Upload-Command: start")
	case err != nil || size <= 0 || size > 2<<30 || mime == "":
		writeError(w, 400, "INVALID_ARGUMENT", "X-Goog-Upload-Header-Content-Length and -Type must give the file's size (at most 2 GB) and type")
	case !json.Valid(raw):
		writeError(w, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
	default:
		s.mu.Lock()
		s.begun++
		id := fmt.Sprintf("u%d", s.begun)
		s.uploads[id] = upload{size, mime}
		s.mu.Unlock()
		w.Header().Set("X-Goog-Upload-URL", strings.TrimSuffix(s.URL, "/v1beta")+"/upload/session/"+id)
		w.Header().Set("X-Goog-Upload-Status", "active")
		w.WriteHeader(http.StatusOK)
	}
}

// finish takes an upload's bytes, exactly as many as it declared, and
// keeps the file.
func (s *Server) finish(w http.ResponseWriter, r *http.Request, raw []byte) {
	id, ok := strings.CutPrefix(r.URL.Path, "/upload/session/")
	s.mu.Lock()
	up, known := s.uploads[id]
	s.mu.Unlock()
	switch {
	case !ok || !known:
		writeError(w, 404, "NOT_FOUND", "no such upload")
	case r.Header.Get("X-Goog-Upload-Command") != "upload, finalize" || r.Header.Get("X-Goog-Upload-Offset") != "0":
		writeError(w, 400, "INVALID_ARGUMENT", `the bytes go with X-Goog-Upload-Command: "upload, finalize" and X-Goog-Upload-Offset: 0`)
	case len(raw) != up.size:
		writeError(w, 400, "INVALID_ARGUMENT", fmt.Sprintf("the upload declared %d bytes and sent %d", up.size, len(raw)))
	default:
		name := "files/" + id
		uri := s.URL + "/" + name
		s.files.Add(fakekit.File{Filename: name, MIMEType: up.mime, Bytes: int64(up.size)}, func(int) string { return uri })
		s.mu.Lock()
		delete(s.uploads, id)
		s.mu.Unlock()
		fakekit.WriteJSON(w, 200, "application/json; charset=UTF-8", map[string]any{"file": map[string]any{
			"name": name, "mimeType": up.mime, "sizeBytes": strconv.Itoa(up.size), "uri": uri, "state": "ACTIVE",
		}})
	}
}
