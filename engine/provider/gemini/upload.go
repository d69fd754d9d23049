package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// An image of the turn is sent once: uploaded through the Files API
// (https://ai.google.dev/gemini-api/docs/files), then named by its URI
// (fileData) in every request of the turn, where inlineData would carry
// its bytes, base64, in each. The upload is the documented resumable one: a
// start request with the file's size and type, answered with the upload
// URL (X-Goog-Upload-URL), then the bytes to it with "upload, finalize".
// Uploaded files are deleted by Google after 48 hours; nothing is left to
// clean. An image smaller than provider.MinUpload goes inline (an upload
// costs two requests); so does one whose upload fails, which is logged.

// uploadURL is the Files API's upload endpoint for the API at base
// (".../v1beta" → ".../upload/v1beta/files").
func uploadURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/upload" + strings.TrimSuffix(u.Path, "/") + "/files"
	return u.String(), nil
}

// upload uploads im and returns its file's URI, within the call's time
// limits (sse.Call.Bound). The upload URL the server names gets the key
// only on the API's own origin (sse.SameOrigin); redirects, only there.
func (m *Model) upload(ctx context.Context, im llm.Image) (string, error) {
	ctx, cancel := m.call.Bound(ctx)
	defer cancel()
	start, err := uploadURL(m.opts.BaseURL)
	if err != nil {
		return "", err
	}
	base, err := url.Parse(start)
	if err != nil {
		return "", err
	}
	meta, _ := json.Marshal(map[string]any{"file": map[string]string{"display_name": "coda-image"}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, start, bytes.NewReader(meta))
	if err != nil {
		return "", err
	}
	m.headers(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Goog-Upload-Protocol", "resumable")
	req.Header.Set("X-Goog-Upload-Command", "start")
	req.Header.Set("X-Goog-Upload-Header-Content-Length", strconv.Itoa(len(im.Data)))
	req.Header.Set("X-Goog-Upload-Header-Content-Type", im.MIMEType)
	resp, err := m.client().Do(req)
	if err != nil {
		return "", uploadError(ctx, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	to := resp.Header.Get("X-Goog-Upload-URL")
	if resp.StatusCode != http.StatusOK || to == "" {
		return "", fmt.Errorf("starting the upload: %s, no upload URL", resp.Status)
	}
	if u, err := url.Parse(to); err != nil || !sse.SameOrigin(u, base) {
		return "", fmt.Errorf("the upload URL is not on the API's origin (%s://%s), where the key goes: not sent", base.Scheme, base.Host)
	}

	req, err = http.NewRequestWithContext(ctx, http.MethodPost, to, bytes.NewReader(im.Data))
	if err != nil {
		return "", err
	}
	m.headers(req)
	req.Header.Set("X-Goog-Upload-Offset", "0")
	req.Header.Set("X-Goog-Upload-Command", "upload, finalize")
	resp, err = m.client().Do(req)
	if err != nil {
		return "", uploadError(ctx, err)
	}
	defer resp.Body.Close()
	var file struct {
		File struct {
			URI   string `json:"uri"`
			State string `json:"state"`
		} `json:"file"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("uploading: %s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&file); err != nil || file.File.URI == "" {
		return "", fmt.Errorf("uploading: the answer names no file (%v)", err)
	}
	if file.File.State != "" && file.File.State != "ACTIVE" {
		return "", fmt.Errorf("the uploaded file is %s, not ACTIVE", file.File.State)
	}
	return file.File.URI, nil
}

// headers are the API key and the configured headers, as every request
// carries them.
func (m *Model) headers(req *http.Request) {
	if m.opts.APIKey != "" {
		req.Header.Set("X-Goog-Api-Key", m.opts.APIKey)
	}
	for k, v := range m.opts.Headers {
		req.Header.Set(k, v)
	}
}

func (m *Model) client() *http.Client { return sse.Guard(m.opts.Client) }

// uploadError is err, or why the upload's time ran out, the key masked.
func uploadError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	return err
}
