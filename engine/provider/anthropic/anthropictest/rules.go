package anthropictest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/provider/internal/fakekit"
)

// A call is one request to /v1/messages as the rules read it.
type call struct {
	s       *Server
	req     *Request
	b       *Body
	model   Model
	known   bool  // the model is one the fake knows
	invalid error // why the body is not JSON, or nil
	// thinks: thinking is on, asked for or the model's default
	thinks bool
}

func (s *Server) call(req *Request) *call {
	invalid := json.Unmarshal(req.Raw, &req.Body)
	model, known := fakekit.Known(s.Models, Models, req.Body.Model)
	c := &call{s: s, req: req, b: &req.Body, model: model, known: known, invalid: invalid, thinks: model.OnByDefault}
	if th := req.Body.Thinking; th != nil {
		c.thinks = th.Type != "disabled"
	}
	return c
}

// thinking reports whether the request asks for thinking of type typ.
func (c *call) thinking(typ string) bool { return c.b.Thinking != nil && c.b.Thinking.Type == typ }

// effort is output_config.effort, or "".
func (c *call) effort() string {
	if c.b.OutputConfig == nil {
		return ""
	}
	return c.b.OutputConfig.Effort
}

// forced is the tool_choice type that forces a tool ("tool", "any"), or
// "".
func (c *call) forced() string {
	if tc := c.b.ToolChoice; tc != nil && (tc.Type == "tool" || tc.Type == "any") {
		return tc.Type
	}
	return ""
}

// format is output_config.format, or nil.
func (c *call) format() *struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
} {
	if c.b.OutputConfig == nil {
		return nil
	}
	return c.b.OutputConfig.Format
}

