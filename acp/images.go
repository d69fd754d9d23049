package acp

import (
	"encoding/base64"
	"fmt"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/bytesize"
)

// promptImages are the prompt's image blocks, decoded and checked
// (llm.CheckImage); a bad one is -32602 naming the block. They go to the
// engine beside the prompt's text.
func promptImages(blocks []contentBlock) ([]llm.Image, error) {
	var images []llm.Image
	for i, c := range blocks {
		if c.Type != "image" {
			continue
		}
		if c.Data == "" {
			return nil, fmt.Errorf("%w: prompt[%d].data is required: the image's bytes, base64", ErrInvalidParams, i)
		}
		// Refused before decoding: a huge block costs no more memory.
		if base64.StdEncoding.DecodedLen(len(c.Data)) > llm.MaxImageSize+2 {
			return nil, fmt.Errorf("%w: prompt[%d]: the image is over the %s limit", ErrInvalidParams, i, bytesize.Format(llm.MaxImageSize))
		}
		data, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil {
			// Some clients leave out the padding.
			if data, err = base64.RawStdEncoding.DecodeString(c.Data); err != nil {
				return nil, fmt.Errorf("%w: prompt[%d].data is not base64", ErrInvalidParams, i)
			}
		}
		mime, err := llm.CheckImage(c.MimeType, data)
		if err != nil {
			return nil, fmt.Errorf("%w: prompt[%d]: %v", ErrInvalidParams, i, err)
		}
		images = append(images, llm.Image{MIMEType: mime, Data: data, URI: c.URI})
	}
	return images, nil
}
