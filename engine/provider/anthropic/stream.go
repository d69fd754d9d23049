package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// One event's data. Every event carries its type in "type" as well as in
// the SSE event name; the data's is used.
type event struct {
	Type         kind          `json:"type"`
	Index        int           `json:"index"`
	Message      *startMessage `json:"message"`       // message_start
	ContentBlock *startBlock   `json:"content_block"` // content_block_start
	Delta        eventDelta    `json:"delta"`         // content_block_delta, message_delta
	Usage        *usage        `json:"usage"`         // message_delta, message
	Error        *apiError     `json:"error"`         // error

	// A whole message, from a server that did not stream.
	Content    []startBlock `json:"content"`
	StopReason string       `json:"stop_reason"`
}

// reset empties e for the next event, writing only the fields the last
// one set: of a stream's thousands of events, most set three.
func (e *event) reset() {
	e.Type, e.Index = "", 0
	if e.Message != nil || e.ContentBlock != nil || e.Usage != nil || e.Error != nil || e.Content != nil || e.StopReason != "" {
		e.Message, e.ContentBlock, e.Usage, e.Error, e.Content, e.StopReason = nil, nil, nil, nil, nil, ""
	}
	if e.Delta != (eventDelta{Type: e.Delta.Type, Text: e.Delta.Text}) {
		e.Delta = eventDelta{}
	}
	e.Delta.Type, e.Delta.Text = "", ""
}

type startMessage struct {
	Usage usage `json:"usage"`
}

type startBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"` // redacted_thinking
}

type eventDelta struct {
	Type        kind   `json:"type"`
	Text        string `json:"text"`         // text_delta
	PartialJSON string `json:"partial_json"` // input_json_delta
	Thinking    string `json:"thinking"`     // thinking_delta
	Signature   string `json:"signature"`    // signature_delta
	StopReason  string `json:"stop_reason"`  // message_delta
}

// A kind is an event's or a delta's type. The types the reader switches
// on are decoded to constants, without the string each event's would
// otherwise cost; another is kept as it came.
type kind string

