package validators

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	starlarkjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// The guards of budget.go: every operation that can build, in one step, a
// value much bigger than its operands goes through a built-in that works
// out the result's size and charges it to the thread's budget before
// building it. Operators and method calls are reached by rewriting the
// script's syntax tree before it is compiled (guardFile); the built-ins
// that build lists or render values are shadowed in predeclared.
//
// Sizes are estimates that never undercount by much: slices of 16-byte
// values, strings by their bytes, entries of dicts and sets at 80 bytes.
// They may overcount (a rendered value counts as if every string needed
// escapes): a real validator over a 256 KiB answer stays far below the
// budget either way.

const (
	slot  = 16 // one Value in a list or tuple
	entry = 80 // one entry of a dict or set, with its hash table share
)

// Names of the guard built-ins the rewrite calls. None of them can be
// written in a script, so none can be shadowed.
const (
	guardSlice = "<slice>" // (x, lo, hi, step): x[lo:hi:step]
	guardAttr  = "<attr>"  // (x, name): x.name, guarded when it copies
	guardNone  = "<none>"  // None, for an omitted slice index
	guardTemp  = "<tmp%d>" // temporaries of an augmented assignment
)

// guardedOps are the binary operators that can build a bigger value than
// their operands: repetition, concatenation, formatting, union. x op y
// calls "<op>"(x, y); x op= y calls "<op=>"(x, y), which returns y.
var guardedOps = []syntax.Token{syntax.STAR, syntax.PLUS, syntax.PERCENT, syntax.PIPE}

func opGuard(op syntax.Token) string   { return "<" + op.String() + ">" }
func intoGuard(op syntax.Token) string { return "<" + op.String() + "=>" }

// augmented maps an augmented assignment to its operator.
var augmented = map[syntax.Token]syntax.Token{
	syntax.STAR_EQ: syntax.STAR, syntax.PLUS_EQ: syntax.PLUS, syntax.PERCENT_EQ: syntax.PERCENT, syntax.PIPE_EQ: syntax.PIPE,
}

// harmless reports whether x op y cannot grow past its operands, whatever
// their values, from a literal operand: i + 1, n % 2, x * 1. The guards'
// cost is then not paid in counting loops.
func harmless(op syntax.Token, x, y syntax.Expr) bool {
	for _, e := range []syntax.Expr{x, y} {
		lit, ok := unparen(e).(*syntax.Literal)
		if !ok || (lit.Token != syntax.INT && lit.Token != syntax.FLOAT) {
			continue
		}
		switch op {
		case syntax.PLUS, syntax.PERCENT, syntax.PIPE:
			return true
		case syntax.STAR:
			if n, ok := lit.Value.(int64); lit.Token == syntax.FLOAT || ok && n >= -1 && n <= 1 {
				return true
			}
		}
	}
	return false
}

// guardFile rewrites f so that every guarded operation calls a guard.
func guardFile(f *syntax.File) {
	g := &rewriter{}
	f.Stmts = g.stmts(f.Stmts)
}

type rewriter struct{ temps int }

func (g *rewriter) stmts(in []syntax.Stmt) []syntax.Stmt {
	if in == nil {
		return nil // an if without else keeps its nil False
	}
	out := make([]syntax.Stmt, 0, len(in))
	for _, s := range in {
		out = append(out, g.stmt(s)...)
	}
	return out
}

