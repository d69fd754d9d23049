package acp

import (
	"encoding/base64"
	"fmt"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/internal/bytesize"
)

// promptImages are the prompt's image blocks, decoded and checked
// (engine.CheckImage); a bad one is -32602 naming the block. They go to the
// engine beside the prompt's text.
func promptImages(blocks []contentBlock) ([]engine.Image, error) {
	var images []engine.Image
	for i, c := range blocks {
		if c.Type != "image" {
			continue
		}
		if c.Data == "" {
			return nil, fmt.Errorf("%w: prompt[%d].data is required: the image's bytes, base64", ErrInvalidParams, i)
		}
		// Refused before decoding: a huge block costs no more memory.
		if base64.StdEncoding.DecodedLen(len(c.Data)) > engine.MaxImageSize+2 {
			return nil, fmt.Errorf("%w: prompt[%d]: the image is over the %s limit", ErrInvalidParams, i, bytesize.Format(engine.MaxImageSize))
		}
		data, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil {
			// Some clients leave out the padding.
			if data, err = base64.RawStdEncoding.DecodeString(c.Data); err != nil {
				return nil, fmt.Errorf("%w: prompt[%d].data is not base64", ErrInvalidParams, i)
			}
		}
		mime, err := engine.CheckImage(c.MimeType, data)
		if err != nil {
			return nil, fmt.Errorf("%w: prompt[%d]: %v", ErrInvalidParams, i, err)
		}
		images = append(images, engine.Image{MIMEType: mime, Data: data, URI: c.URI})
	}
	return images, nil
}
