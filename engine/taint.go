package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/rootfs"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// The taint gate (DESIGN §13) is engine/taint's; the engine is its user.
// A turn's gate (run.taint, shared by its workers and children) takes in
// what the tools read (runTool: ToolResult.Sources, and the private files
// under the roots whose secrets a result carries, Gate.Found) and the
// prompt's resources (Turn.PromptSources), and is asked before every way off the
// machine: the answer, at the moment a passing submission would be
// recorded (visitGate.answer, from checkSubmission, which every
// submission passes through), and every Egress tool before it runs
// (visitGate.egress). Under `ask` the engine puts the gate's question to
// the user as a permission request (visitGate.request); each decision is
// logged, masked, and written to the visit's taint_audit.json (audit).

// An Egress tool can send what a call carries off the machine (a shell
// command, an MCP server's tool): in a tainted run its calls meet the taint
// gate before they run.
type Egress interface {
	Egress() bool
}

// newTaint sets up the gate for a turn, or returns nil when it is off.
func newTaint(r *run) *taint.Gate {
	var roots []string
	cwd := ""
	if ws := r.t.Workspace; ws != nil {
		roots, cwd = ws.Roots(), ws.Cwd()
	}
	// [agent.taint] is the blueprint's spelling of a taint.Config.
	g, err := taint.New(r.e.Taint, (*taint.Config)(r.t.Agent.Agent.Taint), cwd, roots)
	if err != nil {
		r.warn(fmt.Sprintf("taint: %v", err))
	}
	g.UseIndex(r.t.Private)
	g.Restore(r.t.Tainted) // the session's earlier turns
	g.Read(r.t.PromptSources)
	return g
}

// newSecrets sets up the turn's secret matcher (DESIGN §19): the gate's,
// on whether or not the gate is, so that what the turn reads of private
// files is masked in every preamble, last_response and record text (mask).
func newSecrets(r *run) *taint.Secrets {
	var roots []string
	cwd := ""
	if ws := r.t.Workspace; ws != nil {
		roots, cwd = ws.Roots(), ws.Cwd()
	}
	s := taint.NewSecrets(r.e.Taint, (*taint.Config)(r.t.Agent.Agent.Taint), cwd, roots)
	s.UseIndex(r.t.Private)
	s.Restore(r.t.Tainted) // what the session's gate knows from its earlier turns
	s.Read(r.t.PromptSources)
	return s
}

// mask is text with what the turn read of private files masked: what a
// later stage's preamble, the visit's texts kept whole and response.md
// keep. The model's own conversation keeps the raw tool results its calls
// need.
func (r *run) mask(text string) string { return r.share.secrets.Mask(text) }

// A visitGate is a visit's side of the taint gate: the turn's gate, the
// workspace its questions go to, the visit's audit, and whether the
// visit's answer leaves the machine (not a worker's or child's, which goes
// to its parent). Each way off the machine is one of its methods; id is
// the tool call being run, as the editor knows it ("": none).
type visitGate struct {
	g     *taint.Gate // nil when the gate is off
	ws    Workspace
	newID func(prefix string) string
	log   *slog.Logger
	rec   *visitRecord
	sub   bool // a worker's or child's visit
}

// decide puts a call before the turn's gate. kind is the call's ACP tool
// kind; asks, when not nil, is the call's tool when it asks the user about
// each call itself (shell, MCP tools), with the call's arguments: `ask`
// then puts one question that covers both, showing the call with its
// private content masked.
func (vg *visitGate) decide(ctx context.Context, id string, c taint.Call, kind string, asks Tool, args json.RawMessage) taint.Outcome {
	c.Asks = asks != nil
	var reason string
	out := vg.g.Decide(ctx, c, func(ctx context.Context, q taint.Question) (bool, error) {
		req := vg.request(id, q, kind, asks, args)
		req.Reason = &reason
		return vg.ws.RequestPermission(ctx, req)
	})
	if reason = strings.TrimSpace(reason); reason != "" && out.Audit != nil {
		// The user's own words: in the audit, and for the model when
		// they declined.
		reason = vg.g.Mask(reason)
		out.Audit.Reason = "the user said: " + reason
		if !out.Allowed {
			out.Refusal += " The user's reason: " + reason
		}
	}
	if out.Audit != nil {
		vg.audit(*out.Audit)
	}
	return out
}

