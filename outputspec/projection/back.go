package projection

import (
	"encoding/json"
	"strings"
)

// Back undoes on value (JSON produced under the projection) what the
// projection added: a null coda introduced for an optional property is
// removed, an open map's {key, value} pairs are members again, a JSON
// text held in a string for a schema of any value is that value; at every
// depth. The value is then the caller's to check against the caller's own
// schema. changed is false, and value returned as it is, when there was
// nothing to undo.
func (p *Projection) Back(value []byte) (out []byte, changed bool) {
	if p.marks.empty() {
		return value, false
	}
	v, err := decode(value)
	if err != nil {
		return value, false
	}
	v, changed = p.back(v, p.root, 0)
	if !changed {
		return value, false
	}
	b, err := encode(v)
	if err != nil {
		return value, false
	}
	return b, true
}

// back walks v with the projected schema s that produced it, and returns
// it as the caller's schema reads it.
func (p *Projection) back(v any, s *object, depth int) (any, bool) {
	if depth > 256 {
		return v, false
	}
	s = p.deref(s)
	if list, ok := s.vals["anyOf"].([]any); ok {
		for _, b := range list {
			if bo, ok := b.(*object); ok && p.fits(v, bo, 0) {
				return p.back(v, bo, depth+1)
			}
		}
		return v, false
	}
	if p.text[s] {
		str, ok := v.(string)
		if !ok {
			return v, false
		}
		if x, err := decode([]byte(str)); err == nil {
			return x, true
		}
		return v, false
	}
	changed := false
	switch x := v.(type) {
	case *object:
		props, _ := s.vals["properties"].(*object)
		nulls := p.nulls[s]
		extra := p.extra[s]
		var pairs any
		for _, k := range append([]string(nil), x.keys...) {
			switch {
			case nulls[k] && x.vals[k] == nil:
				x.del(k)
				changed = true
				continue
			case k == extra && extra != "":
				pairs = x.vals[k]
				x.del(k)
				changed = true
				continue
			}
			if ps, ok := props.get(k); ok {
				if po, ok := ps.(*object); ok {
					nv, c := p.back(x.vals[k], po, depth+1)
					x.vals[k] = nv
					changed = changed || c
				}
			}
		}
		if list, ok := pairs.([]any); ok {
			ps, _ := props.get(extra)
			po, _ := ps.(*object)
			if m, ok := p.members(list, po, depth); ok {
				for _, k := range m.keys {
					if !x.has(k) {
						x.set(k, m.vals[k])
					}
				}
			}
		}
	case []any:
		items, ok := s.vals["items"].(*object)
		if !ok {
			break
		}
		for i, e := range x {
			nv, c := p.back(e, items, depth+1)
			x[i] = nv
			changed = changed || c
		}
		if p.entry[s] {
			if m, ok := p.members(x, s, depth); ok {
				return m, true
			}
		}
	}
	return v, changed
}

// members is the object an entry array's {key, value} pairs (already
// walked back) stand for; the first of a key wins.
func (p *Projection) members(list []any, s *object, depth int) (*object, bool) {
	if s == nil {
		return nil, false
	}
	m := newObject()
	for _, e := range list {
		pair, ok := e.(*object)
		if !ok {
			return nil, false
		}
		k, ok := pair.vals["key"].(string)
		if !ok {
			return nil, false
		}
		if !m.has(k) {
			m.set(k, pair.vals["value"])
		}
	}
	return m, true
}

// deref is the definition s refers to, or s.
func (p *Projection) deref(s *object) *object {
	for i := 0; i < 32; i++ {
		ref, ok := s.vals["$ref"].(string)
		if !ok {
			return s
		}
		d, _ := p.defs.get(strings.TrimPrefix(ref, "#/$defs/"))
		o, ok := d.(*object)
		if !ok {
			return s
		}
		s = o
	}
	return s
}

// fits reports whether v has the shape the projected schema s gives (its
// types, enums, members and items; not its bounds), to tell which of an
// anyOf's branches produced it.
func (p *Projection) fits(v any, s *object, depth int) bool {
	if depth > 256 {
		return true
	}
	s = p.deref(s)
	if list, ok := s.vals["anyOf"].([]any); ok {
		for _, b := range list {
			if bo, ok := b.(*object); ok && p.fits(v, bo, depth+1) {
				return true
			}
		}
		return false
	}
	if e, ok := s.vals["enum"].([]any); ok {
		found := false
		for _, x := range e {
			if same(v, x) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if c, ok := s.get("const"); ok && !same(v, c) {
		return false
	}
	if types := typesOf(s); len(types) > 0 {
		k := kindOf(v)
		ok := false
		for _, t := range types {
			if t == k || t == "number" && k == "integer" || t == "integer" && k == "number" && integral(v) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	switch x := v.(type) {
	case *object:
		props, _ := s.vals["properties"].(*object)
		if props == nil {
			return !s.has("properties")
		}
		for _, k := range x.keys {
			ps, ok := props.get(k)
			if !ok {
				return false
			}
			if po, ok := ps.(*object); ok && !p.fits(x.vals[k], po, depth+1) {
				return false
			}
		}
		list, _ := s.vals["required"].([]any)
		for _, r := range list {
			if name, _ := r.(string); !x.has(name) {
				return false
			}
		}
	case []any:
		if items, ok := s.vals["items"].(*object); ok {
			for _, e := range x {
				if !p.fits(e, items, depth+1) {
					return false
				}
			}
		}
	}
	return true
}

// integral reports whether a number has no fraction (1.0 is an integer to
// JSON Schema).
func integral(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, err := n.Float64()
	return err == nil && f == float64(int64(f))
}
