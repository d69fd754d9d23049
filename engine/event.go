package engine

import (
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/store"
)

// EventKind says what an Event reports.
type EventKind uint8

const (
	EventText           EventKind = iota + 1 // a chunk of the model's commentary
	EventThought                             // a chunk of the model's reasoning
	EventToolCall                            // a tool call began
	EventToolCallUpdate                      // a tool call progressed or ended
	EventPlan                                // the stages and their statuses
	EventFinalAnswer                         // the run's validated answer; sent once, last
	EventUsage                               // tokens used after a model call
	// EventNoAnswer closes a run without an answer, in place of
	// EventFinalAnswer: Text says why in one line, Answer is the run's
	// record without content (Result.Record). Sent once, last.
	EventNoAnswer
	// EventCompaction says that a request was cut to fit the model's
	// context window (compact.go): Text is the record's line, MessageID
	// the compaction's own id.
	EventCompaction
	// EventWarning is one of the run's warnings (Result.Warnings) as it
	// arises, in Text: once a run, so that a front end can show it then
	// (ACP's notice). The caller's own (Turn.Warnings) are not sent.
	EventWarning
)

// An Event is one thing a turn produced. It is a plain value so that the
// hot path (text chunks) allocates nothing per event.
type Event struct {
	Kind      EventKind
	Stage     string
	MessageID string // EventText, EventThought, EventFinalAnswer, EventNoAnswer, EventCompaction
	Text      string // EventText, EventThought, EventNoAnswer, EventCompaction, EventWarning

	ToolCall *ToolCallEvent // EventToolCall, EventToolCallUpdate
	Plan     []PlanEntry    // EventPlan
	Answer   *store.Answer  // EventFinalAnswer, EventNoAnswer
	Usage    *llm.Usage     // EventUsage: the call's
	Spent    *store.Spend   // EventUsage: the turn's calls so far, this one's included
	// Worker, on the EventToolCallUpdate that counts a fan_out's workers
	// done, is the worker that just ended: `coda run` shows each one.
	Worker *WorkerEnd
}

// A WorkerEnd is how one fan_out worker ended.
type WorkerEnd struct {
	Name   string // w1
	Task   string // its task id, or its prompt's first line
	Failed string // why it counts as failed; "" when it succeeded
}

// Tool call statuses, as ACP spells them.
const (
	ToolPending    = "pending"
	ToolInProgress = "in_progress"
	ToolCompleted  = "completed"
	ToolFailed     = "failed"
)

// A ToolCallEvent describes a tool call as the editor shows it.
type ToolCallEvent struct {
	ID    string
	Title string
	// Name is the tool's own name (ACP's ToolCall.name), on a call's first
	// event: read_file, submit_output, SERVER__TOOL.
	Name      string
	Kind      string // read, edit, delete, move, search, execute, think, fetch, other
	Status    string
	RawInput  []byte // the arguments, as JSON
	Locations []Location
	Content   []ToolContent
}

// A Location is a file (and optionally a line) a tool call touches.
type Location struct {
	Path string
	Line int // 1-based; 0 when unknown
}

// ToolContent is one piece of what a tool call shows: text, a diff, or an
// embedded terminal. Exactly one of Text, Diff or TerminalID is set.
type ToolContent struct {
	Text       string
	Diff       *Diff
	TerminalID string
}

// A Diff is a file change.
type Diff struct {
	Path    string
	OldText *string // nil for a new file
	NewText string
}

// Plan entry statuses.
const (
	PlanPending    = "pending"
	PlanInProgress = "in_progress"
	PlanCompleted  = "completed"
)

// A PlanEntry is one stage in the plan.
type PlanEntry struct {
	Content string
	Status  string
	// Files are the files the stage's tools touched so far, relative to
	// the working directory (touched.go).
	Files []string
}
