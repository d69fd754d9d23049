// Package script is a deterministic Model that replays a TOML script, one
// [[turn]] per model call. Tests, the demo and examples use it to run coda
// without a network; it is not a substitute for a provider.
//
//	[[turn]]
//	expect = "not JSON"            # the last message sent must contain this; an image
//	                               # it carries reads "[image image/png, 2048 bytes]"
//	expect_sent = "apple"          # some message sent must contain this (an earlier turn's)
//	thinking = "..."
//	text = ["Checking ", "the module."]  # or one string
//	delay_ms = 5                   # a pause before each chunk
//	[[turn.tool_calls]]
//	name = "submit_output"
//	arguments = { content = '{"safe": true}' }   # or raw_arguments = '{"content": "cut'
//
// A turn may also set stop_reason (e.g. "max_tokens"), error (the call
// fails with it) and expect_effort (the call fails unless it asks for this
// reasoning effort; "none" for none). At the top, context_window is the
// model's size: reported with each call's usage (input tokens counted as a
// fourth of the request's bytes), and a request past it is refused as a
// server refuses one; tools = false plays a server that refuses tools: a
// call that offers any fails with an error wrapping
// llm.ErrToolsUnsupported, as Ollama's "does not support tools" does.
//
// A turn with for = "ID" serves only the worker or child (DESIGN §12) whose
// name ("w1", "c2", nested "c1/w2") or fan_out task id is ID; turns without
// for serve the turn's own run. Each caller plays its own turns in order,
// however the engine interleaves them, so a fan-out replays
// deterministically. A call's arguments are handed over in fragments through an
// llm.ArgsBuffer, as a provider's are, so arguments past the engine's
// cap come back cut.
package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/coda-acp/coda/engine/llm"

	"github.com/coda-acp/coda/internal/namedfile"
)

// Script is a parsed script model.
type Script struct {
	// ContextWindow, when set, is reported with each call's usage, as a
	// provider does for a model whose size it knows.
	ContextWindow int    `toml:"context_window"`
	Turns         []Turn `toml:"turn"`
	// Tools = false refuses every call that offers tools, as a server
	// whose model cannot call them does; such a call plays no turn.
	Tools *bool `toml:"tools"`
}

// A Turn is one model call's reply.
type Turn struct {
	// For names the worker or child this turn serves; "" is the main run.
	For    string `toml:"for"`
	Expect string `toml:"expect"`
	// ExpectSent fails the call unless some message of it (any, an
	// earlier turn's included) contains this.
	ExpectSent string `toml:"expect_sent"`
	// ExpectEffort fails the call unless it asks for this reasoning
	// effort (llm.Request.Effort); "none" expects it to ask for none.
	ExpectEffort string     `toml:"expect_effort"`
	Thinking     string     `toml:"thinking"`
	Text         Chunks     `toml:"text"`
	DelayMS      int        `toml:"delay_ms"`
	ToolCalls    []ToolCall `toml:"tool_calls"`
	// StopReason overrides the reply's stop reason (e.g. "max_tokens").
	StopReason string `toml:"stop_reason"`
	// Error makes the call fail with this message.
	Error string `toml:"error"`
	// Usage, when set, is the tokens the call reports, as a provider's
	// reply does (cached and reasoning tokens included); without it a
	// call reports its request's size in bytes and a quarter of its
	// text's.
	Usage *Usage `toml:"usage"`
}

// Usage is a scripted call's tokens. Input counts every prompt token,
// cached or not, and Output every output token, reasoning included, as
// llm.Usage does.
type Usage struct {
	Input      int `toml:"input"`
	Output     int `toml:"output"`
	CachedRead int `toml:"cached_read"`
	// CachedWrite are the prompt tokens written to the cache.
	CachedWrite int `toml:"cached_write"`
	Reasoning   int `toml:"reasoning"`
}

// A ToolCall is a scripted tool call.
type ToolCall struct {
	Name      string         `toml:"name"`
	Arguments map[string]any `toml:"arguments"`
	// RawArguments, when set, is sent as the arguments verbatim: a model
	// cut off mid-call sends arguments that are not JSON.
	RawArguments string `toml:"raw_arguments"`

	encoded []byte // Arguments as JSON, made once by Parse
}

// encode is the call's arguments as the model sends them.
func (tc *ToolCall) encode() ([]byte, error) {
	switch {
	case tc.RawArguments != "":
		return []byte(tc.RawArguments), nil
	case tc.encoded != nil:
		return tc.encoded, nil
	case tc.Arguments == nil:
		return []byte("{}"), nil
	}
	return json.Marshal(tc.Arguments)
}

