package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// One event of a Responses stream, as much of each type as the reader
// uses; the fields of the others stay empty. Fields it does not use (the
// request echoed in response.created, the whole text again in the .done
// events) are left out so that decoding skips them.
type rEvent struct {
	Type         string          `json:"type"`
	Delta        string          `json:"delta"`
	ItemID       string          `json:"item_id"`
	SummaryIndex int             `json:"summary_index"`
	Item         json.RawMessage `json:"item"`     // output_item.added and .done
	Response     *rResponse      `json:"response"` // completed, incomplete, failed
	Error        json.RawMessage `json:"error"`    // an error event's, from some servers
	Code         json.RawMessage `json:"code"`     // an error event's own
	Message      string          `json:"message"`
}

// rItem is what the reader takes from an output item.
type rItem struct {
	Type             string `json:"type"` // "reasoning" | "message" | "function_call" | ...
	ID               string `json:"id"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	EncryptedContent string `json:"encrypted_content"`
}

type rResponse struct {
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error json.RawMessage `json:"error"`
	Usage *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// An output item of the reply, in the order the items came.
type rOut struct {
	id, typ string
	raw     json.RawMessage // a reasoning item, whole, once it is done
	call    *callSlot       // a function call's
}

// rstream is the state of reading one Responses reply.
type rstream struct {
	onDelta func(llm.Delta) error
	started *bool
	model   string // the model replying, its Replay's writer

	dec   sse.JSONDecoder
	ev    rEvent
	delta struct {
		Delta string `json:"delta"`
	}
	text     sse.Text
	thinking sse.Text
	refusal  sse.Text
	summary  string // the item and summary part the last thinking came from
	out      []*rOut
	kept     sse.Meter  // the reasoning items, whole, held until the reply ends
	final    *rResponse // the terminal event's response, once it came
}

// Events the reader skips by name without decoding them: they repeat what
// the deltas brought (the whole text, the whole arguments) or echo the
// request (instructions and tools).
var skipped = map[string]bool{
	"response.created": true, "response.in_progress": true, "response.queued": true,
	"response.output_text.done": true, "response.content_part.added": true, "response.content_part.done": true,
	"response.refusal.done": true, "response.function_call_arguments.done": true,
	"response.reasoning_summary_part.added": true, "response.reasoning_summary_part.done": true,
	"response.reasoning_summary_text.done": true, "response.reasoning_text.done": true,
	"response.output_text.annotation.added": true,
}

// read consumes the event stream and assembles the reply.
func (s *rstream) read(r *sse.Reader) (resp *llm.Response, err error) {
	defer func() {
		if err != nil {
			s.text.Discard()
			s.thinking.Discard()
			s.refusal.Discard()
		}
	}()
	for s.final == nil {
		ev, err := r.Next()
		if err == io.EOF {
			return nil, &sse.Temporary{Err: errors.New("the stream ended before the reply was complete")}
		}
		if err != nil {
			return nil, &sse.Temporary{Err: fmt.Errorf("reading the stream: %w", err)}
		}
		switch name := string(ev.Name); {
		case skipped[name]:
			continue
		case name == "response.output_text.delta":
			// The event of nearly every piece of text: only its delta is
			// decoded.
			if err := s.textDelta(ev.Data); err != nil {
				return nil, err
			}
			continue
		}
		if err := s.event(ev.Data); err != nil {
			return nil, err
		}
	}
	return s.response()
}

// textDelta handles a response.output_text.delta event, named so.
func (s *rstream) textDelta(data []byte) error {
	s.delta.Delta = ""
	if err := s.dec.Decode(data, &s.delta); err != nil {
		return fmt.Errorf("a stream event is not JSON: %w", err)
	}
	if d := s.delta.Delta; d != "" {
		if err := s.text.Add(d); err != nil {
			return err
		}
		return s.emit(llm.Delta{Text: d})
	}
	return nil
}

// event handles one event's data.
func (s *rstream) event(data []byte) error {
	s.ev = rEvent{}
	if err := s.dec.Decode(data, &s.ev); err != nil {
		return fmt.Errorf("a stream event is not JSON: %w", err)
	}
	ev := &s.ev
	switch ev.Type {
	case "response.output_text.delta":
		if ev.Delta != "" {
			if err := s.text.Add(ev.Delta); err != nil {
				return err
			}
			return s.emit(llm.Delta{Text: ev.Delta})
		}
	case "response.refusal.delta":
		// Not the model's text, and never an answer (see stream.delta).
		return s.refusal.Add(ev.Delta)
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if ev.Delta == "" {
			return nil
		}
		part := ev.ItemID + "/" + strconv.Itoa(ev.SummaryIndex)
		text := ev.Delta
		if s.summary != "" && s.summary != part {
			text = "\n\n" + text // the next summary part: a paragraph of its own
		}
		s.summary = part
		if err := s.thinking.Add(text); err != nil {
			return err
		}
		return s.emit(llm.Delta{Thinking: text})
	case "response.function_call_arguments.delta":
		o, err := s.item(ev.ItemID, "function_call")
		if err != nil {
			return err
		}
		if o.call != nil {
			o.call.args.WriteString(ev.Delta)
		}
	case "response.output_item.added", "response.output_item.done":
		return s.outputItem(data, ev.Type == "response.output_item.done")
	case "response.completed", "response.incomplete":
		if ev.Response == nil {
			return fmt.Errorf("the server sent %s without its response", ev.Type)
		}
		s.final = ev.Response
	case "response.failed":
		raw := json.RawMessage(`"the response failed"`)
		if ev.Response != nil && len(ev.Response.Error) > 0 && !bytes.Equal(ev.Response.Error, []byte("null")) {
			raw = ev.Response.Error
		}
		return streamError(raw)
	case "error":
		if len(ev.Error) > 0 && !bytes.Equal(ev.Error, []byte("null")) {
			return streamError(ev.Error)
		}
		return streamError(data) // {"type":"error","code":...,"message":...}
	}
	return nil
}

// outputItem takes in an output item as it starts or ends: a function
// call's name and ids, a reasoning item whole once it is done.
func (s *rstream) outputItem(data []byte, done bool) error {
	var it rItem
	if err := json.Unmarshal(s.ev.Item, &it); err != nil {
		return fmt.Errorf("an output item is not JSON: %w", err)
	}
	o, err := s.item(it.ID, it.Type)
	if err != nil {
		return err
	}
	if err := s.kept.Add(len(it.CallID) + len(it.Name)); err != nil {
		return err
	}
	if c := o.call; c != nil {
		if it.CallID != "" {
			c.id = it.CallID
		}
		if it.Name != "" {
			c.args.Name = it.Name
		}
		if done && c.args.Len() == 0 {
			// A server that sent the arguments only whole, with the item.
			var whole struct {
				Item struct {
					Arguments json.RawMessage `json:"arguments"`
				} `json:"item"`
			}
			if json.Unmarshal(data, &whole) == nil && len(whole.Item.Arguments) > 0 && whole.Item.Arguments[0] == '"' {
				writeJSONString(&c.args, whole.Item.Arguments)
			}
		}
	}
	if done && it.Type == "reasoning" && it.EncryptedContent != "" {
		if err := s.kept.Add(len(s.ev.Item)); err != nil {
			return err
		}
		o.raw = append(json.RawMessage(nil), s.ev.Item...)
	}
	return nil
}

// item is the output item with id, added when it is new: at most
// sse.MaxToolCalls of them.
func (s *rstream) item(id, typ string) (*rOut, error) {
	for _, o := range s.out {
		if o.id == id && id != "" {
			return o, nil
		}
	}
	if len(s.out) >= sse.MaxToolCalls {
		return nil, fmt.Errorf("the reply has more than %d output items", sse.MaxToolCalls)
	}
	if err := s.kept.Add(len(id) + len(typ)); err != nil {
		return nil, err
	}
	o := &rOut{id: id, typ: typ}
	if typ == "function_call" {
		o.call = &callSlot{index: len(s.out)}
	}
	s.out = append(s.out, o)
	return o, nil
}

func (s *rstream) emit(d llm.Delta) error {
	*s.started = true
	return s.onDelta(d)
}

// response is the assembled reply.
func (s *rstream) response() (*llm.Response, error) {
	resp := &llm.Response{
		Text:     s.text.String(),
		Thinking: s.thinking.String(),
		Refusal:  s.refusal.String(),
	}
	if u := s.final.Usage; u != nil {
		resp.Usage = llm.Usage{
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheReadTokens: u.InputTokensDetails.CachedTokens, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens,
		}
	}
	// Each reasoning item is paired with the item after it by id: ids are
	// sent back only when every reasoning item can be (it came with its
	// encrypted content), or the API refuses the orphans.
	keepIDs := true
	for _, o := range s.out {
		if o.typ == "reasoning" && o.raw == nil {
			keepIDs = false
		}
	}
	rp := rReplay{Model: s.model}
	for i, o := range s.out {
		switch o.typ {
		case "reasoning":
			if o.raw != nil {
				rp.Items = append(rp.Items, o.raw)
			}
		case "message":
			if keepIDs && o.id != "" {
				rp.Items = append(rp.Items, stub(replayStub{Type: "message", ID: o.id}))
			}
		case "function_call":
			c := o.call
			if c.args.Name == "" && c.args.Len() == 0 {
				continue
			}
			if c.id == "" {
				c.id = "call_" + strconv.Itoa(i)
			}
			resp.ToolCalls = append(resp.ToolCalls, c.args.ToolCall(c.id))
			if keepIDs && o.id != "" {
				rp.Items = append(rp.Items, stub(replayStub{Type: "function_call", ID: o.id, CallID: c.id}))
			}
		}
	}
	if len(rp.Items) > 0 {
		resp.Replay, _ = json.Marshal(rp)
	}
	reason := ""
	if d := s.final.IncompleteDetails; d != nil {
		reason = d.Reason
	}
	switch {
	case reason == "max_output_tokens" || s.final.Status == "incomplete" && reason == "":
		resp.StopReason = llm.StopMaxTokens
	case reason == "content_filter" || resp.Refusal != "":
		resp.StopReason = llm.StopRefusal
	case len(resp.ToolCalls) > 0:
		resp.StopReason = llm.StopToolUse
	default:
		resp.StopReason = llm.StopEndTurn
	}
	return resp, errors.Join(s.text.Err(), s.thinking.Err(), s.refusal.Err())
}

func stub(v replayStub) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
