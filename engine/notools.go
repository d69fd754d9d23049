package engine

import (
	"fmt"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
)

// Models without tools (DESIGN §15). A model known to lack tool calling
// (Engine.ModelFacts: the catalog, or `tools = false` in the config) is
// called without tools: no submit_output, no transition, none of the
// stage's tools. Its stages answer by reply (reply.go), and a stage with
// transitions goes on to the first of them (it cannot choose). A server
// that answers that the model does not support tools (a provider's error
// wrapping ErrToolsUnsupported) has that call made again without them, a
// warning, and the fact remembered for the session (ToolSupport), so the
// rest of the session calls that model without tools from the start.

// ToolSupport is what a session has learned of its models' tool calling:
// which model specs their servers refused tools for, and which of the
// mechanisms that shape an answer (shape.go) they refused. acp keeps one
// per session, `coda run` one per run. Safe for concurrent use.
type ToolSupport struct {
	mu      sync.Mutex
	lacks   map[string]string          // spec → what the server said
	refuses map[string]map[string]bool // spec → the mechanisms its server refused
}

// NewToolSupport returns a ToolSupport that has learned nothing.
func NewToolSupport() *ToolSupport {
	return &ToolSupport{lacks: map[string]string{}, refuses: map[string]map[string]bool{}}
}

// refused reports whether spec's server refused the mechanism
// (MechanismError.Mechanism) in this session.
func (t *ToolSupport) refused(spec, mechanism string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refuses[spec][mechanism]
}

// refuse records that spec's server refused the mechanism; it reports
// whether this is news.
func (t *ToolSupport) refuse(spec, mechanism string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refuses[spec][mechanism] {
		return false
	}
	if t.refuses[spec] == nil {
		t.refuses[spec] = map[string]bool{}
	}
	t.refuses[spec][mechanism] = true
	return true
}

// lacking says why the model spec names cannot call tools, as its server
// said; "" when no server has said so.
func (t *ToolSupport) lacking(spec string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lacks[spec]
}

// learn records that spec's server refused tools; it reports whether this
// is news.
func (t *ToolSupport) learn(spec, why string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, known := t.lacks[spec]; known {
		return false
	}
	t.lacks[spec] = why
	return true
}

// modelCalls are what a visit sends each model beyond the conversation:
// tools or none (the catalog's word, or what the session learned), the
// system prompt a model without tools is sent, made when first needed,
// the reasoning effort it takes (effort.go) and the parameters its server
// has not refused (params.go).
type modelCalls struct {
	stage      *blueprint.Stage
	userEffort string                          // Turn.UserEffort
	facts      func(spec string) llm.ModelFact // the catalog's; nil: none
	support    *ToolSupport
	notes      runNotes
	// bare is the system prompt for a model called without tools, which
	// is told neither of transition nor of submit_output.
	bare string
}

// with reports whether the model spec names is called with tools.
func (t *modelCalls) with(spec string) bool {
	if t.facts != nil && t.facts(spec).NoTools != "" {
		return false
	}
	return t.support.lacking(spec) == ""
}

// system is the system prompt for a model called without tools, made by
// bare the first time.
func (t *modelCalls) system(bare func() string) string {
	if t.bare == "" {
		t.bare = bare()
	}
	return t.bare
}

// learn remembers for the session that spec's server refused tools,
// warning the first time.
func (t *modelCalls) learn(spec string, err error) {
	said := strings.TrimPrefix(err.Error(), spec+": ") // providers' errors start with the spec
	if t.support.learn(spec, said) {
		t.notes.warn(fmt.Sprintf("%s cannot call tools (its server says: %s): coda calls it without tools for the rest of the session; its stages answer by reply, and a stage with transitions goes on to its first", spec, said))
	}
}

// request is the visit's next model call as the model spec names takes
// it: with the stage's tools and the prompt that names them, or without
// tools and with the prompt for answering by reply.
func (v *stageVisit) request(spec string) *llm.Request {
	if v.calling.with(spec) {
		return &llm.Request{System: v.system, Messages: v.messages, Tools: v.tools, Caller: v.run.sub.caller, Effort: v.calling.effort(spec), CacheKey: v.run.cacheKey(), CachedPrefix: v.hist.n}
	}
	bare := v.calling.system(func() string { return v.systemPrompt(false) })
	return &llm.Request{System: bare, Messages: v.messages, Caller: v.run.sub.caller, Effort: v.calling.effort(spec), CacheKey: v.run.cacheKey(), CachedPrefix: v.hist.n}
}
