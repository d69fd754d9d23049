package gemini

import (
	"bytes"
	"context"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// pngOf is a PNG header padded to n bytes: an image as CheckImage sees one.
func pngOf(n int) []byte {
	return append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, n-8)...)
}

// sharedPNG is a PNG image readied as engine.Run readies a turn's
// (llm.ReadyImages), so that the turn's calls share its upload.
func sharedPNG(data []byte) llm.Image {
	ims := []llm.Image{{MIMEType: "image/png", Data: data}}
	llm.ReadyImages(ims)
	return ims[0]
}

// A turn's image goes to Gemini once: uploaded through the Files API at the
// first call, named by its URI in the ten calls of the turn; so a 4 MiB
// image costs about 4 MiB of upload, not ten times its base64. A small one
// goes inline, and an image of 16 MiB, which inline would take past the 20
// MB request limit, is served too.
func TestStream_imageUploadedOnce(t *testing.T) {
	f := newFake(t, testKey, textReply("I see it."))
	m := fakeGemini(f, "gemini-2.5-flash", Options{})
	const size = 4 << 20
	for _, im := range []llm.Image{sharedPNG(pngOf(size)), sharedPNG(pngOf(16 << 20))} {
		before := f.Received()
		req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is this?", Images: []llm.Image{im}}}}
		for range 10 {
			if _, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
				t.Fatalf("Stream: %v (the fake refused: %q)", err, f.Refusals())
			}
		}
		sent := f.Received() - before
		t.Logf("an image of %d MiB in 10 calls: %.1f MiB sent", len(im.Data)>>20, float64(sent)/(1<<20))
		if sent > int64(len(im.Data))+64<<10 {
			t.Errorf("10 calls sent %d bytes for an image of %d: it is sent more than once", sent, len(im.Data))
		}
	}
	if f.Uploaded() != 2 {
		t.Errorf("%d files uploaded, want one an image", f.Uploaded())
	}
	small := sharedPNG(pngOf(1 << 10))
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "And this?", Images: []llm.Image{small}}}}
	if _, err := m.Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if last := reqs[len(reqs)-1]; last.Body.Contents[0].Parts[0].InlineData == nil || f.Uploaded() != 2 {
		t.Errorf("a 1 KiB image was uploaded, not sent inline")
	}
}
