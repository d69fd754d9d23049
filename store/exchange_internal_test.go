package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// exchangeLine writes one line a load takes, or refuses: never longer than
// the limit, never with a newline inside, never HTML-escaped, decoding to
// the exchange it was given when it fits whole, and to one whose run id
// and closing chunks are whole when it was cut.
func FuzzExchangeLine(f *testing.F) {
	f.Add("<a href>", "prompt & <", "answer\n\u2028", `{"t":"x"}`, 400)
	f.Add(strings.Repeat("<", 300), "", strings.Repeat("\x01", 100), `{}`, 200)
	f.Add("é", "日本", "😀", `{"text":"\u003c"}`, 120)
	f.Fuzz(func(t *testing.T, text, prompt, answer, streamed string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		ex := &Exchange{
			Prompt:  []PromptBlock{{Type: "text", Text: text}},
			History: Said{Prompt: prompt, Answer: answer},
			RunID:   "r-1",
			Closing: []json.RawMessage{json.RawMessage(`{"sessionUpdate":"agent_message_chunk"}`)},
		}
		if json.Valid([]byte(streamed)) {
			ex.Streamed = []json.RawMessage{json.RawMessage(streamed), json.RawMessage(streamed)}
		}
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		b, err := exchangeLine(ex, at, max)
		if err != nil {
			if !errors.Is(err, ErrLineTooLong) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if len(b) > max || !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) != 1 {
			t.Fatalf("a line of %d bytes (max %d): %q", len(b), max, b)
		}
		if bytes.Contains(b, []byte(`\u003c`)) && !strings.Contains(streamed, `\u003c`) {
			t.Fatalf("HTML-escaped: %q", b)
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil || l.Type != lineExchange || !l.At.Equal(at) {
			t.Fatalf("the line does not decode (%v): %q", err, b)
		}
		var got Exchange
		if err := json.Unmarshal(l.Exchange, &got); err != nil {
			t.Fatal(err)
		}
		if got.RunID != "r-1" || len(got.Closing) != 1 {
			t.Fatalf("cut what it keeps whole: %+v", got)
		}
		whole := got.Prompt[0].Text == text && got.History == ex.History && len(got.Streamed) == len(ex.Streamed)
		cut := strings.Contains(got.Prompt[0].Text+got.History.Prompt+got.History.Answer, "bytes cut here") || len(got.Streamed) < len(ex.Streamed)
		valid := utf8.ValidString(text) && utf8.ValidString(prompt) && utf8.ValidString(answer)
		if valid && !whole && !cut {
			t.Fatalf("changed without a note: %+v", got)
		}
	})
}
