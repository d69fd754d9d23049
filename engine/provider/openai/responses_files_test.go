package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/openai/openaitest"
	"github.com/coda-acp/coda/engine/provider/sse"
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

// filesFake is a fake OpenAI API holding requests to testKey.
func filesFake(t *testing.T) *openaitest.Server {
	t.Helper()
	f := openaitest.NewServer()
	f.Key = testKey
	t.Cleanup(f.Close)
	return f
}

func filesModel(f *openaitest.Server, opts Options) *Responses {
	opts.BaseURL, opts.APIKey, opts.Client, opts.Retry = f.URL, testKey, f.Client(), sse.Retry{Tries: 1}
	return NewResponses("gpt-4.1", opts)
}

// imageLoop runs a turn of calls model calls on a prompt with im, as the
// engine does: each reply but the last calls a tool, whose result goes
// back with the conversation so far.
func imageLoop(t *testing.T, f *openaitest.Server, m *Responses, im llm.Image, calls int) {
	t.Helper()
	f.Reply = func(n int, _ *openaitest.Request) openaitest.Turn {
		if (n+1)%calls == 0 {
			return openaitest.Turn{Text: "A square."}
		}
		return openaitest.Turn{Calls: []openaitest.Call{{Name: "read_file", Args: `{"path":"a.go"}`}}}
	}
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is this?", Images: []llm.Image{im}}}, Tools: []llm.ToolSpec{readTool}}
	for i := range calls {
		resp, _, err := streamOf(t, m, req)
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if len(resp.ToolCalls) == 0 {
			if i != calls-1 {
				t.Fatalf("call %d answered", i+1)
			}
			return
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls, Replay: resp.Replay},
			llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[0].ID, ToolName: "read_file", Text: "package a"})
	}
}

// imageParts are the input_image parts of each /responses request.
func imageParts(f *openaitest.Server) [][]map[string]any {
	var out [][]map[string]any
	for _, r := range f.Requests() {
		if r.Path != "/responses" {
			continue
		}
		var parts []map[string]any
		for _, it := range r.Body["input"].([]any) {
			content, _ := it.(map[string]any)["content"].([]any)
			for _, p := range content {
				if p, _ := p.(map[string]any); p["type"] == "input_image" {
					parts = append(parts, p)
				}
			}
		}
		out = append(out, parts)
	}
	return out
}

// A turn's 20 MiB image goes to the Responses API once: uploaded through
// the Files API at the first of the turn's ten calls (purpose vision, an
// expiry as a backstop), named by its file id in all ten, and deleted
// when the turn releases it. The bytes the server reads for the whole
// turn are the image's and little more, not ten times its base64; and the
// upload is streamed from the image's bytes, not built as a copy of them.
func TestResponses_imageUploadedOnce(t *testing.T) {
	f := filesFake(t)
	m := filesModel(f, Options{})
	const size = 20 << 20
	im := sharedPNG(pngOf(size))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	imageLoop(t, f, m, im, 10)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > size/2 {
		t.Errorf("a turn that uploaded a %d MiB image allocated %.1f MiB: the upload copies the image", size>>20, float64(alloc)/(1<<20))
	}
	sent := f.Received()
	t.Logf("a %d MiB image in 10 calls: %.1f MiB sent, %.1f MiB allocated", size>>20, float64(sent)/(1<<20), float64(alloc)/(1<<20))
	if sent > size+256<<10 {
		t.Errorf("10 calls sent %d bytes for an image of %d: it is sent more than once", sent, size)
	}
	files := f.Files()
	if f.Uploads() != 1 || len(files) != 1 {
		t.Fatalf("%d uploads, %d files; want 1", f.Uploads(), len(files))
	}
	if fl := files[0]; fl.Purpose != "vision" || fl.ExpiresAfter != fileLifetime || fl.Bytes != size || fl.MIMEType != "image/png" {
		t.Errorf("the file: %+v", fl)
	}
	calls := imageParts(f)
	if len(calls) != 10 {
		t.Fatalf("%d calls, want 10", len(calls))
	}
	for i, parts := range calls {
		if len(parts) != 1 || parts[0]["file_id"] != files[0].ID || parts[0]["image_url"] != nil {
			t.Errorf("call %d's image: %v, want file_id %s", i+1, parts, files[0].ID)
		}
	}
	for _, r := range f.Requests() {
		if r.Refused != "" {
			t.Errorf("refused: %s", r.Refused)
		}
	}

	if err := im.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.Deletes() != 1 || len(f.Files()) != 0 {
		t.Errorf("after the turn: %d deleted, %d left; want the file deleted", f.Deletes(), len(f.Files()))
	}
	if err := im.Release(context.Background()); err != nil || f.Deletes() != 1 {
		t.Errorf("a second release: %v, %d deletes; want nothing more", err, f.Deletes())
	}
}

