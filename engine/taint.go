package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/coda-acp/coda/internal/plainjson"
	"github.com/coda-acp/coda/internal/rootfs"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// The taint gate (DESIGN §13). Off unless turned on. With it on, content
// read from private paths taints the run: a tool result that carries it
// (read_file, grep's matches, edit_file and write_file on a private file; a
// tool says which files' content a result carries in ToolResult.Sources)
// and a prompt resource whose URI is private (Turn.PromptSources). Every
// way off the machine then meets the policy before it happens: the answer
// (at the moment a passing submission would be recorded: stageVisit.check,
// which every submission passes through), and every Egress tool (shell, MCP
// tools) before it runs.
//
// A sink call is gated when what it would send carries private content:
// a private line (or a secret-looking part of one) found verbatim in it,
// white space aside (taint_lines.go), or a private file submitted whole as
// an artifact. A call that carries none goes through untouched, so an
// answer written without the secret is recorded. What is not verbatim (a
// secret paraphrased, encoded or re-typed in pieces) is not seen; the gate
// is a guard against carrying private content out by accident, not against
// a model set on hiding it.
//
// Where this lives: taint.go (settings, the run's state, the gate and its
// decisions), taint_glob.go (which paths are private), taint_lines.go (what
// was read, bounded, and finding it again), taint_mask.go (the one way
// private lines are quoted), taint_audit.go (taint_audit.json and the
// counts in run.json).

// Taint policies.
const (
	TaintOff   = "off"
	TaintAllow = "allow"
	TaintDeny  = "deny"
	TaintAsk   = "ask"
)

// TaintPermissionPrefix starts the permission key of every question the
// gate asks ("taint:submit_output"): a workspace that answers some requests
// by itself (auto-edit) must leave these to the user.
const TaintPermissionPrefix = "taint:"

// FlagTaintWaived marks an answer that carried private content and went
// through because nobody could be asked and --yes waived the gate.
const FlagTaintWaived = "taint_waived"

// TaintConfig is [taint] in config.toml and [agent.taint] in a blueprint.
// A key left out falls through to the next level (TaintLaunch.Resolve).
type TaintConfig struct {
	Policy  string   `toml:"policy"`
	Private []string `toml:"private"`
}

// CheckTaintPolicy says why p is not a taint policy, or nil. "" is no
// policy given.
func CheckTaintPolicy(p string) error {
	switch p {
	case "", TaintOff, TaintAllow, TaintDeny, TaintAsk:
		return nil
	}
	return fmt.Errorf("%q is not a taint policy: want \"off\", \"allow\", \"deny\" or \"ask\"", p)
}

// TaintLaunch is what the launch says of the taint gate.
type TaintLaunch struct {
	// Config is config.toml's [taint]; nil when it has none.
	Config *TaintConfig
	// Policy is --taint; "" when not given.
	Policy string
	// Unattended says nobody can be asked (`coda run`): `ask` denies,
	// unless Waive (--yes) lets the call through, recorded as a waiver.
	Unattended, Waive bool
}

// Resolve is the taint settings in effect for blueprint b. --taint, the
// user's own word at launch, wins. Otherwise the stricter of config.toml's
// [taint] and the blueprint's [agent.taint] holds (off, allow, ask, deny,
// in that order), and the private paths are both lists together (each
// DefaultPrivate when it names none): a blueprint, which may come from
// anywhere, can tighten the user's settings but never loosen them.
func (l TaintLaunch) Resolve(b *Blueprint) TaintConfig {
	out := TaintConfig{Policy: TaintOff}
	var agent *TaintConfig
	if b != nil {
		agent = b.Agent.Taint
	}
	userPrivate := DefaultPrivate
	if l.Config != nil && l.Config.Private != nil {
		userPrivate = l.Config.Private
	}
	out.Private = append([]string(nil), userPrivate...)
	for _, c := range []*TaintConfig{l.Config, agent} {
		if c != nil && strictness(c.Policy) > strictness(out.Policy) {
			out.Policy = c.Policy
		}
	}
	if agent != nil && agent.Private != nil {
		for _, g := range agent.Private {
			if !slices.Contains(out.Private, g) {
				out.Private = append(out.Private, g)
			}
		}
	}
	if l.Policy != "" {
		out.Policy = l.Policy
	}
	return out
}

