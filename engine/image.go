package engine

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/coda-acp/coda/internal/bytesize"
)

// An Image is a picture the user attached to a prompt. The turn's task
// message carries it to models that see images; the others, and later
// turns, get a line of text in its place.
type Image struct {
	MIMEType string // one of imageTypes
	Data     []byte // the decoded bytes
	URI      string // where the editor says it came from; "" when it did not
}

// imageTypes are the image types coda passes on: the ones both providers
// take.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// MaxImageSize bounds one image's decoded bytes, about what the providers
// take per image.
const MaxImageSize = 20 << 20

// CheckImage checks an attached image: its declared type, its size, and
// that its bytes are an image of a type coda passes on. It returns the type
// the bytes have, which is what providers are told (they refuse a
// mismatch).
func CheckImage(mimeType string, data []byte) (string, error) {
	if !slices.Contains(imageTypes, strings.ToLower(mimeType)) {
		return "", fmt.Errorf("mimeType %q: coda takes %s", mimeType, strings.Join(imageTypes, ", "))
	}
	if len(data) > MaxImageSize {
		return "", fmt.Errorf("the image is %s, over the %s limit", bytesize.Format(len(data)), bytesize.Format(MaxImageSize))
	}
	sniffed := http.DetectContentType(data)
	if !slices.Contains(imageTypes, sniffed) {
		return "", fmt.Errorf("data is not a PNG, JPEG, GIF or WebP image (it looks like %s)", strings.Split(sniffed, ";")[0])
	}
	return sniffed, nil
}

// StandIn is what a model that cannot see images is sent in an image's
// place.
func (im Image) StandIn() string {
	return fmt.Sprintf("[The user attached an image (%s, %s); this model cannot see images.]", im.MIMEType, bytesize.Format(len(im.Data)))
}

// TextWithStandIns is a message's text for a model that cannot see
// images: each image's StandIn, then the text.
func (m *Message) TextWithStandIns() string {
	if len(m.Images) == 0 {
		return m.Text
	}
	var b strings.Builder
	for _, im := range m.Images {
		b.WriteString(im.StandIn())
		b.WriteString("\n\n")
	}
	b.WriteString(m.Text)
	return strings.TrimRight(b.String(), "\n")
}

// historyNote is what later turns read in an image's place: images are
// sent in their own turn only.
func (im Image) historyNote() string {
	return fmt.Sprintf("[The user attached an image here (%s, %s); it was shown only in that turn.]", im.MIMEType, bytesize.Format(len(im.Data)))
}

// HistoryPrompt is the turn's prompt as the session's later turns read it:
// the text, then a note in place of each image.
func (t *Turn) HistoryPrompt() string {
	if len(t.Images) == 0 {
		return t.Prompt
	}
	var b strings.Builder
	b.WriteString(t.Prompt)
	for _, im := range t.Images {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(im.historyNote())
	}
	return b.String()
}
