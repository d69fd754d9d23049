package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/coda-acp/coda/outputspec"
)

// Names of the tools the engine itself provides.
const (
	ToolSubmitOutput = "submit_output"
	ToolTransition   = "transition"
	// Done is the transition target that ends the run (allow_complete).
	Done = "DONE"
)

// visit is one stage visit: the model loop. It returns the next stage's
// name, or "" when the run ends here.
func (r *run) visit(ctx context.Context, s *Stage) (string, error) {
	r.visits[s.Name]++
	v := &stageVisit{run: r, stage: s, n: r.visits[s.Name], contract: r.contract(s)}
	if err := r.emitPlan(ctx, s.Name, PlanInProgress); err != nil {
		return "", err
	}
	v.rec = r.rec.visit(s.Name, v.n)
	next, err := v.loop(ctx)
	v.rec.finish(v, err)
	r.done = append(r.done, stageOutcome{stage: s.Name, response: v.lastText, answer: v.answerContent()})
	if err != nil {
		return "", err
	}
	if err := r.emitPlan(ctx, s.Name, PlanCompleted); err != nil {
		return "", err
	}
	return next, nil
}

func (r *run) contract(s *Stage) *outputspec.Contract {
	if r.t.Outputs == nil {
		return nil
	}
	return r.t.Outputs.ByStage[s.Name]
}

// stageVisit is the state of one visit of a stage.
type stageVisit struct {
	run      *run
	stage    *Stage
	n        int // the visit's number, from 1
	contract *outputspec.Contract
	rec      *visitRecord

	system   string
	messages []Message
	tools    []ToolSpec      // as the model is told of them
	offered  map[string]Tool // the stage's own tools, by name
	targets  []string        // the ways out: transitions in order, then DONE
	models   []string

	iterations int
	revisits   int
	desk       *outputspec.Desk // checks submissions; remembers refused ones
	submitted  *Answer          // the last passing submission of this visit
	truncated  bool             // the passing submission was cut
	lastText   string
	written    []string
}

func (v *stageVisit) answerContent() string {
	if v.submitted == nil {
		return ""
	}
	return v.submitted.Content
}

func (v *stageVisit) owes() bool { return v.stage.OwesOutput() && v.submitted == nil }

// loop runs the model until the visit ends. It returns the chosen
// transition target, or "" to end the run.
func (v *stageVisit) loop(ctx context.Context) (string, error) {
	r := v.run
	v.prepare()
	transitions := v.stage.TransitionOrder
	for {
		if v.iterations >= v.stage.Iterations() {
			r.flag(FlagMaxIterationsHit)
			r.warn(fmt.Sprintf("stage %s used its %d iterations", v.stage.Name, v.stage.Iterations()))
			if v.owes() {
				r.flag(FlagOutputForced)
				r.warn(fmt.Sprintf("stage %s ended without the answer it owes", v.stage.Name))
			}
			if len(transitions) > 0 {
				return transitions[0], nil
			}
			return "", nil
		}
		if r.calls >= r.t.MaxModelCalls {
			return "", errMaxCalls
		}
		resp, err := v.call(ctx)
		if err != nil {
			return "", err
		}
		if resp.StopReason == StopRefusal && len(resp.ToolCalls) == 0 {
			r.stop = "refusal"
			return "", nil
		}
		if len(resp.ToolCalls) > 0 {
			to, end, err := v.runTools(ctx, resp)
			if err != nil {
				return "", err
			}
			if to != "" {
				if v.owes() && v.nudge(fmt.Sprintf("You chose to move on to %s, but this stage owes the answer: call submit_output with it first.", to)) {
					continue
				}
				if to == Done {
					return "", nil
				}
				return to, nil
			}
			if end {
				return "", nil
			}
			continue
		}
		// A reply without a tool call ends the visit.
		if resp.StopReason == StopMaxTokens {
			if v.owes() {
				v.say("Your reply was cut off at the model's output token limit before you submitted the answer. Call submit_output now with a shorter answer.")
				continue
			}
			r.stop = "max_tokens"
			return "", nil
		}
		if v.owes() {
			if v.nudge("You have not submitted the answer yet. Call submit_output with the answer now.") {
				continue
			}
		}
		if len(transitions) == 0 {
			return "", nil
		}
		v.say("Choose what comes next: call transition with one of: " + strings.Join(v.targets, ", ") + ".")
	}
}