// taintRequest is the permission request of `ask`: the gate's question.
// A call whose tool asks the user itself is shown as that tool shows it,
// its arguments with their private content masked, and the question
// covers the tool's own: one answer for both.
func (vg *visitGate) request(id string, q taint.Question, kind string, asks Tool, args json.RawMessage) PermissionRequest {
	if id == "" {
		id = vg.newID("t")
	}
	req := PermissionRequest{
		Key:    taint.PermissionPrefix + q.Call.Sink,
		Always: q.Always(),
		ToolCall: ToolCallEvent{
			ID:      id,
			Title:   q.Title(),
			Kind:    kind,
			Content: []ToolContent{{Text: q.Text()}},
		},
	}
	if asks != nil {
		args := vg.g.RedactArgs(args)
		title, locs := titleOf(asks, q.Call.Sink, args)
		req.Covers = []string{q.Call.Sink}
		req.ToolCall.Title = q.Covering(title)
		req.ToolCall.Status, req.ToolCall.RawInput, req.ToolCall.Locations = ToolPending, args, locs
	}
	return req
}

// audit records a decision: logged (masked), and written to the visit's
// taint_audit.json, whole again after each call so that a run that dies
// keeps what it decided.
func (vg *visitGate) audit(rec taint.Audit) {
	vg.rec.audit = append(vg.rec.audit, rec)
	vg.log.Info("taint gate", "sink", rec.Sink, "sources", rec.Sources, "matches", rec.Matches, "decision", rec.Decision, "decidedBy", rec.DecidedBy, "reason", rec.Reason)
	vg.rec.WriteAudit(vg.rec.audit)
}

// taintCounts are the gate's counts as run.json spells them; nil when the
// gate is off.
func taintCounts(g *taint.Gate) *store.TaintCounts {
	c := g.Counts()
	if c == nil {
		return nil
	}
	return &store.TaintCounts{Gated: c.Gated, Allowed: c.Allowed, Denied: c.Denied, Waived: c.Waived}
}

// answer is the gate at the moment a passing submission, of an answer in
// format ("" when none is known), would be recorded. A refused answer
// becomes a refused verdict, so nothing is recorded and the model can
// submit another; one let through by waiver is flagged.
func (vg *visitGate) answer(ctx context.Context, id string, verdict outputspec.Verdict, format string) outputspec.Verdict {
	g := vg.g
	if g == nil || !verdict.Accepted || vg.sub {
		// A worker's or child's answer goes to its parent, not off the
		// machine: the parent's answer meets the gate.
		return verdict
	}
	// The gate looks behind the format's escapes too.
	c := taint.Call{Sink: blueprint.ToolSubmitOutput, What: "this answer", Payload: []string{verdict.Content}, Format: format}
	cwd := vg.ws.Cwd()
	disk := rootfs.Disk{Roots: vg.ws.Roots()}
	for _, a := range verdict.Artifacts {
		// Its name goes with the answer too (the answer's _meta, a
		// resource_link, run.json): it meets the gate as text.
		c.Payload = append(c.Payload, a.Path)
		path := filepath.Join(cwd, filepath.FromSlash(a.Path))
		if name, private := g.Private(path); private {
			c.Carried = append(c.Carried, name)
			continue
		}
		// Every artifact is scanned whole, text or binary, any size: the
		// gate reads it a chunk at a time.
		f, err := disk.Open(path)
		if err != nil {
			continue // gone: it carries nothing
		}
		defer f.Close()
		c.Files = append(c.Files, f)
	}
	out := vg.decide(ctx, id, c, "other", nil, nil)
	if !out.Allowed {
		return outputspec.Verdict{Feedback: out.Refusal}
	}
	if out.Waived {
		verdict.Flags = append(verdict.Flags, taint.FlagWaived)
	}
	return verdict
}

