package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// One "data:" payload of the stream. Fields the reader does not use are
// left out so that decoding skips them.
type chunk struct {
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Index        int    `json:"index"`
	Delta        delta  `json:"delta"`
	Message      delta  `json:"message"` // a whole reply, from a server that did not stream
	FinishReason string `json:"finish_reason"`
}

type delta struct {
	Content          string          `json:"content"`
	ReasoningContent string          `json:"reasoning_content"` // DeepSeek, vLLM, llama.cpp
	Reasoning        string          `json:"reasoning"`         // Ollama, OpenRouter, newer vLLM
	Refusal          string          `json:"refusal"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index        *int            `json:"index"`
	ID           string          `json:"id"`
	ExtraContent json.RawMessage `json:"extra_content"` // Gemini's thought signature, kept for Replay
	Function     struct {
		Name string `json:"name"`
		// Arguments is a string fragment of JSON, or (from a few servers)
		// the whole arguments object itself.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"` // OpenRouter
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"` // DeepSeek
}

// A callSlot collects one tool call from its fragments. Its arguments are
// held to the engine's cap as they come (llm.ArgsBuffer).
type callSlot struct {
	index int // the wire index, or -1 when the server sent none
	id    string
	args  llm.ArgsBuffer
	extra json.RawMessage // extra_content, as it came
}

// stream is the state of reading one reply.
type stream struct {
	onDelta func(llm.Delta) error
	started *bool // set once something was passed to onDelta: the try cannot be repeated

	dec      sse.JSONDecoder
	c        chunk
	text     sse.Text
	thinking sse.Text
	refusal  sse.Text // the model's refusal, apart from its text
	refused  bool
	calls    []*callSlot
	kept     sse.Meter // the calls' extra_content, held until the reply ends
	finish   string    // the finish_reason, once one came: the reply is complete
	usage    usage
}

var done = []byte("[DONE]")

// read consumes the event stream and assembles the reply.
func (s *stream) read(r *sse.Reader) (resp *llm.Response, err error) {
	defer func() {
		if err != nil {
			s.text.Discard()
			s.thinking.Discard()
			s.refusal.Discard()
		}
	}()
	for {
		ev, err := r.Next()
		if err == io.EOF {
			if s.finish == "" {
				return nil, &sse.Temporary{Err: errors.New("the stream ended before the reply was complete")}
			}
			break
		}
		if err != nil {
			return nil, &sse.Temporary{Err: fmt.Errorf("reading the stream: %w", err)}
		}
		data := bytes.TrimSpace(ev.Data)
		if bytes.Equal(data, done) {
			break
		}
		if err := s.chunk(data); err != nil {
			return nil, err
		}
	}
	return s.response()
}

// chunk handles one payload.
func (s *stream) chunk(data []byte) error {
	clear(s.c.Choices[:cap(s.c.Choices)]) // decoding reuses elements without zeroing them
	s.c = chunk{Choices: s.c.Choices[:0]}
	if err := s.dec.Decode(data, &s.c); err != nil {
		return fmt.Errorf("a stream chunk is not JSON: %w", err)
	}
	if len(s.c.Error) > 0 && !bytes.Equal(s.c.Error, []byte("null")) {
		return streamError(s.c.Error)
	}
	if s.c.Usage != nil {
		s.usage = *s.c.Usage
	}
	for i := range s.c.Choices {
		ch := &s.c.Choices[i]
		if ch.Index != 0 {
			continue // coda asks for one choice
		}
		if err := s.delta(&ch.Delta); err != nil {
			return err
		}
		if err := s.delta(&ch.Message); err != nil {
			return err
		}
		if ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
	}
	return nil
}

