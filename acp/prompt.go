package acp

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/coda-acp/coda/acp/history"
	"github.com/coda-acp/coda/acp/pickers"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/internal/telemetry"
)

// prompt starts a turn. It registers the turn's cancel func before the
// turn's goroutine starts, so a session/cancel read right after this
// message always finds it. The turn answers the request when it ends.
func (s *Server) prompt(ctx context.Context, r *request[promptResponse], p *promptRequest) (*promptResponse, error) {
	sess, err := s.session(*p.SessionID)
	if err != nil {
		return nil, err
	}
	text, images, err := s.readPrompt(p)
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	busy := sess.running != nil || sess.starting || len(sess.queue) > 0
	sess.mu.Unlock()
	if busy {
		// Answered after the turn before it, or joins it (queue.go).
		return s.prompts.queue(r, sess, p)
	}
	if name, arg, ok := parseCommand(p.Prompt); ok {
		if id := commandOptions[name]; arg != "" && s.readsFiles(sess, id, arg) {
			// Off the read loop, as set_config_option's would be.
			return sessionAside(ctx, s, r, sess.id, func(context.Context) (*promptResponse, error) { return s.runCommand(sess, name, arg), nil })
		}
		return s.runCommand(sess, name, arg), nil
	}
	return s.beginTurn(r, sess, p, text, images)
}

// startDequeued handles a prompt that waited for its session's turn as
// prompt would have, now that the session is free (queue.go). It runs off
// the read loop already: a command that reads files runs where it is.
func (s *Server) startDequeued(r *request[promptResponse], p *promptRequest) (*promptResponse, error) {
	sess, err := s.session(*p.SessionID)
	if err != nil {
		return nil, err
	}
	text, images, err := s.readPrompt(p)
	if err != nil {
		return nil, err
	}
	if name, arg, ok := parseCommand(p.Prompt); ok {
		return s.runCommand(sess, name, arg), nil
	}
	return s.beginTurn(r, sess, p, text, images)
}

// readPrompt is a prompt's text (an agent's command expanded) and images.
func (s *Server) readPrompt(p *promptRequest) (string, []llm.Image, error) {
	text, err := renderPrompt(p.Prompt)
	if err != nil {
		return "", nil, err
	}
	if expanded, ok := agentCommand(s.opts.Agent, p.Prompt); ok {
		text = expanded
	}
	images, err := promptImages(p.Prompt)
	if err != nil {
		return "", nil, err
	}
	return text, images, nil
}

// beginTurn starts the turn of a prompt whose session is free.
func (s *Server) beginTurn(r *request[promptResponse], sess *session, p *promptRequest, text string, images []llm.Image) (*promptResponse, error) {
	sess.mu.Lock()
	outs := sess.outputs
	history := append([]engine.Exchange(nil), sess.history...)
	sess.mu.Unlock()
	thoughts, err := s.commentaryAsThought(sess, p.Meta)
	if err != nil {
		return nil, err
	}
	var compile func() (*blueprint.Outputs, error) // the turn's, off the read loop
	if raw := p.Meta.output(); raw != nil {
		// A per-turn spec: the session's contracts, recompiled with it.
		if err := s.out.Shapes("_meta.coda.output"); err != nil {
			return nil, err
		}
		levels := s.out.Levels(sess.meta, sess.config)
		compile = func() (*blueprint.Outputs, error) {
			var err error
			if levels.PromptMeta, err = s.out.MetaLevel(raw, sess.cwd); err != nil {
				return nil, err
			}
			return s.out.Compile(levels)
		}
		if !s.out.ReadsFiles(raw) && !s.out.ReadsFiles(sess.metaRaw) {
			if outs, err = compile(); err != nil {
				return nil, err
			}
			compile = nil
		}
		// Else the files it reads are read by the turn, and its failure
		// answers the prompt.
	}

	ctx, cancel, err := r.Begin()
	if err != nil {
		return nil, err
	}
	traceparent, tracestate := p.Meta.trace()
	ctx = telemetry.WithParent(ctx, traceparent, tracestate) // the turn's span's parent
	// Answered by the turn when it ends.
	answer := r.Keep()
	run := &running{cancel: cancel, done: make(chan struct{}), prompt: p.Prompt, id: jsonrpc.KeyOf(r.ID()), steer: &steerBox{}}
	sess.mu.Lock()
	sess.running, sess.answering, sess.starting = run, true, false
	sess.mu.Unlock()
	s.prompts.add(run.id, sess)

	// What this prompt is; the rest is the engine's (Options.Engine).
	picks := sess.picks()
	turn := &engine.Turn{
		RunID: s.opts.Engine.NewID("r"), SessionID: sess.id, Agent: s.opts.Agent, Outputs: outs,
		Prompt: text, Images: images, History: history, PromptSources: promptSources(p.Prompt),
		UserModel: s.pick.UserModel(picks), DefaultModel: s.pick.Default(false), UserEffort: s.pick.UserEffort(picks),
		Withhold: pickers.Withhold(picks.Mode), Workspace: sess.ws, ToolSupport: sess.toolSupport,
		Tainted: sess.tainted(), Steer: run.steer.take, ClientGone: s.conn.Gone, Private: sess.private,
	}
	go s.runTurn(ctx, run, answer, sess, turn, thoughts, compile)
	return nil, nil
}

