package openaitest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
)

// responses serves POST /responses.
func (s *Server) responses(w http.ResponseWriter, r *http.Request, req *Request) {
	b := req.Body
	model := str(b["model"])
	if b["store"] != false {
		s.refuse(w, req, 400, "This fake serves stateless calls only: send store: false.", "store")
		return
	}
	include, _ := b["include"].([]any)
	encrypted := slices.Contains(include, any("reasoning.encrypted_content"))
	effort := ""
	summary := false
	if rp, ok := b["reasoning"].(map[string]any); ok {
		if !reasons(model) {
			s.refuse(w, req, 400, "Unsupported parameter: 'reasoning.effort' is not supported with this model.", "reasoning.effort")
			return
		}
		effort = str(rp["effort"])
		summary = rp["summary"] != nil
	}
	if effort == "" && reasons(model) {
		effort = "medium"
	}
	thinks := reasons(model) && effort != "none"
	if p := samplingRefused(model, effort, b); p != "" {
		s.refuse(w, req, 400, fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", p), p)
		return
	}

	tools, _ := b["tools"].([]any)
	var names []string
	for i, t := range tools {
		t, _ := t.(map[string]any)
		names = append(names, str(t["name"]))
		if t["strict"] != false && !s.NoStrict { // strict unless it says not
			if msg := StrictProblem(t["parameters"]); msg != "" {
				s.refuse(w, req, 400, fmt.Sprintf("Invalid schema for function '%s': %s", t["name"], msg), fmt.Sprintf("tools[%d].parameters", i))
				return
			}
		}
	}
	if tc, ok := b["tool_choice"].(map[string]any); ok && !slices.Contains(names, str(tc["name"])) {
		s.refuse(w, req, 400, fmt.Sprintf("Tool choice '%s' not found in 'tools' parameter.", tc["name"]), "tool_choice")
		return
	}
	input, _ := b["input"].([]any)
	if text, ok := b["text"].(map[string]any); ok {
		f, _ := text["format"].(map[string]any)
		switch f["type"] {
		case "json_object":
			if !mentionsJSON([]any{input, b["instructions"]}) {
				s.refuse(w, req, 400, "Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.", "text.format")
				return
			}
		case "json_schema":
			if f["strict"] == true {
				if msg := StrictProblem(f["schema"]); msg != "" {
					s.refuse(w, req, 400, fmt.Sprintf("Invalid schema for response_format '%s': %s", f["name"], msg), "text.format.schema")
					return
				}
			}
		}
	}
	if msg, status := s.checkInput(model, input); msg != "" {
		s.refuse(w, req, status, msg, "input")
		return
	}

	t := s.turn(req)
	t.Usage = s.credit(req, t.Usage)
	if t.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		w.Write([]byte(t.Body))
		return
	}
	n := len(s.Requests())
	respID := fmt.Sprintf("resp_fake%d", n)
	e := newSSE(w, r, s)
	echo := map[string]any{"id": respID, "object": "response", "status": "in_progress", "model": model,
		"instructions": b["instructions"], "tools": tools, "output": []any{}, "store": false}
	e.event("response.created", map[string]any{"response": echo})
	e.event("response.in_progress", map[string]any{"response": echo})

	var output []any
	first := true
	piece := func(typ string, v map[string]any) bool {
		e.event(typ, v)
		if first && t.Hold {
			e.hold()
			return false
		}
		first = false
		return true
	}
	var rsID string
	if thinks {
		rsID = fmt.Sprintf("rs_fake%d", n)
		idx := len(output)
		e.event("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": rsID, "type": "reasoning", "summary": []any{}}})
		item := map[string]any{"id": rsID, "type": "reasoning", "summary": []any{}}
		if summary && t.Reasoning != "" {
			e.event("response.reasoning_summary_part.added", map[string]any{"item_id": rsID, "output_index": idx, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}})
			for _, p := range words(t.Reasoning) {
				if !piece("response.reasoning_summary_text.delta", map[string]any{"item_id": rsID, "output_index": idx, "summary_index": 0, "delta": p}) {
					return
				}
			}
			e.event("response.reasoning_summary_text.done", map[string]any{"item_id": rsID, "output_index": idx, "summary_index": 0, "text": t.Reasoning})
			item["summary"] = []any{map[string]any{"type": "summary_text", "text": t.Reasoning}}
		}
		if encrypted {
			item["encrypted_content"] = "gAAAA" + base64.StdEncoding.EncodeToString([]byte(rsID+":"+t.Reasoning))
		}
		e.event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
	}
	var after []string // the ids of the items after the reasoning item
	if t.Text != "" || t.Refusal != "" {
		msgID := fmt.Sprintf("msg_fake%d", n)
		idx := len(output)
		after = append(after, msgID)
		e.event("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": msgID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		var part map[string]any
		if t.Refusal != "" {
			e.event("response.content_part.added", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "part": map[string]any{"type": "refusal", "refusal": ""}})
			for _, p := range words(t.Refusal) {
				if !piece("response.refusal.delta", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "delta": p}) {
					return
				}
			}
			e.event("response.refusal.done", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "refusal": t.Refusal})
			part = map[string]any{"type": "refusal", "refusal": t.Refusal}
		} else {
			e.event("response.content_part.added", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "part": map[string]any{"type": "output_text", "annotations": []any{}, "text": ""}})
			for _, p := range words(t.Text) {
				if !piece("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "delta": p, "logprobs": []any{}}) {
					return
				}
			}
			e.event("response.output_text.done", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "text": t.Text})
			part = map[string]any{"type": "output_text", "annotations": []any{}, "text": t.Text}
		}
		e.event("response.content_part.done", map[string]any{"item_id": msgID, "output_index": idx, "content_index": 0, "part": part})
		item := map[string]any{"id": msgID, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		e.event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
	}
	for i, c := range t.Calls {
		fcID, callID := fmt.Sprintf("fc_fake%d_%d", n, i), fmt.Sprintf("call_fake%d_%d", n, i)
		idx := len(output)
		after = append(after, fcID)
		e.event("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": fcID, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": callID, "name": c.Name}})
		for _, frag := range halves(c.Args) {
			if !piece("response.function_call_arguments.delta", map[string]any{"item_id": fcID, "output_index": idx, "delta": frag}) {
				return
			}
		}
		e.event("response.function_call_arguments.done", map[string]any{"item_id": fcID, "output_index": idx, "arguments": c.Args})
		item := map[string]any{"id": fcID, "type": "function_call", "status": "completed", "arguments": c.Args, "call_id": callID, "name": c.Name}
		e.event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
	}
	if rsID != "" && len(after) > 0 {
		s.mu.Lock()
		if encrypted {
			enc := output[0].(map[string]any)["encrypted_content"].(string)
			s.issued[enc] = issued{id: rsID, next: after[0], model: model}
		}
		for _, id := range after {
			s.following[id] = rsID
		}
		s.mu.Unlock()
	}
	final := map[string]any{"id": respID, "object": "response", "model": model, "output": output, "store": false,
		"usage": map[string]any{
			"input_tokens": t.Usage.Input, "input_tokens_details": map[string]any{"cached_tokens": t.Usage.Cached},
			"output_tokens": t.Usage.Output, "output_tokens_details": map[string]any{"reasoning_tokens": t.Usage.Reasoning},
			"total_tokens": t.Usage.Input + t.Usage.Output,
		}}
	if t.Length {
		final["status"] = "incomplete"
		final["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		e.event("response.incomplete", map[string]any{"response": final})
		return
	}
	final["status"] = "completed"
	final["incomplete_details"] = nil
	e.event("response.completed", map[string]any{"response": final})
}

// checkInput holds the input items to the stateless rules; it returns the
// error message and status of the first one broken, or "".
func (s *Server) checkInput(model string, input []any) (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{} // reasoning items given
	calls := map[string]bool{}
	for i, it := range input {
		it, _ := it.(map[string]any)
		id := str(it["id"])
		switch it["type"] {
		case "reasoning":
			iss, ok := s.issued[str(it["encrypted_content"])]
			if !ok || iss.id != id {
				return fmt.Sprintf("Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", id), 404
			}
			if iss.model != model {
				return fmt.Sprintf("The encrypted content for item %s could not be verified. Reason: Encrypted content could not be decrypted or parsed.", id), 400
			}
			next := ""
			if i+1 < len(input) {
				nx, _ := input[i+1].(map[string]any)
				next = str(nx["id"])
			}
			if next != iss.next {
				return fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", id), 400
			}
			seen[id] = true
		case "function_call":
			if rs := s.following[id]; id != "" && rs != "" && !seen[rs] {
				return fmt.Sprintf("Item '%s' of type 'function_call' was provided without its required 'reasoning' item: '%s'.", id, rs), 400
			}
			calls[str(it["call_id"])] = true
		case "function_call_output":
			cid := str(it["call_id"])
			if !calls[cid] {
				return fmt.Sprintf("No tool call found for function call output with call_id %s.", cid), 400
			}
			delete(calls, cid)
		default: // a message
			if rs := s.following[id]; id != "" && rs != "" && !seen[rs] {
				return fmt.Sprintf("Item '%s' of type 'message' was provided without its required 'reasoning' item: '%s'.", id, rs), 400
			}
			if it["role"] == "user" && len(calls) > 0 {
				return "No tool output found for function call " + keys(calls) + ".", 400
			}
			parts, _ := it["content"].([]any)
			for _, p := range parts {
				if p, _ := p.(map[string]any); p["type"] == "input_image" {
					if msg := s.checkImage(p); msg != "" {
						return msg, 400
					}
				}
			}
		}
	}
	if len(calls) > 0 {
		return "No tool output found for function call " + keys(calls) + ".", 400
	}
	return "", 0
}