// A small image goes inline, as a data: URL: an upload would cost more
// than it saves; so does an image no turn shares (nowhere to keep its
// file, nothing to delete it).
func TestResponses_smallImageInline(t *testing.T) {
	f := filesFake(t)
	m := filesModel(f, Options{})
	for _, im := range []llm.Image{sharedPNG(pngOf(1 << 10)), {MIMEType: "image/png", Data: pngOf(1 << 20)}} {
		req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "And this?", Images: []llm.Image{im}}}}
		if _, _, err := streamOf(t, m, req); err != nil {
			t.Fatal(err)
		}
	}
	for i, parts := range imageParts(f) {
		if url, _ := parts[0]["image_url"].(string); !strings.HasPrefix(url, "data:image/png;base64,") {
			t.Errorf("image %d: %v, want a data: URL", i+1, parts[0])
		}
	}
	if f.Uploads() != 0 {
		t.Errorf("%d uploads, want none", f.Uploads())
	}
}

// A server without the Files API (a compatible one answers /files 404):
// the image goes inline, said once in the log, and the model asks no more
// in this process, whatever the turn. A passing failure (503) sends the
// image inline for the rest of its turn, and a later turn tries again.
func TestResponses_imageUploadFails(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(*openaitest.Server)
		attempts int // over two turns
	}{
		{"refused", func(f *openaitest.Server) { f.NoFiles = true }, 1},
		{"passing", func(f *openaitest.Server) { f.UploadStatus = 503 }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filesFake(t)
			tc.setup(f)
			log, logs := logBuffer()
			m := filesModel(f, Options{Log: log})
			for range 2 {
				imageLoop(t, f, m, sharedPNG(pngOf(512<<10)), 3)
			}
			for i, parts := range imageParts(f) {
				if url, _ := parts[0]["image_url"].(string); len(parts) != 1 || !strings.HasPrefix(url, "data:image/png;base64,") {
					t.Errorf("call %d: %v, want the image inline", i+1, parts)
				}
			}
			if n := strings.Count(logs.String(), "uploading an image through the Files API failed"); n != tc.attempts {
				t.Errorf("%d upload failures logged, want %d:\n%s", n, tc.attempts, logs)
			}
			if f.Uploads() != 0 {
				t.Errorf("%d uploads", f.Uploads())
			}
		})
	}
}

// An upload's error carries no key, though the server echoes it.
func TestResponses_uploadErrorMasksKey(t *testing.T) {
	f := filesFake(t)
	f.Key = "sk-the-right-one-0000000000"
	log, logs := logBuffer()
	m := filesModel(f, Options{Log: log})
	im := sharedPNG(pngOf(512 << 10))
	_, _, err := streamOf(t, m, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "?", Images: []llm.Image{im}}}})
	if !strings.Contains(logs.String(), "Incorrect API key") {
		t.Fatalf("the upload was not refused for its key:\n%s", logs)
	}
	for _, s := range []string{logs.String(), fmt.Sprint(err)} {
		if strings.Contains(s, testKey) {
			t.Errorf("the key shows: %s", s)
		}
	}
}

// multipartOf is a recorded request's multipart form: its fields, and its
// file part's name, type and bytes.
func multipartOf(t *testing.T, r recorded) (fields map[string]string, file, ctype string, data []byte) {
	t.Helper()
	_, params, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(bytes.NewReader(r.body), params["boundary"])
	fields = map[string]string{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return fields, file, ctype, data
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		if p.FileName() != "" {
			file, ctype, data = p.FormName()+":"+p.FileName(), p.Header.Get("Content-Type"), b
			continue
		}
		fields[p.FormName()] = string(b)
	}
}

// The Files API as its reference documents it: the upload is a
// multipart form (the file; purpose vision; expires_after's anchor and
// seconds), its Content-Length given; the file object it answers
// (testdata/files_upload.json, the reference's example) names the file
// the call then sends as input_image's file_id; the release is DELETE
// /files/{file_id}, answered as documented (testdata/files_delete.json).
func TestResponses_filesAsDocumented(t *testing.T) {
	js := map[string]string{"Content-Type": "application/json"}
	s := newServer(t, reply{file: "files_upload.json", header: js}, reply{file: "responses_text.sse"}, reply{file: "files_delete.json", header: js})
	m := newResponses(s, "gpt-5.4")
	data := pngOf(300 << 10)
	im := sharedPNG(data)
	if _, _, err := streamOf(t, m, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is this?", Images: []llm.Image{im}}}}); err != nil {
		t.Fatal(err)
	}
	if err := im.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.requests) != 3 {
		t.Fatalf("%d requests, want upload, call, delete", len(s.requests))
	}
	up, call, del := s.requests[0], s.requests[1], s.requests[2]
	if up.path != "/v1/files" || up.header.Get("Authorization") != "Bearer "+testKey || up.header.Get("Content-Length") != strconv.Itoa(len(up.body)) {
		t.Errorf("the upload: %s, %v", up.path, up.header)
	}
	fields, file, ctype, got := multipartOf(t, up)
	want := map[string]string{"purpose": "vision", "expires_after[anchor]": "created_at", "expires_after[seconds]": "86400"}
	if !maps.Equal(fields, want) || file != "file:image.png" || ctype != "image/png" || !bytes.Equal(got, data) {
		t.Errorf("the form: %v, file %s (%s, %d bytes)", fields, file, ctype, len(got))
	}
	if !bytes.Contains(call.body, []byte(`{"type":"input_image","file_id":"file-abc123"}`)) || bytes.Contains(call.body, []byte("base64")) {
		t.Errorf("the call's image: %.300s", call.body)
	}
	if del.path != "/v1/files/file-abc123" || del.header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("the deletion: %s", del.path)
	}
}