// runTurn runs a prompt turn and answers the prompt, whatever happens.
// compile, when not nil, gives the turn's contracts (a per-turn spec that
// names files, read here rather than on the read loop).
func (s *Server) runTurn(ctx context.Context, r *running, answer answer[promptResponse], sess *session, turn *engine.Turn, commentAsThought bool, compile func() (*blueprint.Outputs, error)) {
	// After the answer: a session/close waiting for this turn answers;
	// then, once the answer is out to the client, the run's record is
	// finished and the session index's line written (not on the answer's
	// path: the session's file is, saveTurn); then the connection stops
	// owing this answer, so coda never exits before a record is whole.
	defer s.conn.End()
	defer s.prompts.next(sess) // the prompt queued behind this one, once it is answered
	var res *engine.Result
	// The prompts that joined the turn are answered after it, with its
	// stop reason; those it did not read wait in the queue (queue.go).
	defer func() {
		stop := "cancelled"
		if res != nil && res.Err == nil {
			stop = res.StopReason
		}
		s.prompts.steered(sess, r.steer, turn.RunID, stop)
	}()
	defer func() {
		if res != nil {
			s.conn.Sent()
			res.Recorded()
		}
		s.load.store.Flush() // the index's line of the turn's append
	}()
	defer close(r.done)
	defer s.answered(sess) // after the prompt's answer: what waited for it (listed.go)
	// release frees the session for its next prompt. It runs before the
	// reply is written, so a client that sends the next prompt as soon as it
	// reads the reply never finds the session busy.
	release := func() {
		r.cancel()
		sess.mu.Lock()
		sess.running = nil
		sess.mu.Unlock()
		s.prompts.forget(r.id)
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in a prompt turn", "session", sess.id, "run", turn.RunID, "panic", p, "stack", string(debug.Stack()))
			release()
			answer.FailWith(jsonrpc.CodeInternalError, fmt.Sprintf("internal error: the turn failed inside coda (%v); the session is still usable", p), turnPanicked{RunID: turn.RunID})
		}
	}()
	sink := &updateSink{out: s.conn, sessionID: sess.id, cwd: sess.cwd, compaction: s.caps.Compaction(), seen: sess.turnNotices(s.caps.Notices()), commentAsThought: commentAsThought, spent: &sess.spent}
	if s.load.keeps() {
		sink.streamed = history.NewStreamed(appendTextChunk)
	}
	if compile != nil {
		outs, err := compile()
		if err != nil {
			release()
			answer.Fail(err)
			return
		}
		turn.Outputs = outs
	}
	if err := s.startTurn(sess, turn, r.prompt); err != nil {
		release()
		answer.Fail(err)
		return
	}
	s.load.catchUp(sess, turn)
	sess.mcpTurn(ctx, s.opts.Agent, s.opts.Engine, turn, sink)
	// What the turn is given to warn of (a retired check of the prompt's
	// spec, MCP servers), noticed as it starts.
	if turn.Outputs != nil {
		_ = sink.noticeAll(turn.Outputs.Warnings)
	}
	_ = sink.noticeAll(turn.Warnings)
	res = s.opts.Engine.Run(ctx, turn, sink)
	sess.spent.add(res.Usage)

	ex := res.Exchange(turn) // masked, with its transcript (engine/transcript.go)
	if res.Status != engine.StatusCancelled {
		sess.remember(ex, res.HistoryCut)
	}
	sess.taintedBy(res.Tainted)
	release()
	if w := s.load.saveTurn(sess, r.prompt, res.RunID, ex, sink.streamed.Updates(res.Mask), history.MaskUpdates(sink.closing, res.Mask), res.Status, res.ClientGone || s.conn.Gone()); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	// What arose after the closing chunk (the record or the session's file
	// not written) is noticed before the response.
	_ = sink.noticeAll(res.Warnings)
	// Without an answer, finalOutput is null, and noAnswer says why.
	coda := promptOutcome{
		RunID: res.RunID, Status: res.Status, Flags: nonNilStrings(res.Flags), Warnings: res.Warnings,
		FinalOutput: res.Answer, NoAnswer: res.NoAnswer, Unavailable: res.Unavailable,
	}
	// A failed run (a model or coda failed, a fan_out under
	// on_worker_failure = "fail") is an error: ACP v1 has no stop reason
	// for it, and end_turn would tell the client the model finished. The
	// error's data is the _meta.coda a response would carry, and the
	// no_answer chunk before it says why in the conversation.
	if res.Err != nil && !errors.Is(res.Err, context.Canceled) {
		s.log.Error("turn failed", "session", sess.id, "run", res.RunID, "err", res.Err)
		answer.FailWith(jsonrpc.CodeInternalError, "the turn failed: "+res.Err.Error(), coda)
		return
	}
	answer.Reply(&promptResponse{StopReason: res.StopReason, Meta: codaMeta[promptOutcome]{Coda: coda}, Usage: usageOf(res.Usage)})
}