// reason is the gate on the reason an answer is unavailable, which the
// caller receives in the answer's place: "" when it may go, else what the
// model is told (it may declare another). A worker's or child's goes to
// its parent, as its answer does.
func (vg *visitGate) reason(ctx context.Context, id, reason string) string {
	if vg.g == nil || vg.sub {
		return ""
	}
	out := vg.decide(ctx, id, taint.Call{Sink: blueprint.ToolSubmitOutput, What: "this answer", Payload: []string{reason}}, "other", nil, nil)
	if out.Allowed {
		return ""
	}
	return out.Refusal
}

// egress is the gate before an Egress tool runs, ev being the call as the
// editor was shown it. It reports whether the call was refused, with the
// result the model gets; a call the user approved in answering the gate's
// question is marked so (Call.Approved).
func (vg *visitGate) egress(ctx context.Context, tool Tool, call *Call, tc llm.ToolCall, ev *ToolCallEvent) (ToolResult, bool) {
	e, ok := tool.(Egress)
	if vg.g == nil || !ok || !e.Egress() {
		return ToolResult{}, false
	}
	c := taint.Call{Sink: tc.Name, What: "this " + tc.Name + " call", Payload: taint.ArgStrings(tc.Arguments)}
	var asks Tool
	if asksPermission(tool) {
		asks = tool
	}
	out := vg.decide(ctx, ev.ID, c, ev.Kind, asks, tc.Arguments)
	if out.Allowed {
		call.Approved = out.Approved
		return ToolResult{}, false
	}
	return ToolResult{Output: out.Refusal, IsError: true, Title: ev.Title}, true
}

// maskNames is ev as a tainted run shows it (DESIGN §13): the names it
// shows, its title, its locations and its diffs' paths, masked of private
// content, as the call's announcement is (announce). A file a write or an
// edit names may be named with a secret (`out/sk-live-…/notes.txt`): the
// name meets the gate as text. ev itself is not changed; what the gate
// has not seen taint in is returned as it is.
func maskNames(g *taint.Gate, ev *ToolCallEvent) *ToolCallEvent {
	if ev == nil || !g.Tainted() {
		return ev
	}
	m := *ev
	m.Title = g.Mask(ev.Title)
	m.Locations = slices.Clone(ev.Locations)
	for i := range m.Locations {
		m.Locations[i].Path = g.Mask(m.Locations[i].Path)
	}
	m.Content = slices.Clone(ev.Content)
	for i, c := range m.Content {
		if c.Diff != nil {
			d := *c.Diff
			d.Path = g.Mask(d.Path)
			m.Content[i].Diff = &d
		}
	}
	return &m
}

// namesMasked is a Workspace whose permission requests, a tool's own
// (write_file, edit_file, shell), are shown as maskNames shows a call, its
// arguments redacted too, once the run is tainted.
type namesMasked struct {
	Workspace
	g *taint.Gate
}

func (w namesMasked) RequestPermission(ctx context.Context, req PermissionRequest) (bool, error) {
	if w.g.Tainted() {
		req.ToolCall = *maskNames(w.g, &req.ToolCall)
		if len(req.ToolCall.RawInput) > 0 {
			req.ToolCall.RawInput = w.g.RedactArgs(req.ToolCall.RawInput)
		}
	}
	return w.Workspace.RequestPermission(ctx, req)
}

// maskFiles is files with each name masked by mask (nil stays nil).
func maskFiles(files []string, mask func(string) string) []string {
	if files == nil {
		return nil
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = mask(f)
	}
	return out
}