// Chunks is a turn's text: one string or a list of chunks.
type Chunks []string

// UnmarshalTOML accepts a string or a list of strings.
func (c *Chunks) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		*c = Chunks{v}
	case []any:
		out := make(Chunks, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				return fmt.Errorf("text[%d] is a %T, not a string", i, x)
			}
			out[i] = s
		}
		*c = out
	default:
		return fmt.Errorf("text must be a string or a list of strings, not %T", v)
	}
	return nil
}

// Parse decodes a script strictly; unknown keys are errors.
func Parse(data []byte, source string) (*Script, error) {
	var s Script
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&s)
	if err != nil {
		return nil, fmt.Errorf("script %s: %v", source, err)
	}
	for _, k := range md.Undecoded() {
		// Tool call arguments are free-form; everything else is checked.
		if len(k) > 3 && k[0] == "turn" && k[1] == "tool_calls" && k[2] == "arguments" {
			continue
		}
		return nil, fmt.Errorf("script %s: unknown key %s", source, k)
	}
	for i := range s.Turns {
		for j := range s.Turns[i].ToolCalls {
			tc := &s.Turns[i].ToolCalls[j]
			args, err := tc.encode()
			if err != nil {
				return nil, fmt.Errorf("script %s: turn %d: tool call %d: %v", source, i+1, j+1, err)
			}
			tc.encoded = args
		}
	}
	return &s, nil
}

// maxScriptBytes is the most Open reads of a script; only a regular file
// is read (internal/namedfile).
const maxScriptBytes = 16 << 20

// Open reads a script file and returns a Model replaying it.
func Open(path string) (llm.Model, error) {
	data, err := namedfile.Read(path, maxScriptBytes)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, fmt.Errorf("script model: %s: %w", pe.Path, pe.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("script model: %w", err)
	}
	s, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	return New("script:"+path, s), nil
}

// New returns a Model replaying s. A Model keeps its position across calls,
// and across the turns of a session, so a script can span several prompts.
func New(name string, s *Script) *Model {
	return &Model{name: name, script: s, played: map[string]int{}}
}

// Model replays a Script.
type Model struct {
	name   string
	script *Script

	mu     sync.Mutex
	played map[string]int // turns played, per caller name ("" is the main run)
}

// serves reports whether a turn whose for is f serves caller c.
func serves(f string, c llm.Caller) bool {
	if f == "" || c.Name == "" {
		return f == c.Name
	}
	return f == c.Name || f == c.Task
}

// take finds c's next turn and counts it played. It returns the turn's
// index, or -1 when c has none left, and how many c played before it.
func (m *Model) take(c llm.Caller) (int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, seen := m.played[c.Name], 0
	for i := range m.script.Turns {
		if !serves(m.script.Turns[i].For, c) {
			continue
		}
		if seen == k {
			m.played[c.Name]++
			return i, k
		}
		seen++
	}
	return -1, k
}

// ErrExhausted is returned when the script has no turn left.
var ErrExhausted = errors.New("the script model has no turn left")

func (m *Model) Name() string { return m.name }

// ContextWindow is the script's context_window (llm.Windowed): the
// engine fits each request in it, as it does Ollama's num_ctx.
func (m *Model) ContextWindow(context.Context) int { return m.script.ContextWindow }

