package projection

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// limits says which of the family's documented limits the projection
// (top and its definitions), with what budget says the rest of the
// request takes, passes; nil when none.
func (p *projector) limits(top, defs *object, budget Budget) (*counter, *unfit) {
	c := p.count(top, defs)
	return c, p.over(c, top, budget)
}

// count adds up what the limits count over top and its definitions.
func (p *projector) count(top, defs *object) *counter {
	c := &counter{defs: defs, depthOf: map[string]int{}}
	c.walk(top)
	for _, name := range defs.keys {
		c.chars += utf8.RuneCountInString(name)
		c.walk(defs.vals[name].(*object))
	}
	return c
}

// over says which limit c passes, with budget; nil when none.
func (p *projector) over(c *counter, top *object, budget Budget) *unfit {
	f := p.f
	depth, _ := c.depth(top, map[string]bool{})
	depth += budget.Depth
	switch {
	case f.maxDepth > 0 && depth > f.maxDepth:
		return &unfit{why: fmt.Sprintf("it nests objects %d levels deep, past the %d %s strict mode takes", depth, f.maxDepth, f.name)}
	case f.maxProperties > 0 && c.properties+budget.Properties > f.maxProperties:
		return &unfit{why: fmt.Sprintf("it has %d properties, past the %d %s strict mode takes", c.properties+budget.Properties, f.maxProperties, f.name)}
	case f.maxEnums > 0 && c.enums > f.maxEnums:
		return &unfit{why: fmt.Sprintf("it has %d enum values, past the %d %s strict mode takes", c.enums, f.maxEnums, f.name)}
	case f.maxChars > 0 && c.chars > f.maxChars:
		return &unfit{why: fmt.Sprintf("its names and enum values are %d characters, past the %d %s strict mode takes", c.chars, f.maxChars, f.name)}
	case c.bigEnum != "":
		return &unfit{why: c.bigEnum}
	case f.maxOptional > 0 && c.optional+budget.Optional > f.maxOptional:
		return &unfit{why: fmt.Sprintf("it has %d optional properties, past the %d %s strict mode takes", c.optional+budget.Optional, f.maxOptional, f.name), optional: true}
	case f.maxUnions > 0 && c.unions+budget.Unions > f.maxUnions:
		return &unfit{why: fmt.Sprintf("it has %d properties with a union of types (anyOf, or a list of types; an optional one made nullable is one), past the %d %s strict mode takes", c.unions+budget.Unions, f.maxUnions, f.name)}
	}
	return nil
}

// A counter adds up what the limits count, over every schema node once.
type counter struct {
	defs                                       *object
	properties, enums, chars, optional, unions int
	bigEnum                                    string
	depthOf                                    map[string]int
}

func (c *counter) walk(s *object) {
	if props, ok := s.vals["properties"].(*object); ok {
		c.properties += len(props.keys)
		required := map[string]bool{}
		list, _ := s.vals["required"].([]any)
		for _, r := range list {
			name, _ := r.(string)
			required[name] = true
		}
		for _, name := range props.keys {
			c.chars += utf8.RuneCountInString(name)
			if !required[name] {
				c.optional++
			}
			if ps, ok := props.vals[name].(*object); ok {
				c.walk(ps)
			}
		}
	}
	if t, ok := s.vals["type"].([]any); ok && len(t) > 1 {
		c.unions++
	}
	if list, ok := s.vals["anyOf"].([]any); ok {
		c.unions++
		for _, b := range list {
			if bo, ok := b.(*object); ok {
				c.walk(bo)
			}
		}
	}
	if items, ok := s.vals["items"].(*object); ok {
		c.walk(items)
	}
	if e, ok := s.vals["enum"].([]any); ok {
		c.enums += len(e)
		n := 0
		for _, v := range e {
			if str, ok := v.(string); ok {
				n += utf8.RuneCountInString(str)
			}
		}
		c.chars += n
		if len(e) > 250 && n > 15000 && c.bigEnum == "" {
			c.bigEnum = fmt.Sprintf("an enum of %d strings has %d characters, past the 15000 strict mode takes above 250 values", len(e), n)
		}
	}
	if str, ok := s.vals["const"].(string); ok {
		c.chars += utf8.RuneCountInString(str)
	}
}

// depth is how many objects deep s nests, through its references (a
// recursive one counted once round). cut reports that a recursion was cut
// below s: its depth then depends on the way in, and is not remembered.
func (c *counter) depth(s *object, seen map[string]bool) (d int, cut bool) {
	if ref, ok := s.vals["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		if seen[name] {
			return 0, true
		}
		if d, ok := c.depthOf[name]; ok {
			return d, false
		}
		seen[name] = true
		def, _ := c.defs.get(name)
		if o, ok := def.(*object); ok {
			d, cut = c.depth(o, seen)
		}
		delete(seen, name)
		if !cut {
			c.depthOf[name] = d
		}
		return d, cut
	}
	own := 0
	if t, _ := s.vals["type"].(string); t == "object" {
		own = 1
	}
	deepest := 0
	visit := func(v any) {
		if o, ok := v.(*object); ok {
			n, x := c.depth(o, seen)
			deepest = max(deepest, n)
			cut = cut || x
		}
	}
	if props, ok := s.vals["properties"].(*object); ok {
		for _, name := range props.keys {
			visit(props.vals[name])
		}
	}
	if list, ok := s.vals["anyOf"].([]any); ok {
		for _, b := range list {
			visit(b)
		}
	}
	visit(s.vals["items"])
	return own + deepest, cut
}

// cycleOf is a definition that leads back to itself through references,
// or "".
func cycleOf(top, defs *object) string {
	refs := map[string][]string{}
	var collect func(from string, v any)
	collect = func(from string, v any) {
		switch x := v.(type) {
		case *object:
			if ref, ok := x.vals["$ref"].(string); ok {
				refs[from] = append(refs[from], strings.TrimPrefix(ref, "#/$defs/"))
			}
			for _, k := range x.keys {
				collect(from, x.vals[k])
			}
		case []any:
			for _, e := range x {
				collect(from, e)
			}
		}
	}
	for _, name := range defs.keys {
		collect(name, defs.vals[name])
	}
	state := map[string]int{}
	var visit func(n string) string
	visit = func(n string) string {
		switch state[n] {
		case 1:
			return n
		case 2:
			return ""
		}
		state[n] = 1
		for _, next := range refs[n] {
			if c := visit(next); c != "" {
				return c
			}
		}
		state[n] = 2
		return ""
	}
	for _, name := range defs.keys {
		if c := visit(name); c != "" {
			return "$defs." + c
		}
	}
	return ""
}
