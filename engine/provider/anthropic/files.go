package anthropic

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
)

// An image of the turn goes to the Messages API once: uploaded through the
// Files API at the turn's first call, then named by its file in every
// call of the turn (an image block with {"type": "file", "file_id"} as
// its source), where a base64 source would carry its bytes in each.
//
// What the docs say (https://docs.claude.com/en/docs/build-with-claude/files,
// https://docs.claude.com/en/api/files-create, …/api/files-delete): the
// Files API is a beta, behind the header "anthropic-beta:
// files-api-2025-04-14", which the uploads, the deletions and the Messages
// requests that name a file carry (several betas go comma-separated in the
// one header); POST /v1/files takes multipart/form-data with the file;
// its answer's id names it; images (JPEG, PNG, GIF, WebP) go in image
// blocks; "files persist until you delete them", so each upload is deleted
// when its turn ends (llm.Image.Release, which Run calls), with DELETE
// /v1/files/{file_id}. The image block stays where the bytes were, in the
// prompt-cached prefix.
//
// An image smaller than provider.MinUpload goes inline, and so does one
// whose upload fails, which is logged once. A server that refuses the
// upload with a 4xx (a gateway or compatible server that has no Files API
// or refuses the beta header) is not asked again by this model.

// filesBeta is the anthropic-beta value of the Files API.
const filesBeta = "files-api-2025-04-14"

// withBeta is h with beta added to its anthropic-beta header (a
// configured header may name others).
func withBeta(h http.Header, beta string) http.Header {
	h = h.Clone()
	if old := h.Get("Anthropic-Beta"); strings.Contains(old, beta) {
		return h
	} else if old != "" {
		beta = old + "," + beta
	}
	h.Set("Anthropic-Beta", beta)
	return h
}

// upload posts im to the Files API and returns its file's id.
func (m *Model) upload(ctx context.Context, im llm.Image) (string, error) {
	return provider.PostImage(ctx, &m.files, m.files.URL, nil, im)
}

// deleteFile deletes an uploaded file.
func (m *Model) deleteFile(ctx context.Context, id string) error {
	return m.files.Send(ctx, http.MethodDelete, m.files.URL+"/"+url.PathEscape(id), nil, 0, "", nil)
}
