package sse

import (
	"errors"
	"fmt"

	"github.com/coda-acp/coda/internal/bytesize"
)

// A Budget is what one reply may keep, in bytes: its visible text, its
// reasoning text, and what it asks to have sent back (signatures,
// encrypted reasoning, redacted thinking, a call's extra content). Each
// is held until the reply ends, so a server that never stops sending one
// would otherwise grow coda without bound; counting parts (MaxToolCalls,
// the content blocks) does not, when each part may be an event of
// MaxEventSize. A reply past one of them fails with an *OverBudget.
// A field left 0 takes its default.
type Budget struct {
	Text     int
	Thinking int
	Replay   int
}

// The default budget. The longest reply a catalog model may write is 128k
// output tokens (Claude's, GPT-5's), about 512 KiB of text at four bytes a
// token: 8 MiB of text or of thinking is sixteen times that, so no honest
// reply reaches it (nor the 4.2 MB reply scripts/bench/turnmem streams),
// and a runaway one is stopped at a size a turn can hold, and send back
// in its next call, without strain. What a reply asks to have sent back
// is a few KiB a part (a thinking block's signature, a thought signature)
// and, for the Responses API's encrypted reasoning, about the reasoning's
// own size: it gets twice the text's room. The ids and names of a reply's
// parts and calls count against it too: each is held until the reply ends
// as well, and a server may make each an event of MaxEventSize.
const (
	DefaultMaxText     = 8 << 20
	DefaultMaxThinking = 8 << 20
	DefaultMaxReplay   = 16 << 20
)

// WithDefaults is b with each unset field at its default.
func (b Budget) WithDefaults() Budget {
	if b.Text <= 0 {
		b.Text = DefaultMaxText
	}
	if b.Thinking <= 0 {
		b.Thinking = DefaultMaxThinking
	}
	if b.Replay <= 0 {
		b.Replay = DefaultMaxReplay
	}
	return b
}

// ErrOverBudget is wrapped by the error of a reply that passed one of its
// Budget's limits. Another try would meet the same reply, so it is final.
var ErrOverBudget = errors.New("the reply passed a limit on what coda keeps of it")

// OverBudget says which limit a reply passed.
type OverBudget struct {
	What string // "visible text", "thinking", "replay data"
	Max  int
}

func (e *OverBudget) Error() string {
	return fmt.Sprintf("the reply's %s passed %s, the most coda keeps of one reply", e.What, bytesize.Format(e.Max))
}

func (e *OverBudget) Unwrap() error { return ErrOverBudget }

// A Meter counts the bytes of replay data a reply keeps against its
// limit. The zero value counts against DefaultMaxReplay.
type Meter struct {
	What string // "replay data" when ""
	Max  int    // 0 means DefaultMaxReplay
	n    int
}

// Add counts n more bytes (fewer, when n < 0: a part replaced by a
// shorter one), or fails when they would pass Max, counting nothing.
func (m *Meter) Add(n int) error {
	max := m.Max
	if max <= 0 {
		max = DefaultMaxReplay
	}
	if n > max-m.n {
		what := m.What
		if what == "" {
			what = "replay data"
		}
		return &OverBudget{What: what, Max: max}
	}
	m.n += n
	return nil
}

// Start readies what one reply keeps under b (WithDefaults): its text, its
// thinking and the meter of its replay data.
func (b Budget) Start(text, thinking *Text, replay *Meter) {
	b = b.WithDefaults()
	text.Max, text.What = b.Text, "visible text"
	thinking.Max, thinking.What = b.Thinking, "thinking"
	*replay = Meter{What: "replay data (signatures, encrypted reasoning, ids and names)", Max: b.Replay}
}