// strictness orders the policies from the most lenient ("" and off) to the
// strictest (deny).
func strictness(policy string) int {
	return slices.Index([]string{TaintOff, TaintAllow, TaintAsk, TaintDeny}, policy)
}

// A Source is content of a file that a tool result carries to the model,
// or that the prompt embeds.
type Source struct {
	Path string // absolute
	Text string // what of the file the model is given
}

// An Egress tool can send what a call carries off the machine (a shell
// command, an MCP server's tool): in a tainted run its calls meet the taint
// gate before they run.
type Egress interface {
	Egress() bool
}

// taintState is a run's taint gate: its settings, the private content its
// tools and prompt brought in, and its decisions. nil when the gate is off;
// every method is then a no-op.
type taintState struct {
	policy            string
	paths             *privatePaths
	unattended, waive bool

	mu      sync.Mutex
	sources []string // private sources read so far, by name, in order
	lines   privateLines
	counts  store.TaintCounts
	// declined are the calls the user refused, by sink and payload: the
	// same call again is refused without asking again.
	declined map[uint64]bool
	seed     maphash.Seed
}

// newTaint sets up the gate for a run, or returns nil when it is off.
func newTaint(r *run) *taintState {
	t, launch := r.t, r.e.Taint
	cfg := launch.Resolve(t.Agent)
	if cfg.Policy == TaintOff || CheckTaintPolicy(cfg.Policy) != nil {
		return nil
	}
	var roots []string
	cwd := ""
	if t.Workspace != nil {
		roots, cwd = t.Workspace.Roots(), t.Workspace.Cwd()
	}
	paths, err := newPrivatePaths(cfg.Private, cwd, roots, foldCase)
	if err != nil {
		// Checked at load; if one slips through, guard the defaults.
		r.warn(fmt.Sprintf("taint: %v; guarding the default private paths instead", err))
		paths, _ = newPrivatePaths(DefaultPrivate, cwd, roots, foldCase)
	}
	ts := &taintState{policy: cfg.Policy, paths: paths, unattended: launch.Unattended, waive: launch.Waive, seed: maphash.MakeSeed()}
	ts.read(t.PromptSources)
	return ts
}

// read takes in the private ones of sources. It returns the names of those
// it took, or "" when none was private.
func (ts *taintState) read(sources []Source) string {
	if ts == nil {
		return ""
	}
	var names []string
	for _, s := range sources {
		name, private := ts.paths.private(s.Path)
		if !private {
			continue
		}
		names = append(names, name)
		ts.mu.Lock()
		ts.lines.add(s.Text, ts.source(name))
		ts.mu.Unlock()
	}
	return listNames(names)
}

