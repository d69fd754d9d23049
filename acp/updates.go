package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/coda-acp/coda/acp/history"
	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/jsonrpc"
	statestore "github.com/coda-acp/coda/store"
)

// updateSink turns engine events into session/update notifications,
// encoded by hand: a streamed chunk costs one append pass and no
// allocation beyond the reused buffer.
type updateSink struct {
	out       *jsonrpc.Conn
	sessionID string
	buf       []byte
	// Workspace root, for artifact URIs.
	cwd string
	// updateAt is where the line being built has its update object.
	updateAt int
	// closing are the update objects of the chunks the turn closed with
	// (finalAnswer's, noAnswer's), as they were sent: the session's file
	// keeps them for session/load to replay.
	closing [][]byte
	// compaction is set when the client advertised session.compaction:
	// the engine's compactions go to it as compaction_update (otherwise
	// they are warnings alone).
	compaction bool
	// seen are the warnings noticed (notices.go): nil when the client
	// takes no notices.
	seen map[string]bool
	// commentAsThought streams the model's commentary as
	// agent_thought_chunk: the turn's answer is then its only message
	// (commentary.go).
	commentAsThought bool
	// streamed keeps the text chunks sent, for the session's file
	// (streamed.go): session/load replays them. Nil keeps none.
	streamed *history.Streamed
	// spent is what the session's earlier turns cost, for usage_update's
	// cost (usage.go); nil counts none.
	spent *sessionSpend
}

func (k *updateSink) Emit(_ context.Context, ev engine.Event) error {
	switch ev.Kind {
	case engine.EventText:
		if k.commentAsThought {
			return k.chunk("agent_thought_chunk", ev.MessageID, ev.Text, ev.Stage)
		}
		return k.chunk("agent_message_chunk", ev.MessageID, ev.Text, ev.Stage)
	case engine.EventThought:
		return k.chunk("agent_thought_chunk", ev.MessageID, ev.Text, ev.Stage)
	case engine.EventToolCall:
		return k.toolCall("tool_call", ev.ToolCall)
	case engine.EventToolCallUpdate:
		return k.toolCall("tool_call_update", ev.ToolCall)
	case engine.EventPlan:
		return k.plan(ev.Plan)
	case engine.EventUsage:
		return k.usage(ev.Usage, ev.Spent)
	case engine.EventFinalAnswer:
		return k.finalAnswer(ev)
	case engine.EventNoAnswer:
		return k.noAnswer(ev)
	case engine.EventCompaction:
		if k.compaction {
			return k.compacted(ev)
		}
	case engine.EventWarning:
		return k.notice(ev.Text)
	}
	return nil
}

// compacted sends a compaction the engine made to fit the model's window
// (engine/compact.go) as ACP's compaction_update: finished as it is
// announced, its record line the summary.
func (k *updateSink) compacted(ev engine.Event) error {
	b := k.begin("compaction_update")
	b = append(b, `,"compactionId":`...)
	b = jsonrpc.AppendString(b, ev.MessageID)
	b = append(b, `,"status":"completed","summary":[{"type":"text","text":`...)
	b = jsonrpc.AppendString(b, ev.Text)
	b = append(b, `}],"_meta":{"coda":{"stage":`...)
	b = jsonrpc.AppendString(b, ev.Stage)
	b = append(b, "}}"...)
	return k.end(b)
}

// begin starts a session/update notification up to its update object's
// first field.
func (k *updateSink) begin(kind string) []byte {
	b := appendUpdateHead(k.buf[:0], k.sessionID)
	k.updateAt = len(b)
	b = append(b, `{"sessionUpdate":"`...)
	b = append(b, kind...)
	return append(b, '"')
}

