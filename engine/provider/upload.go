package provider

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// An Uploader sends a turn's images once through an API's Files API: the
// shape every provider that uploads shares (files.go says what else they
// share). An image smaller than MinUpload goes inline, and so does one
// whose upload fails, which is logged; with Sticky, a server that refuses
// an upload with a 4xx (UploadRefused: one without the Files API, or that
// refuses its beta header) is not asked again by this model. What differs
// per API is Upload and Delete.
type Uploader struct {
	// Kind names the API in the upload's key (FilesKey) and the log:
	// "openai", "anthropic", "gemini".
	Kind string
	Opts Options
	// Upload sends im within the call's deadlines and returns what names
	// the file in a request (an id, a URI).
	Upload func(ctx context.Context, im llm.Image) (string, error)
	// Delete deletes an uploaded file when its turn ends
	// (llm.Image.Release); nil where the API deletes files itself.
	Delete func(ctx context.Context, id string) error
	// Sticky makes a refused upload send every later image inline.
	Sticky bool

	refused atomic.Bool
}

// File is the uploaded file that holds im for this turn, uploading it the
// first time; "" to send it inline.
func (u *Uploader) File(ctx context.Context, im llm.Image) string {
	if len(im.Data) < MinUpload || u.refused.Load() {
		return ""
	}
	id, _ := im.Uploaded(FilesKey(u.Kind, u.Opts.BaseURL, u.Opts.APIKey), func() (string, func(context.Context) error, error) {
		id, err := u.Upload(ctx, im)
		if err != nil {
			refused := u.Sticky && UploadRefused(err)
			if refused {
				u.refused.Store(true)
			}
			u.Opts.Log.Warn(u.Kind+": uploading an image through the Files API failed; it is sent inline", "model", u.Opts.Name, "err", err, "refused", refused)
			return "", nil, err
		}
		if u.Delete == nil {
			return id, nil, nil
		}
		return id, func(ctx context.Context) error { return u.Delete(ctx, id) }, nil
	})
	return id
}

// PostImage uploads im with call as a multipart/form-data POST to url
// (fields, then the file part named "file", streamed from the image's
// bytes) and returns the id its answer names.
func PostImage(ctx context.Context, call *sse.Call, url string, fields [][2]string, im llm.Image) (string, error) {
	body, size, ctype := MultipartFile(fields, "file", ImageFilename(im.MIMEType), im.MIMEType, im.Data)
	var file struct {
		ID string `json:"id"`
	}
	if err := call.Send(ctx, http.MethodPost, url, body, size, ctype, &file); err != nil {
		return "", err
	}
	if file.ID == "" {
		return "", fmt.Errorf("%s: the upload's answer names no file", url)
	}
	return file.ID, nil
}

// ImageFilename is the name an image is uploaded under: the APIs want
// one, and take the type from its extension.
func ImageFilename(mimeType string) string {
	switch mimeType {
	case "image/jpeg":
		return "image.jpg"
	case "image/gif":
		return "image.gif"
	case "image/webp":
		return "image.webp"
	}
	return "image.png"
}