// carries names the private sources whose content text holds (a worker's
// or child's answer, handed to its parent), or "" when it holds none: so
// the record withholds it as it withholds a tool's reading of them.
func (ts *taintState) carries(text string) string {
	if ts == nil {
		return ""
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var names []string
	for _, i := range ts.lines.find(text) {
		names = appendNew(names, ts.sources[ts.lines.lines[i].source])
	}
	return listNames(names)
}

// source is the index of the source named name, added if new. ts.mu is
// held.
func (ts *taintState) source(name string) int {
	for i, s := range ts.sources {
		if s == name {
			return i
		}
	}
	ts.sources = append(ts.sources, name)
	return len(ts.sources) - 1
}

// A sinkCall is what the gate is asked about.
type sinkCall struct {
	sink    string   // submit_output, or the tool's name
	kind    string   // the call's ACP tool kind
	what    string   // how the model is told of it: "this answer", "this shell call"
	payload []string // what it would send
	carried []string // private files it would send whole (artifacts), by name
	// asks is the call's tool when it asks the user about each call itself
	// (shell, MCP tools), with the call's arguments: `ask` then puts one
	// question that covers both, showing the call with its private content
	// masked.
	asks Tool
	args json.RawMessage
}

// A gateOutcome is the gate's answer to a call: through (and whether by
// waiver, and whether the user approved the call itself), or refused, with
// what the model is told.
type gateOutcome struct {
	allowed, waived, approved bool
	refusal                   string
}

// gate puts a sink call before the policy. A call that carries no private
// content passes without a record.
func (v *stageVisit) gate(ctx context.Context, c sinkCall) gateOutcome {
	ts := v.run.taint
	if ts == nil {
		return gateOutcome{allowed: true}
	}
	ts.mu.Lock()
	found := ts.lines.find(c.payload...)
	unchecked := ts.lines.full && len(found) == 0 && len(ts.sources) > 0
	rec := TaintAudit{Sink: c.sink, Policy: ts.policy, Sources: []string{}, Matches: []string{}, Unchecked: unchecked}
	for _, i := range found {
		l := ts.lines.lines[i]
		rec.Matches = append(rec.Matches, l.masked)
		rec.Sources = appendNew(rec.Sources, ts.sources[l.source])
	}
	if unchecked {
		rec.Sources = append(rec.Sources, ts.sources...)
	}
	ts.mu.Unlock()
	for _, name := range c.carried {
		rec.Sources = appendNew(rec.Sources, name)
	}
	if len(rec.Sources) == 0 {
		return gateOutcome{allowed: true}
	}

	out := gateOutcome{}
	switch {
	case ts.policy == TaintAllow:
		out.allowed, rec.DecidedBy = true, decidedByPolicy
	case ts.policy == TaintDeny:
		rec.DecidedBy = decidedByPolicy
	case ts.unattended && ts.waive:
		out.allowed, out.waived, rec.DecidedBy = true, true, decidedByWaiver
		rec.Reason = "nobody was there to ask, and --yes waived the gate"
	case ts.unattended:
		rec.DecidedBy, rec.Reason = decidedByPolicy, "nobody was there to ask (coda run without --yes)"
	case ts.wasDeclined(c):
		rec.DecidedBy = decidedByUser
	default:
		ok, err := v.run.t.Workspace.RequestPermission(ctx, v.taintRequest(c, rec))
		switch {
		case ctx.Err() != nil:
			rec.DecidedBy, rec.Reason = decidedByPolicy, "the turn was cancelled before the user answered"
		case err != nil:
			rec.DecidedBy, rec.Reason = decidedByPolicy, fmt.Sprintf("the user could not be asked (%v)", err)
		default:
			out.allowed, rec.DecidedBy = ok, decidedByUser
			out.approved = ok && c.asks != nil
			if !ok {
				ts.decline(c)
			}
		}
	}
	rec.Decision = decisionDenied
	if out.allowed {
		rec.Decision = decisionAllowed
	} else {
		out.refusal = refusal(c, rec)
	}
	v.audit(rec, out.waived)
	return out
}

// callKey identifies a call by its sink and what it would send.
func (ts *taintState) callKey(c sinkCall) uint64 {
	var h maphash.Hash
	h.SetSeed(ts.seed)
	h.WriteString(c.sink)
	for _, p := range c.payload {
		h.WriteByte(0)
		h.WriteString(p)
	}
	for _, p := range c.carried {
		h.WriteByte(1)
		h.WriteString(p)
	}
	return h.Sum64()
}

func (ts *taintState) decline(c sinkCall) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.declined == nil {
		ts.declined = map[uint64]bool{}
	}
	ts.declined[ts.callKey(c)] = true
}

func (ts *taintState) wasDeclined(c sinkCall) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.declined[ts.callKey(c)]
}

// Who decided, and what.
const (
	decidedByPolicy = "policy"
	decidedByUser   = "user"
	decidedByWaiver = "waiver"
	decisionAllowed = "allowed"
	decisionDenied  = "denied"
)