// delta handles one choice's delta (or whole message).
func (s *stream) delta(d *delta) error {
	thinking := d.ReasoningContent
	if thinking == "" {
		thinking = d.Reasoning
	}
	if thinking != "" {
		if err := s.thinking.Add(thinking); err != nil {
			return err
		}
		if err := s.emit(llm.Delta{Thinking: thinking}); err != nil {
			return err
		}
	}
	if d.Refusal != "" {
		// Not the model's text, and never an answer: the engine makes the
		// visit unavailable with these words.
		if err := s.refusal.Add(d.Refusal); err != nil {
			return err
		}
		s.refused = true
	}
	if text := d.Content; text != "" {
		if err := s.text.Add(text); err != nil {
			return err
		}
		if err := s.emit(llm.Delta{Text: text}); err != nil {
			return err
		}
	}
	for j := range d.ToolCalls {
		if err := s.toolCall(&d.ToolCalls[j]); err != nil {
			return err
		}
	}
	return nil
}

func (s *stream) emit(d llm.Delta) error {
	*s.started = true
	return s.onDelta(d)
}

// toolCall adds a fragment to its call. The call is found by the wire
// index. Without one (some servers omit it) calls are taken in the order
// they come: a fragment with a new id or a name starts a call, one with
// neither continues the last. A reply may start at most sse.MaxToolCalls.
func (s *stream) toolCall(tc *toolCallDelta) error {
	var slot *callSlot
	switch {
	case tc.Index != nil:
		for _, c := range s.calls {
			if c.index == *tc.Index {
				slot = c
				break
			}
		}
	case tc.ID != "":
		for _, c := range s.calls {
			if c.id == tc.ID {
				slot = c
				break
			}
		}
	case tc.Function.Name == "" && len(s.calls) > 0:
		slot = s.calls[len(s.calls)-1]
	}
	if slot == nil {
		if len(s.calls) >= sse.MaxToolCalls {
			return fmt.Errorf("the reply makes more than %d tool calls", sse.MaxToolCalls)
		}
		slot = &callSlot{index: -1}
		if tc.Index != nil {
			slot.index = *tc.Index
		}
		s.calls = append(s.calls, slot)
	}
	if err := s.kept.Add(len(tc.ID) + len(tc.Function.Name)); err != nil {
		return err
	}
	if tc.ID != "" {
		slot.id = tc.ID
	}
	if tc.Function.Name != "" {
		slot.args.Name = tc.Function.Name
	}
	if len(tc.ExtraContent) > 0 && !bytes.Equal(tc.ExtraContent, []byte("null")) && len(tc.ExtraContent) <= maxExtra {
		if err := s.kept.Add(len(tc.ExtraContent) - len(slot.extra)); err != nil {
			return err
		}
		slot.extra = append(slot.extra[:0], tc.ExtraContent...) // the decoder's buffer is reused
	}
	args := tc.Function.Arguments
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		return nil
	}
	if args[0] == '"' {
		writeJSONString(&slot.args, args)
		return nil
	}
	slot.args.Write(args) // the whole object, sent as JSON rather than as a string
	return nil
}

// maxExtra is the most of a tool call's extra_content kept: a thought
// signature is a few KiB.
const maxExtra = 1 << 20

// stringPiece is how much of a long JSON string fragment is decoded at a
// time, so that a server sending a call's arguments in one piece (Ollama
// does) costs no more than this beside the arguments' cap.
const stringPiece = 64 << 10

// writeJSONString decodes the JSON string raw into a, a piece at a time.
// A string that is not valid JSON adds nothing.
func writeJSONString(a *llm.ArgsBuffer, raw []byte) { writeJSONPieces(a, raw, stringPiece) }

func writeJSONPieces(a *llm.ArgsBuffer, raw []byte, size int) {
	if len(raw) <= size {
		var frag string
		if json.Unmarshal(raw, &frag) == nil {
			a.WriteString(frag)
		}
		return
	}
	if !json.Valid(raw) {
		return
	}
	body := raw[1 : len(raw)-1]
	piece := make([]byte, 0, size+2)
	var frag string
	for len(body) > 0 {
		n := escapeBoundary(body, size)
		piece = append(append(append(piece[:0], '"'), body[:n]...), '"')
		if json.Unmarshal(piece, &frag) != nil {
			return // cannot happen: raw is valid and n ends no escape early
		}
		a.WriteString(frag)
		body = body[n:]
	}
}

