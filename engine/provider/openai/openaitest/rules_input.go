package openaitest

import (
	"fmt"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// inputRules hold Responses' input items to the stateless rules
// (developers.openai.com/api/docs/guides/reasoning#keeping-reasoning-items-in-context).
var inputRules = []fakekit.Rule[*call]{
	{Name: "reasoning-item-issued", Source: docKeeping, Check: func(c *call) error {
		return c.reasoningItems(func(id string, iss issued, ok bool, _ string) error {
			if !ok || iss.id != id {
				return &fakekit.Refusal{Status: 404, Param: "input", Msg: fmt.Sprintf("Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", id)}
			}
			return nil
		})
	}},
	{Name: "reasoning-item-model", Source: "https://github.com/Wei-Shaw/sub2api/issues/3138", Check: func(c *call) error {
		return c.reasoningItems(func(id string, iss issued, ok bool, _ string) error {
			if ok && iss.model != c.model {
				return fakekit.RefuseParam("input", "The encrypted content for item %s could not be verified. Reason: Encrypted content could not be decrypted or parsed.", id)
			}
			return nil
		})
	}},
	{Name: "reasoning-item-following", Source: docKeeping, Check: func(c *call) error {
		return c.reasoningItems(func(id string, iss issued, ok bool, next string) error {
			if ok && next != iss.next {
				return fakekit.RefuseParam("input", "Item '%s' of type 'reasoning' was provided without its required following item.", id)
			}
			return nil
		})
	}},
	{Name: "item-with-reasoning", Source: docKeeping, Check: withReasoning},
	{Name: "output-answers-call", Source: docResponses, Check: func(c *call) error {
		calls := map[string]bool{}
		for _, it := range c.items() {
			switch cid := str(it["call_id"]); it["type"] {
			case "function_call":
				calls[cid] = true
			case "function_call_output":
				if !calls[cid] {
					return fakekit.RefuseParam("input", "No tool call found for function call output with call_id %s.", cid)
				}
				delete(calls, cid)
			}
		}
		return nil
	}},
	{Name: "calls-answered", Source: docResponses, Check: func(c *call) error {
		calls := map[string]bool{}
		for _, it := range c.items() {
			switch cid := str(it["call_id"]); {
			case it["type"] == "function_call":
				calls[cid] = true
			case it["type"] == "function_call_output":
				delete(calls, cid)
			case it["role"] == "user" && len(calls) > 0:
				return fakekit.RefuseParam("input", "No tool output found for function call %s.", keys(calls))
			}
		}
		if len(calls) > 0 {
			return fakekit.RefuseParam("input", "No tool output found for function call %s.", keys(calls))
		}
		return nil
	}},
	{Name: "input-image", Source: docResponses + "/create#responses-create-input", Check: func(c *call) error {
		for _, it := range c.items() {
			parts, _ := it["content"].([]any)
			for _, p := range parts {
				if p, _ := p.(map[string]any); p["type"] == "input_image" {
					if msg := c.s.checkImage(p); msg != "" {
						return fakekit.RefuseParam("input", "%s", msg)
					}
				}
			}
		}
		return nil
	}},
}

// items are the input's items, decoded.
func (c *call) items() []map[string]any {
	out := make([]map[string]any, len(c.input))
	for i, it := range c.input {
		out[i], _ = it.(map[string]any)
	}
	return out
}

// reasoningItems calls f with each reasoning item of the input: its id,
// what this server issued under its encrypted content (ok: something),
// and the id of the item after it; until f errs.
func (c *call) reasoningItems(f func(id string, iss issued, ok bool, next string) error) error {
	items := c.items()
	for i, it := range items {
		if it["type"] != "reasoning" {
			continue
		}
		c.s.mu.Lock()
		iss, ok := c.s.issued[str(it["encrypted_content"])]
		c.s.mu.Unlock()
		next := ""
		if i+1 < len(items) {
			next = str(items[i+1]["id"])
		}
		if err := f(str(it["id"]), iss, ok, next); err != nil {
			return err
		}
	}
	return nil
}

// withReasoning: an item produced with a reasoning item goes back after
// it.
func withReasoning(c *call) error {
	seen := map[string]bool{} // reasoning items given
	for _, it := range c.items() {
		id := str(it["id"])
		typ := str(it["type"])
		switch typ {
		case "reasoning":
			seen[id] = true
			continue
		case "function_call_output":
			continue
		case "function_call":
		default:
			typ = "message"
		}
		c.s.mu.Lock()
		rs := c.s.following[id]
		c.s.mu.Unlock()
		if id != "" && rs != "" && !seen[rs] {
			return fakekit.RefuseParam("input", "Item '%s' of type '%s' was provided without its required 'reasoning' item: '%s'.", id, typ, rs)
		}
	}
	return nil
}