// taintRequest is the permission request of `ask`: it names the private
// sources and quotes, masked, the private lines the call carries. A call
// whose tool asks the user itself is shown as that tool shows it, its
// arguments with their private content masked, and the question covers
// the tool's own: one answer for both. Nothing private that the gate
// remembers is in it unmasked.
func (v *stageVisit) taintRequest(c sinkCall, rec TaintAudit) PermissionRequest {
	id := v.callID
	if id == "" {
		id = v.run.e.NewID("t")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s would carry content read from %s.", upperFirst(c.what), privateNames(rec.Sources, false))
	if len(rec.Matches) > 0 {
		b.WriteString("\nPrivate lines in it (masked):")
		for _, m := range rec.Matches {
			b.WriteString("\n  " + m)
		}
	}
	if rec.Unchecked {
		b.WriteString("\nThe run read more private content than coda keeps track of, so it cannot tell which.")
	}
	req := PermissionRequest{
		Key:    TaintPermissionPrefix + c.sink,
		Always: fmt.Sprintf("Always allow %s to carry private content in this session", c.sink),
		ToolCall: ToolCallEvent{
			ID:      id,
			Title:   fmt.Sprintf("Send content read from %s (%s)?", listNames(rec.Sources), c.sink),
			Kind:    c.kind,
			Content: []ToolContent{{Text: b.String()}},
		},
	}
	if c.asks != nil {
		args := v.run.taint.redactArgs(c.args)
		title, locs := titleOf(c.asks, c.sink, args)
		req.Covers = []string{c.sink}
		req.ToolCall.Title = fmt.Sprintf("%s (sends content read from %s)", title, listNames(rec.Sources))
		req.ToolCall.Status, req.ToolCall.RawInput, req.ToolCall.Locations = ToolPending, args, locs
	}
	return req
}

// redactArgs are a call's arguments with their private content masked, to
// show the user.
func (ts *taintState) redactArgs(args json.RawMessage) json.RawMessage {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var v any
	if json.Unmarshal(args, &v) != nil {
		v = string(args)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return ts.lines.redact(v)
		case []any:
			for i, x := range v {
				v[i] = walk(x)
			}
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, x := range v {
				out[ts.lines.redact(k)] = walk(x)
			}
			return out
		}
		return v
	}
	b, err := plainjson.Marshal(walk(v), "")
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return bytes.TrimSpace(b)
}

// refusal is what the model is told of a refused call: which private
// source, which lines (masked), and to go on without them.
func refusal(c sinkCall, rec TaintAudit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s would carry content read from %s, so it ", upperFirst(c.what), privateNames(rec.Sources, true))
	if c.sink == ToolSubmitOutput {
		b.WriteString("was not recorded")
	} else {
		b.WriteString("was not run")
	}
	switch {
	case rec.DecidedBy == decidedByUser:
		b.WriteString(": the user declined it.")
	case rec.Reason != "":
		fmt.Fprintf(&b, ": the taint policy is %s, and %s.", rec.Policy, rec.Reason)
	default:
		fmt.Fprintf(&b, ": the taint policy is %s.", rec.Policy)
	}
	if len(rec.Matches) > 0 {
		fmt.Fprintf(&b, " It contains (masked here): %s.", strings.Join(rec.Matches, "; "))
	}
	if rec.Unchecked {
		b.WriteString(" The run read more private content than coda keeps track of, so no call can be shown to be free of it.")
	}
	if c.sink == ToolSubmitOutput {
		b.WriteString(" Answer without that content.")
	} else {
		b.WriteString(" Do not retry the same call; do without that content.")
	}
	return b.String()
}

