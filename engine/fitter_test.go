package engine

import (
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// A request over fitShare of the window has its oldest tool results cut
// to notes, down to fitTarget, never submit_output's; one that cannot fit
// with everything cut is refused as a model unavailable.
func TestFitter_fit(t *testing.T) {
	big := strings.Repeat("a line of the file\n", 200) // 3,800 bytes
	req := &llm.Request{System: "system", Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "the task"},
		{Role: llm.RoleTool, ToolName: "submit_output", Text: big},
		{Role: llm.RoleTool, ToolName: "read_file", Text: big},
		{Role: llm.RoleTool, ToolName: "read_file", Text: big},
		{Role: llm.RoleTool, ToolName: "grep", Text: big},
	}}
	var kept []string
	cut := cutter{
		never: func(tool string) bool { return tool == "submit_output" },
		keep: func(m *llm.Message) string {
			kept = append(kept, m.ToolName)
			return cutPrefix + "kept]"
		},
	}
	var f fitter
	f.windows = &windows{}
	if c, err := f.fit("fake:m", req, 100_000, cut); c != nil || err != nil {
		t.Fatalf("a request well within its window: %v, %v", c, err)
	}
	if c, err := f.fit("fake:m", req, 0, cut); c != nil || err != nil {
		t.Fatalf("a window not known: %v, %v", c, err)
	}
	window := requestBytes(req) / bytesPerToken * 100 / 90 // the request is 90% of it
	c, err := f.fit("fake:m", req, window, cut)
	if err != nil || c == nil {
		t.Fatalf("fit = %v, %v", c, err)
	}
	if strings.Join(kept, ",") != "read_file,read_file" || c.results != 2 || c.tokens*100 > window*fitTarget {
		t.Fatalf("kept %v, cut %d results, now %d tokens of %d", kept, c.results, c.tokens, window)
	}
	if c.msgs[1].Text != big || c.msgs[4].Text != big || req.Messages[2].Text != big {
		t.Error("cut the wrong results, or the request itself rather than a copy")
	}
	if line := c.said(3, "review", "fake:m"); !strings.HasPrefix(line, "compacted before call 3 of stage review:") || !strings.Contains(line, "cut 2 tool results (read_file") {
		t.Errorf("line = %q", line)
	}
	if _, err := f.fit("fake:m", req, 100, cut); err == nil || !strings.Contains(err.Error(), "does not fit fake:m's context window of 100 tokens") {
		t.Errorf("a request that cannot fit: %v", err)
	}
}

// The provider's report of a call sizes the next request: its input
// tokens, plus what was added since at bytesPerToken; the window it
// reports is the model's for the whole tree.
func TestFitter_sized(t *testing.T) {
	f := fitter{windows: &windows{}}
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: strings.Repeat("x", 3000)}}}
	if got := f.estimate(req); got != 1000 {
		t.Errorf("estimate before any report = %d, want 1000", got)
	}
	f.sized("fake:m", req, &llm.Response{Usage: llm.Usage{InputTokens: 400, ContextWindow: 8192}})
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Text: strings.Repeat("y", 300)})
	if got := f.estimate(req); got != 500 {
		t.Errorf("estimate after a report = %d, want 400 + 100", got)
	}
	if got := f.window(t.Context(), "fake:m", shapesModel{}); got != 8192 {
		t.Errorf("window = %d, want the reported 8192", got)
	}
}
