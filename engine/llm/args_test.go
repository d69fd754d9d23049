package llm_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/outputspec"
	"github.com/google/go-cmp/cmp"
)

func TestArgsCap(t *testing.T) {
	if got := llm.ArgsCap(blueprint.ToolSubmitOutput); got != 2*outputspec.MaxAnswer+64<<10 {
		t.Errorf("submit_output's cap = %d", got)
	}
	if got := llm.ArgsCap("write_file"); got != 1<<20 {
		t.Errorf("write_file's cap = %d", got)
	}
}

func TestArgsBuffer(t *testing.T) {
	t.Run("within the cap", func(t *testing.T) {
		a := llm.ArgsBuffer{Name: "read_file"}
		a.WriteString(" {\"path\":")
		a.Write([]byte(` "a.go"} `))
		want := llm.ToolCall{ID: "c", Name: "read_file", Arguments: json.RawMessage(`{"path": "a.go"}`)}
		if diff := cmp.Diff(want, a.ToolCall("c")); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("none, space or null are {}", func(t *testing.T) {
		for _, in := range []string{"", "  \n", "null"} {
			a := llm.ArgsBuffer{Name: "x"}
			a.WriteString(in)
			if got := a.ToolCall("c"); string(got.Arguments) != "{}" || got.Dropped != 0 {
				t.Errorf("%q: %+v", in, got)
			}
			if !a.Empty() && in != "null" {
				t.Errorf("%q: not Empty", in)
			}
		}
	})
	t.Run("past the cap a prefix is kept and the rest counted", func(t *testing.T) {
		a := llm.ArgsBuffer{Name: "write_file"}
		frag := strings.Repeat("x", 1000)
		n := 0
		for n <= 3<<20 {
			a.WriteString(frag)
			n += len(frag)
		}
		tc := a.ToolCall("c")
		if tc.Size() != n || a.Len() != n || tc.Dropped != n-len(tc.Arguments) || len(tc.Arguments) > 4<<10 || len(tc.Arguments) == 0 {
			t.Errorf("kept %d, dropped %d of %d", len(tc.Arguments), tc.Dropped, n)
		}
		if a.Empty() {
			t.Error("a cut call is Empty")
		}
	})
	t.Run("exactly at the cap is kept whole", func(t *testing.T) {
		a := llm.ArgsBuffer{Name: "write_file"}
		a.WriteString(strings.Repeat("x", llm.MaxArgs))
		if tc := a.ToolCall("c"); tc.Dropped != 0 || len(tc.Arguments) != llm.MaxArgs {
			t.Errorf("kept %d, dropped %d", len(tc.Arguments), tc.Dropped)
		}
	})
	t.Run("a name that comes late lowers the cap", func(t *testing.T) {
		var a llm.ArgsBuffer
		a.WriteString(strings.Repeat("x", llm.MaxSubmitArgs+1))
		a.Name = blueprint.ToolSubmitOutput
		if tc := a.ToolCall("c"); tc.Dropped == 0 || tc.Size() != llm.MaxSubmitArgs+1 {
			t.Errorf("kept %d, dropped %d", len(tc.Arguments), tc.Dropped)
		}
	})
	t.Run("the kept prefix ends on a character", func(t *testing.T) {
		for shift := range 4 {
			a := llm.ArgsBuffer{Name: "x"}
			a.WriteString(strings.Repeat("a", shift) + strings.Repeat("€", llm.MaxArgs))
			tc := a.ToolCall("c")
			if !utf8.Valid(tc.Arguments) || tc.Size() != shift+3*llm.MaxArgs {
				t.Errorf("shift %d: valid %v, size %d", shift, utf8.Valid(tc.Arguments), tc.Size())
			}
		}
	})
}