// renderPrompt turns the prompt's content blocks into the text the model
// reads.
func renderPrompt(blocks []contentBlock) (string, error) {
	var b strings.Builder
	for i, c := range blocks {
		if c.Type == "image" {
			continue // beside the text: promptImages
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		switch c.Type {
		case "text":
			b.WriteString(c.Text)
		case "resource_link":
			if c.URI == "" {
				return "", fmt.Errorf("%w: prompt[%d].uri is required", ErrInvalidParams, i)
			}
			fmt.Fprintf(&b, "[The user attached %s", c.URI)
			if c.Name != "" && !strings.HasSuffix(c.URI, c.Name) {
				fmt.Fprintf(&b, " (%s)", c.Name)
			}
			b.WriteString(": read it with your tools if you need it.]")
		case "resource":
			r := c.Resource
			if r == nil || r.URI == "" {
				return "", fmt.Errorf("%w: prompt[%d].resource.uri is required", ErrInvalidParams, i)
			}
			switch {
			case r.Text != nil:
				// Data the user attached, not their words: framed as data.
				b.WriteString(engine.Frame("resource "+r.URI, *r.Text))
			default:
				fmt.Fprintf(&b, "[The user attached %s, a binary resource (%s) coda cannot read.]", r.URI, r.MimeType)
			}
		case "audio":
			return "", fmt.Errorf("%w: prompt[%d]: coda does not take %s content (promptCapabilities.%s is false)", ErrInvalidParams, i, c.Type, c.Type)
		case "":
			return "", fmt.Errorf("%w: prompt[%d].type is required", ErrInvalidParams, i)
		default:
			return "", fmt.Errorf("%w: prompt[%d].type: unknown content type %q", ErrInvalidParams, i, c.Type)
		}
	}
	return b.String(), nil
}