// nudge asks the model again for the owed answer, if revisits remain. When
// none remain it records output_forced and returns false.
func (v *stageVisit) nudge(msg string) bool {
	if v.revisits < v.stage.Revisits() {
		v.revisits++
		v.say(msg)
		return true
	}
	v.run.flag(FlagOutputForced)
	v.run.warn(fmt.Sprintf("stage %s ended without the answer it owes (nudged %d time(s))", v.stage.Name, v.revisits))
	return false
}

func (v *stageVisit) say(msg string) {
	v.messages = append(v.messages, Message{Role: RoleUser, Text: msg})
}

// ways lists a stage's ways out, one a line, for the model.
func ways(s *Stage) string {
	var b strings.Builder
	for _, to := range s.TransitionOrder {
		fmt.Fprintf(&b, "\n- %s: %s", to, s.Transitions[to].Hint)
	}
	if s.AllowComplete {
		fmt.Fprintf(&b, "\n- %s: the whole task is finished; end the run here", Done)
	}
	return b.String()
}

// prepare builds the visit's system prompt, first messages, tools and
// model candidates.
func (v *stageVisit) prepare() {
	r, s := v.run, v.stage
	v.targets = append([]string(nil), s.TransitionOrder...)
	if s.AllowComplete {
		v.targets = append(v.targets, Done)
	}
	var sys strings.Builder
	sys.WriteString(strings.TrimSpace(s.SystemPrompt))
	if s.Description != "" {
		fmt.Fprintf(&sys, "\n\nThis stage (%s): %s", s.Name, s.Description)
	}
	if len(v.targets) > 0 {
		sys.WriteString("\n\nWhen this stage's work is done, call transition with where to go next:")
		sys.WriteString(ways(s))
	}
	if v.contract != nil && s.OwesOutput() {
		sys.WriteString("\n\n")
		sys.WriteString(v.contract.SystemPrompt())
	}
	v.system = strings.TrimSpace(sys.String())

	if r.visits[s.Name] == 1 && len(r.done) == 0 {
		// The session's earlier turns, the latest maxHistory of them, each
		// clipped: a long session must not outgrow the model's context.
		history := r.t.History
		if len(history) > maxHistory {
			history = history[len(history)-maxHistory:]
		}
		for _, ex := range history {
			v.messages = append(v.messages, Message{Role: RoleUser, Text: clip(ex.Prompt)}, Message{Role: RoleAssistant, Text: clip(ex.Answer)})
		}
	}
	v.messages = append(v.messages, Message{Role: RoleUser, Text: v.preamble() + r.t.Prompt})

	names := append([]string(nil), s.AvailableTools...)
	sort.Strings(names)
	v.offered = map[string]Tool{}
	for _, name := range names {
		if tool := r.t.Tools[name]; tool != nil {
			v.offered[name] = tool
			v.tools = append(v.tools, tool.Spec())
		} else {
			r.warn(fmt.Sprintf("stage %s lists tool %q, which coda does not have", s.Name, name))
		}
	}
	if v.canSubmit() {
		v.desk = outputspec.NewDesk(v.contract)
		v.tools = append(v.tools, ToolSpec{Name: ToolSubmitOutput, Description: v.contract.ToolDescription(), Schema: v.contract.ToolSchema()})
	}
	if len(v.targets) > 0 {
		v.tools = append(v.tools, transitionSpec(s, v.targets))
	}

	v.models = s.ModelCandidates(r.t.UserModel, r.t.DefaultModel)
}

// maxInline caps what a preamble inlines of an earlier stage's output, and
// what the conversation keeps of an earlier turn's prompt or answer.
const maxInline = 8 << 10

// maxHistory is how many of the session's earlier turns a run sees.
const maxHistory = 20

