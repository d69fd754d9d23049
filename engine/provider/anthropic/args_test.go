package anthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// readBody runs the stream reader over body, written by fill as it is
// read, so the test holds none of it.
func readBody(t *testing.T, fill func(w io.Writer)) *llm.Response {
	t.Helper()
	pr, pw := io.Pipe()
	go func() {
		fill(pw)
		pw.Close()
	}()
	started := false
	s := &stream{onDelta: func(llm.Delta) error { return nil }, started: &started}
	if err := s.read(sse.NewReader(pr)); err != nil {
		t.Fatal(err)
	}
	resp, err := s.response()
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// A tool_use input past its cap is cut while it streams, whether it comes
// in input_json_delta fragments or whole in the block's start.
func TestStream_oversizedInput(t *testing.T) {
	filler := strings.Repeat("x", 1000)
	const size = 3 << 20
	want := len(`{"content": ""}`) + size
	check := func(t *testing.T, resp *llm.Response, name string) {
		t.Helper()
		tc := resp.ToolCalls[0]
		if tc.Name != name || tc.ID != "toolu_1" || tc.Dropped == 0 || tc.Size() != want || len(tc.Arguments) > 4<<10 || !strings.HasPrefix(string(tc.Arguments), `{"content": "xxx`) {
			t.Errorf("call %s: kept %d bytes, dropped %d, size %d (want %d)", tc.Name, len(tc.Arguments), tc.Dropped, tc.Size(), want)
		}
	}
	t.Run("fragments", func(t *testing.T) {
		resp := readBody(t, func(w io.Writer) {
			io.WriteString(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"submit_output\",\"input\":{}}}\n\n")
			frag := func(s string) {
				b, _ := json.Marshal(s)
				fmt.Fprintf(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":%s}}\n\n", b)
			}
			frag(`{"content": "`)
			for n := 0; n < size; n += len(filler) {
				frag(filler[:min(len(filler), size-n)])
			}
			frag(`"}`)
			io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		})
		check(t, resp, "submit_output")
	})
	t.Run("whole message", func(t *testing.T) {
		resp := readBody(t, func(w io.Writer) {
			io.WriteString(w, `data: {"type":"message","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_1","name":"write_file","input":{"content": "`)
			for n := 0; n < size; n += len(filler) {
				io.WriteString(w, filler[:min(len(filler), size-n)])
			}
			io.WriteString(w, "\"}}]}\n\n")
		})
		check(t, resp, "write_file")
	})
}

// A stream that breaks after its text spilled to a file lets the file go
// at once, not when a collection finds the dropped stream.
func TestStream_brokenDiscardsSpill(t *testing.T) {
	var body strings.Builder
	body.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range 10_000 {
		fmt.Fprintf(&body, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"chunk %06d of the streamed reply text.. \"}}\n\n", i)
	}
	started := false
	s := &stream{onDelta: func(llm.Delta) error { return nil }, started: &started}
	if err := s.read(sse.NewReader(strings.NewReader(body.String()))); err == nil {
		t.Fatal("a stream without its end read as whole")
	}
	if s.text.String() != "" {
		t.Error("the broken stream's text is kept")
	}
}
