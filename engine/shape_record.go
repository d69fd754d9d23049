package engine

import (
	"encoding/json"

	"github.com/coda-acp/coda/internal/plainjson"
)

// What was sent is visible (DESIGN §17): each model call's line in
// status.json says how it asked for the answer's shape (callShape), and
// where a call sent the answer's schema as a strict projection, the
// visit's schema_sent.json keeps the projection beside the schema as
// written, with the mechanism that carried it and what it left out.

// SchemaSentFile is the visit's record of the projections it sent.
const SchemaSentFile = "schema_sent.json"

// callShape is how one call asked for the answer's shape.
type callShape struct {
	Typed  bool   `json:"typed,omitempty"`  // submit_output's content typed with the schema
	Strict string `json:"strict,omitempty"` // the strict subset submit_output or the reply was sent in
	// Projected names what carried the schema's projection:
	// "submit_output", "reply_format" or both.
	Projected []string `json:"projected,omitempty"`
	Forced    bool     `json:"forced,omitempty"` // tool_choice named submit_output
	Reply     bool     `json:"reply,omitempty"`  // a native reply format was asked
}

// schemaSent is one projection a visit sent.
type schemaSent struct {
	Mechanism string          `json:"mechanism"` // submit_output or reply_format
	Family    string          `json:"family"`
	Original  json.RawMessage `json:"original"`
	Sent      json.RawMessage `json:"sent"`
	Dropped   []string        `json:"dropped"`
}

// callShape is the last call's shaping as status.json says it, with the
// projections it sent, for the visit's schema_sent.json (sentSchema).
func (a *answerShape) callShape() (*callShape, []schemaSent) {
	s := a.shaped
	if s == (shaped{}) {
		return nil, nil
	}
	var sent []schemaSent
	cs := &callShape{Typed: s.typed, Forced: s.forced, Reply: s.reply}
	switch {
	case s.family != "":
		cs.Strict = s.family
	case s.replyFamily != "":
		cs.Strict = s.replyFamily
	}
	for _, m := range []struct {
		mechanism, family string
		reply             bool
	}{{"submit_output", s.family, false}, {"reply_format", s.replyFamily, true}} {
		if m.family == "" || a.contract == nil {
			continue
		}
		projected, dropped := a.contract.Projection(m.family, m.reply)
		if projected == nil {
			continue
		}
		cs.Projected = append(cs.Projected, m.mechanism)
		sent = append(sent, schemaSent{Mechanism: m.mechanism, Family: m.family, Original: a.contract.Schema(), Sent: projected, Dropped: nonNil(dropped)})
	}
	return cs, sent
}

// sentSchema keeps a projection the visit sent, once, in schema_sent.json.
func (vr *visitRecord) sentSchema(s schemaSent) {
	for _, old := range vr.sent {
		if old.Mechanism == s.Mechanism && old.Family == s.Family {
			return
		}
	}
	vr.sent = append(vr.sent, s)
	vr.status.SchemaSent = SchemaSentFile
	if vr.Dir() != "" {
		b, err := plainjson.Marshal(vr.sent, "  ")
		if err == nil {
			vr.WriteText(SchemaSentFile, string(b)+"\n")
		}
	}
}
