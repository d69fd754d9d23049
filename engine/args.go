package engine

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/coda-acp/coda/engine/llm"
)

// Tool call arguments are capped while they stream: a model that writes
// megabytes into one call must not make coda hold them, nor hand them to
// the editor and the run record. Providers collect the fragments in an
// ArgsBuffer; past its cap a call keeps its first bytes and a count of the
// rest, and the engine refuses it unrun, telling the model the size and
// the cap. This file is the one home of that rule.

// tidyCalls holds a reply's tool calls to their caps and re-encodes their
// arguments compactly, once, for everything that uses them after.
func tidyCalls(calls []llm.ToolCall) {
	for i := range calls {
		llm.CapArgs(&calls[i])
		compactArgs(&calls[i])
	}
}

// compactArgs re-encodes JSON arguments compactly (DESIGN §8: a model's
// whitespace must not reach the wire, where one message is one line).
// Arguments that are not JSON, or were cut, are left as they are.
func compactArgs(tc *llm.ToolCall) {
	a := tc.Arguments
	if tc.Dropped > 0 || !bytes.ContainsAny(a, " \t\r\n") {
		return // JSON without those bytes is compact already
	}
	var b bytes.Buffer
	b.Grow(len(a))
	if json.Compact(&b, a) == nil {
		tc.Arguments = b.Bytes()
	}
}

// shownArgs is a call's arguments as the editor (rawInput) and the run
// record get them: the JSON itself (compact, see compactArgs); arguments
// that are not JSON as a JSON string; arguments cut at their cap as a
// small object giving their size, the cap and the kept head.
func shownArgs(tc llm.ToolCall) []byte {
	a := tc.Arguments
	if tc.Dropped > 0 {
		b := []byte(`{"oversized":{"bytes":`)
		b = strconv.AppendInt(b, int64(tc.Size()), 10)
		b = append(b, `,"cap":`...)
		b = strconv.AppendInt(b, int64(llm.ArgsCap(tc.Name)), 10)
		b = append(b, `,"head":`...)
		head, _ := json.Marshal(string(a))
		b = append(b, head...)
		return append(b, "}}"...)
	}
	if len(a) == 0 || !json.Valid(a) {
		b, _ := json.Marshal(string(a))
		return b
	}
	return a
}
