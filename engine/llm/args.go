package llm

import (
	"bytes"

	"github.com/coda-acp/coda/internal/answer"
	"github.com/coda-acp/coda/internal/textcut"
)

// Tool call arguments are capped while they stream: a model that writes
// megabytes into one call must not make coda hold them, nor hand them to
// the editor and the run record. Providers collect the fragments in an
// ArgsBuffer; past its cap a call keeps its first bytes and a count of the
// rest, and the engine refuses it unrun, telling the model the size and
// the cap. This file is the one home of that rule.

// MaxArgs caps the arguments of a call to any tool but submit_output.
const MaxArgs = 1 << 20

// MaxSubmitArgs caps submit_output's arguments: room for an answer of
// answer.MaxBytes bytes written entirely in JSON's two-byte escapes
// (\" \\ \n \t: the escapes text needs), plus 64 KiB for the artifacts
// and the keys. So an answer somewhat over its own cap still reaches the
// checks, which cut it and tell the model (DESIGN §4); one far over is
// refused without being parsed.
const MaxSubmitArgs = 2*answer.MaxBytes + 64<<10

// keptArgs is how much of arguments past their cap a call keeps: enough
// for the editor and the run record to show what the model was writing.
const keptArgs = 1 << 10

// ArgsCap is the most bytes of arguments a call to the named tool may
// have.
func ArgsCap(tool string) int {
	if tool == answer.SubmitTool {
		return MaxSubmitArgs
	}
	return MaxArgs
}

// An ArgsBuffer collects one tool call's arguments as they stream, holding
// no more than the cap for its tool. Set Name as soon as it is known: the
// cap follows it (until then, the largest). The zero value is ready.
type ArgsBuffer struct {
	Name    string
	buf     []byte
	dropped int // bytes past the cap, not kept; once > 0 the call is cut
}

// WriteString adds a fragment of the arguments.
func (a *ArgsBuffer) WriteString(s string) {
	if a.fits(len(s)) {
		a.buf = append(a.buf, s...)
		return
	}
	total := a.Len() + len(s)
	a.buf = append(a.buf, s[:a.headRoom(len(s))]...)
	a.overflow(total)
}

// Write adds a fragment of the arguments.
func (a *ArgsBuffer) Write(p []byte) {
	if a.fits(len(p)) {
		a.buf = append(a.buf, p...)
		return
	}
	total := a.Len() + len(p)
	a.buf = append(a.buf, p[:a.headRoom(len(p))]...)
	a.overflow(total)
}

// fits reports whether n more bytes stay within the cap.
func (a *ArgsBuffer) fits(n int) bool { return a.dropped == 0 && len(a.buf)+n <= ArgsCap(a.Name) }

// headRoom is how many of n bytes past the cap the kept head still takes.
func (a *ArgsBuffer) headRoom(n int) int {
	if a.dropped > 0 {
		return 0
	}
	return min(n, max(0, keptArgs-len(a.buf)))
}

// overflow makes the arguments, now total bytes, a cut call.
func (a *ArgsBuffer) overflow(total int) {
	if a.dropped > 0 {
		a.dropped = total - len(a.buf)
		return
	}
	a.cut(total)
}

// cut keeps the first keptArgs bytes of arguments that are total bytes
// long, in a buffer of their own so that a large one is let go.
func (a *ArgsBuffer) cut(total int) {
	head := textcut.TrimPartialRune(a.buf[:min(len(a.buf), keptArgs)])
	a.buf = append([]byte(nil), head...)
	a.dropped = total - len(a.buf)
}

// Len is the size of the arguments so far, kept or not.
func (a *ArgsBuffer) Len() int { return len(a.buf) + a.dropped }

// Empty reports whether no arguments but space have come.
func (a *ArgsBuffer) Empty() bool { return a.dropped == 0 && len(bytes.TrimSpace(a.buf)) == 0 }

// ToolCall returns the call with the collected arguments, trimmed of
// surrounding space: "{}" when there are none (or null). Arguments over
// the cap come back cut (ToolCall.Dropped).
func (a *ArgsBuffer) ToolCall(id string) ToolCall {
	if a.dropped == 0 && len(a.buf) > ArgsCap(a.Name) {
		a.cut(len(a.buf)) // the name came after the arguments, and lowered the cap
	}
	if a.dropped > 0 {
		return ToolCall{ID: id, Name: a.Name, Arguments: a.buf, Dropped: a.dropped}
	}
	args := bytes.TrimSpace(a.buf)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	return ToolCall{ID: id, Name: a.Name, Arguments: args}
}

// CapArgs holds a call from any Model to the cap: providers cut while
// streaming, and this catches a Model that did not.
func CapArgs(tc *ToolCall) {
	if tc.Dropped > 0 || len(tc.Arguments) <= ArgsCap(tc.Name) {
		return
	}
	a := ArgsBuffer{Name: tc.Name, buf: tc.Arguments}
	a.cut(len(tc.Arguments))
	*tc = a.ToolCall(tc.ID)
}