// stmt rewrites one statement; an augmented assignment may become several.
func (g *rewriter) stmt(s syntax.Stmt) []syntax.Stmt {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		op, ok := augmented[s.Op]
		if !ok {
			s.LHS, s.RHS = g.target(s.LHS), g.expr(s.RHS)
			return []syntax.Stmt{s}
		}
		// x op= y becomes x op= <op=>(op, x, y): the guard sees both
		// operands and returns y, and the in-place operation runs as
		// before. x is evaluated twice, so what it is made of must be
		// pure: anything else is computed once, into temporaries, first.
		var pre []syntax.Stmt
		hoist := func(e syntax.Expr) syntax.Expr {
			e = g.expr(e)
			if pure(e) {
				return e
			}
			g.temps++
			t := &syntax.Ident{NamePos: syntax.Start(e), Name: fmt.Sprintf(guardTemp, g.temps)}
			pre = append(pre, &syntax.AssignStmt{OpPos: s.OpPos, Op: syntax.EQ, LHS: t, RHS: e})
			return &syntax.Ident{NamePos: t.NamePos, Name: t.Name}
		}
		var read syntax.Expr
		switch lhs := unparen(s.LHS).(type) {
		case *syntax.IndexExpr:
			x, y := hoist(lhs.X), hoist(lhs.Y)
			s.LHS = &syntax.IndexExpr{X: x, Lbrack: lhs.Lbrack, Y: y, Rbrack: lhs.Rbrack}
			read = &syntax.IndexExpr{X: clone(x), Lbrack: lhs.Lbrack, Y: clone(y), Rbrack: lhs.Rbrack}
		case *syntax.DotExpr:
			x := hoist(lhs.X)
			s.LHS = &syntax.DotExpr{X: x, Dot: lhs.Dot, NamePos: lhs.NamePos, Name: lhs.Name}
			read = &syntax.DotExpr{X: clone(x), Dot: lhs.Dot, NamePos: lhs.NamePos, Name: &syntax.Ident{NamePos: lhs.Name.NamePos, Name: lhs.Name.Name}}
		case *syntax.Ident:
			read = clone(lhs)
		default: // the resolver refuses it
			s.RHS = g.expr(s.RHS)
			return []syntax.Stmt{s}
		}
		s.RHS = g.expr(s.RHS)
		if !harmless(op, read, s.RHS) {
			s.RHS = call(intoGuard(op), s.OpPos, read, s.RHS)
		}
		return append(pre, s)
	case *syntax.DefStmt:
		s.Params = g.params(s.Params)
		s.Body = g.stmts(s.Body)
	case *syntax.ExprStmt:
		s.X = g.expr(s.X)
	case *syntax.IfStmt:
		s.Cond, s.True, s.False = g.expr(s.Cond), g.stmts(s.True), g.stmts(s.False)
	case *syntax.ForStmt:
		s.Vars, s.X, s.Body = g.target(s.Vars), g.expr(s.X), g.stmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond, s.Body = g.expr(s.Cond), g.stmts(s.Body)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			s.Result = g.expr(s.Result)
		}
	}
	return []syntax.Stmt{s}
}

// target rewrites what an assignment target evaluates, not the target.
func (g *rewriter) target(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.IndexExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
	case *syntax.DotExpr:
		e.X = g.expr(e.X)
	case *syntax.TupleExpr:
		for i := range e.List {
			e.List[i] = g.target(e.List[i])
		}
	case *syntax.ListExpr:
		for i := range e.List {
			e.List[i] = g.target(e.List[i])
		}
	case *syntax.ParenExpr:
		e.X = g.target(e.X)
	}
	return e
}

// params rewrites the defaults of a def's or lambda's parameters.
func (g *rewriter) params(ps []syntax.Expr) []syntax.Expr {
	for _, p := range ps {
		if b, ok := p.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
			b.Y = g.expr(b.Y)
		}
	}
	return ps
}

func (g *rewriter) exprs(es []syntax.Expr) {
	for i := range es {
		es[i] = g.expr(es[i])
	}
}

