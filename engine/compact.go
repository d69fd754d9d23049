package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/bytesize"
)

// Runs that fit the window (DESIGN §16). Before each model call the visit
// knows about how many tokens its request is: the input tokens the
// provider reported for the visit's last call (cached ones included), plus
// what was added since, counted at bytesPerToken; a visit's first call, or
// one after a provider that reports none, is counted at bytesPerToken
// whole. The window is what the model says before the call (Windowed:
// Ollama's num_ctx), else what its provider reported with an earlier call
// (Usage.ContextWindow), else the catalog's (ModelFact.ContextWindow); a
// model whose window is not known is not fitted.
//
// A request that would pass fitShare of the window is compacted down to
// fitTarget of it (so that the next few calls do not compact again): the
// oldest tool results of the visit first, each replaced by a one-line note
// naming what it was and the run: path of its whole text (kept in the
// visit's record, masked as the record masks, or not kept when it carries
// private content); then the oldest of the session's earlier turns, which
// the first message of the run's first visit carries. The system prompt
// (the stage's spec and ways out), the tools (submit_output's definition
// with them), the task and the model's own messages are never cut, nor
// submit_output's and transition's results (small, and the model needs
// them to repair). Each compaction is one line in the visit's record
// (status.json's compactions, and response.md in call order), a warning,
// and an EventCompaction, which acp sends as compaction_update.
//
// A request that is still over fitShare with everything cut that may be
// cut is not sent: the call fails with that reason (and a stage's next
// model, which may have a larger window, is tried), rather than with the
// provider's 400 or, on Ollama, a prompt cut from the front.

// The fitting's figures.
const (
	fitShare  = 85 // percent of the window a request may fill
	fitTarget = 70 // percent of the window a compaction cuts down to
	// bytesPerToken counts what a request adds: about 4 bytes a token in
	// English prose, 3 in code and JSON; the lower figure counts more
	// tokens, so a request is compacted early rather than refused by the
	// server. What a cut removes is counted at bytesPerTokenCut, the
	// higher figure, for the same reason.
	bytesPerToken    = 3
	bytesPerTokenCut = 4
	// imageTokens is what an image is counted as (a 1024×1024 image is
	// about 1,600 tokens to Anthropic and OpenAI).
	imageTokens = 1600
	// minCut is the smallest tool result worth replacing by a note.
	minCut = 1 << 10
)

// cutPrefix starts the note that replaces a tool result.
const cutPrefix = "[cut to fit the model's context window: "

// windows are the windows the providers reported with their calls, by
// model spec: shared by a run's tree (workers and children call the same
// models).
type windows struct {
	mu sync.Mutex
	by map[string]int
}

func (w *windows) set(spec string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		w.by = map[string]int{}
	}
	w.by[spec] = n
}

func (w *windows) get(spec string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.by[spec]
}

// A fitter fits a visit's requests to its models' windows: it owns what
// the visit knows of the size of its last request, and finds each
// model's window where it can.
type fitter struct {
	windows *windows                        // the tree's, as the providers reported them
	facts   func(spec string) llm.ModelFact // the catalog's; nil: none
	size    sizing
}

// sizing is what the visit knows of the size of its last request: the
// input tokens its provider reported, and the bytes coda counted of it.
type sizing struct{ tokens, bytes int }

// window is the context window of the model spec names (m); 0 when it is
// not known.
func (f *fitter) window(ctx context.Context, spec string, m llm.Model) int {
	if w, ok := m.(llm.Windowed); ok {
		if n := llm.Window(w.ContextWindow(ctx)); n > 0 {
			return n
		}
	}
	if n := f.windows.get(spec); n > 0 {
		return n
	}
	if f.facts != nil {
		return llm.Window(f.facts(spec).ContextWindow)
	}
	return 0
}

// sized notes what a call that answered says of its request's size.
func (f *fitter) sized(spec string, req *llm.Request, resp *llm.Response) {
	if n := llm.Window(resp.Usage.ContextWindow); n > 0 {
		f.windows.set(spec, n)
	}
	if resp.Usage.InputTokens > 0 {
		f.size = sizing{tokens: resp.Usage.InputTokens, bytes: requestBytes(req)}
	}
}