// appendUpdateHead appends a session/update notification up to its update
// object: the envelope every session/update line shares.
func appendUpdateHead(b []byte, sessionID string) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`...)
	b = jsonrpc.AppendString(b, sessionID)
	return append(b, `,"update":`...)
}

// send writes one notification. A client that is gone (the write failed)
// does not stop the turn: it runs on to its answer, which is recorded and
// appended to the session for a later session/load (DESIGN §21); so the
// sink never fails the engine.
func (k *updateSink) send(b []byte) error {
	_ = k.out.Write(b)
	return nil
}

// end closes the notification and writes it.
func (k *updateSink) end(b []byte) error {
	b = append(b, "}}}"...)
	k.buf = b
	return k.send(b)
}

// endClosing is end for a chunk the turn closes with: its update object is
// kept in closing too. The streamed chunks never come here, so they cost
// nothing for it.
func (k *updateSink) endClosing(b []byte) error {
	err := k.end(b)
	k.closing = append(k.closing, bytes.Clone(k.buf[k.updateAt:len(k.buf)-2]))
	return err
}

// chunk sends a streamed text chunk, and keeps it for the session's file
// when the sink keeps what the turn streams (streamed.go).
func (k *updateSink) chunk(kind, messageID, text, stage string) error {
	b := appendTextChunk(appendUpdateHead(k.buf[:0], k.sessionID), kind, messageID, text, stage)
	b = append(b, "}}"...)
	k.buf = b
	if k.streamed != nil {
		k.streamed.Add(kind, messageID, stage, text)
	}
	return k.send(b)
}

// appendTextChunk appends the update object of a streamed text chunk:
// kind (agent_message_chunk, agent_thought_chunk), its message, its text
// and _meta.coda's phase and stage.
func appendTextChunk(b []byte, kind, messageID, text, stage string) []byte {
	b = append(b, `{"sessionUpdate":"`...)
	b = append(b, kind...)
	b = append(b, `","messageId":`...)
	b = jsonrpc.AppendString(b, messageID)
	b = append(b, `,"content":{"type":"text","text":`...)
	b = jsonrpc.AppendString(b, text)
	b = append(b, `},"_meta":{"coda":{"phase":"commentary","stage":`...)
	b = jsonrpc.AppendString(b, stage)
	return append(b, "}}}"...)
}

func (k *updateSink) toolCall(kind string, tc *engine.ToolCallEvent) error {
	b := append(k.begin(kind), ',')
	return k.end(appendToolCallFields(b, tc))
}

// toolCallObject is the ToolCallUpdate a permission request shows, encoded
// as session/update encodes tool calls (editor.Options.ToolCall).
func toolCallObject(tc *engine.ToolCallEvent) json.RawMessage {
	b := appendToolCallFields([]byte{'{'}, tc)
	return append(b, '}')
}