func (g *rewriter) expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.BinaryExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
		if slices.Contains(guardedOps, e.Op) && !harmless(e.Op, e.X, e.Y) {
			return call(opGuard(e.Op), e.OpPos, e.X, e.Y)
		}
	case *syntax.CallExpr:
		e.Fn = g.expr(e.Fn)
		for i, a := range e.Args {
			switch a := a.(type) {
			case *syntax.BinaryExpr: // name=value
				if a.Op == syntax.EQ {
					a.Y = g.expr(a.Y)
					continue
				}
			case *syntax.UnaryExpr: // *args, **kwargs
				if a.X != nil && (a.Op == syntax.STAR || a.Op == syntax.STARSTAR) {
					a.X = g.expr(a.X)
					continue
				}
			}
			e.Args[i] = g.expr(a)
		}
	case *syntax.Comprehension:
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.Vars, c.X = g.target(c.Vars), g.expr(c.X)
			case *syntax.IfClause:
				c.Cond = g.expr(c.Cond)
			}
		}
		e.Body = g.expr(e.Body)
	case *syntax.CondExpr:
		e.Cond, e.True, e.False = g.expr(e.Cond), g.expr(e.True), g.expr(e.False)
	case *syntax.DictExpr:
		g.exprs(e.List)
	case *syntax.DictEntry:
		e.Key, e.Value = g.expr(e.Key), g.expr(e.Value)
	case *syntax.DotExpr:
		e.X = g.expr(e.X)
		if guardedMethods[e.Name.Name] != nil {
			return call(guardAttr, e.NamePos, e.X, &syntax.Literal{Token: syntax.STRING, TokenPos: e.NamePos, Raw: fmt.Sprintf("%q", e.Name.Name), Value: e.Name.Name})
		}
	case *syntax.IndexExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
	case *syntax.LambdaExpr:
		e.Params = g.params(e.Params)
		e.Body = g.expr(e.Body)
	case *syntax.ListExpr:
		g.exprs(e.List)
	case *syntax.TupleExpr:
		g.exprs(e.List)
	case *syntax.ParenExpr:
		e.X = g.expr(e.X)
	case *syntax.SliceExpr:
		idx := func(x syntax.Expr) syntax.Expr {
			if x == nil {
				return &syntax.Ident{NamePos: e.Lbrack, Name: guardNone}
			}
			return g.expr(x)
		}
		return call(guardSlice, e.Lbrack, g.expr(e.X), idx(e.Lo), idx(e.Hi), idx(e.Step))
	case *syntax.UnaryExpr:
		if e.X != nil {
			e.X = g.expr(e.X)
		}
	}
	return e
}

// call is a call of a guard at pos, where the operation it replaces
// reported its errors.
func call(name string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: pos, Name: name}, Lparen: pos, Args: args, Rparen: pos}
}

func unparen(e syntax.Expr) syntax.Expr {
	for {
		p, ok := e.(*syntax.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// pure reports whether evaluating e twice does what evaluating it once
// does: names, literals, and indexing and fields of those.
func pure(e syntax.Expr) bool {
	switch e := e.(type) {
	case *syntax.Ident, *syntax.Literal:
		return true
	case *syntax.ParenExpr:
		return pure(e.X)
	case *syntax.DotExpr:
		return pure(e.X)
	case *syntax.IndexExpr:
		return pure(e.X) && pure(e.Y)
	}
	return false
}

// clone copies a pure expression (see pure), so that the resolver binds
// each use.
func clone(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.Ident:
		return &syntax.Ident{NamePos: e.NamePos, Name: e.Name}
	case *syntax.Literal:
		c := *e
		return &c
	case *syntax.ParenExpr:
		return &syntax.ParenExpr{Lparen: e.Lparen, X: clone(e.X), Rparen: e.Rparen}
	case *syntax.DotExpr:
		return &syntax.DotExpr{X: clone(e.X), Dot: e.Dot, NamePos: e.NamePos, Name: &syntax.Ident{NamePos: e.Name.NamePos, Name: e.Name.Name}}
	case *syntax.IndexExpr:
		return &syntax.IndexExpr{X: clone(e.X), Lbrack: e.Lbrack, Y: clone(e.Y), Rbrack: e.Rbrack}
	}
	panic(fmt.Sprintf("validators: clone of %T", e))
}

// guards are the built-ins the rewrite calls, added to predeclared.
var guards = sync.OnceValue(func() starlark.StringDict {
	d := starlark.StringDict{
		guardSlice: starlark.NewBuiltin("slice", guardedSlice),
		guardAttr:  starlark.NewBuiltin("attr", guardedAttr),
		guardNone:  starlark.None,
	}
	for _, op := range guardedOps {
		d[opGuard(op)] = starlark.NewBuiltin(op.String(), func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			if err := budgetOf(th).charge(binarySize(op, args[0], args[1], th)); err != nil {
				return nil, err
			}
			return starlark.Binary(op, args[0], args[1])
		})
		d[intoGuard(op)] = starlark.NewBuiltin(op.String()+"=", func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			x, y := args[0], args[1]
			n := binarySize(op, x, y, th)
			// In place, a list grows by y's elements and a dict by y's entries.
			if _, ok := x.(*starlark.List); ok && op == syntax.PLUS {
				n = 2 * slot * length(y)
			}
			if _, ok := x.(*starlark.Dict); ok && op == syntax.PIPE {
				n = entry * length(y)
			}
			if err := budgetOf(th).charge(n); err != nil {
				return nil, err
			}
			return y, nil
		})
	}
	return d
})

