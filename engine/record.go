package engine

import (
	"fmt"
	"io"
	"strings"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/bytesize"
	"github.com/coda-acp/coda/internal/prices"
	"github.com/coda-acp/coda/internal/textcut"
	"github.com/coda-acp/coda/store"
)

// What a run writes into its record (DESIGN §9). The store lays the
// record out and writes it (store.Run: in the background, in order, each
// file atomically); the engine says what goes in it: run.json from the
// run's Result, and per stage visit the prompt as sent, the model's
// responses and the tools' results, its status, and its texts whole
// (runfs.go).

// newRecord begins the record of r, the turn's own run.
func newRecord(r *run) *store.Run { return r.e.Store.NewRun(recordHead(r), r.log) }

// subRecord begins the record of a worker or child r, nested in its
// parent's and written by its writer, in order.
func subRecord(parent, r *run) *store.Run { return parent.rec.Sub(recordHead(r), r.log) }

// recordHead is what run.json says of r's run from start to end: its
// prompt masked, as a private resource embedded in it would otherwise be
// in clear.
func recordHead(r *run) store.RunRecord {
	t := r.t
	model := t.UserModel
	if model == "" {
		model = t.DefaultModel
	}
	return store.RunRecord{RunID: t.RunID, Agent: t.Agent.Agent.Name, Session: t.SessionID, Prompt: r.mask(t.Prompt), Model: model}
}

// finishRecord writes run.json as res says the run ended, and returns it.
func finishRecord(rec *store.Run, res *Result) *store.RunRecord {
	rr := &store.RunRecord{Status: res.Status, StopReason: res.StopReason, Flags: res.Flags, Warnings: res.Warnings, FinalOutput: res.Answer, Files: maskFiles(res.Written, res.secrets.Mask),
		Workers: res.Workers, Children: res.Children, Taint: res.Taint,
		NoAnswer: res.NoAnswer, Unavailable: res.Unavailable, ClientGone: res.ClientGone}
	// A copy: a pointer into res would keep the whole Result (its last
	// reply, megabytes) alive as long as the record is.
	usage := res.Usage
	rr.Usage = &usage
	if res.Err != nil {
		rr.Error = res.Err.Error()
	}
	rec.Finish(rr)
	return rr
}

// stageStatus is a stage visit's status.json.
type stageStatus struct {
	Stage      string `json:"stage"`
	Visit      int    `json:"visit"`
	Iterations int    `json:"iterations"`
	Revisits   int    `json:"revisits"`
	Repairs    int    `json:"repairs"` // refused submissions (repair.go)
	// Outcome is how the visit ended (outcome.go): transition, done,
	// answered, replied, ..., or the flag that ended it
	// (max_iterations_hit, output_forced); Transition the stage it went on
	// to, whichever way ("" when the run ended there).
	Outcome    string `json:"outcome"`
	Transition string `json:"transition,omitempty"`
	// Model is the model that last answered; Usage the tokens of all the
	// visit's calls.
	Model string    `json:"model,omitempty"`
	Usage llm.Usage `json:"usage"`
	// Cost is what the visit's calls cost; absent while the price of a
	// model it called is unknown, which Unpriced names (usage.go).
	Cost     *prices.Cost `json:"cost,omitempty"`
	Unpriced []string     `json:"unpriced,omitempty"`
	// HistoryNotShown counts the session's earlier turns cut from what
	// the visit was sent (history.go).
	HistoryNotShown int `json:"historyNotShown,omitempty"`
	// Compactions are the visit's cuts to fit the model's window, a line
	// each (compact.go).
	Compactions []string `json:"compactions,omitempty"`
	Error       string   `json:"error,omitempty"`
	Answered    bool     `json:"answered"`
	Files       []string `json:"filesWritten"`
	// FilesPartial says the roots held more than a snapshot walks
	// (touched.go): files a shell command or an MCP tool touched past
	// them are not in Files.
	FilesPartial bool `json:"filesPartial,omitempty"`
	// Capture is what the answer's capture globs kept and skipped, and
	// why (capture.go); absent without them.
	Capture *captureStatus `json:"capture,omitempty"`
	Calls   []callUsage    `json:"calls"`
	Tools   []toolUse      `json:"tools"`
	// SchemaSent names the file that keeps the projections of the
	// answer's schema the visit sent (shape_record.go).
	SchemaSent string `json:"schemaSent,omitempty"`
}

