package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// visit is one stage visit: the model loop. It returns the next stage's
// name, or "" when the run ends here.
func (r *run) visit(ctx context.Context, s *blueprint.Stage) (string, error) {
	r.visits[s.Name]++
	if err := r.emitPlan(ctx, s.Name, PlanInProgress); err != nil {
		return "", err
	}
	r.rec.Enter(s.Name) // run.json says the stage while the run is in it
	r.rec.Start()       // after the turn's first update, which waits for nothing
	v := newStageVisit(r, s, r.visits[s.Name])
	sctx, span := r.e.tracer().Stage(ctx, s.Name, v.n)
	next, err := v.loop(sctx)
	r.ending.keep(&v.rep, s.Name) // what the no-answer line says of the visit
	r.keepTranscript(v)
	v.ended, v.next = endedBy(ctx, err, v.ended), next
	v.tracedVisit(span, err)
	v.rec.finish(v, err)
	r.done = append(r.done, v.outcome())
	if err != nil {
		return "", err
	}
	r.planFiles(s.Name, v.written)
	if err := r.emitPlan(ctx, s.Name, PlanCompleted); err != nil {
		return "", err
	}
	r.checkpoint(next)
	return next, nil
}

func (r *run) contract(s *blueprint.Stage) *outputspec.Contract {
	if r.t.Outputs == nil {
		return nil
	}
	return r.t.Outputs.ByStage[s.Name]
}

// A stageVisit is one visit of a stage: its loop (loop, below) and the
// conversation it holds. The rules of a visit are owners, each keeping
// its own state and given the rest as arguments; the loop composes them:
//
//   - rep (repair.go): refused submissions, nudges, the repair budget
//   - answer (shape.go, submit_output.go, reply.go): how the answer is
//     asked for, each call shaped for it
//   - fitter (compact.go): each request fitted to the model's window
//   - calling (notools.go, effort.go, params.go): what each model is
//     sent: tools or none, the effort, the parameters
//   - gate (taint.go): the taint gate's questions and audit
//   - out (transition.go): the ways out
//   - rec (record.go): what the visit writes into the run's record
type stageVisit struct {
	run      *run
	stage    *blueprint.Stage
	n        int // the visit's number, from 1
	contract *outputspec.Contract

	rep     repair
	answer  answerShape
	fitter  fitter
	calling modelCalls
	gate    visitGate
	out     waysOut
	rec     *visitRecord

	system   string
	messages []llm.Message
	tools    []llm.ToolSpec  // as the model is told of them
	offered  map[string]Tool // the stage's own tools, by name
	models   []string        // the candidates; one that answered is asked first

	iterations int
	nudged     bool             // the call being made carries a nudge
	callID     string           // the tool call being run, as the editor knows it
	desk       *outputspec.Desk // checks submissions; remembers refused ones
	submitted  *store.Answer    // the last passing submission of this visit
	lastText   string
	written    []string
	reports    []string // fan_out reports, for later stages
	// ended is how the visit ended, as status.json's outcome says it
	// (outcome.go), and next the stage it went on to ("" when the run
	// ends); model and usage are the model that last answered and the
	// tokens of all its calls.
	ended, next string
	model       string
	usage       llm.Usage

	// hist is where the session's earlier turns are in messages, when
	// they are sent as their transcripts (transcript.go).
	hist historyShown
}

// newStageVisit is visit n of stage s in r, its owners made. Its record
// is begun here, after the run's record has started the visit.
func newStageVisit(r *run, s *blueprint.Stage, n int) *stageVisit {
	v := &stageVisit{run: r, stage: s, n: n, contract: r.contract(s)}
	v.rep = newRepair(s.Name, s.Revisits(), s.Repairs(), r)
	v.answer = answerShape{stage: s, contract: v.contract, facts: r.e.ModelFacts, support: r.share.support, notes: r}
	v.fitter = fitter{windows: &r.share.windows, facts: r.e.ModelFacts}
	v.calling = modelCalls{stage: s, userEffort: r.t.UserEffort, facts: r.e.ModelFacts, support: r.share.support, notes: r}
	v.rec = newVisitRecord(r.rec, s.Name, n, r.mask)
	v.gate = visitGate{g: r.taint, ws: r.t.Workspace, newID: r.e.NewID, log: r.log, rec: v.rec, sub: r.sub.depth > 0}
	return v
}