// binarySize is the size of x op y, for the guarded operators.
func binarySize(op syntax.Token, x, y starlark.Value, th *starlark.Thread) uint64 {
	switch op {
	case syntax.STAR:
		if n, ok := y.(starlark.Int); ok {
			return repeatSize(x, n)
		}
		if n, ok := x.(starlark.Int); ok {
			return repeatSize(y, n)
		}
	case syntax.PLUS:
		switch x := x.(type) {
		case starlark.String, starlark.Bytes, *starlark.List, starlark.Tuple:
			return shallow(x) + shallow(y)
		case starlark.Int:
			if y, ok := y.(starlark.Int); ok {
				return intSize(x) + intSize(y)
			}
		}
	case syntax.PERCENT:
		if f, ok := x.(starlark.String); ok {
			return uint64(len(f)) + uint64(strings.Count(string(f), "%"))*renderSize(y, false, budgetOf(th).room())
		}
	case syntax.PIPE:
		if length(x) > 0 || length(y) > 0 {
			return entry * (length(x) + length(y))
		}
	}
	return 0
}

// repeatSize is the size of x * n.
func repeatSize(x starlark.Value, n starlark.Int) uint64 {
	times, ok := n.Int64()
	if !ok || times <= 0 {
		return 0 // Starlark refuses it, or it is empty
	}
	switch x := x.(type) {
	case starlark.String, starlark.Bytes, *starlark.List, starlark.Tuple:
		return mulSat(shallow(x), uint64(times))
	case starlark.Int:
		return intSize(x) + intSize(n)
	}
	return 0
}

// shallow is the size of a value's own storage, not counting what its
// elements hold.
func shallow(v starlark.Value) uint64 {
	switch v := v.(type) {
	case starlark.String:
		return uint64(len(v))
	case starlark.Bytes:
		return uint64(len(v))
	case *starlark.List, starlark.Tuple:
		return slot * length(v)
	case *starlark.Dict, *starlark.Set:
		return entry * length(v)
	case starlark.Int:
		return intSize(v)
	}
	return 0
}

func intSize(i starlark.Int) uint64 {
	if _, ok := i.Int64(); ok {
		return 0
	}
	return uint64(i.BigInt().BitLen()/8) + 32
}

func length(v starlark.Value) uint64 {
	if n := starlark.Len(v); n > 0 {
		return uint64(n)
	}
	return 0
}

func mulSat(a, b uint64) uint64 {
	if a != 0 && b > (1<<63)/a {
		return 1 << 63
	}
	return a * b
}

// room bounds renderSize's walk: a value bigger than the whole budget is
// refused whatever its size (charge), so counting can stop there.
func (b *budget) room() uint64 {
	if b == nil {
		return DefaultMaxMemory
	}
	return b.limit
}

// renderSize is the length of str(v) (repr(v) when quoted), counting a
// shared value at each place it appears, as rendering does. It stops
// counting past limit.
func renderSize(v starlark.Value, quoted bool, limit uint64) uint64 {
	r := renderer{limit: limit}
	r.add(v, quoted)
	return r.n
}

type renderer struct {
	n, limit uint64
	path     []starlark.Value     // containers being rendered: a cycle renders as [...]
	items    uint64               // elements and entries rendered
	depth    uint64               // the deepest nesting of containers
	escaped  map[stringKey]uint64 // escapes of long strings, which may be shared many times
}

func (r *renderer) add(v starlark.Value, quoted bool) {
	if r.n > r.limit {
		return
	}
	switch v := v.(type) {
	case starlark.String:
		if !quoted {
			r.n += uint64(len(v))
			return
		}
		if len(v) < 64 {
			r.n += uint64(len(v)) + 2 + 3*escapes(string(v))
			return
		}
		if r.escaped == nil {
			r.escaped = map[stringKey]uint64{}
		}
		p := stringKey{unsafe.StringData(string(v)), len(v)}
		e, ok := r.escaped[p]
		if !ok {
			e = escapes(string(v))
			r.escaped[p] = e
		}
		r.n += uint64(len(v)) + 2 + 3*e
	case starlark.Bytes:
		r.n += 4*uint64(len(v)) + 3
	case starlark.Int:
		if _, ok := v.Int64(); ok {
			r.n += 20
		} else {
			r.n += uint64(v.BigInt().BitLen())*31/100 + 2
		}
	case starlark.NoneType, starlark.Bool, starlark.Float:
		r.n += 32
	case *starlark.List, starlark.Tuple, *starlark.Dict, *starlark.Set:
		for _, p := range r.path {
			if p == v {
				r.n += 5 // [...]
				return
			}
		}
		r.path = append(r.path, v)
		r.depth = max(r.depth, uint64(len(r.path)))
		r.n += 8 // brackets, set(...)
		if d, ok := v.(*starlark.Dict); ok {
			for _, it := range d.Items() {
				r.n += 4
				r.items++
				r.add(it[0], true)
				r.add(it[1], true)
				if r.n > r.limit {
					break
				}
			}
		} else {
			it := starlark.Iterate(v)
			var x starlark.Value
			for it.Next(&x) && r.n <= r.limit {
				r.n += 2
				r.items++
				r.add(x, true)
			}
			it.Done()
		}
		r.path = r.path[:len(r.path)-1]
	default:
		r.n += 64 + slot*length(v) // functions, ranges, iterables: their own text
	}
}