// estimate is about how many tokens req is.
func (f *fitter) estimate(req *llm.Request) int {
	b, last := requestBytes(req), f.size
	switch d := b - last.bytes; {
	case last.tokens == 0:
		return b / bytesPerToken
	case d < 0:
		return max(last.tokens+d/bytesPerTokenCut, b/bytesPerTokenCut)
	default:
		return last.tokens + d/bytesPerToken
	}
}

// requestBytes counts what of req takes tokens: the system prompt, the
// messages (text, reasoning, tool calls, what the provider replays, images
// as imageTokens), and the tools.
func requestBytes(req *llm.Request) int {
	n := len(req.System)
	for i := range req.Messages {
		n += messageBytes(&req.Messages[i])
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return n
}

func messageBytes(m *llm.Message) int {
	n := len(m.Text) + len(m.Thinking) + len(m.Replay) + len(m.Images)*imageTokens*bytesPerToken
	for _, tc := range m.ToolCalls {
		n += len(tc.Name) + len(tc.Arguments)
	}
	return n
}

// A cutter is what a fit may cut and how, as the visit says it: the tool
// results never cut (submit_output's, transition's), where a cut one is
// kept (keep returns the note that stands in for it), and the session's
// earlier turns the conversation's first message carries, as history.
type cutter struct {
	never   func(tool string) bool
	keep    func(m *llm.Message) string
	earlier []Exchange
	history string
	// hist is where the conversation holds the earlier turns as their
	// transcripts (transcript.go), which are cut whole instead.
	hist historyShown
}

// fit cuts a copy of req's conversation so that req, a call of the model
// spec names, fits window tokens (0: not known, nothing is cut). It
// returns the compaction, whose msgs the visit takes as its conversation,
// or nil when req fits as it is; an error when it cannot be made to fit.
func (f *fitter) fit(spec string, req *llm.Request, window int, cut cutter) (*compaction, error) {
	if window <= 0 {
		return nil, nil
	}
	before := f.estimate(req)
	if before*100 <= window*fitShare {
		return nil, nil
	}
	c := &compaction{cut: cut, msgs: slices.Clone(req.Messages), before: before, tokens: before, window: window, target: window * fitTarget / 100}
	c.cutToolResults()
	c.cutHistory()
	if c.tokens*100 > window*fitShare {
		return nil, tooLarge(fmt.Sprintf("the request does not fit %s's context window of %d tokens (%d%% of it may be filled): it is about %d tokens %s; the system prompt, the tools, the task and the model's own messages are never cut: use a model with a larger window, or ask for less at once",
			spec, window, fitShare, c.tokens, c.cutSaid("even after coda cut ", "with nothing coda may cut")))
	}
	return c, nil
}

// said is the compaction's line in the record, the warnings and
// EventCompaction: before call n of stage, a call of the model spec names.
func (c *compaction) said(n int, stage, spec string) string {
	return fmt.Sprintf("compacted before call %d of stage %s: about %d tokens, over %d%% of %s's %d-token window; cut %s; now about %d",
		n, stage, c.before, fitShare, spec, c.window, c.cutSaid("", "nothing cut"), c.tokens)
}

// tooLarge is a request that cannot be made to fit: for this model it is
// as unavailable, so a stage's next one (which may have a larger window)
// is tried.
type tooLarge string

func (e tooLarge) Error() string { return string(e) }
func (tooLarge) Unwrap() error   { return llm.ErrModelUnavailable }

// A compaction is one fit's cuts, made on a copy of the conversation.
type compaction struct {
	cut    cutter
	msgs   []llm.Message
	before int // the request's estimate before the cuts
	tokens int // the request's estimate, as cut so far
	window int
	target int
	// What was cut: tool results (how many, their names and bytes) and
	// earlier turns (how many, their runs), and the history that stands
	// in the first message after the cut.
	results, resultBytes int
	names                []string
	turns                int
	runs                 []string
	earlier              []Exchange
	history              string
	hist                 historyShown // the turns sent as transcripts after the cut (transcript.go)
}

// cutToolResults replaces the oldest tool results by notes until the
// request is down to the target.
func (c *compaction) cutToolResults() {
	for i := c.cut.hist.n; i < len(c.msgs); i++ { // the visit's own: earlier turns are cut whole
		if c.tokens <= c.target {
			return
		}
		m := &c.msgs[i]
		if m.Role != llm.RoleTool || len(m.Text) < minCut || strings.HasPrefix(m.Text, cutPrefix) || c.cut.never(m.ToolName) {
			continue
		}
		note := c.cut.keep(m)
		c.tokens -= (len(m.Text) - len(note)) / bytesPerTokenCut
		c.results++
		c.resultBytes += len(m.Text)
		if !slices.Contains(c.names, m.ToolName) {
			c.names = append(c.names, m.ToolName)
		}
		m.Text = note
	}
}

// keepCut keeps the whole text of the tool result m in the visit's record
// and returns the note that stands in for it: what it was, and its run:
// path; or, for a result carrying private content (private names it),
// that it is not kept.
func (vr *visitRecord) keepCut(m *llm.Message, private string) string {
	size := bytesize.Format(len(m.Text))
	if private != "" {
		return fmt.Sprintf("%sthis %s result (%s) carried content of %s, private under the taint gate, and is not kept; call %s again if you need it]", cutPrefix, m.ToolName, size, private, m.ToolName)
	}
	dir := vr.RunPath()
	if dir == "" {
		return fmt.Sprintf("%sthis %s result (%s) is not kept (coda keeps no record here); call %s again if you need it]", cutPrefix, m.ToolName, size, m.ToolName)
	}
	vr.cuts++
	file := fmt.Sprintf("cut/%d-%s.txt", vr.cuts, safeName(m.ToolName))
	vr.WriteText(file, vr.mask(m.Text))
	return fmt.Sprintf("%sthis %s result (%s) is at %s%s/%s; read it again there if you need it]", cutPrefix, m.ToolName, size, RunPrefix, dir, file)
}

// cutHistory drops the session's earlier turns, oldest first, from the
// first message of the run's first visit until the request is down to the
// target; the history then says how many it does not show.
func (c *compaction) cutHistory() {
	in := c.cut
	if in.hist.n > 0 {
		c.cutTranscripts()
		return
	}
	if c.tokens <= c.target || len(in.earlier) == 0 || len(c.msgs) == 0 || !strings.HasPrefix(c.msgs[0].Text, in.history) {
		return
	}
	task := strings.TrimPrefix(c.msgs[0].Text, in.history)
	earlier, history := in.earlier, in.history
	for len(earlier) > 0 && c.tokens > c.target {
		first := earlier[0]
		c.turns++
		if first.RunID != "" {
			c.runs = append(c.runs, first.RunID)
		}
		earlier = slices.Clone(earlier[1:])
		if len(earlier) > 0 {
			next := &earlier[0]
			next.NotShown = first.NotShown + 1
			next.FirstNotShown = first.FirstNotShown
			if first.NotShown == 0 {
				next.FirstNotShown = firstLine(first.Prompt)
			}
		}
		cut := historyText(earlier, false)
		if len(earlier) == 0 {
			cut = fmt.Sprintf("## This session's earlier turns\n\n%d earlier exchanges are not shown: they were cut to fit the model's context window.\n\n## The task\n", first.NotShown+1)
		}
		c.tokens -= (len(history) - len(cut)) / bytesPerTokenCut
		history = cut
	}
	c.msgs[0].Text = history + task
	c.earlier, c.history = earlier, history
}

// cutSaid says what the compaction cut, after lead; none when it cut
// nothing.
func (c *compaction) cutSaid(lead, none string) string {
	var parts []string
	if c.results > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", plural(c.results, "tool result"), strings.Join(c.names, ", "), bytesize.Format(c.resultBytes)))
	}
	if c.turns > 0 {
		s := fmt.Sprintf("%s of the session", plural(c.turns, "earlier turn"))
		if len(c.runs) > 0 {
			s += " (runs " + strings.Join(c.runs, ", ") + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return none
	}
	return lead + strings.Join(parts, " and ")
}