func (m *Model) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	if m.script.Tools != nil && !*m.script.Tools && len(req.Tools) > 0 {
		return nil, toolsRefused{m.name}
	}
	if w := m.script.ContextWindow; w > 0 {
		if n := requestTokens(req); n > w {
			// As a server refuses a prompt past the model's context (the
			// call plays no turn).
			return nil, fmt.Errorf("%s: HTTP 400 Bad Request: the prompt is %d tokens, over the model's context window of %d", m.name, n, w)
		}
	}
	i, played := m.take(req.Caller)
	if i < 0 {
		if req.Caller.Name != "" {
			return nil, fmt.Errorf("%w for %s (%d of its turns played; it asked for another)", ErrExhausted, req.Caller.Name, played)
		}
		return nil, fmt.Errorf("%w (%d turns played; the run asked for another)", ErrExhausted, played)
	}
	t := &m.script.Turns[i]
	if t.Expect != "" {
		last := lastMessage(req)
		if !strings.Contains(last, t.Expect) {
			return nil, fmt.Errorf("script turn %d expected the last message to contain %q; it was:\n%s", i+1, t.Expect, last)
		}
	}
	if t.ExpectSent != "" && !slices.ContainsFunc(req.Messages, func(m llm.Message) bool { return strings.Contains(m.Text, t.ExpectSent) }) {
		return nil, fmt.Errorf("script turn %d expected a message sent to contain %q; none did", i+1, t.ExpectSent)
	}
	if want := t.ExpectEffort; want != "" && req.Effort != want && !(want == "none" && req.Effort == "") {
		return nil, fmt.Errorf("script turn %d expected effort %q; the call asked for %q", i+1, want, req.Effort)
	}
	if t.Error != "" {
		return nil, fmt.Errorf("script turn %d: %s", i+1, t.Error)
	}
	delay := time.Duration(t.DelayMS) * time.Millisecond
	wait := func() error {
		if delay == 0 {
			return ctx.Err()
		}
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return nil
		}
	}
	resp := &llm.Response{StopReason: llm.StopEndTurn, Thinking: t.Thinking}
	if t.Thinking != "" {
		if err := wait(); err != nil {
			return nil, err
		}
		if err := onDelta(llm.Delta{Thinking: t.Thinking}); err != nil {
			return nil, err
		}
	}
	var text strings.Builder
	n := 0
	for _, c := range t.Text {
		n += len(c)
	}
	text.Grow(n)
	for _, c := range t.Text {
		if err := wait(); err != nil {
			return nil, err
		}
		text.WriteString(c)
		if err := onDelta(llm.Delta{Text: c}); err != nil {
			return nil, err
		}
	}
	resp.Text = text.String()
	for j := range t.ToolCalls {
		tc := &t.ToolCalls[j]
		args, err := tc.encode()
		if err != nil {
			return nil, fmt.Errorf("script turn %d: tool call %d: %v", i+1, j+1, err)
		}
		resp.ToolCalls = append(resp.ToolCalls, stream(tc.Name, fmt.Sprintf("call-%d-%d", i+1, j+1), args))
	}
	if len(resp.ToolCalls) > 0 {
		resp.StopReason = llm.StopToolUse
	}
	if t.StopReason != "" {
		resp.StopReason = t.StopReason
	}
	resp.Usage = llm.Usage{InputTokens: requestTokens(req), OutputTokens: len(resp.Text) / 4, ContextWindow: m.script.ContextWindow}
	if u := t.Usage; u != nil {
		resp.Usage = llm.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CachedRead, CacheWriteTokens: u.CachedWrite, ReasoningTokens: u.Reasoning, ContextWindow: m.script.ContextWindow}
	}
	return resp, ctx.Err()
}

// toolsRefused is a tools = false script's answer to a call that offers
// tools, worded as Ollama words it.
type toolsRefused struct{ name string }

func (e toolsRefused) Error() string {
	return e.name + ": HTTP 400 Bad Request: " + strings.TrimPrefix(e.name, "script:") + " does not support tools"
}

func (toolsRefused) Unwrap() error { return llm.ErrToolsUnsupported }

// argsPiece is the size of the fragments a scripted call's arguments are
// streamed in, as a provider receives them.
const argsPiece = 4 << 10

// stream hands a call's arguments over as a provider does: in fragments,
// through an llm.ArgsBuffer, so arguments past the cap are cut as a
// real model's would be.
func stream(name, id string, args []byte) llm.ToolCall {
	a := llm.ArgsBuffer{Name: name}
	for len(args) > 0 {
		n := min(len(args), argsPiece)
		a.Write(args[:n])
		args = args[n:]
	}
	return a.ToolCall(id)
}

// requestTokens counts a request's tokens as a fourth of its bytes: the
// system prompt, the messages (text, reasoning, tool calls) and the tools.
func requestTokens(req *llm.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Text) + len(m.Thinking)
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return n / 4
}

// lastMessage is the text of the last message the model was sent: a tool
// result, a nudge, or the prompt.
func lastMessage(req *llm.Request) string {
	if len(req.Messages) == 0 {
		return req.System
	}
	m := req.Messages[len(req.Messages)-1]
	if len(m.Images) == 0 {
		return m.Text
	}
	var b strings.Builder
	for _, im := range m.Images {
		fmt.Fprintf(&b, "[image %s, %d bytes]\n", im.MIMEType, len(im.Data))
	}
	return b.String() + m.Text
}