// stringKey names a string by its bytes' place: substrings share them.
type stringKey struct {
	data *byte
	n    int
}

// escapes counts the bytes a quoted string spells as an escape.
func escapes(s string) uint64 {
	n := uint64(0)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < 0x20 || r == '"' || r == '\\' || r == 0x7f || (r == utf8.RuneError && size == 1) {
			n++
		}
		i += size
	}
	return n
}

// guardedSlice is x[lo:hi:step], as the interpreter computes it (the
// indices and their errors are Starlark's), charged for what it copies: a
// list or tuple's elements, a string's bytes when the step is not 1.
func guardedSlice(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, lo, hi, stepV := args[0], args[1], args[2], args[3]
	sl, ok := x.(starlark.Sliceable)
	if !ok {
		return nil, fmt.Errorf("invalid slice operand %s", x.Type())
	}
	n := sl.Len()
	step := 1
	if stepV != starlark.None {
		var err error
		if step, err = starlark.AsInt32(stepV); err != nil {
			return nil, fmt.Errorf("invalid slice step: %s", err)
		}
		if step == 0 {
			return nil, fmt.Errorf("zero is not a valid slice step")
		}
	}
	var start, end int
	if step > 0 {
		start, end = 0, n
		if err := asIndex(lo, n, &start); err != nil {
			return nil, fmt.Errorf("invalid start index: %s", err)
		}
		start = min(max(start, 0), n)
		if err := asIndex(hi, n, &end); err != nil {
			return nil, fmt.Errorf("invalid end index: %s", err)
		}
		end = min(max(end, 0), n)
		end = max(end, start)
	} else {
		start, end = n-1, -1
		if err := asIndex(lo, n, &start); err != nil {
			return nil, fmt.Errorf("invalid start index: %s", err)
		}
		start = min(start, n-1)
		if err := asIndex(hi, n, &end); err != nil {
			return nil, fmt.Errorf("invalid end index: %s", err)
		}
		end = max(end, -1)
		start = max(start, end)
	}
	count := uint64(0)
	if step > 0 {
		count = uint64((end - start + step - 1) / step)
	} else {
		count = uint64((start - end - step - 1) / -step)
	}
	size := slot * count
	switch x.(type) {
	case starlark.String, starlark.Bytes:
		size = 0 // a substring shares its bytes
		if step != 1 {
			size = count
		}
	case starlark.Tuple, *starlark.List:
	default:
		size = 0 // lazy: range
	}
	if err := budgetOf(th).charge(size); err != nil {
		return nil, err
	}
	return sl.Slice(start, end, step), nil
}

// asIndex is Starlark's: v as an index into a sequence of length n.
func asIndex(v starlark.Value, n int, result *int) error {
	if v == nil || v == starlark.None {
		return nil
	}
	i, err := starlark.AsInt32(v)
	if err != nil {
		return err
	}
	if i < 0 {
		i += n
	}
	*result = i
	return nil
}

// guardedMethods size the results of the methods that copy or multiply
// their receiver and arguments, before they run.
var guardedMethods = map[string]func(recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple, limit uint64) uint64{
	"join":                 joinSize,
	"replace":              replaceSize,
	"format":               formatSize,
	"split":                splitSize,
	"rsplit":               splitSize,
	"splitlines":           splitSize,
	"upper":                copySize,
	"lower":                copySize,
	"title":                copySize,
	"capitalize":           copySize,
	"swapcase":             copySize,
	"items":                entriesSize,
	"keys":                 entriesSize,
	"values":               entriesSize,
	"extend":               growSize,
	"update":               growSize,
	"union":                growSize,
	"intersection":         growSize,
	"difference":           growSize,
	"symmetric_difference": growSize,
}

