package geminitest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// sign gives a new signature from model.
func (s *Server) sign(model string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b [24]byte
	copy(b[:], fmt.Sprintf("%s#%d", model, len(s.signed)))
	sig := base64.StdEncoding.EncodeToString(b[:])
	s.signed[sig] = model
	return sig
}

// usage is the usageMetadata a reply reports, in one place: t's, or the
// prompt's bytes counted as a fourth of a token each.
func usage(req *Request, t Turn) map[string]any {
	u := t.Usage
	if u == (Usage{}) {
		u = Usage{Prompt: len(req.Raw) / 4, Candidates: 10}
	}
	out := map[string]any{"promptTokenCount": u.Prompt, "candidatesTokenCount": u.Candidates, "totalTokenCount": u.Prompt + u.Candidates + u.Thoughts}
	if u.Cached > 0 {
		out["cachedContentTokenCount"] = u.Cached
	}
	if u.Thoughts > 0 {
		out["thoughtsTokenCount"] = u.Thoughts
	}
	return out
}

// stream writes t as the API streams a reply: one chunk a word, the
// usage so far on each, the finish on the last.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, model Model, t Turn) {
	e := fakekit.SSE(w, "text/event-stream", "\r\n\r\n")
	usage := usage(req, t)
	held := false
	chunk := func(parts []map[string]any, finish string) {
		cand := map[string]any{"index": 0}
		if parts != nil {
			cand["content"] = map[string]any{"role": "model", "parts": parts}
		}
		if finish != "" {
			cand["finishReason"] = finish
		}
		e.Data(map[string]any{"candidates": []any{cand}, "usageMetadata": usage, "modelVersion": req.Model, "responseId": "fake"})
		if t.Hold && !held {
			held = true
			s.Log.Hold(r.Context())
		}
	}
	if t.Blocked != "" {
		e.Data(map[string]any{"promptFeedback": map[string]any{"blockReason": t.Blocked}, "usageMetadata": usage})
		return
	}
	for _, piece := range fakekit.WordsSpaceFirst(t.Thought) {
		if chunk([]map[string]any{{"text": piece, "thought": true}}, ""); held {
			return
		}
	}
	for _, piece := range fakekit.WordsSpaceFirst(t.Text) {
		if chunk([]map[string]any{{"text": piece}}, ""); held {
			return
		}
	}
	finish := t.Finish
	if finish == "" {
		finish = "STOP"
	}
	chunk(s.lastParts(req, model, t), finish)
}

// lastParts are the parts of a reply's last chunk: its function calls,
// the first signed on a model that signs; without calls, an empty text
// part carrying a signature there, else none.
func (s *Server) lastParts(req *Request, model Model, t Turn) []map[string]any {
	if len(t.Calls) == 0 {
		if model.Signs {
			return []map[string]any{{"text": "", "thoughtSignature": s.sign(req.Model)}}
		}
		return nil
	}
	var parts []map[string]any
	for i, c := range t.Calls {
		args := json.RawMessage(c.Args)
		if c.Args == "" {
			args = json.RawMessage("{}")
		}
		p := map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args}}
		if i == 0 && model.Signs {
			p["thoughtSignature"] = s.sign(req.Model)
		}
		parts = append(parts, p)
	}
	return parts
}
