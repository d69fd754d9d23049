// Package ollama is the llm.Model for Ollama's own chat API (POST
// /api/chat, a stream of JSON lines), which takes what its OpenAI-style
// /v1 endpoint ignores: options.num_ctx, so that a prompt is not cut from
// the front at the server's default context (ollama/ollama#18107), think,
// and a JSON Schema as format.
//
// Before its first call a Model asks /api/show (once per model and server
// in the process) for the model's context length (model_info's
// "<arch>.context_length") and its capabilities (tools, thinking,
// vision), and sends num_ctx = that length, capped by Options.NumCtx.
package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// DefaultBaseURL is a local Ollama.
const DefaultBaseURL = "http://localhost:11434"

// Options configure a Model (engine/provider.Options). BaseURL is the
// server's root (a trailing "/v1", the OpenAI-style endpoint's, is
// dropped); NumCtx caps the context asked for; MaxTokens is sent as
// options.num_predict.
type Options = provider.Options

// A Model is one model of an Ollama server. It is safe for concurrent use.
type Model struct {
	model string
	opts  Options
	call  sse.Call
	show  sse.Call
	once  provider.Once
}

// New returns the model named model (as Ollama names it: "qwen3:8b").
func New(model string, opts Options) *Model {
	opts = opts.WithDefaults("ollama", model, DefaultBaseURL)
	opts.BaseURL = strings.TrimSuffix(opts.BaseURL, "/v1")
	h := opts.Header("Authorization", "Bearer ") // a proxy's or ollama.com's key, when there is one
	m := &Model{model: model, opts: opts, call: opts.Call("/api/chat", h), show: opts.Call("/api/show", h)}
	m.call.NDJSON = true
	m.call.Final = outOfMemory
	m.show.Timeout = min(opts.Timeout, showTimeout)
	return m
}

// showTimeout bounds the look-up of a model's details: /api/show reads the
// model's file header and loads nothing.
const showTimeout = 30 * time.Second

// Name is the spec the model was chosen by.
func (m *Model) Name() string { return m.opts.Name }

// Shapes are what /api/chat takes (DESIGN §17): no tool choice and no
// strict tools, but format, a JSON Schema or "json", which Ollama holds
// the reply to with a grammar.
func (m *Model) Shapes(*llm.Request) llm.Shapes {
	return llm.Shapes{Reply: true, ReplyAny: true}
}

// Stream sends req and streams the reply. A try that fails before anything
// was passed to onDelta is retried as the Retry option allows; a 404 (a
// model not pulled) wraps llm.ErrModelUnavailable; a model without the
// tools capability wraps llm.ErrToolsUnsupported; a format the server
// refuses is an *llm.MechanismError; a model the server has not the
// memory to load with the context asked for is not tried again, and the
// error says to ask for less (num_ctx).
func (m *Model) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	info := m.info(ctx)
	numCtx := m.numCtx(info)
	body, shaping, err := m.encode(req, info, numCtx)
	if err == nil {
		body, err = provider.WithParams(provider.ParamsOllama, req, body, &shaping)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.opts.Name, err)
	}
	var resp *llm.Response
	err = m.call.Within(req.Timeout).DoShaped(ctx, body, shaping, func(ctx context.Context, r *sse.Reader, started *bool) error {
		s := stream{onDelta: onDelta, started: started}
		m.opts.Budget.Start(&s.text, &s.thinking, &s.kept)
		var err error
		resp, err = s.read(r)
		return err
	})
	if err != nil {
		return nil, m.memoryError(err, numCtx)
	}
	resp.Usage.ContextWindow = numCtx
	if numCtx == 0 {
		resp.Usage.ContextWindow = m.opts.ContextWindow
	}
	return resp, nil
}

// outOfMemory reports whether an error reply is Ollama's refusal to load
// a model the machine has not the memory for ("model requires more
// system memory (39.4 GiB) than is available (30.0 GiB)", a 500), which
// the context asked for (num_ctx) may cause: no later try would load it.
func outOfMemory(e *sse.StatusError) bool {
	return strings.Contains(strings.ToLower(e.Message), "requires more system memory")
}

// memoryError is err, when it is Ollama's refusal to load the model for
// want of memory, with what to do: ask for less context.
func (m *Model) memoryError(err error, numCtx int) error {
	var serr *sse.StatusError
	if !errors.As(err, &serr) || !outOfMemory(serr) {
		return err
	}
	provider, _, _ := strings.Cut(m.opts.Name, ":")
	if numCtx <= 0 {
		return fmt.Errorf("%w: the model is larger than this machine's memory: pick a smaller one (or a smaller quantization)", err)
	}
	less := max(numCtx/4, 2048)
	return fmt.Errorf("%w: coda asked for a context of %d tokens (num_ctx), which takes memory besides the model's: set num_ctx = %d (or less) in config.toml's [providers.%s] to ask for less, or pick a smaller model", err, numCtx, less, provider)
}