// callUsage records one model call.
type callUsage struct {
	Model      string    `json:"model"`
	StopReason string    `json:"stopReason"`
	Usage      llm.Usage `json:"usage"`
	// Cost is what the call cost; absent when its model's price is not
	// known.
	Cost *prices.Cost `json:"cost,omitempty"`
	// Shape is how the call asked for the answer's shape (shape_record.go).
	Shape *callShape `json:"shape,omitempty"`
}

// toolUse records one tool call.
type toolUse struct {
	Name  string `json:"name"`
	Error bool   `json:"error"`
}

// visitRecord records one stage visit.
type visitRecord struct {
	*store.Visit
	status stageStatus
	// resp is response.md in pieces: the model's text is kept by
	// reference, not copied, since a streamed reply can be megabytes.
	resp []string
	// earlier are the session's earlier turns the visit's first message
	// carries (stage.go's prepare), and history that message's text of
	// them (historyText), which prompt.md writes with each turn that has a
	// run id named by it.
	earlier []Exchange
	history string
	// shown counts the messages of earlier turns before the visit's own,
	// where the turns are sent as their transcripts (transcript.go):
	// prompt.md writes them as historyText does instead.
	shown int
	// audit is the taint gate's decisions in this visit, as
	// taint_audit.json lists them (taint.go). Only the visit's own
	// goroutine touches it; WriteAudit encodes it when queued.
	audit []taint.Audit
	// mask masks what the turn read of private files (run.mask), in
	// every text the record keeps.
	mask func(string) string
	// sent are the projections of the answer's schema the visit sent.
	sent []schemaSent
	// cuts counts the tool results cut to fit the window that the record
	// keeps (compact.go's keepCut).
	cuts int
	// spent is the visit's calls' tokens and cost (usage.go).
	spent spend
}

func newVisitRecord(rec *store.Run, stage string, n int, mask func(string) string) *visitRecord {
	return &visitRecord{Visit: rec.Visit(stage, n), mask: mask, status: stageStatus{Stage: stage, Visit: n, Outcome: "running", Calls: []callUsage{}, Tools: []toolUse{}}}
}

// call records a model call: the prompt as sent (written at the first
// call) and the response, kept until the visit ends.
func (vr *visitRecord) call(model string, req *llm.Request, resp *llm.Response, shape *callShape) {
	if vr.Dir() == "" {
		return
	}
	if len(vr.status.Calls) == 0 {
		system, msgs, earlier, history, mask := req.System, req.Messages, vr.earlier, vr.history, vr.mask
		if vr.shown > 0 && vr.shown <= len(msgs) && len(earlier) > 0 {
			msgs = append([]llm.Message{{Role: llm.RoleUser, Text: historyText(earlier, true)}}, msgs[vr.shown:]...)
			history = ""
		}
		vr.WritePrompt(func(w io.Writer) error {
			return writePrompt(w, system, msgs, earlier, history, mask)
		})
	}
	vr.status.Calls = append(vr.status.Calls, callUsage{Model: model, StopReason: resp.StopReason, Usage: resp.Usage, Shape: shape})
	vr.resp = append(vr.resp, fmt.Sprintf("## Call %d\n\n", len(vr.status.Calls)))
	if resp.Thinking != "" {
		vr.resp = append(vr.resp, "Thinking:\n\n")
		vr.resp = append(append(vr.resp, keptReply(resp.Thinking, vr.mask)...), "\n\n")
	}
	if resp.Text != "" {
		vr.resp = append(append(vr.resp, keptReply(resp.Text, vr.mask)...), "\n\n")
	}
	for _, tc := range resp.ToolCalls {
		vr.resp = append(vr.resp, vr.mask(fmt.Sprintf("Tool call %s: %s\n\n", tc.Name, shownArgs(tc))))
	}
}