// loop runs the model until the visit ends. It returns the chosen
// transition target, or "" to end the run. Where the stage owes its
// answer, the repair loop (repair.go) decides whether the model is asked
// again; running out of iterations comes first (DESIGN §6).
func (v *stageVisit) loop(ctx context.Context) (string, error) {
	r := v.run
	v.prepare()
	transitions := v.stage.TransitionOrder
	for {
		if v.iterations >= v.stage.Iterations() {
			r.flag(FlagMaxIterationsHit)
			r.warn(fmt.Sprintf("stage %s used its %d iterations", v.stage.Name, v.stage.Iterations()))
			v.rep.forceOnLimit(v.owes())
			v.ended = FlagMaxIterationsHit
			if len(transitions) > 0 {
				return transitions[0], nil
			}
			return "", nil
		}
		if !r.share.spend() {
			return "", errMaxCalls
		}
		v.steered()
		resp, err := v.call(ctx)
		if err != nil {
			return "", err
		}
		if resp.StopReason == llm.StopRefusal && len(resp.ToolCalls) == 0 {
			v.refused(resp) // the model's own refusal (unavailable.go)
			return "", nil
		}
		if len(resp.ToolCalls) > 0 {
			refused := v.rep.refused
			to, end, err := v.runTools(ctx, resp)
			if err != nil {
				return "", err
			}
			v.again(v.rep.afterTools(refused, v.owes(), v.answer.how("a corrected answer"), v.out.fallback()))
			if v.rep.halted() {
				return v.haltTo(), nil
			}
			if to != "" {
				if v.owes() && v.again(v.rep.leave(to)) {
					continue
				}
				if to == blueprint.Done {
					v.ended = endedDone
					r.doneBeforeAnswer(v.stage.Name)
					return "", nil
				}
				v.ended = endedTransition
				return to, nil
			}
			if end {
				v.ended = endedAnswered
				return "", nil
			}
			continue
		}
		// A reply without a tool call ends the visit.
		if v.owes() && v.repairReply(ctx, resp) {
			continue
		}
		if v.rep.halted() {
			return v.haltTo(), nil
		}
		if resp.StopReason == llm.StopMaxTokens {
			r.stop = "max_tokens"
			v.ended = endedMaxTokens
			return "", nil
		}
		v.ended = endedReplied
		if len(transitions) == 0 {
			return "", nil
		}
		if v.answer.toolless {
			// It cannot call transition: the first way out (notools.go).
			v.ended = endedFallback
			return v.out.fallback(), nil
		}
		v.say(askWay(v.stage, v.out.targets))
	}
}

// steered gives the model what the user sent while the turn ran
// (Turn.Steer), before its next call: the user's own words, as the
// prompt is, so they direct the work as the prompt does. Each is in the
// record's response.md too.
func (v *stageVisit) steered() {
	if v.run.t.Steer == nil {
		return
	}
	for _, text := range v.run.t.Steer() {
		v.say("The user sent this while you were working; take it into account from here on:\n\n" + text)
		v.rec.steered(text)
	}
}

func (v *stageVisit) say(msg string) {
	v.messages = append(v.messages, llm.Message{Role: llm.RoleUser, Text: msg})
}

// again says msg, a nudge of the repair loop, and reports whether the
// model is asked again: "" when it is not.
func (v *stageVisit) again(msg string) bool {
	if msg == "" {
		return false
	}
	v.say(msg)
	return true
}

