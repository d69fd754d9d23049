package script

import (
	"context"
	"strings"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
)

// A scripted call's arguments go through the same cap as a provider's:
// past it the call comes back cut, as a real model's would.
func TestModel_oversizedArguments(t *testing.T) {
	big := `{"content": "` + strings.Repeat("x", llm.MaxSubmitArgs) + `"}`
	m := New("script:t", &Script{Turns: []Turn{{ToolCalls: []ToolCall{
		{Name: "submit_output", RawArguments: big},
		{Name: "read_file", RawArguments: "  " + big + "  "},
		{Name: "write_file", Arguments: map[string]any{"content": strings.Repeat("y", llm.MaxArgs)}},
	}}}})
	resp, err := m.Stream(context.Background(), &llm.Request{}, func(llm.Delta) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	cut, whole, over := resp.ToolCalls[0], resp.ToolCalls[1], resp.ToolCalls[2]
	if cut.Dropped == 0 || cut.Size() != len(big) || len(cut.Arguments) > 4<<10 {
		t.Errorf("submit_output: kept %d, dropped %d", len(cut.Arguments), cut.Dropped)
	}
	if whole.Dropped != 0 || string(whole.Arguments) != big {
		t.Errorf("read_file (under its 1 MiB cap): kept %d, dropped %d", len(whole.Arguments), whole.Dropped)
	}
	if over.Dropped == 0 {
		t.Errorf("write_file over its cap was not cut: %d bytes", len(over.Arguments))
	}
}