// A tool is the part of a request's tool the rules read.
type tool struct {
	Strict       bool            `json:"strict"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *struct {
		Type string `json:"type"`
	} `json:"cache_control"`
}

func (c *call) tools() []tool {
	out := make([]tool, len(c.b.Tools))
	for i, raw := range c.b.Tools {
		json.Unmarshal(raw, &out[i])
	}
	return out
}

// strict are the request's strict schemas, held to the limits together.
func (c *call) strict() []json.RawMessage {
	var out []json.RawMessage
	if f := c.format(); f != nil && !c.s.NoJSONOutputs {
		out = append(out, f.Schema)
	}
	for _, t := range c.tools() {
		if t.Strict {
			out = append(out, t.InputSchema)
		}
	}
	return out
}

// cacheMarks are the cache_control types of the request's tools, system
// blocks and message blocks, in order.
func (c *call) cacheMarks() []string {
	var out []string
	for _, t := range c.tools() {
		if t.CacheControl != nil {
			out = append(out, t.CacheControl.Type)
		}
	}
	if len(c.b.System) > 0 && c.b.System[0] == '[' {
		var sys []ContentBlock
		json.Unmarshal(c.b.System, &sys)
		for _, blk := range sys {
			if blk.CacheControl != nil {
				out = append(out, blk.CacheControl.Type)
			}
		}
	}
	c.blocks(func(_, _ int, blk ContentBlock) error {
		if blk.CacheControl != nil {
			out = append(out, blk.CacheControl.Type)
		}
		return nil
	})
	return out
}

// blocks calls f with each message's blocks, in order, until one errs.
func (c *call) blocks(f func(i, j int, blk ContentBlock) error) error {
	for i, m := range c.b.Messages {
		for j, blk := range m.Blocks() {
			if err := f(i, j, blk); err != nil {
				return err
			}
		}
	}
	return nil
}

// The documents the rules cite.
const (
	docMessages  = "https://docs.anthropic.com/en/api/messages"
	docThinking  = "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"
	docAdaptive  = "https://docs.anthropic.com/en/docs/build-with-claude/adaptive-thinking"
	docEffort    = "https://docs.anthropic.com/en/docs/build-with-claude/effort"
	docSonnet55  = "https://docs.anthropic.com/en/docs/about-claude/models/sonnet-5-5/whats-new-sonnet-5-5"
	docCaching   = "https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching"
	docStructure = "https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations"
	docStrict    = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/strict-tool-use"
	docToolUse   = "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#controlling-claudes-output"
	docVision    = "https://docs.anthropic.com/en/docs/build-with-claude/vision"
	docFiles     = "https://docs.claude.com/en/docs/build-with-claude/files"
)

// rules are what the Messages API holds a request to, in the order it is
// checked (the package's doc says each in words).
var rules = []fakekit.Rule[*call]{
	{Name: "json", Source: docMessages, Check: func(c *call) error {
		return fakekit.If(c.invalid != nil, "invalid JSON: %v", c.invalid)
	}},
	{Name: "known-fields", Source: docMessages, Check: knownFields},
	{Name: "known-model", Source: "https://platform.claude.com/docs/en/models", Check: func(c *call) error {
		if !c.known {
			return &fakekit.Refusal{Status: 404, Type: "not_found_error", Msg: "model: " + c.b.Model}
		}
		return nil
	}},
	{Name: "thinking-enabled-model", Source: docAdaptive, Check: func(c *call) error {
		return fakekit.If(c.thinking("enabled") && !c.model.Budget, `"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`)
	}},
	{Name: "thinking-budget-min", Source: docThinking, Check: func(c *call) error {
		return fakekit.If(c.thinking("enabled") && c.b.Thinking.BudgetTokens < 1024, "thinking.budget_tokens: Input should be greater than or equal to 1024")
	}},
	{Name: "thinking-budget-below-max", Source: docThinking + "#max-tokens-and-context-window-size", Check: func(c *call) error {
		return fakekit.If(c.thinking("enabled") && c.b.Thinking.BudgetTokens >= c.b.MaxTokens, "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size")
	}},
	{Name: "thinking-adaptive-model", Source: docAdaptive, Check: func(c *call) error {
		return fakekit.If(c.thinking("adaptive") && !c.model.Adaptive, `"thinking.type.adaptive" is not supported for this model.`)
	}},
	{Name: "thinking-display", Source: docAdaptive, Check: func(c *call) error {
		d := c.b.Thinking
		return fakekit.If(c.thinking("adaptive") && d.Display != "" && d.Display != "summarized" && d.Display != "omitted", "thinking.display: Input should be 'summarized' or 'omitted'")
	}},
	{Name: "thinking-disabled-model", Source: docSonnet55, Check: func(c *call) error {
		switch {
		case !c.thinking("disabled"):
		case c.model.BetweenTools:
			return fakekit.Refuse(`"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" to turn off up-front thinking.`)
		case c.model.NoDisable:
			return fakekit.Refuse(`"thinking.type.disabled" is not supported for this model.`)
		}
		return nil
	}},
	{Name: "thinking-between-tools-model", Source: docSonnet55, Check: func(c *call) error {
		return fakekit.If(c.thinking("between_tools") && !c.model.BetweenTools, `"thinking.type.between_tools" is not supported for this model.`)
	}},
	{Name: "thinking-between-tools-effort", Source: docSonnet55, Check: func(c *call) error {
		e := c.effort()
		return fakekit.If(c.thinking("between_tools") && (e == "xhigh" || e == "max"), `"thinking.type.between_tools" is not supported at effort %s: use "thinking.type.adaptive".`, e)
	}},
	{Name: "thinking-type", Source: docThinking, Check: func(c *call) error {
		if th := c.b.Thinking; th != nil && !slices.Contains([]string{"enabled", "adaptive", "disabled", "between_tools"}, th.Type) {
			return fakekit.Refuse("thinking.type: Input tag '%s' found using 'type' does not match any of the expected tags: 'adaptive', 'between_tools', 'disabled', 'enabled'", th.Type)
		}
		return nil
	}},
	{Name: "effort-levels", Source: docEffort, Check: func(c *call) error {
		switch e := c.effort(); {
		case e == "" || slices.Contains(c.model.Efforts, e):
		case c.model.Efforts == nil:
			return fakekit.Refuse("output_config.effort: This model does not support the effort parameter.")
		default:
			return fakekit.Refuse("output_config.effort: Input should be %s", strings.Join(c.model.Efforts, ", "))
		}
		return nil
	}},
	{Name: "format-json-schema", Source: docStructure, Check: func(c *call) error {
		f := c.format()
		return fakekit.If(f != nil && (f.Type != "json_schema" || len(f.Schema) == 0), "output_config.format: Input tag does not match the expected tag 'json_schema'")
	}},
	{Name: "format-subset", Source: docStructure, Check: func(c *call) error {
		if f := c.format(); f != nil && !c.s.NoJSONOutputs {
			if msg := schemaProblem(f.Schema); msg != "" {
				return fakekit.Refuse("output_config.format.schema: %s", msg)
			}
		}
		return nil
	}},
	{Name: "json-outputs-known", Source: docStructure, Check: func(c *call) error {
		return fakekit.If(c.s.NoJSONOutputs && c.format() != nil, "output_config.format: Extra inputs are not permitted")
	}},
	{Name: "strict-known", Source: docStrict, Check: func(c *call) error {
		for i, t := range c.tools() {
			if c.s.NoStrict && t.Strict {
				return fakekit.Refuse("tools.%d.custom.strict: Extra inputs are not permitted", i)
			}
		}
		return nil
	}},
	{Name: "forced-tool-model", Source: docSonnet55, Check: func(c *call) error {
		return fakekit.If(c.forced() != "" && c.model.NoForced, "tool_choice: type '%s' is not supported for this model; use 'auto' or 'none'.", c.forced())
	}},
	{Name: "forced-tool-thinking", Source: docThinking + "#extended-thinking-with-tool-use", Check: func(c *call) error {
		return fakekit.If(c.forced() != "" && c.thinks, "Thinking may not be enabled when tool_choice forces tool use.")
	}},
	{Name: "cache-control-ephemeral", Source: docCaching, Check: func(c *call) error {
		if slices.ContainsFunc(c.cacheMarks(), func(t string) bool { return t != "ephemeral" }) {
			return fakekit.Refuse("cache_control.type: Input should be 'ephemeral'")
		}
		return nil
	}},
	{Name: "strict-tool-subset", Source: docStrict, Check: func(c *call) error {
		for i, t := range c.tools() {
			if msg := schemaProblem(t.InputSchema); t.Strict && msg != "" {
				return fakekit.Refuse("tools.%d.custom.input_schema: %s", i, msg)
			}
		}
		return nil
	}},
	{Name: "roles-alternate", Source: docMessages, Check: func(c *call) error {
		for i, m := range c.b.Messages {
			if want := []string{"user", "assistant"}[i%2]; m.Role != want {
				return fakekit.Refuse("messages: roles must alternate between \"user\" and \"assistant\", starting with \"user\" (messages.%d is %q)", i, m.Role)
			}
			if len(m.Content) == 0 {
				return fakekit.Refuse("messages.%d: all messages must have non-empty content", i)
			}
		}
		return nil
	}},
	{Name: "cache-control-not-thinking", Source: docCaching + "#what-can-be-cached", Check: func(c *call) error {
		return c.blocks(func(i, j int, blk ContentBlock) error {
			if blk.CacheControl != nil && (blk.Type == "thinking" || blk.Type == "redacted_thinking") {
				return fakekit.Refuse("messages.%d.content.%d.%s.cache_control: Thinking blocks cannot be cached directly", i, j, blk.Type)
			}
			return nil
		})
	}},
	{Name: "redacted-data", Source: docThinking + "#thinking-redaction", Check: func(c *call) error {
		return c.blocks(func(i, j int, blk ContentBlock) error {
			if blk.Type == "redacted_thinking" && blk.Data == "" {
				return fakekit.Refuse("messages.%d.content.%d.redacted_thinking.data: Field required", i, j)
			}
			return nil
		})
	}},
	{Name: "thinking-signed", Source: docThinking + "#thinking-encryption", Check: func(c *call) error {
		return c.blocks(func(i, j int, blk ContentBlock) error {
			if blk.Type == "thinking" && !c.s.signedBy(blk, c.b.Model) {
				return fakekit.Refuse("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
			}
			return nil
		})
	}},
	{Name: "tool-result-answers", Source: docToolUse, Check: toolResultsAnswer},
	{Name: "strict-complexity", Source: docStructure, Check: func(c *call) error {
		msg := complexity(c.strict())
		return fakekit.If(msg != "", "%s", msg)
	}},
	{Name: "cache-control-max", Source: docCaching, Check: func(c *call) error {
		n := len(c.cacheMarks())
		return fakekit.If(n > 4, "A maximum of 4 blocks with cache_control may be provided. Found %d.", n)
	}},
	{Name: "thinking-blocks-kept", Source: docThinking + "#preserving-thinking-blocks", Check: func(c *call) error {
		if c.thinks {
			return c.s.thinkingFirst(c.b.Messages)
		}
		return nil
	}},
	{Name: "image-source", Source: docVision, Check: imageSource},
	{Name: "image-file-beta", Source: docFiles, Check: func(c *call) error {
		return c.images(func(at string, src *imageSrc) error {
			if src.Type == "file" && !hasFilesBeta(c.req.Header) {
				return fakekit.Refuse("%s.file: the Files API is in beta: send the header anthropic-beta: %s", at, filesBeta)
			}
			return nil
		})
	}},
	{Name: "image-file-found", Source: docFiles + "#error-handling", Check: func(c *call) error {
		return c.images(func(at string, src *imageSrc) error {
			if _, ok := c.s.files.Get(src.FileID); src.Type == "file" && !ok {
				return &fakekit.Refusal{Status: 404, Type: "not_found_error", Msg: "File not found: " + src.FileID}
			}
			return nil
		})
	}},
	{Name: "image-file-type", Source: docFiles + "#error-handling", Check: func(c *call) error {
		return c.images(func(at string, src *imageSrc) error {
			if f, ok := c.s.files.Get(src.FileID); src.Type == "file" && ok && !slices.Contains(imageTypes, f.MIMEType) {
				return fakekit.Refuse("%s: file %s is %s, not an image", at, f.ID, f.MIMEType)
			}
			return nil
		})
	}},
}