func (k *kind) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"content_block_delta"`:
		*k = "content_block_delta"
	case `"text_delta"`:
		*k = "text_delta"
	case `"thinking_delta"`:
		*k = "thinking_delta"
	case `"input_json_delta"`:
		*k = "input_json_delta"
	case `"signature_delta"`:
		*k = "signature_delta"
	case `"ping"`:
		*k = "ping"
	default:
		return json.Unmarshal(b, (*string)(k))
	}
	return nil
}

type usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// A contentBlock is one block of the reply being assembled. A tool_use's
// input is held to the engine's cap as it comes (llm.ArgsBuffer); of a
// text or thinking block only its length is kept here, its text being in
// the stream's.
type contentBlock struct {
	typ       string
	id        string
	input     llm.ArgsBuffer // tool_use: the input_json_delta fragments
	start     llm.ArgsBuffer // tool_use: the input content_block_start carried
	textN     int            // bytes of text in it
	thinkN    int            // bytes of thinking in it
	signature []byte         // appended to: a signature may come in many deltas
	data      string         // redacted_thinking
}

// maxBlocks bounds the content block index a server can name, so that a
// wrong one cannot make the reader allocate without end.
const maxBlocks = 1 << 12

// stream is the state of reading one reply.
type stream struct {
	onDelta func(llm.Delta) error
	started *bool // set once something was passed to onDelta: the try cannot be repeated

	dec      sse.JSONDecoder // one decoder for the stream's events (bench_test.go)
	ev       event
	blocks   []*contentBlock
	text     sse.Text
	thinking sse.Text
	kept     sse.Meter // signatures and redacted thinking, held until the reply ends
	stop     string
	usage    usage
	done     bool
}

// read consumes the event stream up to message_stop.
func (s *stream) read(r *sse.Reader) (err error) {
	defer func() {
		if err != nil {
			s.text.Discard()
			s.thinking.Discard()
		}
	}()
	for !s.done {
		ev, err := r.Next()
		if err == io.EOF {
			return &sse.Temporary{Err: errors.New("the stream ended before the reply was complete")}
		}
		if err != nil {
			return &sse.Temporary{Err: fmt.Errorf("reading the stream: %w", err)}
		}
		if err := s.event(ev.Data); err != nil {
			return err
		}
	}
	return nil
}

func (s *stream) event(data []byte) error {
	s.ev.reset()
	if err := s.dec.Decode(data, &s.ev); err != nil {
		return fmt.Errorf("a stream event is not JSON: %w", err)
	}
	e := &s.ev
	if e.Index < 0 || e.Index >= maxBlocks {
		return fmt.Errorf("a stream event names content block %d", e.Index)
	}
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			s.usage = e.Message.Usage
		}
	case "content_block_start":
		if e.ContentBlock != nil {
			return s.startBlock(e.Index, e.ContentBlock)
		}
	case "message":
		for i := range e.Content {
			if err := s.startBlock(i, &e.Content[i]); err != nil {
				return err
			}
		}
		s.stop = e.StopReason
		if e.Usage != nil {
			s.usage = *e.Usage
		}
		s.done = true
	case "content_block_delta":
		b := s.block(e.Index)
		switch d := &e.Delta; d.Type {
		case "text_delta":
			return s.addText(b, d.Text)
		case "thinking_delta":
			return s.addThinking(b, d.Thinking)
		case "signature_delta":
			if err := s.kept.Add(len(d.Signature)); err != nil {
				return err
			}
			b.signature = append(b.signature, d.Signature...)
		case "input_json_delta":
			b.input.WriteString(d.PartialJSON)
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			s.stop = e.Delta.StopReason
		}
		if u := e.Usage; u != nil {
			s.usage.OutputTokens = u.OutputTokens
			if u.InputTokens > 0 {
				s.usage.InputTokens = u.InputTokens
				s.usage.CacheCreationInputTokens = u.CacheCreationInputTokens
				s.usage.CacheReadInputTokens = u.CacheReadInputTokens
			}
		}
	case "message_stop":
		s.done = true
	case "error":
		return streamError(e.Error)
	}
	// ping, content_block_stop and event types added later need nothing.
	return nil
}

// startBlock begins the block at index with what its start carries: for
// a tool_use its input (taken when no fragments follow), for text and
// thinking any text already in it.
func (s *stream) startBlock(index int, cb *startBlock) error {
	b := s.block(index)
	b.typ, b.id = cb.Type, cb.ID
	b.input.Name, b.start.Name = cb.Name, cb.Name
	b.start.Write(cb.Input)
	if err := s.kept.Add(len(cb.Signature) + len(cb.Data) + len(cb.Type) + len(cb.ID) + len(cb.Name)); err != nil {
		return err
	}
	b.signature, b.data = append(b.signature[:0], cb.Signature...), cb.Data
	if err := s.addThinking(b, cb.Thinking); err != nil {
		return err
	}
	return s.addText(b, cb.Text)
}

// block is the block at index, made when first seen.
func (s *stream) block(index int) *contentBlock {
	for index >= len(s.blocks) {
		s.blocks = append(s.blocks, &contentBlock{})
	}
	return s.blocks[index]
}

func (s *stream) addText(b *contentBlock, text string) error {
	if text == "" {
		return nil
	}
	if err := s.text.Add(text); err != nil {
		return err
	}
	b.textN += len(text)
	*s.started = true
	return s.onDelta(llm.Delta{Text: text})
}

func (s *stream) addThinking(b *contentBlock, text string) error {
	if text == "" {
		return nil
	}
	if err := s.thinking.Add(text); err != nil {
		return err
	}
	b.thinkN += len(text)
	*s.started = true
	return s.onDelta(llm.Delta{Thinking: text})
}

// response is the assembled reply.
func (s *stream) response() (*llm.Response, error) {
	resp := &llm.Response{
		Text:     s.text.String(),
		Thinking: s.thinking.String(),
		Usage: llm.Usage{
			InputTokens:      s.usage.InputTokens + s.usage.CacheCreationInputTokens + s.usage.CacheReadInputTokens,
			OutputTokens:     s.usage.OutputTokens,
			CacheReadTokens:  s.usage.CacheReadInputTokens,
			CacheWriteTokens: s.usage.CacheCreationInputTokens,
		},
	}
	for _, b := range s.blocks {
		if b.typ != "tool_use" {
			continue
		}
		input := &b.input
		if input.Empty() {
			// No fragments: the input is what the start carried, and an
			// empty input means no arguments.
			input = &b.start
		}
		resp.ToolCalls = append(resp.ToolCalls, input.ToolCall(b.id))
	}
	switch s.stop {
	case "max_tokens", "model_context_window_exceeded":
		resp.StopReason = llm.StopMaxTokens
	case "refusal":
		// The reply stopped by Anthropic's safety classifiers: the
		// model's words, where it had any, say so.
		resp.StopReason = llm.StopRefusal
		resp.Refusal = resp.Text
		if resp.Refusal == "" {
			resp.Refusal = "Claude declined to continue (stop_reason refusal)"
		}
	default: // end_turn, tool_use, stop_sequence, pause_turn
		if len(resp.ToolCalls) > 0 {
			resp.StopReason = llm.StopToolUse
		} else {
			resp.StopReason = llm.StopEndTurn
		}
	}
	return resp, errors.Join(s.text.Err(), s.thinking.Err())
}

// replay is the reply's blocks as they must go back (replay.go), for
// model; nil when it holds no thinking.
func (s *stream) replay(model string) json.RawMessage {
	r := replay{Model: model}
	// Each block is described by what it added to the reply, whatever
	// its type says, so that the replay always matches the message. A
	// block of a kind coda does not send (a server tool's) adds nothing,
	// and is gone.
	for _, b := range s.blocks {
		if b.typ == "thinking" || b.thinkN > 0 {
			sig := ""
			if b.typ == "thinking" {
				sig = string(b.signature)
			}
			r.Blocks = append(r.Blocks, replayBlock{Kind: kindThinking, N: b.thinkN, Sig: sig})
		}
		if b.typ == "redacted_thinking" {
			r.Blocks = append(r.Blocks, replayBlock{Kind: kindRedacted, Data: b.data})
		}
		if b.typ == "text" || b.textN > 0 {
			r.Blocks = append(r.Blocks, replayBlock{Kind: kindText, N: b.textN})
		}
		if b.typ == "tool_use" {
			r.Blocks = append(r.Blocks, replayBlock{Kind: kindCall})
		}
	}
	if !r.thinks() && !r.calls() {
		return nil
	}
	out, _ := json.Marshal(&r)
	return out
}

// streamError is an error event. Overload, rate limits and server faults are
// worth another try (while nothing was streamed); the rest are not.
func streamError(e *apiError) error {
	if e == nil {
		e = &apiError{Type: "unknown_error"}
	}
	msg := e.Message
	if msg == "" {
		msg = e.Type
	} else if e.Type != "" {
		msg = e.Type + ": " + msg
	}
	err := fmt.Errorf("the server reported an error in the stream: %s", msg)
	switch e.Type {
	case "overloaded_error", "api_error", "rate_limit_error", "timeout_error":
		return &sse.Temporary{Err: err}
	}
	return err
}
