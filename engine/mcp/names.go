package mcp

import (
	"slices"
	"strconv"
	"strings"

	"github.com/coda-acp/coda/engine"
)

// maxName is the longest tool name providers take (OpenAI's limit;
// Anthropic's is the same).
const maxName = 64

// Tools adds the tools of conns to into, each under the name the model
// sees. Names: SERVER__TOOL, with every character providers refuse
// (outside [a-zA-Z0-9_-]) made "_", cut to 64 characters. A name already
// taken (by a built-in tool, or an earlier server's tool that came out the
// same) gets "_2", "_3", … instead. Servers are taken in name order and
// their tools in name order, so the same servers always give the same
// names. How many a model request offers is the engine's to cap, where it
// counts every tool the request carries (engine.Engine.MaxTools).
func Tools(conns []*Conn, into map[string]engine.Tool) {
	conns = slices.Clone(conns)
	slices.SortStableFunc(conns, func(a, b *Conn) int { return strings.Compare(a.server.Name, b.server.Name) })
	for _, c := range conns {
		for _, def := range c.toolDefs() {
			name := freeName(sanitize(c.server.Name)+"__"+sanitize(def.Name), into)
			into[name] = &Tool{conn: c, def: def, name: name}
		}
	}
}

// freeName is base, cut to maxName, or when that is taken the first free
// base_N.
func freeName(base string, taken map[string]engine.Tool) string {
	name := base[:min(len(base), maxName)]
	for n := 2; isTaken(taken, name); n++ {
		suffix := "_" + strconv.Itoa(n)
		name = base[:min(len(base), maxName-len(suffix))] + suffix
	}
	return name
}

func isTaken(m map[string]engine.Tool, name string) bool {
	_, ok := m[name]
	return ok
}

// sanitize makes s a run of the characters every provider takes in a tool
// name, one "_" for each other character; "" becomes "_".
func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
