package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// One event's data: a GenerateContentResponse, the reply so far's next
// piece (https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse),
// or an error.
//
// One chunk is decoded over the last (reset), so that the slices of a
// stream's thousands of chunks are made once. Every chunk carries the
// usage so far: only the last one's is decoded, once the stream is over.
type chunk struct {
	Candidates     []candidate     `json:"candidates"`
	UsageMetadata  rawUsage        `json:"usageMetadata"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	Error          *apiError       `json:"error"`
}

type candidate struct {
	Content struct {
		Parts []replyPart `json:"parts"`
	} `json:"content"`
	FinishReason  string `json:"finishReason"`
	FinishMessage string `json:"finishMessage"`
	Index         int    `json:"index"`
}

// reset empties c for the next chunk, keeping its slices' room.
func (c *chunk) reset() {
	cands := c.Candidates[:cap(c.Candidates)]
	for i := range cands {
		parts := cands[i].Content.Parts[:cap(cands[i].Content.Parts)]
		clear(parts)
		cands[i] = candidate{}
		cands[i].Content.Parts = parts[:0]
	}
	c.Candidates = cands[:0]
	c.PromptFeedback, c.Error = nil, nil
}

// A replyPart with neither text nor a call nor a signature is a kind coda
// does not use (inline data, code); one with a signature and no text is a
// text (or thought) part with an empty text, and goes back as one.
type replyPart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature string `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

// rawUsage keeps the last usageMetadata's bytes, in a buffer of its own
// that it reuses.
type rawUsage struct{ buf []byte }

func (u *rawUsage) UnmarshalJSON(b []byte) error {
	u.buf = append(u.buf[:0], b...)
	return nil
}

type usageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"` // cached tokens included
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
}

type promptFeedback struct {
	BlockReason string `json:"blockReason"`
}

// apiError is Google's error shape, {"error": {"code", "message", "status"}},
// in a stream as in an error reply.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// A call is one function call of the reply; its arguments are held to
// the engine's cap (llm.ArgsBuffer).
type call struct {
	id   string
	args llm.ArgsBuffer
}

// stream is the state of reading one reply.
type stream struct {
	onDelta func(llm.Delta) error
	started *bool         // set once something was passed to onDelta: the try cannot be repeated
	newID   func() string // an id for a call Gemini sent without one

	dec      sse.JSONDecoder
	ev       chunk
	batch    []chunk // a server's reply sent as one JSON array
	text     sse.Text
	thinking sse.Text
	calls    []call
	parts    replay
	kept     sse.Meter // the parts' thought signatures, held until the reply ends
	finish   string
	message  string // finishMessage
	blocked  string // promptFeedback.blockReason
}

// read consumes the stream to its end. Gemini's stream has no end marker:
// it ends after the chunk with the finish reason, and a stream that ends
// before one (or a blocked prompt's feedback) came was broken off.
func (s *stream) read(r *sse.Reader) (err error) {
	defer func() {
		if err != nil {
			s.text.Discard()
			s.thinking.Discard()
		}
	}()
	for {
		ev, err := r.Next()
		if err == io.EOF {
			if s.finish == "" && s.blocked == "" {
				return &sse.Temporary{Err: errors.New("the stream ended before the reply was complete")}
			}
			return nil
		}
		if err != nil {
			return &sse.Temporary{Err: fmt.Errorf("reading the stream: %w", err)}
		}
		if err := s.event(ev.Data); err != nil {
			return err
		}
	}
}

func (s *stream) event(data []byte) error {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		// streamGenerateContent without alt=sse answers one JSON array of
		// the chunks: a gateway that drops the parameter sends that.
		s.batch = s.batch[:0]
		if err := json.Unmarshal(data, &s.batch); err != nil {
			return fmt.Errorf("a stream event is not JSON: %w", err)
		}
		for i := range s.batch {
			if err := s.chunk(&s.batch[i]); err != nil {
				return err
			}
		}
		s.batch = nil
		return nil
	}
	s.ev.reset()
	if err := s.dec.Decode(data, &s.ev); err != nil {
		return fmt.Errorf("a stream event is not JSON: %w", err)
	}
	return s.chunk(&s.ev)
}

func (s *stream) chunk(c *chunk) error {
	if c.Error != nil {
		return streamError(c.Error)
	}
	if c != &s.ev && len(c.UsageMetadata.buf) > 0 {
		s.ev.UsageMetadata.buf = append(s.ev.UsageMetadata.buf[:0], c.UsageMetadata.buf...)
	}
	if f := c.PromptFeedback; f != nil && f.BlockReason != "" {
		s.blocked = f.BlockReason
	}
	for i := range c.Candidates {
		cand := &c.Candidates[i]
		if cand.Index != 0 {
			continue // coda asks for one candidate
		}
		for j := range cand.Content.Parts {
			if err := s.part(&cand.Content.Parts[j]); err != nil {
				return err
			}
		}
		if cand.FinishReason != "" {
			s.finish = cand.FinishReason
			s.message = cand.FinishMessage
		}
	}
	return nil
}

