package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/store"
)

// A json, yaml or toml answer's record carries its decoded value as data,
// beside its bytes, unchanged, in content; run.json keeps it too. Other
// formats have no data.
func TestRun_answerData(t *testing.T) {
	tests := []struct {
		format, content, data string
	}{
		{"json", "{\n  \"n\": 2,\n  \"tags\": [\"a\"]\n}", `{"n":2,"tags":["a"]}`},
		{"yaml", "n: 2\ntags:\n  - a\n", `{"n":2,"tags":["a"]}`},
		{"toml", "n = 2\ntags = [\"a\"]\n", `{"n":2,"tags":["a"]}`},
		{"markdown", "# Two", ""},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"content": tt.content})
			turn := newTurn(t, answerStage+"[stages.answer.output]\nformat = \""+tt.format+"\"\n", fmt.Sprintf(`
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
raw_arguments = %q
`, args))
			res := runTurn(context.Background(), turn, &events{})
			ended(t, res, engine.StatusAnswered, "end_turn")
			if res.Answer.Content != tt.content {
				t.Errorf("content %q, want the bytes as submitted, %q", res.Answer.Content, tt.content)
			}
			if !jsonEqual(t, res.Answer.Data, tt.data) {
				t.Errorf("data %s, want %s", res.Answer.Data, tt.data)
			}
			b, err := os.ReadFile(recordPath(turn, "run.json"))
			if err != nil {
				t.Fatal(err)
			}
			var rr store.RunRecord
			if err := json.Unmarshal(b, &rr); err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, rr.FinalOutput.Data, tt.data) {
				t.Errorf("run.json's data %s, want %s", rr.FinalOutput.Data, tt.data)
			}
		})
	}
}

// jsonEqual reports whether got holds the JSON value want ("" for none).
func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	if want == "" || len(got) == 0 {
		return want == "" && len(got) == 0
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("data %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	return cmp.Equal(g, w)
}

// A later stage sees a yaml answer's data under the stage's name, framed.
func TestRun_answerDataInPreamble(t *testing.T) {
	turn, sp := scripted(t, `
[agent]
name = "two"
[stages.count]
mode = "output"
[stages.count.output]
format = "yaml"
[stages.count.transitions.report]
hint = "Counted"
[stages.report]
mode = "output"
[stages.report.output]
format = "markdown"
`, `
[[turn]]
[[turn.tool_calls]]
name = "submit_output"
arguments = { content = "n: 2\n" }
[[turn.tool_calls]]
name = "transition"
arguments = { to = "report" }

[[turn]]
text = "Two."
`)
	res := runTurn(context.Background(), turn, &events{})
	ended(t, res, engine.StatusAnswered, "end_turn")
	preamble := sp.reqs[1].Messages[0].Text
	want := "<coda-data source=\"stage count: its yaml answer's data, as JSON\">\n{\"n\":2}\n</coda-data>"
	if !strings.Contains(preamble, want) {
		t.Errorf("the report stage's preamble lacks %q:\n%s", want, preamble)
	}
}