// prepare builds the visit's system prompt, first messages, tools and
// model candidates.
func (v *stageVisit) prepare() {
	r, s := v.run, v.stage
	v.out = waysOut{stage: s, targets: s.WaysOut()}
	v.system = v.systemPrompt(true)

	earlier := ""
	if len(r.done) == 0 && len(r.t.History) > 0 {
		// The run's first visit carries the session's earlier turns, as
		// KeepHistory keeps them (a long session must not outgrow the
		// model's context), framed as data (history.go).
		history := r.maskHistory(KeepHistory(r.t.History))
		if hasTranscript(history) {
			// Each earlier turn as it was sent (transcript.go).
			var msgs []llm.Message
			msgs, v.hist = historyMessages(history)
			v.messages = append(v.messages, msgs...)
			v.rec.earlier, v.rec.shown = history, v.hist.n
		} else {
			earlier = historyText(history, false)
			v.rec.earlier, v.rec.history = history, earlier
		}
		v.rec.status.HistoryNotShown = history[0].NotShown
	}
	v.messages = append(v.messages, llm.Message{Role: llm.RoleUser, Text: earlier + v.preamble() + r.t.Prompt, Images: r.t.Images})

	var listed []string // the tools of the session and coda's own listed, offered unless withheld
	for _, name := range stageToolNames(s.AvailableTools, r.share.tools) {
		if s.Delegates(name) || name == blueprint.ToolSubmitOutput {
			continue // offered below, from the stage's own tables and contract
		}
		if tool := r.share.tools[name]; tool == nil {
			r.warn(fmt.Sprintf("stage %s lists tool %q, which coda does not have", s.Name, name))
		} else if c, ok := tool.(Conditional); ok && !c.OfferedIn(r.t.Workspace) {
			continue // nobody to answer it here (ask.go)
		} else if r.t.Withhold == nil || !r.t.Withhold(tool) {
			listed = append(listed, name)
		}
	}
	var own []llm.ToolSpec // coda's tools of the stage's own: submit_output, delegation, transition
	if v.answer.canSubmit() {
		own = append(own, v.answer.submitSpec())
	}
	own = append(own, v.delegationSpecs()...)
	if v.out.offered() {
		own = append(own, transitionSpec(s, v.out.targets))
	}
	listed = v.capTools(listed, len(own))
	v.offered = map[string]Tool{}
	for _, name := range listed {
		tool := r.share.tools[name]
		v.offered[name] = tool
		v.tools = append(v.tools, tool.Spec())
	}
	v.tools = append(v.tools, own...)

	v.models = s.ModelCandidates(r.t.UserModel, r.t.DefaultModel)
}

// systemPrompt is the visit's system prompt for a model that calls tools,
// or one that does not (which is told neither of transition nor of
// submit_output: notools.go).
func (v *stageVisit) systemPrompt(tools bool) string {
	s := v.stage
	var sys strings.Builder
	sys.WriteString(strings.TrimSpace(s.SystemPrompt))
	if s.Description != "" {
		fmt.Fprintf(&sys, "\n\nThis stage (%s): %s", s.Name, s.Description)
	}
	if project := v.run.projectInstructions(); project != "" {
		sys.WriteString("\n\n" + project) // the project's own words: not framed
	}
	sys.WriteString("\n\n" + frameNote)
	if tools && v.out.offered() {
		sys.WriteString("\n\nWhen this stage's work is done, call transition with where to go next:")
		sys.WriteString(ways(s))
	}
	if v.contract != nil && s.OwesOutput() {
		sys.WriteString("\n\n")
		sys.WriteString(v.contract.SystemPromptFor(v.answer.ways(tools)))
	}
	return strings.TrimSpace(sys.String())
}