// preamble tells the stage what earlier stages produced.
func (v *stageVisit) preamble() string {
	done := v.run.done
	if len(done) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## What earlier stages produced\n")
	for _, o := range done {
		fmt.Fprintf(&b, "\n### Stage %s\n", o.stage)
		if o.response != "" {
			fmt.Fprintf(&b, "Last response:\n%s\n", clip(o.response))
		}
		if o.answer != "" {
			fmt.Fprintf(&b, "Answer:\n%s\n", clip(o.answer))
		}
	}
	b.WriteString("\n## The task\n")
	return b.String()
}

// clip cuts s to maxInline bytes at a character boundary, saying how much
// was cut. The note fits within maxInline too, so clipping twice changes
// nothing (acp keeps a session's history clipped: KeepHistory).
func clip(s string) string {
	if len(s) <= maxInline {
		return s
	}
	note := func(n int) string {
		return fmt.Sprintf("\n[… %d more bytes, cut here; the whole text is in the run record]", n)
	}
	// len(s) has at least as many digits as what is cut.
	cut := maxInline - len(note(len(s)))
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note(len(s)-cut)
}

// call makes one model call, streaming its text and reasoning to the sink.
func (v *stageVisit) call(ctx context.Context) (*Response, error) {
	r := v.run
	if len(v.models) == 0 {
		return nil, fmt.Errorf("stage %s has no model: give the stage model = { models = [...] } or pass --model", v.stage.Name)
	}
	req := &Request{System: v.system, Messages: v.messages, Tools: v.tools}
	v.iterations++
	r.calls++
	textID, thoughtID := "", ""
	onDelta := func(d Delta) error {
		if d.Text != "" {
			if textID == "" {
				textID = r.t.NewID("m")
			}
			return r.sink.Emit(ctx, Event{Kind: EventText, Stage: v.stage.Name, MessageID: textID, Text: d.Text})
		}
		if d.Thinking != "" {
			if thoughtID == "" {
				thoughtID = r.t.NewID("m")
			}
			return r.sink.Emit(ctx, Event{Kind: EventThought, Stage: v.stage.Name, MessageID: thoughtID, Text: d.Thinking})
		}
		return nil
	}
	var lastErr error
	for i, spec := range v.models {
		resp, err := v.stream(ctx, spec, req, onDelta)
		if err == nil {
			// A fallback that answered is asked first from now on.
			v.models = v.models[i:]
			return resp, v.took(ctx, req, resp)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		lastErr = err
		if !errors.Is(err, ErrModelUnavailable) || textID != "" {
			break
		}
		if i+1 < len(v.models) {
			r.log.Warn("model unavailable, trying the next", "model", spec, "err", err)
		}
	}
	return nil, fmt.Errorf("stage %s: %w", v.stage.Name, lastErr)
}

// stream makes the call with the model spec names.
func (v *stageVisit) stream(ctx context.Context, spec string, req *Request, onDelta func(Delta) error) (*Response, error) {
	m, err := v.run.t.Models.Model(spec)
	if err != nil {
		return nil, err
	}
	return m.Stream(ctx, req, onDelta)
}

// took adds a model's reply to the visit: the record, the conversation,
// the last text, and the usage report.
func (v *stageVisit) took(ctx context.Context, req *Request, resp *Response) error {
	r := v.run
	v.rec.call(req, resp)
	if resp.Text != "" || resp.Thinking != "" || len(resp.ToolCalls) > 0 {
		// An empty reply is left out: providers refuse an assistant
		// message with no content.
		v.messages = append(v.messages, Message{Role: RoleAssistant, Text: resp.Text, Thinking: resp.Thinking, ToolCalls: resp.ToolCalls, Replay: resp.Replay})
	}
	if resp.Text != "" {
		v.lastText, r.reply = resp.Text, resp.Text
	}
	if resp.Usage == (Usage{}) {
		return nil
	}
	u := resp.Usage
	return r.sink.Emit(ctx, Event{Kind: EventUsage, Stage: v.stage.Name, Usage: &u})
}

// runTools runs a response's tool calls in order and feeds their results
// back. It returns a transition target if one was chosen, and end=true when
// a passing submission ends the stage.
func (v *stageVisit) runTools(ctx context.Context, resp *Response) (to string, end bool, err error) {
	for i, tc := range resp.ToolCalls {
		var res ToolResult
		ev := &ToolCallEvent{ID: v.run.t.NewID("t"), Title: tc.Name, Kind: "other", Status: ToolInProgress, RawInput: rawArgs(tc.Arguments)}
		isSubmit := tc.Name == ToolSubmitOutput && v.canSubmit()
		isTransition := tc.Name == ToolTransition && len(v.targets) > 0
		tool := v.offered[tc.Name]
		switch {
		case isSubmit:
			ev.Title = "submit_output (" + v.contract.Format() + ")"
		case isTransition:
			ev.Title, ev.Kind = "transition", "think"
		case tool != nil:
			ev.Kind = tool.Kind()
			if asksPermission(ev.Kind) {
				// Until the user approves, the call is pending.
				ev.Status = ToolPending
			}
			if t, ok := tool.(Titler); ok {
				ev.Title, ev.Locations = t.Title(tc.Arguments)
				if ev.Title == "" {
					ev.Title = tc.Name
				}
			}
		}
		if err := v.run.sink.Emit(ctx, Event{Kind: EventToolCall, Stage: v.stage.Name, ToolCall: ev}); err != nil {
			return "", false, err
		}
		switch {
		case resp.StopReason == StopMaxTokens && !json.Valid(tc.Arguments):
			// Not a malformed call: the model ran out of output tokens
			// while writing it.
			res = Errorf("Your reply reached the model's output token limit while you were writing this %s call, so its arguments were cut off. Make it shorter and call %s again.", tc.Name, tc.Name)
		case isSubmit:
			var accepted bool
			res, accepted = v.submit(ctx, tc)
			if accepted && len(v.stage.TransitionOrder) == 0 && !v.truncated {
				end = true
			}
		case isTransition:
			var target string
			res, target = v.transition(tc)
			if target != "" && v.owes() && !submitsAfter(resp.ToolCalls, i) && v.revisits < v.stage.Revisits() {
				// Leaving would skip the owed answer: say so now, as the
				// call's result, rather than pretend the move happened.
				v.revisits++
				res, target = Errorf("Not yet: this stage owes the answer. Call submit_output with it first, then transition to %s.", target), ""
			}
			if target != "" && to == "" {
				to = target
			}
		case tool != nil:
			res = v.runTool(ctx, tool, tc, ev)
		default:
			res = Errorf("There is no tool %q in this stage. The tools you can call: %s.", tc.Name, strings.Join(v.toolNames(), ", "))
		}
		if ctx.Err() != nil {
			// The editor must not show the call running forever.
			upd := &ToolCallEvent{ID: ev.ID, Status: ToolFailed, Content: []ToolContent{{Text: "Cancelled."}}}
			_ = v.run.sink.Emit(context.WithoutCancel(ctx), Event{Kind: EventToolCallUpdate, Stage: v.stage.Name, ToolCall: upd})
			return "", false, ctx.Err()
		}
		upd := &ToolCallEvent{ID: ev.ID, Status: ToolCompleted, Title: res.Title, Locations: res.Locations, Content: res.Content}
		if res.IsError {
			upd.Status = ToolFailed
		}
		if len(upd.Content) == 0 && res.Output != "" && (res.IsError || tc.Name != ToolSubmitOutput) {
			upd.Content = []ToolContent{{Text: res.Output}}
		}
		if err := v.run.sink.Emit(ctx, Event{Kind: EventToolCallUpdate, Stage: v.stage.Name, ToolCall: upd}); err != nil {
			return "", false, err
		}
		v.messages = append(v.messages, Message{Role: RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Text: res.Output, IsError: res.IsError})
		v.rec.tool(tc, res)
	}
	return to, end, nil
}

// submitsAfter reports whether a submit_output call follows call i.
func submitsAfter(calls []ToolCall, i int) bool {
	for _, c := range calls[i+1:] {
		if c.Name == ToolSubmitOutput {
			return true
		}
	}
	return false
}

// asksPermission reports whether tools of an ACP kind change things and
// so wait for the user's approval.
func asksPermission(kind string) bool {
	switch kind {
	case "edit", "delete", "move", "execute":
		return true
	}
	return false
}

// canSubmit reports whether this visit offers submit_output.
func (v *stageVisit) canSubmit() bool { return v.contract != nil && v.stage.CanSubmit() }

func (v *stageVisit) toolNames() []string {
	names := make([]string, len(v.tools))
	for i, t := range v.tools {
		names[i] = t.Name
	}
	return names
}

func (v *stageVisit) runTool(ctx context.Context, tool Tool, tc ToolCall, ev *ToolCallEvent) (res ToolResult) {
	defer func() {
		if p := recover(); p != nil {
			v.run.log.Error("tool panicked", "tool", tc.Name, "panic", p)
			res = Errorf("The tool %s failed inside coda: %v", tc.Name, p)
		}
	}()
	call := &Call{
		ID: ev.ID, Args: tc.Arguments, Stage: v.stage.Name, Workspace: v.run.t.Workspace,
		Progress: func(p ToolCallEvent) {
			p.ID = ev.ID
			_ = v.run.sink.Emit(ctx, Event{Kind: EventToolCallUpdate, Stage: v.stage.Name, ToolCall: &p})
		},
	}
	res = tool.Run(ctx, call)
	if len(res.Written) > 0 {
		v.written = append(v.written, res.Written...)
		v.run.written = append(v.run.written, res.Written...)
	}
	for _, c := range res.Content {
		// A diff with old text replaced a file that existed.
		if c.Diff != nil && c.Diff.OldText != nil && !res.IsError {
			v.run.overwritten = append(v.run.overwritten, c.Diff.Path)
		}
	}
	return res
}

// submit checks a submit_output call. Nothing is recorded unless it passes.
func (v *stageVisit) submit(ctx context.Context, tc ToolCall) (ToolResult, bool) {
	r := v.run
	verdict := v.desk.Submit(ctx, outputspec.Submission{Args: tc.Arguments, Root: r.t.Workspace.Cwd(), Stages: r.t.Agent.Order, Overwritten: r.overwritten})
	if !verdict.Accepted {
		return ToolResult{Output: verdict.Feedback, IsError: true}, false
	}
	for _, w := range verdict.Warnings {
		r.warn(w)
	}
	for _, f := range verdict.Flags {
		r.flag(f)
	}
	a := &Answer{
		Stage: v.stage.Name, Format: v.contract.Format(), Content: verdict.Content, Truncated: verdict.Truncated,
		Flags: nonNil(verdict.Flags), Warnings: nonNil(verdict.Warnings), Artifacts: verdict.Artifacts,
	}
	if a.Artifacts == nil {
		a.Artifacts = []outputspec.Artifact{}
	}
	v.submitted, v.truncated = a, verdict.Truncated
	r.answer = a
	out := "Accepted: the answer is recorded."
	if verdict.Feedback != "" {
		out = verdict.Feedback
	}
	return ToolResult{Output: out}, true
}

func (v *stageVisit) transition(tc ToolCall) (ToolResult, string) {
	var args struct {
		To     string `json:"to"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(tc.Arguments, &args); err != nil {
		return Errorf(`transition takes {"to": "<stage>", "reason": "<why>"}: %v`, err), ""
	}
	switch {
	case !slices.Contains(v.targets, args.To):
		return Errorf("%q is not a way out of this stage. Choose one of: %s.", args.To, strings.Join(v.targets, ", ")), ""
	case args.To == Done:
		return ToolResult{Output: "Ending the run here."}, Done
	}
	return ToolResult{Output: "Moving on to " + args.To + "."}, args.To
}

func transitionSpec(s *Stage, targets []string) ToolSpec {
	enum, _ := json.Marshal(targets)
	desc := "Move on from this stage. Choose where to go next:" + ways(s)
	schema := `{"type":"object","properties":{"to":{"type":"string","enum":` + string(enum) + `},"reason":{"type":"string","description":"Why, in a sentence."}},"required":["to"]}`
	return ToolSpec{Name: ToolTransition, Description: desc, Schema: json.RawMessage(schema)}
}

func rawArgs(a json.RawMessage) []byte {
	if len(a) == 0 || !json.Valid(a) {
		b, _ := json.Marshal(string(a))
		return b
	}
	return a
}
