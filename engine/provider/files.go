package provider

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"

	"github.com/coda-acp/coda/engine/provider/sse"
)

// A turn's images are sent once where an API keeps files (llm.Image's
// Uploaded and Release): Gemini's Files API (gemini/upload.go), OpenAI's
// for the Responses API (openai/responses_files.go), Anthropic's
// (anthropic/files.go). What they share is here.

// MinUpload is the smallest image uploaded rather than sent inline: an
// upload costs requests of its own, which a small image does not repay.
const MinUpload = 256 << 10

// FilesKey is the key an image's upload is kept under for its turn
// (llm.Image.Uploaded): one per API and account, since a file uploaded
// with one key is not another account's to name. The key is hashed, never
// kept.
func FilesKey(kind, baseURL, apiKey string) string {
	h := sha256.Sum256([]byte(apiKey))
	return kind + ":" + baseURL + ":" + hex.EncodeToString(h[:6])
}

// MultipartFile is a multipart/form-data body: the fields, in order, then
// one file part named name, read straight from data as the body is sent,
// so that a 20 MiB image is not copied to be uploaded. It returns the body,
// its size and its Content-Type (with the boundary).
func MultipartFile(fields [][2]string, name, filename, mimeType string, data []byte) (body io.Reader, size int64, contentType string) {
	var head bytes.Buffer
	w := multipart.NewWriter(&head)
	for _, f := range fields {
		_ = w.WriteField(f[0], f[1]) // a bytes.Buffer does not fail
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, name, filename))
	h.Set("Content-Type", mimeType)
	_, _ = w.CreatePart(h)
	n := head.Len()
	_ = w.Close() // the closing boundary, after the part's bytes
	tail := bytes.Clone(head.Bytes()[n:])
	head.Truncate(n)
	size = int64(head.Len() + len(data) + len(tail))
	return io.MultiReader(&head, bytes.NewReader(data), bytes.NewReader(tail)), size, w.FormDataContentType()
}

// UploadRefused reports whether err is a server's refusal of an upload
// that another would meet too: a 4xx other than a timeout or a rate
// limit (a server without the files API, or one that refuses its beta
// header). The provider then sends images inline for the rest of the
// process.
func UploadRefused(err error) bool {
	var serr *sse.StatusError
	return errors.As(err, &serr) && serr.Code >= 400 && serr.Code < 500 &&
		serr.Code != http.StatusRequestTimeout && serr.Code != http.StatusTooManyRequests
}