// call makes one model call, streaming its text and reasoning to the sink.
func (v *stageVisit) call(ctx context.Context) (*llm.Response, error) {
	r := v.run
	if len(v.models) == 0 {
		return nil, fmt.Errorf("stage %s has no model: give the stage model = { models = [...] } or pass --model", v.stage.Name)
	}
	v.iterations++
	v.nudged = v.rep.send() // this call carries the nudges said since the last
	out := &replyStream{v: v, ctx: ctx}
	var lastErr error
	for i, spec := range v.models {
		req := v.request(spec)
		out.split, out.held = thinkSplit{}, [2]string{} // what a failed try held is not this one's
		resp, err := v.stream(ctx, spec, req, out.delta)
		if errors.Is(err, llm.ErrToolsUnsupported) && len(req.Tools) > 0 && out.textID == "" && ctx.Err() == nil {
			// The server refused the tools: the same call without them.
			v.calling.learn(spec, err)
			req = v.request(spec)
			out.split, out.held = thinkSplit{}, [2]string{}
			resp, err = v.stream(ctx, spec, req, out.delta)
		}
		if err == nil {
			if err := out.flush(); err != nil {
				return nil, err
			}
			splitThink(resp)
			v.answer.toolless = len(req.Tools) == 0
			tidyCalls(resp.ToolCalls)
			// A fallback that answered is asked first from now on.
			v.models = v.models[i:]
			v.model = spec
			return resp, v.took(ctx, spec, req, resp)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		lastErr = err
		if !errors.Is(err, llm.ErrModelUnavailable) || out.textID != "" {
			break
		}
		if i+1 < len(v.models) {
			r.log.Warn("model unavailable, trying the next", "model", spec, "err", err)
		}
	}
	return nil, fmt.Errorf("stage %s: %w", v.stage.Name, lastErr)
}

// stream makes the call with the model spec names, once the request fits
// its window (compact.go), shaped for the answer (shape.go). A server that
// refuses one of the mechanisms the call asked for has it made again
// without it, once a mechanism.
func (v *stageVisit) stream(ctx context.Context, spec string, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	m, err := v.run.e.Models.Model(spec)
	if err != nil {
		return nil, err
	}
	if err := v.fit(ctx, spec, m, req); err != nil {
		return nil, err
	}
	built := *req
	for try := 0; ; try++ {
		*req = built
		req.Params, req.Timeout = v.calling.params(spec), v.stage.Model.Timeout()
		v.answer.shape(spec, m, req, v.owes(), v.nudged || v.rep.lastRepair())
		cctx, span := v.run.e.tracer().Chat(ctx, spec)
		resp, err := m.Stream(cctx, req, onDelta)
		v.tracedCall(span, resp, err)
		if err == nil {
			v.fitter.sized(spec, req, resp)
		}
		if err == nil || try == 2 || ctx.Err() != nil || !v.answer.learnRefused(spec, err) {
			return resp, err
		}
	}
}

// fit compacts the visit's conversation so that req, a call of the model
// spec names (m), fits its window (compact.go); an error when it cannot.
func (v *stageVisit) fit(ctx context.Context, spec string, m llm.Model, req *llm.Request) error {
	c, err := v.fitter.fit(spec, req, v.fitter.window(ctx, spec, m), cutter{
		never:   func(tool string) bool { return v.answer.isSubmit(tool) || v.out.is(tool) },
		keep:    func(m *llm.Message) string { return v.rec.keepCut(m, v.run.taint.Carries(m.Text)) },
		earlier: v.rec.earlier, history: v.rec.history, hist: v.hist,
	})
	if c == nil || err != nil {
		return err
	}
	v.messages, req.Messages = c.msgs, c.msgs
	if c.turns > 0 {
		v.rec.earlier, v.rec.history = c.earlier, c.history
		v.hist, v.rec.shown = c.hist, c.hist.n
		v.run.historyCut += c.turns
	}
	line := c.said(v.iterations, v.stage.Name, spec)
	v.rec.compacted(line)
	v.run.warn(line)
	return v.run.sink.Emit(ctx, Event{Kind: EventCompaction, Stage: v.stage.Name, MessageID: v.run.e.NewID("c"), Text: line})
}

// A replyStream streams a call's text and reasoning to the sink, a
// leading think block in the text as reasoning (shape.go).
type replyStream struct {
	v                 *stageVisit
	ctx               context.Context
	textID, thoughtID string
	split             thinkSplit
	held              [2]string // thought and text held back to be masked (hold)
}

func (s *replyStream) delta(d llm.Delta) error {
	thought, text := d.Thinking, d.Text
	if text != "" {
		var t string
		t, text = s.split.feed(text)
		thought += t
	}
	return s.emit(thought, text)
}

// flush streams what the think split, and the masking, still held when
// the reply ended.
func (s *replyStream) flush() error {
	thought, text := s.split.flush()
	if err := s.emit(thought, text); err != nil {
		return err
	}
	return s.emitNow(s.hold(0, "", true), s.hold(1, "", true))
}

// maxHeld is the most of a line the masking holds back before it shows it
// anyway.
const maxHeld = 16 << 10

// hold adds text to what stream n (0 thought, 1 text) holds back and
// returns what can be shown, masked: the whole lines, or everything at the
// end or past maxHeld.
func (s *replyStream) hold(n int, text string, end bool) string {
	held := s.held[n] + text
	cut := strings.LastIndexByte(held, '\n') + 1
	if end || len(held) > maxHeld {
		cut = len(held)
	}
	s.held[n] = held[cut:]
	return s.v.run.taint.Mask(held[:cut])
}

func (s *replyStream) emit(thought, text string) error {
	r := s.v.run
	if g := r.taint; g.Tainted() || s.held[0] != "" || s.held[1] != "" {
		// The model's text reaches the editor before the gate has seen it
		// (a reply refused as the answer, commentary): in a tainted run it
		// is shown a line at a time, its private content masked.
		thought, text = s.hold(0, thought, false), s.hold(1, text, false)
	}
	return s.emitNow(thought, text)
}

func (s *replyStream) emitNow(thought, text string) error {
	r := s.v.run
	if thought != "" {
		if s.thoughtID == "" {
			s.thoughtID = r.e.NewID("m")
		}
		if err := r.sink.Emit(s.ctx, Event{Kind: EventThought, Stage: s.v.stage.Name, MessageID: s.thoughtID, Text: thought}); err != nil {
			return err
		}
	}
	if text != "" {
		if s.textID == "" {
			s.textID = r.e.NewID("m")
		}
		return r.sink.Emit(s.ctx, Event{Kind: EventText, Stage: s.v.stage.Name, MessageID: s.textID, Text: text})
	}
	return nil
}

// took adds a model's reply to the visit: the record, the conversation,
// the last text, and the usage report.
func (v *stageVisit) took(ctx context.Context, spec string, req *llm.Request, resp *llm.Response) error {
	r := v.run
	shape, sent := v.answer.callShape()
	for _, s := range sent {
		v.rec.sentSchema(s)
	}
	v.rec.call(spec, req, resp, shape)
	v.usage.Add(resp.Usage)
	price := r.price(spec)
	v.rec.costed(spec, resp.Usage, price)
	spent := r.spent.add(spec, resp.Usage, price)
	if resp.Text != "" || resp.Thinking != "" || len(resp.ToolCalls) > 0 {
		// An empty reply is left out: providers refuse an assistant
		// message with no content.
		v.messages = append(v.messages, llm.Message{Role: llm.RoleAssistant, Text: resp.Text, Thinking: resp.Thinking, ToolCalls: resp.ToolCalls, Replay: resp.Replay})
	}
	if resp.Text != "" {
		v.lastText, r.reply = resp.Text, resp.Text
	}
	if resp.Usage == (llm.Usage{}) {
		return nil
	}
	u := resp.Usage
	return r.sink.Emit(ctx, Event{Kind: EventUsage, Stage: v.stage.Name, Usage: &u, Spent: &spent})
}

// runTools runs a response's tool calls in order and feeds their results
// back. It returns a transition target if one was chosen, and end=true when
// a passing submission ends the stage.
func (v *stageVisit) runTools(ctx context.Context, resp *llm.Response) (to string, end bool, err error) {
	defer func() { v.callID = "" }()
	for i, tc := range resp.ToolCalls {
		tool := v.offered[tc.Name]
		ev := v.announce(tc, tool)
		v.callID = ev.ID
		if err := v.run.sink.Emit(ctx, Event{Kind: EventToolCall, Stage: v.stage.Name, ToolCall: ev}); err != nil {
			return "", false, err
		}
		var res ToolResult
		var stop error // a fan_out whose failed worker ends the run
		tctx, span := v.run.e.tracer().Tool(ctx, tc.Name, tc.ID)
		switch {
		case tc.Dropped > 0 && !v.answer.isSubmit(tc.Name): // submit_output refuses its own, as a refused submission
			res = Errorf("The arguments of this %s call are too large: %d bytes, over the %d-byte cap. The call was not run. Make it smaller, or split the work into several calls.", tc.Name, tc.Size(), llm.ArgsCap(tc.Name))
		case resp.StopReason == llm.StopMaxTokens && tc.Dropped == 0 && !json.Valid(tc.Arguments) && v.answer.isSubmit(tc.Name):
			// Not a malformed answer: the model ran out of output tokens
			// while writing it (DESIGN §17).
			res = Errorf("%s", v.answer.cutAnswer(len(tc.Arguments)))
		case resp.StopReason == llm.StopMaxTokens && tc.Dropped == 0 && !json.Valid(tc.Arguments):
			// Not a malformed call: the model ran out of output tokens
			// while writing it.
			res = Errorf("Your reply reached the model's output token limit while you were writing this %s call, so its arguments were cut off. Make it shorter and call %s again.", tc.Name, tc.Name)
		case v.answer.isSubmit(tc.Name):
			var ends bool
			res, ends = v.submit(tctx, tc)
			end = end || ends
		case v.out.is(tc.Name):
			var target string
			res, target = v.out.take(resp.ToolCalls, i, &v.rep, v.owes())
			if target != "" && to == "" {
				to = target
			}
		case v.stage.Delegates(tc.Name):
			v.run.rec.WriteQueued() // while the workers or children work
			res, stop = v.delegate(tctx, tc, ev)
			res.private = v.run.taint.Carries(res.Output)
			res.untrusted = true // workers' and children's reports
		case tool != nil:
			res = v.runTool(tctx, tool, tc, ev)
			res.untrusted = true
		default:
			res = Errorf("There is no tool %q in this stage. The tools you can call: %s.", tc.Name, strings.Join(toolNames(v.tools), ", "))
		}
		v.tracedTool(span, tc, res)
		if ctx.Err() != nil {
			// The editor must not show the call running forever.
			upd := &ToolCallEvent{ID: ev.ID, Status: ToolFailed, Content: []ToolContent{{Text: "Cancelled."}}}
			_ = v.run.sink.Emit(context.WithoutCancel(ctx), Event{Kind: EventToolCallUpdate, Stage: v.stage.Name, ToolCall: upd})
			return "", false, ctx.Err()
		}
		if err := v.run.sink.Emit(ctx, Event{Kind: EventToolCallUpdate, Stage: v.stage.Name, ToolCall: maskNames(v.run.taint, finished(ev.ID, tc.Name, res))}); err != nil {
			return "", false, err
		}
		fed := res.Output
		if res.untrusted {
			fed = Frame("result of "+tc.Name, fed)
		}
		v.messages = append(v.messages, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Text: fed, IsError: res.IsError})
		v.rec.tool(tc, res)
		if stop != nil {
			return "", false, stop
		}
	}
	return to, end, nil
}

