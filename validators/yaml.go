package validators

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// checkYAML accepts one YAML document whose top level is a mapping or a
// sequence. Prose and a lone value are valid YAML scalars, so a scalar is
// refused: it is what a model writes when it forgets the format.
func checkYAML(content string) error {
	if e := frame(content, kindYAML); e != nil {
		return e
	}
	// Decoding finds what parsing leaves (an alias to no anchor, a bad
	// merge key); its cost is about the parse's.
	if _, err := decodeYAML(content); err != nil {
		return err
	}
	return nil
}

// parseYAML parses content into its one document's body, applying the
// rules of checkYAML.
func parseYAML(content string) (ast.Node, *Error) {
	body, e := parseYAMLDoc(content)
	if e != nil {
		return nil, e
	}
	data := body
	for {
		switch n := data.(type) {
		case *ast.TagNode:
			data = n.Value
			continue
		case *ast.AnchorNode:
			data = n.Value
			continue
		}
		break
	}
	switch data.Type() {
	case ast.MappingType, ast.MappingValueType, ast.SequenceType:
		return body, nil
	}
	line, col := 0, 0
	if tk := data.GetToken(); tk != nil && tk.Position != nil {
		line, col = tk.Position.Line, tk.Position.Column
	}
	return nil, &Error{Line: line, Column: col, Msg: "this is plain text or a single value, not YAML data: the answer must be a YAML mapping (key: value lines) or a sequence (- item lines)"}
}

// maxYAMLDepth bounds nesting: goccy/go-yaml takes time quadratic in the
// depth ("[[[[..." or "- - - -..." of 256 KiB runs for minutes), and no
// real answer comes near it.
const maxYAMLDepth = 100

// yamlTooDeep finds a line that nests deeper than maxYAMLDepth, counting
// open flow brackets ([ and {) and the block indicators (- ? :) a line
// starts with. It may undercount (brackets in quotes are skipped, a quote
// in a plain scalar hides the rest of its line), never overcount a sane
// document.
func yamlTooDeep(content string) *Error {
	depth := 0
	var bad *Error
	if i := strings.Index(content, strings.Repeat("<", maxYAMLDepth+1)); i >= 0 {
		// goccy/go-yaml rescans a run of "<" at each of its characters
		line, col := position(content, i)
		return &Error{Line: line, Column: col, Msg: fmt.Sprintf("a run of more than %d \"<\" is not YAML data", maxYAMLDepth)}
	}
	lines(content, func(n int, line string) bool {
		rest := strings.TrimLeft(line, " ")
		block := 0
		for len(rest) > 1 && strings.IndexByte("-?:", rest[0]) >= 0 && (rest[1] == ' ' || rest[1] == '\t') {
			block++
			rest = strings.TrimLeft(rest[2:], " \t")
		}
		var quote byte
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '"' || c == '\'':
				quote = c
			case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
				i = len(line)
			case c == '[' || c == '{':
				depth++
			case (c == ']' || c == '}') && depth > 0:
				depth--
			}
			if depth+block > maxYAMLDepth {
				bad = &Error{Line: n, Msg: fmt.Sprintf("the YAML nests more than %d levels deep here: flatten it", maxYAMLDepth)}
				return false
			}
		}
		return true
	})
	return bad
}

// yamlDocs parses content into its documents that have a body. Every
// reader of YAML starts here, so each has the same bounds.
func yamlDocs(content string) ([]*ast.DocumentNode, *Error) {
	if e := yamlTooDeep(content); e != nil {
		return nil, e
	}
	src := []byte(content)
	if !strings.HasSuffix(content, "\n") {
		// goccy/go-yaml drops a block scalar's last line break when the
		// document has none at its end (yaml-test-suite L24T); YAML reads
		// the end of the text as one.
		src = append(src, '\n')
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, yamlUnreadable(content, yamlError(err))
	}
	var docs []*ast.DocumentNode
	for _, d := range f.Docs {
		if _, directive := d.Body.(*ast.DirectiveNode); directive {
			continue // goccy/go-yaml reads %YAML and %TAG as a document of their own
		}
		if d.Body != nil {
			docs = append(docs, d)
		}
	}
	return docs, nil
}

// parseYAMLDoc parses content into the body of its one document, its
// aliases bounded.
func parseYAMLDoc(content string) (ast.Node, *Error) {
	docs, e := yamlDocs(content)
	if e != nil {
		return nil, e
	}
	if len(docs) == 0 {
		return nil, &Error{Msg: "the answer has no YAML data: submit the YAML document"}
	}
	if len(docs) > 1 {
		line := 0
		if tk := docs[1].GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		return nil, &Error{Line: line, Msg: fmt.Sprintf("a second YAML document starts here (%d in all): submit one document (put several items in a sequence)", len(docs))}
	}
	if e := yamlAliasBomb(content, docs[0].Body); e != nil {
		return nil, e
	}
	return docs[0].Body, nil
}

// maxYAMLAliased bounds the values a YAML document's aliases may stand
// for, beyond the values it writes out. goccy/go-yaml decodes an alias as
// the anchor's value, shared; but every reader of the data (a JSON Schema,
// the normalisation to JSON-like values, a validator's parse_yaml) walks
// it in full, so 342 bytes of nine anchors of nine aliases each stand for
// 387 million values. A real answer repeats a block a few times.
const maxYAMLAliased = 1 << 18

// yamlAliasBomb counts, in document order, the values body's aliases
// stand for, and refuses the document at the alias that takes them past
// maxYAMLAliased. The count is linear in the document: each anchor's size
// is counted once, where it is defined, and an alias adds it. An alias
// inside its own anchor stands for nothing (goccy/go-yaml decodes it as
// null), and a redefined anchor counts from where it is redefined, as the
// decoder resolves it.
func yamlAliasBomb(content string, body ast.Node) *Error {
	if !strings.Contains(content, "*") {
		return nil // no alias
	}
	w := aliasCount{anchors: map[string]int{}}
	w.walk(body)
	return w.bomb
}

