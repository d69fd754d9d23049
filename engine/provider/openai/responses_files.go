package openai

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
)

// An image of the turn goes to the Responses API once: uploaded through
// the Files API at the turn's first call, then named by its id in every
// call of the turn ({"type": "input_image", "file_id"}), where a data: URL
// would carry its bytes, base64, in each.
//
// What the API reference says (platform.openai.com/docs/api-reference/files/create,
// …/files/delete, and the Responses input_image, …/responses/create):
// POST /files takes multipart/form-data with the file and its purpose,
// "vision" for images ("Images used for vision"; the images-and-vision
// guide uploads with it and names the file in input_image's file_id), and
// an expires_after of anchor created_at and 3600 to 2592000 seconds;
// without one, such a file is "persisted until manually deleted". So each
// upload is deleted when its turn ends (llm.Image.Release, which Run
// calls) and expires after fileLifetime anyway, should coda be stopped
// before; the lifetime is a day rather than the least hour so that a long
// turn does not lose its image between two calls.
//
// An image smaller than provider.MinUpload goes inline, and so does one
// whose upload fails, which is logged once. A server that refuses the
// upload with a 4xx (a compatible one without the Files API answers 404)
// is not asked again by this model.
//
// Chat completions keeps data: URLs (request.go): its image_url part takes
// a URL only, and its file part is for documents (PDFs), not images; the
// servers that speak it beside OpenAI have no Files API.

// fileLifetime is expires_after's seconds: a day.
const fileLifetime = 24 * 60 * 60

// upload posts im to the Files API and returns its file's id.
func (m *Responses) upload(ctx context.Context, im llm.Image) (string, error) {
	return provider.PostImage(ctx, &m.call, m.opts.BaseURL+"/files", [][2]string{
		{"purpose", "vision"},
		{"expires_after[anchor]", "created_at"},
		{"expires_after[seconds]", strconv.Itoa(fileLifetime)},
	}, im)
}

// deleteFile deletes an uploaded file.
func (m *Responses) deleteFile(ctx context.Context, id string) error {
	var answer struct {
		Deleted bool `json:"deleted"`
	}
	if err := m.call.Send(ctx, http.MethodDelete, m.opts.BaseURL+"/files/"+url.PathEscape(id), nil, 0, "", &answer); err != nil {
		return err
	}
	if !answer.Deleted {
		return fmt.Errorf("%s: the server did not delete %s", m.opts.Name, id)
	}
	return nil
}