// announce is the tool call tc as the editor is first shown it: its
// title, kind and locations, and pending when it waits for the user's
// approval. tool is the stage's own tool of that name, or nil. A call
// whose arguments were cut is shown by its name alone.
func (v *stageVisit) announce(tc llm.ToolCall, tool Tool) *ToolCallEvent {
	ev := &ToolCallEvent{ID: v.run.e.NewID("t"), Title: tc.Name, Name: tc.Name, Kind: "other", Status: ToolInProgress, RawInput: shownArgs(tc)}
	if g := v.run.taint; g.Tainted() {
		// Shown before the gate has decided on the call: its private
		// content masked, in its arguments and the title made of them,
		// and in the head kept of arguments cut at their cap.
		if tc.Dropped == 0 {
			tc.Arguments = g.RedactArgs(tc.Arguments)
		} else {
			tc.Arguments = g.MaskCut(tc.Arguments)
		}
		ev.RawInput = shownArgs(tc)
	}
	switch {
	case v.answer.isSubmit(tc.Name):
		ev.Title = v.answer.submitTitle()
	case v.out.is(tc.Name):
		ev.Title, ev.Kind = "transition", "think"
	case v.stage.Delegates(tc.Name):
		if tc.Dropped == 0 {
			ev.Title = delegationTitle(tc)
		}
	case tool != nil:
		ev.Kind = tool.Kind()
		if tc.Dropped == 0 {
			ev.Title, ev.Locations = titleOf(tool, tc.Name, tc.Arguments)
			if asksPermission(tool) {
				// Until the user approves, the call is pending.
				ev.Status = ToolPending
			}
		}
	}
	return ev
}

