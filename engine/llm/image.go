package llm

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

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
	// Uploaded, Release). engine.Run gives each of the turn's images its
	// own (ReadyImages).
	shared *imageShared
}

// imageShared is an image's encoding and uploads, for all the model calls
// of its turn: a 20 MiB image is encoded once, and sent once to an API
// that keeps files, not at every call.
type imageShared struct {
	once    sync.Once
	base64  string
	mu      sync.Mutex
	uploads map[string]imageUpload // by Uploaded's key
}

// An imageUpload is where a provider keeps an image for the turn, or why it
// could not: ref names the file; release deletes it (nil where the API
// drops it by itself); err is the upload's failure, kept so that the
// turn's other calls send the image inline rather than upload it again.
type imageUpload struct {
	ref     string
	release func(context.Context) error
	err     error
}

// ReadyImages gives each image without one what its copies share.
func ReadyImages(images []Image) {
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

// ErrNoTurn is Uploaded's answer for an image that no turn shares (an
// Image literal that ReadyImages, as engine.Run calls it, never readied):
// there is nowhere to keep its file or to delete it from, so it is not
// uploaded, and goes inline.
var ErrNoTurn = errors.New("the image belongs to no turn")

// Uploaded is where the image was uploaded under key (a provider's files
// API and account). upload is called the first time the turn asks: it
// returns the file's reference and, where the file stays until deleted, a
// release that deletes it, which engine.Run calls once when the turn has ended
// (Release). Its answer, or its failure, is kept for the turn's other
// calls: the image is sent once, and an upload that failed is not tried
// again in the turn (the provider sends the image inline, having said why
// once).
func (im Image) Uploaded(key string, upload func() (ref string, release func(context.Context) error, err error)) (string, error) {
	if im.shared == nil {
		return "", ErrNoTurn
	}
	s := im.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.uploads[key]; ok {
		return u.ref, u.err
	}
	var u imageUpload
	u.ref, u.release, u.err = upload()
	if u.err != nil {
		u.ref, u.release = "", nil
	}
	if s.uploads == nil {
		s.uploads = map[string]imageUpload{}
	}
	s.uploads[key] = u
	return u.ref, u.err
}

// Release deletes what the image's uploads left on providers' accounts,
// each file once, and forgets them: a later call would upload the image
// anew. It returns the deletions' errors, joined.
func (im Image) Release(ctx context.Context) error {
	if im.shared == nil {
		return nil
	}
	s := im.shared
	s.mu.Lock()
	ups := s.uploads
	s.uploads = nil
	s.mu.Unlock()
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(ups)) {
		if u := ups[key]; u.release != nil {
			if err := u.release(ctx); err != nil {
				errs = append(errs, fmt.Errorf("deleting %s: %w", u.ref, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ReleaseTimeout bounds the deletions at a turn's end: a provider that
// does not answer holds the turn's response (its answer is already out)
// this long at most.
const ReleaseTimeout = 5 * time.Second

// ReleaseImages releases the turn's images once its last model call is
// over, whatever ended it: a cancelled turn's files are deleted too, under
// a context of their own, bounded by ReleaseTimeout. A failure is logged:
// the file stays on the account.
func ReleaseImages(ctx context.Context, images []Image, log *slog.Logger) {
	if len(images) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReleaseTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, im := range images {
		wg.Go(func() {
			if err := im.Release(ctx); err != nil {
				log.Warn("an image uploaded for the turn could not be deleted", "err", err)
			}
		})
	}
	wg.Wait()
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

// HistoryNote is what later turns read in an image's place: images are
// sent in their own turn only.
func (im Image) HistoryNote() string {
	return fmt.Sprintf("[The user attached an image here (%s, %s); it was shown only in that turn.]", im.MIMEType, bytesize.Format(len(im.Data)))
}
