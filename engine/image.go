package engine

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/coda-acp/coda/internal/bytesize"
)

// An Image is a picture the user attached to a prompt. The turn's task
// message carries it to models that see images; the others, and later
// turns, get a line of text in its place.
type Image struct {
	MIMEType string // one of imageTypes
	Data     []byte // the decoded bytes
	URI      string // where the editor says it came from; "" when it did not

	// shared is what every copy of the image shares for its turn: its
	// bytes encoded once, and where a provider uploaded it (Base64,
	// Uploaded). Run gives each of the turn's images its own.
	shared *imageShared
}

// imageShared is an image's encoding and uploads, for all the model calls
// of its turn: a 20 MiB image is encoded once, not at every call.
type imageShared struct {
	once    sync.Once
	base64  string
	mu      sync.Mutex
	uploads map[string]string
}

// NewImage is an image ready to be shared by the calls of a turn (Run
// readies the turn's own; this is for callers that build requests
// themselves).
func NewImage(mimeType string, data []byte, uri string) Image {
	return Image{MIMEType: mimeType, Data: data, URI: uri, shared: &imageShared{}}
}

// readyImages gives each image without one what its copies share.
func readyImages(images []Image) {
	for i := range images {
		if images[i].shared == nil {
			images[i].shared = &imageShared{}
		}
	}
}

// Base64 is the image's bytes in standard base64, as the providers send
// them: encoded once for the turn and kept.
func (im Image) Base64() string {
	if im.shared == nil {
		return base64.StdEncoding.EncodeToString(im.Data)
	}
	im.shared.once.Do(func() { im.shared.base64 = base64.StdEncoding.EncodeToString(im.Data) })
	return im.shared.base64
}

// Uploaded is where the image was uploaded under key (a provider's files
// API and account): upload is called the first time the turn asks, its
// answer kept for the turn's other calls, so the image is sent once. An
// upload that fails is tried again at the next call.
func (im Image) Uploaded(key string, upload func() (string, error)) (string, error) {
	if im.shared == nil {
		return upload()
	}
	im.shared.mu.Lock()
	defer im.shared.mu.Unlock()
	if ref, ok := im.shared.uploads[key]; ok {
		return ref, nil
	}
	ref, err := upload()
	if err != nil {
		return "", err
	}
	if im.shared.uploads == nil {
		im.shared.uploads = map[string]string{}
	}
	im.shared.uploads[key] = ref
	return ref, nil
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

// standIn is what a model that cannot see images is sent in an image's
// place.
func (im Image) standIn() string {
	return fmt.Sprintf("[The user attached an image (%s, %s); this model cannot see images.]", im.MIMEType, bytesize.Format(len(im.Data)))
}

// TextWithStandIns is a message's text for a model that cannot see
// images: each image's standIn, then the text.
func (m *Message) TextWithStandIns() string {
	if len(m.Images) == 0 {
		return m.Text
	}
	var b strings.Builder
	for _, im := range m.Images {
		b.WriteString(im.standIn())
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