// ContextWindow is the context the next call gives the model: the num_ctx
// it sends (numCtx), so the engine fits each request in it before the
// server would cut it from the front (llm.Windowed); 0 when the server
// could not say and nothing else does.
func (m *Model) ContextWindow(ctx context.Context) int { return m.numCtx(m.info(ctx)) }

// What /api/show says of a model, as much as coda uses.
type showInfo struct {
	ContextLength int
	Capabilities  []string // "completion", "tools", "thinking", "vision", "embedding"; nil from servers before 0.6.4
	ThinkLevels   bool     // think takes "low" | "medium" | "high" (gpt-oss), not only true and false
}

func (i *showInfo) can(c string) bool { return i != nil && slices.Contains(i.Capabilities, c) }

// shown caches /api/show by server and model, for the process.
var shown sync.Map // string -> *showInfo

// info is what /api/show says of the model: looked up once per server
// and model in the process; nil when the server could not say (the call
// goes on without it, said once).
func (m *Model) info(ctx context.Context) *showInfo {
	key := m.opts.BaseURL + "\x00" + m.model
	if v, ok := shown.Load(key); ok {
		return v.(*showInfo)
	}
	var v struct {
		ModelInfo    map[string]json.RawMessage `json:"model_info"`
		Capabilities []string                   `json:"capabilities"`
		Details      struct {
			Family string `json:"family"`
		} `json:"details"`
		Thinking *struct {
			Values []json.RawMessage `json:"values"`
		} `json:"thinking"`
	}
	body, _ := json.Marshal(map[string]string{"model": m.model})
	if err := m.show.JSON(ctx, m.show.URL, body, &v); err != nil {
		if ctx.Err() == nil {
			m.once.Warn(m.opts.Log, "show", "could not read the model's context length from Ollama's /api/show: the server's default context applies, and cuts a longer prompt from the front; set num_ctx on the provider",
				"model", m.opts.Name, "err", err)
		}
		return nil
	}
	info := &showInfo{Capabilities: v.Capabilities}
	var arch string
	if raw, ok := v.ModelInfo["general.architecture"]; ok {
		json.Unmarshal(raw, &arch)
	}
	if raw, ok := v.ModelInfo[arch+".context_length"]; ok && arch != "" {
		var n float64
		if json.Unmarshal(raw, &n) == nil && n > 0 {
			info.ContextLength = llm.Window(n)
		}
	}
	if v.Thinking != nil {
		for _, val := range v.Thinking.Values {
			if len(val) > 0 && val[0] == '"' {
				info.ThinkLevels = true
			}
		}
	} else {
		// gpt-oss takes levels (docs.ollama.com/capabilities/thinking);
		// servers that predate the thinking field say so by its family.
		info.ThinkLevels = strings.HasPrefix(arch, "gptoss") || strings.HasPrefix(v.Details.Family, "gptoss")
	}
	shown.Store(key, info)
	return info
}

// numCtx is the context the model is asked to allocate: its own length,
// capped by the provider's num_ctx (said once, with both figures); the cap
// alone, or the catalog's window, when the server did not say; 0 to leave
// it to the server.
func (m *Model) numCtx(info *showInfo) int {
	cap := m.opts.NumCtx
	length := 0
	if info != nil {
		length = info.ContextLength
	}
	switch {
	case length > 0 && cap > 0 && length > cap:
		m.once.Warn(m.opts.Log, "num_ctx",
			"the model's context is larger than the provider's num_ctx allows: prompts past the cap are compacted or refused, and the model never sees more than the cap",
			"model", m.opts.Name, "context_length", length, "num_ctx", cap)
		return cap
	case length > 0:
		return length
	case cap > 0:
		return cap
	}
	return m.opts.ContextWindow
}

// The request body of POST /api/chat, as much of it as coda sends
// (docs.ollama.com/api/chat).
type request struct {
	Model    string          `json:"model"`
	Messages []message       `json:"messages"`
	Tools    []tool          `json:"tools,omitempty"`
	Format   json.RawMessage `json:"format,omitempty"` // a JSON Schema, or "json"
	Think    json.RawMessage `json:"think,omitempty"`  // true, false, or "low" | "medium" | "high"
	Options  *options        `json:"options,omitempty"`
	Stream   bool            `json:"stream"`
}