// messagesFields are the top-level fields of the Messages API's request
// (docs.anthropic.com/en/api/messages): any other is refused.
var messagesFields = []string{"model", "messages", "max_tokens", "system", "tools", "tool_choice", "thinking", "output_config",
	"stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "service_tier", "container", "mcp_servers", "context_management"}

// knownFields: a top-level field the API does not take is refused.
func knownFields(c *call) error {
	var fields map[string]json.RawMessage
	json.Unmarshal(c.req.Raw, &fields)
	for k := range fields {
		if !slices.Contains(messagesFields, k) {
			return fakekit.Refuse("%s: Extra inputs are not permitted", k)
		}
	}
	return nil
}

// toolResultsAnswer: a tool_result answers a tool_use of the message
// before it.
func toolResultsAnswer(c *call) error {
	var calls map[string]bool
	for i, m := range c.b.Messages {
		next := map[string]bool{}
		for j, blk := range m.Blocks() {
			switch {
			case blk.Type == "tool_use":
				next[blk.ID] = true
			case blk.Type == "tool_result" && !calls[blk.ToolUseID]:
				return fakekit.Refuse("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, blk.ToolUseID)
			}
		}
		calls = next
	}
	return nil
}

// signedBy reports whether a thinking block carries the signature this
// server gave its text, for model.
func (s *Server) signedBy(blk ContentBlock, model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	by, ok := s.signed[blk.Signature]
	return blk.Thinking != nil && ok && by == model+"\x00"+*blk.Thinking
}

// thinkingFirst is why the API refuses msgs with thinking on, or nil: a
// tool loop's last assistant message must start with its thinking.
func (s *Server) thinkingFirst(msgs []Message) error {
	n := len(msgs)
	if n < 2 || !slices.ContainsFunc(msgs[n-1].Blocks(), func(b ContentBlock) bool { return b.Type == "tool_result" }) {
		return nil
	}
	blocks := msgs[n-2].Blocks()
	if len(blocks) == 0 || blocks[0].Type == "thinking" || blocks[0].Type == "redacted_thinking" || s.wroteWithout(blocks) {
		return nil
	}
	return fakekit.Refuse("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking", n-2, blocks[0].Type)
}

// wroteWithout reports whether every tool_use of blocks is one of a reply
// this server wrote without thinking: it has none to send back.
func (s *Server) wroteWithout(blocks []ContentBlock) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exempt := false
	for _, b := range blocks {
		if b.Type != "tool_use" {
			continue
		}
		thought, wrote := s.wrote[b.ID]
		if !wrote || thought {
			return false
		}
		exempt = true
	}
	return exempt
}

// An imageSrc is an image block's source.
type imageSrc struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	FileID    string `json:"file_id"`
}

