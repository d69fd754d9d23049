package openai

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// wireEffort is an effort level as OpenAI's APIs name it: "off" is
// "none"; the others (minimal, low, medium, high, xhigh) are their own
// names.
func wireEffort(e string) string {
	if e == llm.EffortOff {
		return "none"
	}
	return e
}

// setEffort puts the request's reasoning effort (its own, else the
// provider's) into r, as the server takes it: OpenRouter's reasoning.effort,
// everyone else's reasoning_effort.
//
// OpenAI's GPT-5.4 and later refuse function tools on chat completions
// with any effort but "none", and default to one that is not ("Function
// tools with reasoning_effort are not supported for gpt-5.4 in
// /v1/chat/completions", openai/openai-openapi#541): with tools, such a
// model is always sent "none", and a level asked for is dropped, said once.
// A model not known to do so that answers with that 400 is remembered and
// treated the same (Stream).
//
// A model that does not reason is sent no reasoning_effort at all: OpenAI
// refuses the parameter for one ("Unsupported parameter:
// 'reasoning_effort' is not supported with this model"; the API reference
// documents it for reasoning models only). "off" is dropped for any model
// not known to reason; a level, only for the models known not to
// (doesNotReason), since a compatible server's model coda does not know
// may take one.
func (m *Model) setEffort(r *request, req *llm.Request) {
	e := m.opts.EffortOf(req)
	switch {
	case e == llm.EffortOff && !reasons(m.model, &m.opts):
		e = "" // a model that does not reason takes no reasoning_effort, not even none
	case e != "" && doesNotReason(m.model, &m.opts):
		m.once.Warn(m.opts.Log, "effort-no-reasoning", "the model does not reason: no reasoning effort is sent", "model", m.opts.Name, "effort", e)
		e = ""
	}
	if len(r.Tools) > 0 && (noEffortWithTools(m.model) || m.toolsNoEffort.Load()) && !isOpenRouter(m.opts.BaseURL) {
		if e != "" && e != llm.EffortOff {
			m.once.Warn(m.opts.Log, "effort-with-tools",
				"chat completions takes no reasoning effort with tools for this model: it is sent \"none\"; set api = \"responses\" on the provider to reason with tools",
				"model", m.opts.Name, "effort", e)
		}
		r.ReasoningEffort = "none"
		return
	}
	switch {
	case e == "":
	case isOpenRouter(m.opts.BaseURL):
		r.Reasoning = &reasoningOpt{Effort: wireEffort(e)}
	default:
		r.ReasoningEffort = wireEffort(e)
	}
}

// reasons reports whether model reasons: the catalog says so (opts'
// Efforts), or its name is one of OpenAI's reasoning families (gpt-5 and
// later but their chat-latest aliases, o1, o3, o4, gpt-oss, codex).
func reasons(model string, opts *Options) bool {
	if opts.Reasons() {
		return true
	}
	base := strings.ToLower(model)
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	if strings.Contains(base, "-chat") {
		return false
	}
	for _, p := range []string{"gpt-5", "gpt-6", "o1", "o3", "o4", "gpt-oss", "codex"} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// doesNotReason reports whether model is known not to reason, so that a
// reasoning effort is refused: one of OpenAI's families that do not
// (gpt-3.5, gpt-4, gpt-4o, gpt-4.1, gpt-4.5, chatgpt-4o, and the
// chat-latest aliases of gpt-5 and later), unless the catalog says it
// reasons.
func doesNotReason(model string, opts *Options) bool {
	if opts.Reasons() {
		return false
	}
	base := strings.ToLower(model)
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	for _, p := range []string{"gpt-3.5", "gpt-4", "chatgpt-"} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return (strings.HasPrefix(base, "gpt-5") || strings.HasPrefix(base, "gpt-6")) && strings.Contains(base, "-chat")
}

// noEffortWithTools reports whether model is one of OpenAI's that take
// function tools on chat completions only with reasoning effort "none":
// GPT-5.4 and later (gpt-5.4, gpt-5.5-mini, gpt-5.6-terra, gpt-6…), with
// or without a vendor prefix ("openai/gpt-5.4").
func noEffortWithTools(model string) bool {
	base := strings.ToLower(model)
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	rest, ok := strings.CutPrefix(base, "gpt-")
	if !ok {
		return false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end >= 0 {
		rest = rest[:end]
	}
	major, minor, _ := strings.Cut(rest, ".")
	maj, err := strconv.Atoi(major)
	if err != nil {
		return false
	}
	mnr, _ := strconv.Atoi(minor)
	return maj > 5 || maj == 5 && mnr >= 4
}

// toolsEffortRefused reports whether err is the 400 of a model that takes
// no reasoning effort with function tools on chat completions.
func toolsEffortRefused(err error) bool {
	var serr *sse.StatusError
	if !errors.As(err, &serr) || serr.Code != 400 {
		return false
	}
	msg := strings.ToLower(serr.Message)
	return strings.Contains(msg, "reasoning_effort") && strings.Contains(msg, "function tools")
}

// isOpenRouter reports whether base is OpenRouter's API, which takes
// reasoning.effort.
func isOpenRouter(base string) bool {
	u, err := url.Parse(base)
	return err == nil && (u.Hostname() == "openrouter.ai" || strings.HasSuffix(u.Hostname(), ".openrouter.ai"))
}

// A chat completions reply's Replay: each tool call's extra_content, by the
// call's id.
type replay struct {
	ExtraContent map[string]json.RawMessage `json:"extra_content"`
}

// chatReplay reads a Replay this provider wrote; anything else (another
// provider's, in a history that changed models) reads as nothing.
func chatReplay(raw json.RawMessage) map[string]json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var r replay
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	return r.ExtraContent
}