// part takes in one part of the reply: text and thoughts are streamed as
// they come, a function call is whole in its part.
func (s *stream) part(p *replyPart) error {
	if fc := p.FunctionCall; fc != nil {
		if len(s.calls) >= sse.MaxToolCalls {
			return fmt.Errorf("the reply makes more than %d function calls", sse.MaxToolCalls)
		}
		id := fc.ID
		if id == "" {
			id = s.newID()
		}
		if err := s.kept.Add(len(p.ThoughtSignature) + len(fc.ID) + len(fc.Name)); err != nil {
			return err
		}
		s.calls = append(s.calls, call{id: id, args: llm.ArgsBuffer{Name: fc.Name}})
		s.calls[len(s.calls)-1].args.Write(fc.Args)
		return s.parts.add(kindCall, 0, p.ThoughtSignature)
	}
	text := p.Text
	if text == "" && p.ThoughtSignature == "" {
		return nil
	}
	if err := s.kept.Add(len(p.ThoughtSignature)); err != nil {
		return err
	}
	if p.Thought {
		if err := s.parts.add(kindThought, len(text), p.ThoughtSignature); err != nil {
			return err
		}
		if text == "" {
			return nil
		}
		if err := s.thinking.Add(text); err != nil {
			return err
		}
		*s.started = true
		return s.onDelta(llm.Delta{Thinking: text})
	}
	if err := s.parts.add(kindText, len(text), p.ThoughtSignature); err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	if err := s.text.Add(text); err != nil {
		return err
	}
	*s.started = true
	return s.onDelta(llm.Delta{Text: text})
}

// Finish reasons (https://ai.google.dev/api/generate-content#FinishReason)
// that mean the reply was withheld: the visit ends as the model's refusal.
var withheld = map[string]string{
	"SAFETY":                   "its safety filters",
	"RECITATION":               "recitation of training data",
	"LANGUAGE":                 "an unsupported language",
	"BLOCKLIST":                "a blocklisted term",
	"PROHIBITED_CONTENT":       "prohibited content",
	"SPII":                     "sensitive personal information",
	"IMAGE_SAFETY":             "its image safety filters",
	"IMAGE_PROHIBITED_CONTENT": "prohibited image content",
	"IMAGE_RECITATION":         "image recitation",
	"IMAGE_OTHER":              "an image problem",
}

// response is the assembled reply, for model (the replay's signer).
func (s *stream) response(model string) (*llm.Response, error) {
	var u usageMetadata
	if len(s.ev.UsageMetadata.buf) > 0 {
		json.Unmarshal(s.ev.UsageMetadata.buf, &u) // valid JSON: the chunk it came in was
	}
	resp := &llm.Response{
		Text:     s.text.String(),
		Thinking: s.thinking.String(),
		Usage: llm.Usage{
			InputTokens:     u.PromptTokenCount + u.ToolUsePromptTokenCount,
			OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheReadTokens: u.CachedContentTokenCount,
			ReasoningTokens: u.ThoughtsTokenCount,
		},
	}
	for i := range s.calls {
		resp.ToolCalls = append(resp.ToolCalls, s.calls[i].args.ToolCall(s.calls[i].id))
	}
	switch {
	case s.blocked != "":
		resp.StopReason = llm.StopRefusal
		resp.Refusal = "Gemini blocked the prompt (" + s.blocked + ")"
	case s.finish == "MAX_TOKENS":
		resp.StopReason = llm.StopMaxTokens
	case withheld[s.finish] != "":
		resp.StopReason = llm.StopRefusal
		resp.Refusal = fmt.Sprintf("Gemini withheld the reply (%s: %s)", s.finish, withheld[s.finish])
		if s.message != "" {
			resp.Refusal += ": " + s.message
		}
	case len(resp.ToolCalls) > 0:
		resp.StopReason = llm.StopToolUse
	default:
		// STOP, and the reasons that leave no usable call
		// (MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, ...): the
		// engine nudges a model that answered nothing.
		resp.StopReason = llm.StopEndTurn
	}
	if s.parts.signed() {
		s.parts.Model = model
		resp.Replay, _ = json.Marshal(&s.parts)
	}
	return resp, errors.Join(s.text.Err(), s.thinking.Err())
}

// streamError is an error in the stream. Rate limits, overload and server
// faults are worth another try (while nothing was streamed); the rest are
// not.
func streamError(e *apiError) error {
	msg := e.Message
	if msg == "" {
		msg = e.Status
	} else if e.Status != "" {
		msg = e.Status + ": " + msg
	}
	err := fmt.Errorf("the server reported an error in the stream: %s", msg)
	switch {
	case e.Code == 429 || e.Code >= 500,
		e.Status == "RESOURCE_EXHAUSTED", e.Status == "UNAVAILABLE", e.Status == "INTERNAL", e.Status == "DEADLINE_EXCEEDED":
		return &sse.Temporary{Err: err}
	}
	return err
}
