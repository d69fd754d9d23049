package anthropictest

import "encoding/json"

// Prompt is a request body's prompt in the order the model reads it and
// the cache counts it (Server.cache): the tools, the system prompt, then
// each message's role and blocks, with no block's cache_control, so that
// two requests compare as the cache compares them.
func Prompt(raw []byte) []byte {
	var b Body
	if json.Unmarshal(raw, &b) != nil {
		return nil
	}
	var out []byte
	add := func(raw json.RawMessage) {
		var blk map[string]any
		json.Unmarshal(raw, &blk)
		delete(blk, "cache_control")
		c, _ := json.Marshal(blk)
		out = append(out, c...)
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
		out = append(out, b.System...)
	}
	for _, m := range b.Messages {
		out = append(out, m.Role...)
		for _, blk := range m.Content {
			add(blk)
		}
	}
	return out
}
