package validators

import (
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	"github.com/goccy/go-yaml"
	starlarkjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
)

// predeclared are the names a validator sees besides Starlark's built-ins.
// They are made when the first validator is loaded, not at start-up.
var predeclared = sync.OnceValue(func() starlark.StringDict {
	d := starlark.StringDict{
		"parse_json": starlark.NewBuiltin("parse_json", parseHelper(parseJSONValue)),
		"parse_yaml": starlark.NewBuiltin("parse_yaml", parseHelper(parseYAMLValue)),
		"parse_toml": starlark.NewBuiltin("parse_toml", parseHelper(parseTOMLValue)),
		"parse_csv":  starlark.NewBuiltin("parse_csv", parseHelper(parseCSVValue)),
		"parse_xml":  starlark.NewBuiltin("parse_xml", parseHelper(parseXMLValue)),
		"json":       jsonModule(),
	}
	// The guards of guards.go: the rewrite's, and the built-ins that
	// build or render values, shadowed by charged ones.
	for _, g := range []starlark.StringDict{guards(), shadowed()} {
		for name, v := range g {
			d[name] = v
		}
	}
	d.Freeze()
	return d
})

// parseHelper makes a builtin parse_X(text, default=...) from a parser. Bad
// text fails the script with the parser's positioned message, unless
// default is given: then default is returned instead.
func parseHelper(parse func(th *starlark.Thread, s string) (starlark.Value, *Error)) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var s string
		var def starlark.Value
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &s, "default?", &def); err != nil {
			return nil, err
		}
		// What a parse builds: some 32 bytes of values per byte of text
		// at most (YAML's aliases are bounded apart).
		if err := budgetOf(th).charge(32 * uint64(len(s))); err != nil {
			return nil, err
		}
		v, e := parse(th, s)
		if e != nil {
			if def != nil {
				return def, nil
			}
			return nil, fmt.Errorf("%s: %v", b.Name(), e)
		}
		return v, nil
	}
}

var jsonDecode = starlarkjson.Module.Members["decode"]

// parseJSONValue decodes with go.starlark.net/lib/json (objects become
// dicts in document order) and explains a failure with Check's message.
// A key twice in one object fails as it fails Check.
func parseJSONValue(th *starlark.Thread, s string) (starlark.Value, *Error) {
	v, err := starlark.Call(th, jsonDecode, starlark.Tuple{starlark.String(s)}, nil)
	if err == nil {
		if e := jsonDuplicateKey(s); e != nil {
			return nil, e
		}
		return v, nil
	}
	if json := checkJSON(s); json != nil {
		return nil, json.(*Error)
	}
	return nil, &Error{Msg: strings.TrimPrefix(err.Error(), "json.decode: ")}
}

// parseYAMLValue decodes the first YAML document, its aliases bounded as
// Check bounds them; mappings keep their order and their keys become
// strings.
func parseYAMLValue(_ *starlark.Thread, s string) (starlark.Value, *Error) {
	docs, e := yamlDocs(s)
	if e != nil {
		return nil, e
	}
	if len(docs) == 0 {
		return starlark.None, nil
	}
	if e := yamlAliasBomb(s, docs[0].Body); e != nil {
		return nil, e
	}
	var v any
	if err := yaml.NodeToValue(docs[0].Body, &v, yaml.UseOrderedMap()); err != nil {
		return nil, yamlError(err)
	}
	return toStarlark(v), nil
}

// parseTOMLValue decodes a TOML document; dates and times become strings
// and each table's keys are sorted.
func parseTOMLValue(_ *starlark.Thread, s string) (starlark.Value, *Error) {
	var v map[string]any
	if _, err := toml.Decode(s, &v); err != nil {
		return nil, tomlError(err)
	}
	return toStarlark(jsonLike(map[string]any(v))), nil
}

