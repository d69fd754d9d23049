package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/local"
	"github.com/coda-acp/coda/engine/provider/anthropic/anthropictest"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
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

// imageLoop runs a turn of calls model calls on a prompt with im, as the
// engine does: each reply but the last calls a tool, whose result goes
// back with the conversation so far. It returns each call's usage.
func imageLoop(t *testing.T, f *anthropictest.Server, m *Model, im llm.Image, calls int) []llm.Usage {
	t.Helper()
	base := len(f.Requests())
	f.Reply = func(n int, _ *anthropictest.Request) anthropictest.Turn {
		if n-base == calls-1 {
			return fakeText("A square.")
		}
		return anthropictest.Turn{Blocks: []anthropictest.Block{anthropictest.ToolUse(fmt.Sprintf("toolu_%02d", n), "read_file", `{"path":"a.go"}`)}}
	}
	req := &llm.Request{System: "Look.", Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is this?", Images: []llm.Image{im}}},
		Tools: []llm.ToolSpec{{Name: "read_file", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}
	var usage []llm.Usage
	for i := range calls {
		resp, _, err := call(m, req)
		if err != nil {
			t.Fatalf("call %d: %v (refused: %q)", i+1, err, f.Refusals())
		}
		usage = append(usage, resp.Usage)
		if len(resp.ToolCalls) == 0 {
			break
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls, Replay: resp.Replay},
			llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[0].ID, ToolName: "read_file", Text: "package a"})
	}
	if len(usage) != calls {
		t.Fatalf("%d calls, want %d", len(usage), calls)
	}
	return usage
}

// imageSources are the image blocks' sources of each messages request,
// with whether it carried the Files API's beta header.
func imageSources(f *anthropictest.Server) (sources [][]string, beta []bool) {
	for _, r := range f.Requests() {
		var srcs []string
		for _, m := range r.Body.Messages {
			for _, raw := range m.Content {
				var blk struct {
					Type   string          `json:"type"`
					Source json.RawMessage `json:"source"`
				}
				if json.Unmarshal(raw, &blk) == nil && blk.Type == "image" {
					srcs = append(srcs, string(blk.Source))
				}
			}
		}
		sources = append(sources, srcs)
		beta = append(beta, strings.Contains(r.Header.Get("Anthropic-Beta"), filesBeta))
	}
	return sources, beta
}

// A turn's 20 MiB image goes to Claude once: uploaded through the Files
// API (its beta header on) at the first of the turn's ten calls, named by
// its file in all ten, where it stays in the cached prefix (each call
// after the first reads the cache), and deleted when the turn releases
// it. The bytes the server reads for the whole turn are the image's and
// little more, not ten times its base64, and the upload is streamed from
// the image's bytes.
func TestStream_imageUploadedOnce(t *testing.T) {
	f := newFakeAPI(t)
	m := fakeModel(f, "claude-sonnet-4-5", Options{})
	const size = 20 << 20
	im := sharedPNG(pngOf(size))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	usage := imageLoop(t, f, m, im, 10)
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
	if f.Uploads() != 1 || len(files) != 1 || files[0].Bytes != size || files[0].MIMEType != "image/png" {
		t.Fatalf("%d uploads, files %+v; want one, the image", f.Uploads(), files)
	}
	sources, beta := imageSources(f)
	want := fmt.Sprintf(`{"type":"file","file_id":%q}`, files[0].ID)
	for i := range sources {
		if len(sources[i]) != 1 || sources[i][0] != want || !beta[i] {
			t.Errorf("call %d: image sources %v, beta header %v; want %s with the header", i+1, sources[i], beta[i], want)
		}
		if i > 0 && usage[i].CacheReadTokens == 0 {
			t.Errorf("call %d read nothing from the cache", i+1)
		}
	}

	if err := im.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.Deletes() != 1 || len(f.Files()) != 0 {
		t.Errorf("after the turn: %d deleted, %d left; want the file deleted", f.Deletes(), len(f.Files()))
	}
}

// Images smaller than provider.MinUpload go inline, as base64 sources,
// without the beta header; so does an image no turn shares.
func TestStream_smallImageInline(t *testing.T) {
	f := newFakeAPI(t)
	m := fakeModel(f, "claude-sonnet-4-5", Options{})
	for _, im := range []llm.Image{sharedPNG(pngOf(1 << 10)), {MIMEType: "image/png", Data: pngOf(1 << 20)}} {
		imageLoop(t, f, m, im, 1)
	}
	sources, beta := imageSources(f)
	for i := range sources {
		if !strings.HasPrefix(sources[i][0], `{"type":"base64"`) || beta[i] {
			t.Errorf("call %d: %.40s…, beta header %v; want base64 without it", i+1, sources[i][0], beta[i])
		}
	}
	if f.Uploads() != 0 {
		t.Errorf("%d uploads", f.Uploads())
	}
}

