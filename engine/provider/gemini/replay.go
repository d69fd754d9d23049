package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// Thought signatures (https://ai.google.dev/gemini-api/docs/thought-signatures)
// are Gemini's encrypted reasoning, attached to the parts of a reply: to a
// function call (on Gemini 3 the first call of each step must go back with
// its signature, or the request is refused with a 400), and to the last
// part of a reply without calls. Every part goes back as it came: a part
// with a signature is never merged with another, and a stream's last,
// empty, text part carrying one goes back as that part.
//
// A Response's Replay keeps the parts in order with their signatures but
// without their text, which the message carries already (Text, Thinking)
// and is cut out again by length: a reply is not held twice.

// replay is what a reply keeps for later calls of the turn.
type replay struct {
	Model string       `json:"gemini"` // the model that signed the parts
	Parts []replayPart `json:"parts"`
}

// A replayPart is one part of a reply: text ("t") or thought ("h") of N
// bytes of the message's Text or Thinking, or the message's next tool
// call ("c"), with its signature.
type replayPart struct {
	Kind string `json:"k"`
	N    int    `json:"n,omitempty"`
	Sig  string `json:"s,omitempty"`
}

const (
	kindText    = provider.ReplayText
	kindThought = provider.ReplayThinking
	kindCall    = provider.ReplayCall
)

// skipSignature is the signature Google's doc gives for a function call
// Gemini did not write (a reply of another model, or one whose signature
// is lost): it tells the API not to validate it.
const skipSignature = "skip_thought_signature_validator"

// maxParts bounds the parts a replay keeps, each until the reply ends: a
// reply has a few (its thoughts, its text, its calls), and a server that
// kept alternating or signing them would otherwise grow it without end.
const maxParts = 4 * sse.MaxToolCalls

// add appends a part of n bytes of kind (or a call, n = 0) to the replay:
// unsigned text follows unsigned text of its kind in one part, and a
// signed part stands alone; at most maxParts.
func (r *replay) add(kind string, n int, sig string) error {
	if last := len(r.Parts) - 1; kind != kindCall && sig == "" && last >= 0 {
		if p := &r.Parts[last]; p.Kind == kind && p.Sig == "" {
			p.N += n
			return nil
		}
	}
	if len(r.Parts) >= maxParts {
		return fmt.Errorf("the reply has more than %d parts", maxParts)
	}
	r.Parts = append(r.Parts, replayPart{Kind: kind, N: n, Sig: sig})
	return nil
}

// signed reports whether any part has a signature: only then is the
// replay worth keeping.
func (r *replay) signed() bool {
	for _, p := range r.Parts {
		if p.Sig != "" {
			return true
		}
	}
	return false
}

// fits reports whether the replay describes msg: its text and calls, to
// the byte; thoughts reports whether its thinking too (a message that
// lost its thinking still goes back with its calls' signatures).
func (r *replay) fits(msg *llm.Message) (ok, thoughts bool) {
	return provider.ReplayFits(msg, len(r.Parts), func(i int) (string, int) { return r.Parts[i].Kind, r.Parts[i].N })
}

// modelParts is an assistant message as the parts of a model content. A
// reply of this model with its replay goes back part for part, with its
// signatures; any other (another model's, one changed since, one that
// carried no signature) goes back as its text and calls. On models that
// validate signatures (Gemini 3, ThinkingLevel), a first call left
// without one gets skipSignature.
func (m *Model) modelParts(msg *llm.Message) []part {
	var parts []part
	var r replay
	ok, thoughts := false, false
	if len(msg.Replay) > 0 && json.Unmarshal(msg.Replay, &r) == nil && r.Model != "" {
		ok, thoughts = r.fits(msg)
	}
	if ok {
		same := r.Model == m.model
		at := provider.NewReplayCursor(msg)
		for _, p := range r.Parts {
			sig := p.Sig
			if !same {
				sig = ""
			}
			switch p.Kind {
			case kindText:
				if s := at.Text(p.N); s != "" || sig != "" {
					parts = append(parts, part{Text: &s, ThoughtSignature: sig})
				}
			case kindThought:
				if same && thoughts { // else the message's thinking is not the replay's
					s := at.Thinking(p.N)
					parts = append(parts, part{Text: &s, Thought: true, ThoughtSignature: sig})
				}
			case kindCall:
				parts = append(parts, callPart(at.Call(), sig))
			}
		}
	} else {
		if msg.Text != "" {
			s := msg.Text
			parts = append(parts, part{Text: &s})
		}
		for i := range msg.ToolCalls {
			parts = append(parts, callPart(&msg.ToolCalls[i], ""))
		}
	}
	if m.opts.Thinking == ThinkingLevel {
		for i := range parts {
			if parts[i].FunctionCall != nil {
				if parts[i].ThoughtSignature == "" {
					parts[i].ThoughtSignature = skipSignature
				}
				break
			}
		}
	}
	return parts
}

func callPart(tc *llm.ToolCall, sig string) part {
	return part{FunctionCall: &functionCall{ID: sentID(tc.ID), Name: tc.Name, Args: args(tc)}, ThoughtSignature: sig}
}