// guardedAttr is x.name. For a method that copies it returns the method
// wrapped so that each call is charged first.
func guardedAttr(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	return attr(args[0], string(args[1].(starlark.String)))
}

// attr is x.name as Starlark gets it, a copying method wrapped in its
// charge.
func attr(x starlark.Value, name string) (starlark.Value, error) {
	ha, ok := x.(starlark.HasAttrs)
	if !ok {
		return nil, fmt.Errorf("%s has no .%s field or method", x.Type(), name)
	}
	m, err := ha.Attr(name)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%s has no .%s field or method", x.Type(), name)
	}
	size := guardedMethods[name]
	if _, builtin := m.(*starlark.Builtin); !builtin || size == nil {
		return m, nil
	}
	return starlark.NewBuiltin(name, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		b := budgetOf(th)
		if err := b.charge(size(x, args, kwargs, b.room())); err != nil {
			return nil, err
		}
		return starlark.Call(th, m, args, kwargs)
	}), nil
}

func str(v starlark.Value) string {
	s, _ := v.(starlark.String)
	return string(s)
}

func joinSize(recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple, _ uint64) uint64 {
	if len(args) != 1 {
		return 0
	}
	var n, total uint64
	it := starlark.Iterate(args[0])
	if it == nil {
		return 0
	}
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		n++
		total += shallow(x)
	}
	if n > 0 {
		total += (n - 1) * uint64(len(str(recv)))
	}
	return total
}

func replaceSize(recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple, _ uint64) uint64 {
	if len(args) < 2 {
		return 0
	}
	s, old, repl := str(recv), str(args[0]), str(args[1])
	count := strings.Count(s, old) // old == "": every boundary
	if len(args) > 2 {
		if c, err := starlark.AsInt32(args[2]); err == nil && c >= 0 && c < count {
			count = c
		}
	}
	if len(repl) <= len(old) {
		return uint64(len(s))
	}
	return uint64(len(s)) + mulSat(uint64(count), uint64(len(repl)-len(old)))
}

func formatSize(recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple, limit uint64) uint64 {
	f := str(recv)
	widest := uint64(0)
	for _, a := range args {
		widest = max(widest, renderSize(a, false, limit))
	}
	for _, kv := range kwargs {
		widest = max(widest, renderSize(kv[1], false, limit))
	}
	return uint64(len(f)) + mulSat(uint64(strings.Count(f, "{")), widest)
}

func splitSize(recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple, _ uint64) uint64 {
	return 2 * slot * (uint64(len(str(recv)))/2 + 1) // at most a part per two bytes
}

func copySize(recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple, _ uint64) uint64 {
	return 2 * uint64(len(str(recv))) // case mapping may lengthen a little
}

func entriesSize(recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple, _ uint64) uint64 {
	return 4 * slot * length(recv) // items: a pair each
}

func growSize(recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple, _ uint64) uint64 {
	n := uint64(len(kwargs))
	for _, a := range args {
		n += length(a)
	}
	if _, ok := recv.(*starlark.List); ok {
		return 2 * slot * n
	}
	return entry * (n + length(recv))
}