// appendToolCallFields appends a tool call's fields, as ACP's ToolCall and
// ToolCallUpdate spell them, without the braces: a session/update puts
// them beside sessionUpdate, a permission request in an object of its own.
func appendToolCallFields(b []byte, tc *engine.ToolCallEvent) []byte {
	b = append(b, `"toolCallId":`...)
	b = jsonrpc.AppendString(b, tc.ID)
	if tc.Title != "" {
		b = append(b, `,"title":`...)
		b = jsonrpc.AppendString(b, tc.Title)
	}
	if tc.Name != "" {
		b = append(b, `,"name":`...)
		b = jsonrpc.AppendString(b, tc.Name)
	}
	if tc.Kind != "" {
		b = append(b, `,"kind":`...)
		b = jsonrpc.AppendString(b, tc.Kind)
	}
	if tc.Status != "" {
		b = append(b, `,"status":`...)
		b = jsonrpc.AppendString(b, tc.Status)
	}
	if tc.RawInput != nil {
		// The model wrote these arguments: re-encoded compactly, so its
		// whitespace cannot split the message over lines.
		b = append(b, `,"rawInput":`...)
		b = jsonrpc.AppendCompact(b, tc.RawInput)
	}
	if len(tc.Locations) > 0 {
		b = append(b, `,"locations":[`...)
		for i, l := range tc.Locations {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"path":`...)
			b = jsonrpc.AppendString(b, l.Path)
			if l.Line > 0 {
				b = append(b, `,"line":`...)
				b = appendInt(b, int64(l.Line))
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(tc.Content) > 0 {
		b = append(b, `,"content":[`...)
		for i, c := range tc.Content {
			if i > 0 {
				b = append(b, ',')
			}
			switch {
			case c.Diff != nil:
				b = append(b, `{"type":"diff","path":`...)
				b = jsonrpc.AppendString(b, c.Diff.Path)
				b = append(b, `,"oldText":`...)
				if c.Diff.OldText == nil {
					b = append(b, "null"...)
				} else {
					b = jsonrpc.AppendString(b, *c.Diff.OldText)
				}
				b = append(b, `,"newText":`...)
				b = jsonrpc.AppendString(b, c.Diff.NewText)
				b = append(b, '}')
			case c.TerminalID != "":
				b = append(b, `{"type":"terminal","terminalId":`...)
				b = jsonrpc.AppendString(b, c.TerminalID)
				b = append(b, '}')
			default:
				b = append(b, `{"type":"content","content":{"type":"text","text":`...)
				b = jsonrpc.AppendString(b, c.Text)
				b = append(b, "}}"...)
			}
		}
		b = append(b, ']')
	}
	return b
}

// planContent is what the editor shows of a plan entry: the stage, and
// the files it touched, "review (wrote 2 files: a.go, b.go)".
func planContent(e engine.PlanEntry) string {
	switch n := len(e.Files); {
	case n == 0:
		return e.Content
	case n == 1:
		return e.Content + " (wrote " + e.Files[0] + ")"
	case n <= 3:
		return fmt.Sprintf("%s (wrote %d files: %s)", e.Content, n, strings.Join(e.Files, ", "))
	default:
		return fmt.Sprintf("%s (wrote %d files: %s and %d more)", e.Content, n, strings.Join(e.Files[:3], ", "), n-3)
	}
}

func (k *updateSink) plan(entries []engine.PlanEntry) error {
	b := k.begin("plan")
	b = append(b, `,"entries":[`...)
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"content":`...)
		b = jsonrpc.AppendString(b, planContent(e))
		b = append(b, `,"priority":"medium","status":`...)
		b = jsonrpc.AppendString(b, e.Status)
		if len(e.Files) > 0 {
			// Every file the stage touched; the content names a few.
			b = append(b, `,"_meta":{"coda":{"files":[`...)
			for i, f := range e.Files {
				if i > 0 {
					b = append(b, ',')
				}
				b = jsonrpc.AppendString(b, f)
			}
			b = append(b, `]}}`...)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	return k.end(b)
}

// usage reports the context window in use, when the model's size is known,
// and what the session has cost so far (turn: the turn's calls so far;
// usage.go): ACP's usage_update requires the size, so a model whose window
// is unknown sends none, its cost on the prompt's response alone.
func (k *updateSink) usage(u *llm.Usage, turn *statestore.Spend) error {
	if u == nil || u.ContextWindow <= 0 {
		return nil
	}
	b := k.begin("usage_update")
	b = append(b, `,"used":`...)
	b = appendInt(b, int64(u.InputTokens+u.OutputTokens))
	b = append(b, `,"size":`...)
	b = appendInt(b, int64(u.ContextWindow))
	cost, unpriced := k.spent.with(turn)
	if cost != nil {
		b = appendCost(append(b, `,"cost":`...), cost)
	}
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 || len(unpriced) > 0 {
		b = append(b, `,"_meta":{"coda":{`...)
		if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
			// The prompt cache's share of the call (DESIGN §16: Anthropic's
			// caching, Gemini's and OpenAI's cached tokens), which ACP's
			// usage_update has no field for.
			b = append(b, `"cacheReadTokens":`...)
			b = appendInt(b, int64(u.CacheReadTokens))
			b = append(b, `,"cacheWriteTokens":`...)
			b = appendInt(b, int64(u.CacheWriteTokens))
			if len(unpriced) > 0 {
				b = append(b, ',')
			}
		}
		if len(unpriced) > 0 {
			b = appendUnknownCost(b, unpriced)
		}
		b = append(b, "}}"...)
	}
	return k.end(b)
}

// finalAnswer sends the closing answer: one agent_message_chunk with its
// own messageId carrying the answer's bytes, then one resource_link chunk
// per artifact with the same messageId.
func (k *updateSink) finalAnswer(ev engine.Event) error {
	a := ev.Answer
	// Its warnings not noticed yet come first: nothing follows the answer.
	if err := k.noticeAll(a.Warnings); err != nil {
		return err
	}
	b := k.begin("agent_message_chunk")
	b = append(b, `,"messageId":`...)
	b = jsonrpc.AppendString(b, ev.MessageID)
	b = append(b, `,"content":{"type":"text","text":`...)
	b = jsonrpc.AppendString(b, a.Content)
	b = append(b, `},"_meta":{"coda":{"phase":"final_answer","format":`...)
	b = jsonrpc.AppendString(b, a.Format)
	b = append(b, `,"stage":`...)
	b = jsonrpc.AppendString(b, a.Stage)
	b = append(b, `,"runId":`...)
	b = jsonrpc.AppendString(b, a.RunID)
	b = append(b, `,"flags":`...)
	b = appendStrings(b, a.Flags)
	b = append(b, `,"truncated":`...)
	b = appendBool(b, a.Truncated)
	b = append(b, `,"artifacts":`...)
	b = jsonrpc.AppendJSON(b, a.Artifacts)
	b = append(b, "}}"...)
	if err := k.endClosing(b); err != nil {
		return err
	}
	for _, art := range a.Artifacts {
		b := k.begin("agent_message_chunk")
		b = append(b, `,"messageId":`...)
		b = jsonrpc.AppendString(b, ev.MessageID)
		b = append(b, `,"content":{"type":"resource_link","uri":`...)
		b = jsonrpc.AppendString(b, fileURI(k.cwd, art.Path))
		b = append(b, `,"name":`...)
		b = jsonrpc.AppendString(b, art.Name)
		if art.MimeType != "" {
			b = append(b, `,"mimeType":`...)
			b = jsonrpc.AppendString(b, art.MimeType)
		}
		b = append(b, `,"size":`...)
		b = appendInt(b, art.Size)
		b = append(b, `},"_meta":{"coda":{"phase":"final_answer","artifact":`...)
		b = jsonrpc.AppendString(b, art.Name)
		b = append(b, "}}"...)
		if err := k.endClosing(b); err != nil {
			return err
		}
	}
	return nil
}

// noAnswer sends the closing message of a run without an answer: one
// agent_thought_chunk with its own messageId, saying why in one line, so
// the person in the editor sees that no answer came (DESIGN §8), while a
// client that takes the turn's message text as its answer (acpx --format
// quiet) finds none: a no-answer is never read as an answer (§22).
func (k *updateSink) noAnswer(ev engine.Event) error {
	if a := ev.Answer; a != nil {
		if err := k.noticeAll(a.Warnings); err != nil {
			return err
		}
	}
	b := k.begin("agent_thought_chunk")
	b = append(b, `,"messageId":`...)
	b = jsonrpc.AppendString(b, ev.MessageID)
	b = append(b, `,"content":{"type":"text","text":`...)
	b = jsonrpc.AppendString(b, ev.Text)
	b = append(b, `},"_meta":{"coda":{"phase":"no_answer"`...)
	if ev.Stage != "" {
		b = append(b, `,"stage":`...)
		b = jsonrpc.AppendString(b, ev.Stage)
	}
	if a := ev.Answer; a != nil {
		b = append(b, `,"runId":`...)
		b = jsonrpc.AppendString(b, a.RunID)
		b = append(b, `,"status":`...)
		b = jsonrpc.AppendString(b, a.Status)
		b = append(b, `,"flags":`...)
		b = appendStrings(b, a.Flags)
		if a.Unavailable != "" {
			b = append(b, `,"unavailable":`...)
			b = jsonrpc.AppendString(b, a.Unavailable)
		}
	}
	b = append(b, "}}"...)
	return k.endClosing(b)
}

// fileURI makes a file:// URI for an artifact path relative to root.
func fileURI(root, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

func appendBool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// appendStrings appends a JSON array of strings.
func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonrpc.AppendString(b, s)
	}
	return append(b, ']')
}
