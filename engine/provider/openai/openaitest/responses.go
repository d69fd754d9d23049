package openaitest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// A reply is one Responses stream being written: its events numbered,
// its output items kept, held after its first delta when the turn holds.
type reply struct {
	s      *Server
	r      *http.Request
	e      *fakekit.Stream
	t      Turn
	seq    int
	first  bool
	output []any
}

func (p *reply) event(typ string, v map[string]any) {
	v["type"] = typ
	v["sequence_number"] = p.seq
	p.seq++
	p.e.Event(typ, v)
}

// delta writes a delta event; false when the turn holds and the client
// has gone.
func (p *reply) delta(typ string, v map[string]any) bool {
	p.event(typ, v)
	if p.first && p.t.Hold {
		p.s.Log.Hold(p.r.Context())
		return false
	}
	p.first = false
	return true
}

// item writes an output item's added event, its deltas (false when the
// client has gone), and its done event.
func (p *reply) item(added map[string]any, body func(idx int) bool, done map[string]any) bool {
	idx := len(p.output)
	p.event("response.output_item.added", map[string]any{"output_index": idx, "item": added})
	if !body(idx) {
		return false
	}
	p.event("response.output_item.done", map[string]any{"output_index": idx, "item": done})
	p.output = append(p.output, done)
	return true
}

// responses streams t as the Responses API streams a reply.
func (s *Server) responses(w http.ResponseWriter, r *http.Request, req *Request, t Turn) {
	b := req.Body
	model := str(b["model"])
	include, _ := b["include"].([]any)
	encrypted := slices.Contains(include, any("reasoning.encrypted_content"))
	rp, _ := b["reasoning"].(map[string]any)
	c := s.call(req)
	thinks := reasons(model) && c.responsesEffort() != "none"
	n := s.Log.Len()
	respID := fmt.Sprintf("resp_fake%d", n)
	p := &reply{s: s, r: r, e: fakekit.SSE(w, "text/event-stream", "\n\n"), t: t, first: true}
	echo := map[string]any{"id": respID, "object": "response", "status": "in_progress", "model": model,
		"instructions": b["instructions"], "tools": c.tools, "output": []any{}, "store": false}
	p.event("response.created", map[string]any{"response": echo})
	p.event("response.in_progress", map[string]any{"response": echo})

	var rsID string
	if thinks {
		rsID = fmt.Sprintf("rs_fake%d", n)
		if !p.reasoning(rsID, rp["summary"] != nil, encrypted) {
			return
		}
	}
	var after []string // the ids of the items after the reasoning item
	if t.Text != "" || t.Refusal != "" {
		msgID := fmt.Sprintf("msg_fake%d", n)
		after = append(after, msgID)
		if !p.message(msgID) {
			return
		}
	}
	for i, call := range t.Calls {
		fcID := fmt.Sprintf("fc_fake%d_%d", n, i)
		after = append(after, fcID)
		if !p.call(fcID, fmt.Sprintf("call_fake%d_%d", n, i), call) {
			return
		}
	}
	if rsID != "" && len(after) > 0 {
		s.keep(model, rsID, p.output[0].(map[string]any), after)
	}
	final := map[string]any{"id": respID, "object": "response", "model": model, "output": p.output, "store": false, "usage": responsesUsage(t.Usage)}
	if t.Length {
		final["status"] = "incomplete"
		final["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		p.event("response.incomplete", map[string]any{"response": final})
		return
	}
	final["status"] = "completed"
	final["incomplete_details"] = nil
	p.event("response.completed", map[string]any{"response": final})
}

// keep notes a reasoning item issued and the items it came with, for the
// input rules to hold the next requests to.
func (s *Server) keep(model, rsID string, item map[string]any, after []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if enc, ok := item["encrypted_content"].(string); ok {
		s.issued[enc] = issued{id: rsID, next: after[0], model: model}
	}
	for _, id := range after {
		s.following[id] = rsID
	}
}

// reasoning writes the reasoning item, its summary when asked for, its
// encrypted content when included.
func (p *reply) reasoning(rsID string, summary, encrypted bool) bool {
	item := map[string]any{"id": rsID, "type": "reasoning", "summary": []any{}}
	text := p.t.Reasoning
	return p.item(map[string]any{"id": rsID, "type": "reasoning", "summary": []any{}}, func(idx int) bool {
		if summary && text != "" {
			at := map[string]any{"item_id": rsID, "output_index": idx, "summary_index": 0}
			p.event("response.reasoning_summary_part.added", with(at, "part", map[string]any{"type": "summary_text", "text": ""}))
			for _, w := range fakekit.Words(text) {
				if !p.delta("response.reasoning_summary_text.delta", with(at, "delta", w)) {
					return false
				}
			}
			p.event("response.reasoning_summary_text.done", with(at, "text", text))
			item["summary"] = []any{map[string]any{"type": "summary_text", "text": text}}
		}
		if encrypted {
			item["encrypted_content"] = "gAAAA" + base64.StdEncoding.EncodeToString([]byte(rsID+":"+text))
		}
		return true
	}, item)
}

// message writes the message item: the text, or the refusal.
func (p *reply) message(msgID string) bool {
	kind, text, deltaType, doneType := "output_text", p.t.Text, "response.output_text.delta", "response.output_text.done"
	if p.t.Refusal != "" {
		kind, text, deltaType, doneType = "refusal", p.t.Refusal, "response.refusal.delta", "response.refusal.done"
	}
	part := func(text string) map[string]any {
		if kind == "refusal" {
			return map[string]any{"type": "refusal", "refusal": text}
		}
		return map[string]any{"type": "output_text", "annotations": []any{}, "text": text}
	}
	done := map[string]any{"id": msgID, "type": "message", "status": "completed", "role": "assistant", "content": []any{part(text)}}
	return p.item(map[string]any{"id": msgID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}, func(idx int) bool {
		at := map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0}
		p.event("response.content_part.added", with(at, "part", part("")))
		for _, w := range fakekit.Words(text) {
			d := with(at, "delta", w)
			if kind == "output_text" {
				d["logprobs"] = []any{}
			}
			if !p.delta(deltaType, d) {
				return false
			}
		}
		p.event(doneType, with(at, kind2field(kind), text))
		p.event("response.content_part.done", with(at, "part", part(text)))
		return true
	}, done)
}

// kind2field is the field of a done event that holds the whole text.
func kind2field(kind string) string {
	if kind == "refusal" {
		return "refusal"
	}
	return "text"
}

// call writes a function_call item, its arguments in two fragments.
func (p *reply) call(fcID, callID string, c Call) bool {
	added := map[string]any{"id": fcID, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": callID, "name": c.Name}
	done := map[string]any{"id": fcID, "type": "function_call", "status": "completed", "arguments": c.Args, "call_id": callID, "name": c.Name}
	return p.item(added, func(idx int) bool {
		at := map[string]any{"item_id": fcID, "output_index": idx}
		for _, frag := range fakekit.Halves(c.Args) {
			if !p.delta("response.function_call_arguments.delta", with(at, "delta", frag)) {
				return false
			}
		}
		p.event("response.function_call_arguments.done", with(at, "arguments", c.Args))
		return true
	}, done)
}

// with is a copy of m with k set to v.
func with(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for mk, mv := range m {
		out[mk] = mv
	}
	out[k] = v
	return out
}