// escapeBoundary is the largest n <= limit (or the first escape's end, when
// that is longer) at which the body of a JSON string can be cut without
// splitting an escape, a surrogate pair written as two \u escapes, or a
// character's UTF-8 bytes.
func escapeBoundary(body []byte, limit int) int {
	if len(body) <= limit {
		return len(body)
	}
	i := 0
	for i < len(body) {
		step := 1
		switch c := body[i]; {
		case c == '\\':
			step = 2
			if body[i+1] == 'u' {
				step = 6
				// A high surrogate joins the escape after it only when
				// that one is a low surrogate: encoding/json reads a high
				// one followed by another high one as U+FFFD and lets the
				// second pair with what follows it.
				if isSurrogate(body[i+2:i+6], 0xD800) && i+12 <= len(body) &&
					body[i+6] == '\\' && body[i+7] == 'u' && isSurrogate(body[i+8:i+12], 0xDC00) {
					step = 12
				}
			}
		case c >= utf8.RuneSelf:
			_, step = utf8.DecodeRune(body[i:])
		}
		if i+step > limit && i > 0 {
			return i
		}
		i += step
	}
	return i
}

// isSurrogate reports whether the four hex digits hex name a UTF-16
// surrogate in [lo, lo+0x400): lo is 0xD800 for a high one, 0xDC00 for a
// low one.
func isSurrogate(hex []byte, lo uint64) bool {
	r, err := strconv.ParseUint(string(hex), 16, 32)
	return err == nil && r >= lo && r < lo+0x400
}

// response is the assembled reply. Whether tools were called is read from
// the calls themselves, never from finish_reason: Ollama ends a reply with
// tool calls with "stop".
func (s *stream) response() (*llm.Response, error) {
	u := &s.usage
	cached := u.PromptTokensDetails.CachedTokens
	if cached == 0 {
		cached = u.PromptCacheHitTokens
	}
	resp := &llm.Response{
		Text:     s.text.String(),
		Thinking: s.thinking.String(),
		Refusal:  s.refusal.String(),
		Usage: llm.Usage{
			InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
			CacheReadTokens: cached, CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
			ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
		},
	}
	var extra map[string]json.RawMessage
	for i, c := range s.calls {
		if c.args.Name == "" && c.args.Len() == 0 {
			continue
		}
		id := c.id
		if id == "" {
			id = "call_" + strconv.Itoa(i)
		}
		resp.ToolCalls = append(resp.ToolCalls, c.args.ToolCall(id))
		if c.extra != nil {
			if extra == nil {
				extra = map[string]json.RawMessage{}
			}
			extra[id] = c.extra
		}
	}
	if extra != nil {
		resp.Replay, _ = json.Marshal(replay{ExtraContent: extra})
	}
	switch {
	case s.finish == "length":
		resp.StopReason = llm.StopMaxTokens
	case s.finish == "content_filter" || s.refused:
		resp.StopReason = llm.StopRefusal
	case len(resp.ToolCalls) > 0:
		resp.StopReason = llm.StopToolUse
	default:
		resp.StopReason = llm.StopEndTurn
	}
	return resp, errors.Join(s.text.Err(), s.thinking.Err(), s.refusal.Err())
}

// streamError is the error a server sent inside a 200 stream. Overload,
// rate limits and server faults are worth another try; anything else (a
// refused request, a bad parameter) is not.
func streamError(raw json.RawMessage) error {
	var e struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	msg := ""
	if json.Unmarshal(raw, &e) == nil {
		msg = e.Message
	} else {
		json.Unmarshal(raw, &msg)
	}
	if msg == "" {
		msg = string(raw)
	}
	err := fmt.Errorf("the server reported an error in the stream: %s", msg)
	code := strings.Trim(string(e.Code), `"`)
	kind := strings.ToLower(e.Type + " " + code)
	if n, convErr := strconv.Atoi(code); convErr == nil && sse.RetryStatus(n) ||
		strings.Contains(kind, "server_error") || strings.Contains(kind, "overloaded") ||
		strings.Contains(kind, "rate_limit") || strings.Contains(kind, "timeout") {
		return &sse.Temporary{Err: err}
	}
	return err
}