type options struct {
	NumCtx     int `json:"num_ctx,omitempty"`
	NumPredict int `json:"num_predict,omitempty"`
}

type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Thinking   string     `json:"thinking,omitempty"`
	Images     []string   `json:"images,omitempty"` // base64 (llm.Image.Base64: encoded once a turn)
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // an object, not a string
	} `json:"function"`
}

type tool struct {
	Type     string `json:"type"` // "function"
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encode builds the request body. The system prompt is the first message;
// an assistant's thinking goes back with it (templates that render it,
// gpt-oss's, want it in a tool loop); tool results name their tool.
// Ollama has no tool choice: a request's ToolChoice and strict tools are
// not sent.
func (m *Model) encode(req *llm.Request, info *showInfo, numCtx int) ([]byte, sse.Shaping, error) {
	r := request{Model: m.model, Stream: true, Messages: make([]message, 0, len(req.Messages)+1)}
	if numCtx > 0 || m.opts.MaxTokens > 0 {
		r.Options = &options{NumCtx: numCtx, NumPredict: m.opts.MaxTokens}
	}
	if req.System != "" {
		r.Messages = append(r.Messages, message{Role: "system", Content: req.System})
	}
	noVision := m.opts.NoVision || info != nil && info.Capabilities != nil && !info.can("vision")
	for i := range req.Messages {
		msg := &req.Messages[i]
		switch msg.Role {
		case llm.RoleAssistant:
			out := message{Role: "assistant", Content: msg.Text, Thinking: msg.Thinking}
			for _, tc := range msg.ToolCalls {
				var c toolCall
				c.ID, c.Function.Name, c.Function.Arguments = tc.ID, tc.Name, arguments(tc.Arguments)
				out.ToolCalls = append(out.ToolCalls, c)
			}
			r.Messages = append(r.Messages, out)
		case llm.RoleTool:
			text := msg.Text
			if msg.IsError {
				text = "Error: " + text
			}
			r.Messages = append(r.Messages, message{Role: "tool", Content: text, ToolName: msg.ToolName, ToolCallID: msg.ToolCallID})
		default:
			out := message{Role: "user", Content: msg.Text}
			if noVision && len(msg.Images) > 0 {
				out.Content = msg.TextWithStandIns()
			} else {
				// /api/chat takes a message's images as base64 strings
				// only (docs.ollama.com/api/chat, "images"), and Ollama
				// has no files API: every call carries them, encoded once
				// a turn. The server is most often this machine.
				for _, im := range msg.Images {
					out.Images = append(out.Images, im.Base64())
				}
			}
			r.Messages = append(r.Messages, out)
		}
	}
	for _, t := range req.Tools {
		var out tool
		out.Type = "function"
		out.Function.Name, out.Function.Description, out.Function.Parameters = t.Name, t.Description, t.Schema
		if len(strings.TrimSpace(string(t.Schema))) == 0 {
			out.Function.Parameters = emptySchema
		}
		r.Tools = append(r.Tools, out)
	}
	var shaping sse.Shaping
	if f := req.Reply; f != nil {
		shaping.Reply = true
		r.Format = json.RawMessage(`"json"`)
		if len(strings.TrimSpace(string(f.Schema))) > 0 {
			r.Format = f.Schema
		}
	}
	r.Think = m.think(m.opts.EffortOf(req), info)
	body, err := json.Marshal(r)
	return body, shaping, err
}

// think is the think field for effort: nothing when no effort is asked
// or the model is not known to think (a think the model cannot take is an
// error, "does not support thinking"); false for off; the level itself
// for a model that takes levels, else true.
func (m *Model) think(effort string, info *showInfo) json.RawMessage {
	if effort == "" {
		return nil
	}
	if !info.can("thinking") {
		if info != nil {
			m.once.Warn(m.opts.Log, "think", "the model does not think, as Ollama's /api/show says: its effort is not sent", "model", m.opts.Name, "effort", effort)
		}
		return nil
	}
	switch {
	case effort == llm.EffortOff:
		return json.RawMessage("false")
	case !info.ThinkLevels:
		return json.RawMessage("true")
	case effort == llm.EffortMinimal:
		effort = llm.EffortLow
	case effort == llm.EffortXHigh || effort == llm.EffortMax:
		effort = llm.EffortHigh
	}
	return json.RawMessage(strconv.Quote(effort))
}

func arguments(raw json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(raw))) == 0 || !json.Valid(raw) {
		return json.RawMessage("{}")
	}
	return raw
}
