package anthropictest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// The usage a reply reports is cache's, in one place: what the prompt
// cost, read from and written to the cache.

// cache is the usage of b's prompt, as the API counts it.
func (s *Server) cache(b *Body) Usage {
	type boundary struct {
		hash   [32]byte
		tokens int
		marked bool
	}
	var prefix []byte
	var bounds []boundary
	add := func(raw json.RawMessage) {
		var blk map[string]any
		json.Unmarshal(raw, &blk)
		marked := blk["cache_control"] != nil
		delete(blk, "cache_control")
		c, _ := json.Marshal(blk)
		prefix = append(prefix, c...)
		bounds = append(bounds, boundary{sha256.Sum256(prefix), len(prefix) / 4, marked})
	}
	for _, t := range b.Tools {
		add(t)
	}
	if len(b.System) > 0 && b.System[0] == '[' {
		var sys []json.RawMessage
		json.Unmarshal(b.System, &sys)
		for _, blk := range sys {
			add(blk)
		}
	} else {
		prefix = append(prefix, b.System...)
	}
	for _, m := range b.Messages {
		prefix = append(prefix, m.Role...)
		for _, blk := range m.Content {
			add(blk)
		}
	}
	total := len(prefix) / 4
	read, written := 0, 0
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, bd := range bounds {
		if !bd.marked {
			continue
		}
		for j := i; j >= 0 && j >= i-20; j-- {
			if s.cached[bounds[j].hash] {
				read = max(read, bounds[j].tokens)
				break
			}
		}
	}
	for _, bd := range bounds {
		if bd.marked && !s.cached[bd.hash] {
			s.cached[bd.hash] = true
			written = max(written, bd.tokens)
		}
	}
	write := max(0, written-read)
	return Usage{Input: total - read - write, CacheWrite: write, CacheRead: read}
}

// sign gives a signature for a thinking block's text, from model.
func (s *Server) sign(model, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d", model, text, len(s.signed)))
	sig := base64.StdEncoding.EncodeToString(h[:])
	s.signed[sig] = model + "\x00" + text
	return sig
}

// stream writes t as the API streams a reply.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, t Turn) {
	e := fakekit.SSE(w, "text/event-stream; charset=utf-8", "\n\n")
	event := func(typ string, v map[string]any) {
		v["type"] = typ
		e.Event(typ, v)
	}
	u := req.Usage
	event("message_start", map[string]any{"message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "content": []any{}, "model": req.Body.Model, "stop_reason": nil,
		"usage": map[string]any{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead, "output_tokens": 1},
	}})
	s.noteWrote(t.Blocks)
	stop := t.Stop
	for i, blk := range t.Blocks {
		s.block(event, req.Body.Model, i, blk)
		if blk.Type == "tool_use" && stop == "" {
			stop = "tool_use"
		}
		event("content_block_stop", map[string]any{"index": i})
		if t.Hold {
			s.Log.Hold(r.Context())
			return
		}
	}
	if stop == "" {
		stop = "end_turn"
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 42}})
	event("message_stop", map[string]any{})
}

// noteWrote keeps the tool_use ids of a reply, each with whether the
// reply began with thinking (the rule thinking-blocks-kept reads them).
func (s *Server) noteWrote(blocks []Block) {
	thought := len(blocks) > 0 && (blocks[0].Type == "thinking" || blocks[0].Type == "redacted_thinking")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, blk := range blocks {
		if blk.Type == "tool_use" {
			s.wrote[blk.ID] = thought
		}
	}
}

// block streams the i-th content block of a reply, but its stop.
func (s *Server) block(event func(string, map[string]any), model string, i int, blk Block) {
	start := func(b map[string]any) {
		event("content_block_start", map[string]any{"index": i, "content_block": b})
	}
	delta := func(d map[string]any) { event("content_block_delta", map[string]any{"index": i, "delta": d}) }
	switch blk.Type {
	case "thinking":
		start(map[string]any{"type": "thinking", "thinking": "", "signature": ""})
		for _, piece := range fakekit.WordsSpaceFirst(blk.Text) {
			delta(map[string]any{"type": "thinking_delta", "thinking": piece})
		}
		delta(map[string]any{"type": "signature_delta", "signature": s.sign(model, blk.Text)})
	case "redacted_thinking":
		start(map[string]any{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"})
	case "text":
		start(map[string]any{"type": "text", "text": ""})
		for _, piece := range fakekit.WordsSpaceFirst(blk.Text) {
			delta(map[string]any{"type": "text_delta", "text": piece})
		}
	case "tool_use":
		start(map[string]any{"type": "tool_use", "id": blk.ID, "name": blk.Name, "input": map[string]any{}})
		in := blk.Input
		if in == "" {
			in = "{}"
		}
		for _, frag := range fakekit.Halves(in) {
			delta(map[string]any{"type": "input_json_delta", "partial_json": frag})
		}
	}
}
