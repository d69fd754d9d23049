package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/coda-acp/coda/internal/bytesize"
	"github.com/coda-acp/coda/internal/textcut"
)

// An exchange as a line of a session's file. It is plain JSON, < > and &
// as they are: with encoding/json's HTML escapes a prompt of "<" took six
// bytes a character, and a 12 MiB prompt became a 72 MiB line. And it is
// never longer than the reader takes (Store.MaxLineBytes): a line over
// it is one every later load leaves out, so an exchange that would be is
// cut to fit, each cut noted where it was made, before it is written. What
// is cut, in order: the transcript (whole: the next turn is then shown the
// turn's prompt and answer instead), the streamed commentary (from its end; a load replays
// the turn without what is gone), then the longest of the prompt's texts
// and the history's prompt and answer, each to what leaves room. The
// closing chunks (the answer as it was sent, at most outputspec's cap) are
// kept whole; an exchange that cannot fit with them is refused
// (ErrLineTooLong), before the turn's answer is sent.

// ErrLineTooLong is wrapped by the error of an append whose exchange
// cannot be cut to a line the reader takes.
var ErrLineTooLong = errors.New("the turn does not fit a session's line")

// marshalPlain encodes v as one line without HTML escapes, without the
// newline.
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// exchangeLine is ex as an exchange line written at at, ending in a
// newline, at most max bytes long in all; ex is cut to fit where it must
// (its copy: ex itself is not changed).
func exchangeLine(ex *Exchange, at time.Time, max int) ([]byte, error) {
	head, err := marshalPlain(&line{Type: lineExchange, At: at})
	if err != nil {
		return nil, err
	}
	// {"type":"exchange","at":"..."} + ,"exchange":RAW} + "\n": the
	// exchange is the line's last field, as json.Marshal writes it.
	head = append(head[:len(head)-1], `,"exchange":`...)
	room := max - len(head) - len("}\n")
	raw, err := marshalPlain(ex)
	if err != nil {
		return nil, err
	}
	if len(raw) > room {
		if raw, err = fitExchange(ex, raw, room); err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, len(head)+len(raw)+2)
	out = append(append(append(out, head...), raw...), "}\n"...)
	return out, nil
}

// fitExchange cuts a copy of ex until it encodes in room bytes, raw being
// its encoding whole.
func fitExchange(ex *Exchange, raw []byte, room int) ([]byte, error) {
	whole := len(raw)
	cut := *ex
	cut.Prompt = append([]PromptBlock(nil), ex.Prompt...)
	// The transcript first, whole.
	if len(cut.Transcript) > 0 {
		cut.Transcript = nil
		var err error
		if raw, err = marshalPlain(&cut); err != nil {
			return nil, err
		}
		if len(raw) <= room {
			return raw, nil
		}
	}
	// Then the streamed commentary, from its end: each entry is written
	// as it is, with a comma.
	over := len(raw) - room
	n := len(cut.Streamed)
	for n > 0 && over > 0 {
		n--
		over -= len(cut.Streamed[n]) + 1
	}
	cut.Streamed = cut.Streamed[:n:n]
	// Then the longest texts, as many as it takes, each pass re-encoded:
	// cutting k bytes of a string takes at least k bytes out of its
	// encoding (a character escaped is longer than it), so a pass falls
	// short only by what its notes' own escapes add, or when every text
	// is cut to its note.
	for range 8 {
		var err error
		if raw, err = marshalPlain(&cut); err != nil {
			return nil, err
		}
		over := len(raw) - room
		if over <= 0 {
			return raw, nil
		}
		cutSome := false
		for _, s := range cuttable(&cut) {
			if over <= 0 {
				break
			}
			if len(*s) <= len(cutNote(len(*s))) {
				continue
			}
			before := len(*s)
			*s = textcut.Noted(*s, max(before-over, 0), cutNote)
			over -= before - len(*s)
			cutSome = true
		}
		if !cutSome {
			break
		}
	}
	return nil, fmt.Errorf("%w: cut to what it must keep, its %s line is longer than the %s a line may hold",
		ErrLineTooLong, bytesize.Format(whole), bytesize.Format(room))
}

// cutNote ends a text of an exchange cut to fit its line.
func cutNote(n int) string {
	return fmt.Sprintf("\n[… %d bytes cut here: a session's line holds no more]", n)
}

// cuttable are the exchange's texts that can be cut (the prompt's, the
// history's), longest first.
func cuttable(ex *Exchange) []*string {
	texts := []*string{&ex.History.Prompt, &ex.History.Answer}
	for i := range ex.Prompt {
		texts = append(texts, &ex.Prompt[i].Text)
	}
	slices.SortStableFunc(texts, func(a, b *string) int { return len(*b) - len(*a) })
	return texts
}