// A compatible server that refuses the Files API's beta header: the image
// goes inline, said once in the log; the model asks no more in this
// process, the next turn included.
func TestStream_imageUploadRefused(t *testing.T) {
	f := newFakeAPI(t)
	f.NoFiles = true
	var logs bytes.Buffer
	m := fakeModel(f, "claude-sonnet-4-5", Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 2 {
		imageLoop(t, f, m, sharedPNG(pngOf(512<<10)), 3)
	}
	sources, beta := imageSources(f)
	for i := range sources {
		if !strings.HasPrefix(sources[i][0], `{"type":"base64"`) || beta[i] {
			t.Errorf("call %d: %.40s…, beta header %v; want base64 without it", i+1, sources[i][0], beta[i])
		}
	}
	if n := strings.Count(logs.String(), "uploading an image through the Files API failed"); n != 1 || !strings.Contains(logs.String(), "anthropic-beta") {
		t.Errorf("%d failures logged, want 1 saying why:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("the key shows in the log")
	}
}

// runs is an llm.Models of one model.
type runs struct{ m llm.Model }

func (r runs) Model(string) (llm.Model, error) { return r.m, nil }

// The turn's upload is deleted when the turn ends, by Run: once it has
// answered, and once it was cancelled in the middle of a call.
func TestRun_imageDeletedAtTurnEnd(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancelled=%v", cancelled), func(t *testing.T) {
			f := newFakeAPI(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f.Reply = func(int, *anthropictest.Request) anthropictest.Turn {
				if cancelled {
					cancel() // the image is uploaded, the call under way
					return anthropictest.Turn{Blocks: []anthropictest.Block{anthropictest.Text("Looking")}, Hold: true}
				}
				return anthropictest.Turn{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_1", "submit_output", `{"content":"A square."}`)}}
			}
			b, err := blueprint.Parse([]byte("[stages.answer]\nmode = \"output\"\n"), "look")
			if err != nil {
				t.Fatal(err)
			}
			outs, err := blueprint.CompileOutputs(b, outputspec.Levels{})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			e := &engine.Engine{Models: runs{fakeModel(f, "claude-sonnet-4-5", Options{})}, Store: store.New(dir)}
			turn := &engine.Turn{RunID: "img", Agent: b, Outputs: outs, Prompt: "What is this?", UserModel: "anthropic:claude-sonnet-4-5",
				Workspace: &local.Workspace{Dir: dir}, Images: []llm.Image{{MIMEType: "image/png", Data: pngOf(1 << 20)}}}
			res := e.Run(ctx, turn, sinkFunc(func(context.Context, engine.Event) error { return nil }))
			res.Recorded() // the uploads are deleted after the answer, with the record
			want := engine.StatusAnswered
			if cancelled {
				want = engine.StatusCancelled
			}
			if res.Status != want {
				t.Fatalf("Run = %s (%v), want %s; refused: %q", res.Status, res.Err, want, f.Refusals())
			}
			if f.Uploads() != 1 || f.Deletes() != 1 || len(f.Files()) != 0 {
				t.Errorf("%d uploaded, %d deleted, %d left; want the one upload deleted", f.Uploads(), f.Deletes(), len(f.Files()))
			}
		})
	}
}

// The Files API as its docs show it: the upload is a multipart form with
// the file, its Content-Length given, under x-api-key, anthropic-version
// and the beta header (a configured beta kept beside it); the metadata it
// answers (testdata/files_upload.json, the Files guide's example) names
// the file the call's image block then names, under the beta header too;
// the release is DELETE /v1/files/{file_id}, answered as documented
// (testdata/files_delete.json).
func TestStream_filesAsDocumented(t *testing.T) {
	js := "application/json"
	s := newServer(t, reply{file: "files_upload.json", contentType: js}, reply{file: "text.sse"}, reply{file: "files_delete.json", contentType: js})
	m := New("claude-sonnet-4-5", Options{BaseURL: s.URL, APIKey: testKey, Client: s.Client(), Headers: map[string]string{"Anthropic-Beta": "context-1m-2025-08-07"}})
	data := pngOf(300 << 10)
	im := sharedPNG(data)
	if _, _, err := collect(t, m, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "What is this?", Images: []llm.Image{im}}}}); err != nil {
		t.Fatal(err)
	}
	if err := im.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.requests) != 3 {
		t.Fatalf("%d requests, want upload, call, delete", len(s.requests))
	}
	const beta = "context-1m-2025-08-07," + filesBeta
	for i, r := range s.requests {
		if r.header.Get("X-Api-Key") != testKey || r.header.Get("Anthropic-Version") != Version || r.header.Get("Anthropic-Beta") != beta {
			t.Errorf("request %d's headers: %v", i+1, r.header)
		}
	}
	up, call, del := s.requests[0], s.requests[1], s.requests[2]
	if up.path != "/v1/files" || up.header.Get("Content-Length") != strconv.Itoa(len(up.body)) {
		t.Errorf("the upload: %s, %v", up.path, up.header)
	}
	_, params, _ := mime.ParseMediaType(up.header.Get("Content-Type"))
	mr := multipart.NewReader(bytes.NewReader(up.body), params["boundary"])
	p, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(p)
	if p.FormName() != "file" || p.FileName() != "image.png" || p.Header.Get("Content-Type") != "image/png" || !bytes.Equal(got, data) {
		t.Errorf("the form's part: %s %s %s, %d bytes", p.FormName(), p.FileName(), p.Header.Get("Content-Type"), len(got))
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("the form has more than the file: %v", err)
	}
	if !bytes.Contains(call.body, []byte(`{"type":"image","source":{"type":"file","file_id":"file_011CNha8iCJcU1wXNR6q4V8w"}`)) {
		t.Errorf("the call's image: %.300s", call.body)
	}
	if del.path != "/v1/files/file_011CNha8iCJcU1wXNR6q4V8w" {
		t.Errorf("the deletion: %s", del.path)
	}
}

// sinkFunc adapts a function to an engine.Sink.
type sinkFunc func(ctx context.Context, ev engine.Event) error

func (f sinkFunc) Emit(ctx context.Context, ev engine.Event) error { return f(ctx, ev) }