// shadowed are the built-ins that build a list or render a value in one
// step, charged first. They keep their names, so messages do not change.
var shadowed = sync.OnceValue(func() starlark.StringDict {
	d := starlark.StringDict{}
	materialize := func(per uint64) func(starlark.Tuple, []starlark.Tuple, uint64) uint64 {
		return func(args starlark.Tuple, kwargs []starlark.Tuple, _ uint64) uint64 {
			n := uint64(len(kwargs))
			longest := uint64(0)
			for _, a := range args {
				n += length(a)
				longest = max(longest, length(a))
			}
			return per * max(n, longest)
		}
	}
	render := func(args starlark.Tuple, kwargs []starlark.Tuple, limit uint64) uint64 {
		if len(args) == 1 && len(kwargs) == 0 {
			if _, ok := args[0].(starlark.String); ok {
				return 0 // str(s) is s
			}
		}
		n := uint64(0)
		for _, a := range args {
			n += renderSize(a, false, limit) + 1
		}
		for _, kv := range kwargs {
			n += renderSize(kv[1], false, limit) + 1
		}
		return n
	}
	repr := func(args starlark.Tuple, _ []starlark.Tuple, limit uint64) uint64 {
		if len(args) != 1 {
			return 0
		}
		return renderSize(args[0], true, limit)
	}
	for name, size := range map[string]func(starlark.Tuple, []starlark.Tuple, uint64) uint64{
		"list": materialize(slot), "tuple": materialize(slot), "sorted": materialize(slot),
		"reversed": materialize(slot), "enumerate": materialize(4 * slot), "zip": materialize(4 * slot),
		"set": materialize(entry), "dict": materialize(entry),
		"str": render, "print": render, "fail": render, "repr": repr,
	} {
		d[name] = shadow(starlark.Universe[name].(*starlark.Builtin), size)
	}
	get := starlark.Universe["getattr"]
	d["getattr"] = starlark.NewBuiltin("getattr", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) == 2 && len(kwargs) == 0 {
			if name, ok := args[1].(starlark.String); ok && guardedMethods[string(name)] != nil {
				if m, err := attr(args[0], string(name)); err == nil {
					return m, nil
				}
			}
		}
		return starlark.Call(th, get, args, kwargs)
	})
	return d
})

// jsonModule is go.starlark.net's json module with its functions charged:
// encode renders, indent adds a line per element, decode builds values
// (at most some 32 bytes of them per byte of JSON).
var jsonModule = sync.OnceValue(func() *starlarkstruct.Module {
	m := starlarkjson.Module.Members
	indented := func(size, items, depth uint64, kwargs []starlark.Tuple) uint64 {
		prefix, indent := uint64(0), uint64(1) // the defaults: "" and "\t"
		for _, kv := range kwargs {
			switch n := uint64(len(str(kv[1]))); str(kv[0]) {
			case "prefix":
				prefix = n
			case "indent":
				indent = n
			}
		}
		return size + mulSat(items+1, 1+prefix+mulSat(depth, indent))
	}
	return &starlarkstruct.Module{Name: "json", Members: starlark.StringDict{
		"encode": shadow(m["encode"].(*starlark.Builtin), func(args starlark.Tuple, _ []starlark.Tuple, limit uint64) uint64 {
			if len(args) != 1 {
				return 0
			}
			return renderSize(args[0], true, limit)
		}),
		"encode_indent": shadow(m["encode_indent"].(*starlark.Builtin), func(args starlark.Tuple, kwargs []starlark.Tuple, limit uint64) uint64 {
			if len(args) != 1 {
				return 0
			}
			r := renderer{limit: limit}
			r.add(args[0], true)
			return indented(r.n, r.items, r.depth, kwargs)
		}),
		"indent": shadow(m["indent"].(*starlark.Builtin), func(args starlark.Tuple, kwargs []starlark.Tuple, _ uint64) uint64 {
			if len(args) != 1 {
				return 0
			}
			s := str(args[0])
			var items, depth, d uint64
			inString := false
			for i := 0; i < len(s); i++ {
				switch c := s[i]; {
				case inString && c == '\\':
					i++
				case c == '"':
					inString = !inString
				case inString:
				case c == '[' || c == '{':
					d++
					depth = max(depth, d)
					items++
				case c == ']' || c == '}':
					d = max(d, 1) - 1
					items++
				case c == ',':
					items++
				}
			}
			return indented(uint64(len(s)), items, depth, kwargs)
		}),
		"decode": shadow(m["decode"].(*starlark.Builtin), func(args starlark.Tuple, _ []starlark.Tuple, _ uint64) uint64 {
			if len(args) == 0 {
				return 0
			}
			return 32 * uint64(len(str(args[0])))
		}),
	}}
})

// shadow wraps a built-in so that a call is charged its size first.
func shadow(b *starlark.Builtin, size func(starlark.Tuple, []starlark.Tuple, uint64) uint64) *starlark.Builtin {
	return starlark.NewBuiltin(b.Name(), func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		bud := budgetOf(th)
		if err := bud.charge(size(args, kwargs, bud.room())); err != nil {
			return nil, err
		}
		return starlark.Call(th, b, args, kwargs)
	})
}