type aliasCount struct {
	total, aliased int            // values walked, and those added by aliases
	anchors        map[string]int // values each anchor stands for
	bomb           *Error
}

func (w *aliasCount) walk(n ast.Node) {
	if w.bomb != nil || n == nil {
		return
	}
	switch n := n.(type) {
	case *ast.AnchorNode:
		name := n.Name.GetToken().Value
		w.anchors[name] = 1 // an alias to it from inside is null
		before := w.total
		w.walk(n.Value)
		w.anchors[name] = w.total - before
	case *ast.AliasNode:
		size, ok := w.anchors[n.Value.GetToken().Value]
		if !ok {
			size = 1 // decoding reports the missing anchor
		}
		w.total += size
		w.aliased += size - 1
		if w.aliased > maxYAMLAliased {
			tk := n.GetToken()
			w.bomb = &Error{Msg: fmt.Sprintf("the aliases in this YAML (like %s here) stand for more than %d values when expanded: write the repeated parts out, or use far fewer aliases",
				quote("*"+n.Value.GetToken().Value), maxYAMLAliased)}
			if tk != nil && tk.Position != nil {
				w.bomb.Line, w.bomb.Column = tk.Position.Line, tk.Position.Column
			}
		}
	case *ast.MappingNode:
		w.total++
		for _, v := range n.Values {
			w.walk(v)
		}
	case *ast.MappingValueNode:
		w.walk(n.Key)
		w.walk(n.Value)
	case *ast.MappingKeyNode:
		w.walk(n.Value)
	case *ast.SequenceNode:
		w.total++
		for _, v := range n.Values {
			w.walk(v)
		}
	case *ast.TagNode:
		w.walk(n.Value)
	default:
		w.total++
	}
}

// yamlError positions a goccy/go-yaml error.
func yamlError(err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &Error{Msg: ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			e.Line, e.Column = tk.Position.Line, tk.Position.Column
		}
		return e
	}
	return &Error{Msg: err.Error()}
}

// decodeYAML decodes a YAML answer into JSON-like Go values. It applies the
// rules of checkYAML first, so the data is a map or a slice. A plain
// document takes the fast path (yaml_fast.go), to the same data.
func decodeYAML(content string) (any, error) {
	v, err := decodeYAMLLenient(content)
	if err != nil {
		return nil, err
	}
	if l := yamlScan(content); l.bad != nil {
		return nil, l.bad
	}
	return v, nil
}

// decodeYAMLLenient is decodeYAML without yamlScan's refusals of what the
// specification forbids and goccy/go-yaml accepts.
func decodeYAMLLenient(content string) (any, error) {
	if yamlTooDeep(content) == nil {
		if v, ok := fastYAML(content); ok {
			return v, nil
		}
	}
	return decodeYAMLGoccy(content)
}

// decodeYAMLGoccy is decodeYAML through goccy/go-yaml alone.
func decodeYAMLGoccy(content string) (any, error) {
	body, e := parseYAML(content)
	if e != nil {
		return nil, e
	}
	ast.Walk(binaryAsText{}, body)
	var v any
	if err := yaml.NodeToValue(body, &v); err != nil {
		return nil, yamlUnreadable(content, yamlError(err))
	}
	return jsonLike(v), nil
}

// jsonLike normalises decoded YAML or TOML so that a JSON Schema validator
// sees what it would see for the same data written in JSON: string keys,
// int64 or float64 numbers, times as RFC 3339 strings.
func jsonLike(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonLike(x)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[fmt.Sprint(k)] = jsonLike(x)
		}
		return m
	case yaml.MapSlice:
		m := make(map[string]any, len(v))
		for _, it := range v {
			m[fmt.Sprint(it.Key)] = jsonLike(it.Value)
		}
		return m
	case []any:
		for i, x := range v {
			v[i] = jsonLike(x)
		}
		return v
	case []map[string]any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = jsonLike(x)
		}
		return s
	case int:
		return int64(v)
	case int8:
		return int64(v)
	case int16:
		return int64(v)
	case int32:
		return int64(v)
	case uint:
		return uintLike(uint64(v))
	case uint8:
		return int64(v)
	case uint16:
		return int64(v)
	case uint32:
		return int64(v)
	case uint64:
		return uintLike(v)
	case float32:
		return float64(v)
	case time.Time:
		return timeString(v)
	case fmt.Stringer: // TOML local dates and times
		return v.String()
	}
	return v
}

// timeString writes a time as RFC 3339; TOML's local dates and times
// (marked by BurntSushi/toml with these zone names) keep their local form.
func timeString(t time.Time) string {
	switch t.Location().String() {
	case "datetime-local":
		return t.Format("2006-01-02T15:04:05.999999999")
	case "date-local":
		return t.Format(time.DateOnly)
	case "time-local":
		return t.Format("15:04:05.999999999")
	}
	return t.Format(time.RFC3339Nano)
}

func uintLike(u uint64) any {
	if u <= math.MaxInt64 {
		return int64(u)
	}
	return float64(u)
}

// binaryAsText reads a !!binary scalar as its base64 text, as JSON writes
// binary data, rather than as the bytes goccy/go-yaml decodes it to.
type binaryAsText struct{}

func (b binaryAsText) Visit(n ast.Node) ast.Visitor {
	if t, ok := n.(*ast.TagNode); ok && t.Start != nil && t.Start.Value == "!!binary" {
		t.Start.Value = "!!str"
	}
	return b
}