// images calls f with each image block's source that has one, and where
// it is, until one errs.
func (c *call) images(f func(at string, src *imageSrc) error) error {
	for i, m := range c.b.Messages {
		for j, raw := range m.Content {
			var blk struct {
				Type   string    `json:"type"`
				Source *imageSrc `json:"source"`
			}
			if json.Unmarshal(raw, &blk) != nil || blk.Type != "image" || blk.Source == nil {
				continue
			}
			if err := f(fmt.Sprintf("messages.%d.content.%d.image.source", i, j), blk.Source); err != nil {
				return err
			}
		}
	}
	return nil
}

// imageSource: an image block has a source, base64 (an image type, with
// data) or a file.
func imageSource(c *call) error {
	for i, m := range c.b.Messages {
		for j, raw := range m.Content {
			var blk struct {
				Type   string          `json:"type"`
				Source json.RawMessage `json:"source"`
			}
			if json.Unmarshal(raw, &blk) == nil && blk.Type == "image" && (len(blk.Source) == 0 || string(blk.Source) == "null") {
				return fakekit.Refuse("messages.%d.content.%d.image.source: Field required", i, j)
			}
		}
	}
	return c.images(func(at string, src *imageSrc) error {
		switch src.Type {
		case "base64":
			if !slices.Contains(imageTypes, src.MediaType) || src.Data == "" {
				return fakekit.Refuse("%s.base64: media_type must be one of %s, with data", at, strings.Join(imageTypes, ", "))
			}
		case "file":
		default:
			return fakekit.Refuse("%s.type: Input tag '%s' found using 'type' does not match any of the expected tags: 'base64', 'file', 'url'", at, src.Type)
		}
		return nil
	})
}