// finished is the update that ends the call id with res: what the editor
// is shown of it, which is its Output unless it brought content of its
// own (and but for a passing submission, which the final answer shows).
func finished(id, name string, res ToolResult) *ToolCallEvent {
	upd := &ToolCallEvent{ID: id, Status: ToolCompleted, Title: res.Title, Locations: res.Locations, Content: res.Content}
	if res.IsError {
		upd.Status = ToolFailed
	}
	if len(upd.Content) == 0 && res.Output != "" && (res.IsError || name != blueprint.ToolSubmitOutput) {
		upd.Content = []ToolContent{{Text: res.Output}}
	}
	return upd
}

// asksPermission reports whether a tool's calls wait for the user's
// approval: as the tool says (PermissionAsker), else when its ACP kind
// changes things.
func asksPermission(t Tool) bool {
	if a, ok := t.(PermissionAsker); ok {
		return a.AsksPermission()
	}
	switch t.Kind() {
	case "edit", "delete", "move", "execute":
		return true
	}
	return false
}

func toolNames(tools []llm.ToolSpec) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

func (v *stageVisit) runTool(ctx context.Context, tool Tool, tc llm.ToolCall, ev *ToolCallEvent) (res ToolResult) {
	defer func() {
		if p := recover(); p != nil {
			v.run.log.Error("tool panicked", "tool", tc.Name, "panic", p)
			res = Errorf("The tool %s failed inside coda: %v", tc.Name, p)
		}
	}()
	call := &Call{
		ID: ev.ID, Args: tc.Arguments, Stage: v.stage.Name, Workspace: v.run.t.Workspace, RunDir: v.run.rec.Dir(), flush: v.run.rec.Flush,
		KeepExisting: v.contract != nil && v.contract.KeepsExisting(),
		Progress: func(p ToolCallEvent) {
			p.ID = ev.ID
			_ = v.run.sink.Emit(ctx, Event{Kind: EventToolCallUpdate, Stage: v.stage.Name, ToolCall: maskNames(v.run.taint, &p)})
		},
	}
	if v.run.taint != nil {
		call.Workspace = namesMasked{call.Workspace, v.run.taint}
	}
	if refused, stop := v.gate.egress(ctx, tool, call, tc, ev); stop {
		return refused
	}
	// The record so far is written while the tool works, not beside the
	// answer's own write at the end (store.Run).
	v.run.rec.WriteQueued()
	var before *snapshot // the roots before a call that does not say what it writes (touched.go)
	if writesUntracked(tool) && len(v.run.t.Workspace.Roots()) > 0 {
		before = takeSnapshot(v.run.t.Workspace.Roots(), v.run.e.Store.Dir())
	}
	res = tool.Run(ctx, call)
	// A result that carries a secret of a private file under the roots
	// brings that file, whatever the call named (taint/found.go): to the
	// gate, or, when it is off, to what masks the record.
	if v.run.taint != nil {
		res.Sources = append(res.Sources, v.run.taint.Found(res.Output, res.Sources)...)
	} else {
		res.Sources = append(res.Sources, v.run.share.secrets.Found(res.Output, res.Sources)...)
	}
	res.private = v.run.taint.Read(res.Sources)
	v.run.share.secrets.Read(res.Sources)
	if e, ok := tool.(Egress); ok && e.Egress() && res.private == "" {
		// A command's output that carries private content is withheld
		// from the record as a reading of it is.
		res.private = v.run.taint.Carries(res.Output)
	}
	v.touched(res.Written)
	for _, c := range res.Content {
		// A diff with old text replaced a file that existed.
		if c.Diff != nil && c.Diff.OldText != nil && !res.IsError {
			v.run.overwritten = append(v.run.overwritten, c.Diff.Path)
		}
	}
	if before != nil {
		after := takeSnapshot(v.run.t.Workspace.Roots(), v.run.e.Store.Dir())
		touched, existed := before.changes(after)
		v.touched(touched)
		v.run.overwritten = append(v.run.overwritten, existed...)
		v.rec.status.FilesPartial = v.rec.status.FilesPartial || before.partial || after.partial || before.builtPartial || after.builtPartial
		v.run.share.secrets.Wrote(v.run.taint.Wrote(touched))
	}
	// Files written from private content are private, to the gate and to
	// what masks the record.
	v.run.share.secrets.Wrote(v.run.taint.Wrote(res.Written))
	return res
}