// keptReply is clipReply of mask(s) in pieces, copying nothing of s that
// it need not: the head kept is a piece of s itself (or of its masked
// copy, where mask changed it), then the note. The reply is held by the
// visit's conversation while the record waits to be written, so the
// record costs no more than the note; a clip copied out of it held up to
// 1 MiB more of each text beside the reply (issue 32, case 13). Only the
// head is masked, with a margin so that a secret across the cut is found
// whole: a reply of megabytes is not folded and searched whole for a
// record that keeps its first one.
func keptReply(s string, mask func(string) string) []string {
	if len(s) <= maxKeptReply {
		return []string{mask(s)}
	}
	head := mask(textcut.At(s, maxKeptReply+keptMargin))
	note := fmt.Sprintf("\n[… about %d more bytes of this reply were not kept]", len(s)-maxKeptReply)
	head = textcut.At(head, maxKeptReply-len(note))
	return []string{head, note}
}

// keptMargin is how far past the record's clip keptReply masks: more than
// any secret the gate masks is long.
const keptMargin = 4 << 10

// clipReply is what the record keeps of a model's text: at most
// maxKeptReply bytes of it, saying how much more there was. A model can
// stream megabytes; 64 fan_out workers doing so wrote gigabytes.
func clipReply(s string) string {
	if len(s) <= maxKeptReply {
		return s
	}
	return textcut.Noted(s, maxKeptReply, func(n int) string {
		return fmt.Sprintf("\n[… %d more bytes of this reply were not kept]", n)
	})
}

// writePrompt writes prompt.md: the system prompt and the messages as
// sent, except that an earlier turn of the session with a run id is named
// by it, not written out again (historyText): its own record has it whole,
// and a long session would otherwise rewrite its whole history at every
// turn. history is the first message's text of the earlier turns.
func writePrompt(w io.Writer, system string, msgs []llm.Message, earlier []Exchange, history string, mask func(string) string) error {
	fmt.Fprintf(w, "# System\n\n%s\n", mask(system))
	for i, m := range msgs {
		text := m.Text
		if rest, ok := strings.CutPrefix(text, history); ok && i == 0 && history != "" && len(earlier) > 0 {
			text = historyText(earlier, true) + rest
		}
		fmt.Fprintf(w, "\n# %s\n\n%s\n", m.Role, mask(text))
		for _, im := range m.Images {
			fmt.Fprintf(w, "\n[image %s, %s]\n", im.MIMEType, bytesize.Format(len(im.Data)))
		}
	}
	return nil
}

// steered records what the user sent to steer the turn (Turn.Steer), in
// response.md before the call that read it.
func (vr *visitRecord) steered(text string) {
	if vr.Dir() != "" {
		vr.resp = append(vr.resp, "The user steered the turn:\n\n"+clipReply(vr.mask(text))+"\n\n")
	}
}

// compacted records a compaction: its line in status.json, and in
// response.md before the call it made fit.
func (vr *visitRecord) compacted(line string) {
	vr.status.Compactions = append(vr.status.Compactions, line)
	if vr.Dir() != "" {
		vr.resp = append(vr.resp, "Compaction: "+line+"\n\n")
	}
}

func (vr *visitRecord) tool(tc llm.ToolCall, res ToolResult) {
	vr.status.Tools = append(vr.status.Tools, toolUse{Name: tc.Name, Error: res.IsError})
	if vr.Dir() != "" {
		out := res.Output
		if res.private != "" {
			out = "[withheld from the record: this result carries content of " + res.private + ", private under the taint gate]"
		}
		head := "Result of " + tc.Name + ":\n\n"
		if res.IsError {
			head = "Result of " + tc.Name + " (error):\n\n"
		}
		vr.resp = append(vr.resp, head, vr.mask(out), "\n\n")
	}
}

func (vr *visitRecord) finish(v *stageVisit, err error) {
	vr.status.Iterations, vr.status.Revisits, vr.status.Repairs = v.iterations, v.rep.nudgesSent(), v.rep.refused
	vr.status.Answered = v.submitted != nil
	vr.status.Files = nonNil(maskFiles(v.written, vr.mask))
	vr.status.Outcome, vr.status.Transition = v.ended, v.next
	vr.status.Model, vr.status.Usage = v.model, v.usage
	vr.status.Cost, vr.status.Unpriced = vr.costs()
	if err != nil {
		vr.status.Error = err.Error()
	}
	if vr.Dir() != "" {
		resp := vr.resp
		vr.WriteResponse(func(w io.Writer) error {
			for _, s := range resp {
				if _, err := io.WriteString(w, s); err != nil {
					return err
				}
			}
			return nil
		})
		vr.WriteStatus(&vr.status)
		vr.writeTexts(v)
	}
}
