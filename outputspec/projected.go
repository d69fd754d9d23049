package outputspec

import (
	"encoding/json"

	"github.com/coda-acp/coda/outputspec/projection"
)

// A strict projection (DESIGN §17): a json answer's schema that does not
// fit a provider family's strict subset as written is sent as that
// family's projection (outputspec/projection), strict; the answer
// produced under it has the projection's additions undone (Back) before
// it is checked, as every answer is, against the caller's own schema.
// Where no faithful projection exists the schema goes as before, not
// strict, and StrictFit says why.

// toolBudget is what submit_output's own members, around the answer's
// schema at properties.content, take of each family's limits: one level
// of objects (its top), its properties (content, artifacts, unavailable,
// an artifact's name, path and type), the optional ones Anthropic counts
// (content, artifacts and unavailable where unavailable is offered: each
// may be left out; an artifact's name and type) and its one union (an
// artifact is a path or an object).
var toolBudget = map[string]projection.Budget{
	StrictOpenAI:    {Depth: 1, Properties: 6},
	StrictAnthropic: {Depth: 1, Properties: 6, Optional: 5, Unions: 1},
}

// projections are a schema's projections, per family, for submit_output's
// content and for a reply format; why says why one has none.
type projections struct {
	tool, reply       map[string]*projection.Projection
	whyTool, whyReply map[string]string
}

// projectAll derives doc's projections for each family. A schema that
// fits a subset as written is projected too: its projection is the same
// schema, but held to the family's limits (Anthropic's optional
// properties and unions, which a request counts together with
// submit_output's own), and without what strict mode does not name
// ($schema, $id).
func projectAll(doc []byte) projections {
	ps := projections{tool: map[string]*projection.Projection{}, reply: map[string]*projection.Projection{},
		whyTool: map[string]string{}, whyReply: map[string]string{}}
	for _, fam := range projection.Families {
		p, why := projection.Project(doc, fam, false, toolBudget[fam])
		ps.tool[fam], ps.whyTool[fam] = p, why
		p, why = projection.Project(doc, fam, true, projection.Budget{})
		ps.reply[fam], ps.whyReply[fam] = p, why
	}
	return ps
}

// projected is the projection a call shaped strict for family sends in
// place of the answer's schema (reply: a reply format's), or nil when the
// schema is sent as written.
func (c *Contract) projected(family string, reply bool) *projection.Projection {
	if !c.Typed() || c.schema == nil {
		return nil
	}
	if reply {
		return c.shape.proj.reply[family]
	}
	return c.shape.proj.tool[family]
}

// Projection is the schema a call shaped strict for family sends in place
// of the answer's (reply: as a reply format), and the keywords it leaves
// out; nil when the schema is sent as written or not strict.
func (c *Contract) Projection(family string, reply bool) (schema json.RawMessage, dropped []string) {
	p := c.projected(family, reply)
	if p == nil {
		return nil, nil
	}
	return append(json.RawMessage(nil), p.Schema...), append([]string(nil), p.Dropped...)
}

// ReplyBesideTool reports whether a strict reply format may go in the same
// request as submit_output sent strict to family: Anthropic counts a
// request's strict schemas together against its limits (24 optional
// properties, 16 unions), and both carry the answer's schema.
func (c *Contract) ReplyBesideTool(family string) bool {
	optional, unions := projection.Shared(family)
	tool, reply := c.projected(family, false), c.projected(family, true)
	if optional == 0 && unions == 0 || tool == nil || reply == nil {
		return true
	}
	b := toolBudget[family]
	return tool.Optional+b.Optional+reply.Optional <= optional && tool.Unions+b.Unions+reply.Unions <= unions
}

// back is content, produced under family's projection (reply: of a reply
// format), as the caller's schema reads it.
func (c *Contract) back(content, family string, reply bool) string {
	if family == "" {
		return content
	}
	p := c.projected(family, reply)
	if p == nil {
		return content
	}
	if out, changed := p.Back([]byte(content)); changed {
		return string(out)
	}
	return content
}

// Schema is the answer's schema as the caller wrote it, compact; nil
// without one (or for another format than json).
func (c *Contract) Schema() json.RawMessage {
	if !c.Typed() || c.shape.doc == nil {
		return nil
	}
	return append(json.RawMessage(nil), c.shape.doc...)
}