// gateAnswer is the gate at the moment a passing submission would be
// recorded. A refused answer becomes a refused verdict, so nothing is
// recorded and the model can submit another; one let through by waiver is
// flagged.
func (v *stageVisit) gateAnswer(ctx context.Context, verdict outputspec.Verdict) outputspec.Verdict {
	ts := v.run.taint
	if ts == nil || !verdict.Accepted || v.run.sub.depth > 0 {
		// A worker's or child's answer goes to its parent, not off the
		// machine: the parent's answer meets the gate.
		return verdict
	}
	c := sinkCall{sink: ToolSubmitOutput, kind: "other", what: "this answer", payload: []string{verdict.Content}}
	cwd := v.run.t.Workspace.Cwd()
	disk := rootfs.Disk{Roots: v.run.t.Workspace.Roots()}
	for _, a := range verdict.Artifacts {
		path := filepath.Join(cwd, filepath.FromSlash(a.Path))
		if name, private := ts.paths.private(path); private {
			c.carried = append(c.carried, name)
			continue
		}
		if a.Size <= maxScannedArtifact {
			if b, err := disk.ReadFile(path); err == nil && bytes.IndexByte(b[:min(len(b), 8<<10)], 0) < 0 {
				c.payload = append(c.payload, string(b))
			}
		}
	}
	out := v.gate(ctx, c)
	if !out.allowed {
		return outputspec.Verdict{Feedback: out.refusal}
	}
	if out.waived {
		verdict.Flags = append(verdict.Flags, FlagTaintWaived)
	}
	return verdict
}

// maxScannedArtifact is the largest artifact whose text the gate reads to
// look for private content; larger ones, and binary ones, are not read.
const maxScannedArtifact = 8 << 20

// gateEgress is the gate before an Egress tool runs. It reports whether the
// call was refused, with the result the model gets; a call the user
// approved in answering the gate's question is marked so (Call.Approved).
func (v *stageVisit) gateEgress(ctx context.Context, tool Tool, call *Call, tc ToolCall, ev *ToolCallEvent) (ToolResult, bool) {
	e, ok := tool.(Egress)
	if v.run.taint == nil || !ok || !e.Egress() {
		return ToolResult{}, false
	}
	c := sinkCall{sink: tc.Name, kind: ev.Kind, what: "this " + tc.Name + " call", payload: argStrings(tc.Arguments)}
	if asksPermission(tool) {
		c.asks, c.args = tool, tc.Arguments
	}
	out := v.gate(ctx, c)
	if out.allowed {
		call.Approved = out.approved
		return ToolResult{}, false
	}
	return ToolResult{Output: out.refusal, IsError: true, Title: ev.Title}, true
}

// argStrings are the strings in a call's JSON arguments: what it would
// send. Arguments that are not JSON are taken whole.
func argStrings(args json.RawMessage) []string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return []string{string(args)}
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for k, x := range v {
				out = append(out, k)
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// listNames names sources for a title or message: at most three, then how
// many more.
func listNames(names []string) string {
	switch n := len(names); {
	case n == 0:
		return ""
	case n <= 3:
		return strings.Join(names, ", ")
	default:
		return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), n-3)
	}
}

// privateNames names private sources in a sentence: all of them, or
// (short) as listNames does.
func privateNames(names []string, short bool) string {
	list := strings.Join(names, ", ")
	if short {
		list = listNames(names)
	}
	if len(names) == 1 {
		return "the private file " + list
	}
	return "the private files " + list
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// checkTaint reports what loading refuses in [agent.taint]: a policy that
// is not one, a private path that is not a glob.
func checkTaint(fs *findings, c *TaintConfig) {
	if c == nil {
		return
	}
	if err := CheckTaintPolicy(c.Policy); err != nil {
		fs.add(SeverityError, CodeBadValue, "agent.taint.policy", "%v", err)
	}
	if err := CheckPrivate(c.Private); err != nil {
		fs.add(SeverityError, CodeBadValue, "agent.taint.private", "%v", err)
	}
}

// lintTaint warns of a gate turned on only to record: `allow` lets every
// call through.
func lintTaint(fs *findings, b *Blueprint) {
	if c := b.Agent.Taint; c != nil && c.Policy == TaintAllow {
		fs.add(SeverityWarning, CodeTaintAllow, "agent.taint.policy", "\"allow\" lets private content through every answer, shell command and MCP call; it only records them in taint_audit.json: say \"ask\" or \"deny\" to guard them")
	}
}