// parseCSVValue reads CSV records into a list of rows, each a list of
// strings. Rows may differ in length.
func parseCSVValue(_ *starlark.Thread, s string) (starlark.Value, *Error) {
	rows, e := parseCSV(s)
	if e != nil {
		return nil, e
	}
	out := make([]starlark.Value, len(rows))
	for i, row := range rows {
		cells := make([]starlark.Value, len(row))
		for j, c := range row {
			cells[j] = starlark.String(c)
		}
		out[i] = starlark.NewList(cells)
	}
	return starlark.NewList(out), nil
}

// parseXMLValue builds the document's root element as a tree of dicts
// (see the package documentation), with Check's rules for XML.
func parseXMLValue(_ *starlark.Thread, s string) (starlark.Value, *Error) {
	var t xmlTree
	if e := walkXML(s, &t); e != nil {
		return nil, e
	}
	return t.root, nil
}

// xmlTree is the xmlVisitor that builds parse_xml's dicts.
type xmlTree struct {
	root  *starlark.Dict
	stack []*xmlNode
}

type xmlNode struct {
	dict     *starlark.Dict
	text     strings.Builder
	children *starlark.List
}

func (t *xmlTree) start(el xml.StartElement) {
	n := &xmlNode{dict: starlark.NewDict(5), children: starlark.NewList(nil)}
	attrs := starlark.NewDict(len(el.Attr))
	for _, a := range el.Attr {
		_ = attrs.SetKey(starlark.String(attrName(a.Name)), starlark.String(a.Value))
	}
	_ = n.dict.SetKey(starlark.String("tag"), starlark.String(el.Name.Local))
	_ = n.dict.SetKey(starlark.String("ns"), starlark.String(el.Name.Space))
	_ = n.dict.SetKey(starlark.String("attrs"), attrs)
	_ = n.dict.SetKey(starlark.String("text"), starlark.String(""))
	_ = n.dict.SetKey(starlark.String("children"), n.children)
	if len(t.stack) > 0 {
		_ = t.stack[len(t.stack)-1].children.Append(n.dict)
	}
	t.stack = append(t.stack, n)
}

func (t *xmlTree) text(data []byte) {
	t.stack[len(t.stack)-1].text.Write(data)
}

func (t *xmlTree) end() {
	n := t.stack[len(t.stack)-1]
	t.stack = t.stack[:len(t.stack)-1]
	_ = n.dict.SetKey(starlark.String("text"), starlark.String(strings.TrimSpace(n.text.String())))
	if len(t.stack) == 0 {
		t.root = n.dict
	}
}

// attrName spells an attribute's name: its local name, "xmlns" or
// "xmlns:p" for namespace declarations, "{uri}local" for other
// namespaced attributes.
func attrName(n xml.Name) string {
	switch n.Space {
	case "":
		return n.Local
	case "xmlns":
		return "xmlns:" + n.Local
	}
	return "{" + n.Space + "}" + n.Local
}

// toStarlark converts decoded data (as jsonLike returns it, or YAML's
// ordered maps) into Starlark values.
func toStarlark(v any) starlark.Value {
	switch v := v.(type) {
	case nil:
		return starlark.None
	case bool:
		return starlark.Bool(v)
	case string:
		return starlark.String(v)
	case int64:
		return starlark.MakeInt64(v)
	case int:
		return starlark.MakeInt(v)
	case uint64:
		return starlark.MakeUint64(v)
	case float64:
		return starlark.Float(v)
	case yaml.MapSlice:
		d := starlark.NewDict(len(v))
		for _, it := range v {
			_ = d.SetKey(starlark.String(fmt.Sprint(it.Key)), toStarlark(it.Value))
		}
		return d
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		d := starlark.NewDict(len(v))
		for _, k := range keys {
			_ = d.SetKey(starlark.String(k), toStarlark(v[k]))
		}
		return d
	case []any:
		elems := make([]starlark.Value, len(v))
		for i, x := range v {
			elems[i] = toStarlark(x)
		}
		return starlark.NewList(elems)
	}
	switch w := jsonLike(v).(type) {
	case nil, bool, string, int64, float64, map[string]any, []any:
		return toStarlark(w)
	}
	return starlark.String(fmt.Sprint(v))
}
