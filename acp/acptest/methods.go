package acptest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// What an agent's method table must agree with, method by method: the
// definitions of the params it reads and of the results it answers, so a
// test can check each entry's Go types against the schema (acp's
// methods_test.go does, for every entry).

// clientParams are the definitions of the params of the methods a client
// sends an agent: its requests and its notifications.
var clientParams = map[string]string{
	"initialize":                "InitializeRequest",
	"authenticate":              "AuthenticateRequest",
	"session/new":               "NewSessionRequest",
	"session/load":              "LoadSessionRequest",
	"session/resume":            "ResumeSessionRequest",
	"session/list":              "ListSessionsRequest",
	"session/delete":            "DeleteSessionRequest",
	"session/fork":              "ForkSessionRequest", // UNSTABLE
	"session/close":             "CloseSessionRequest",
	"session/prompt":            "PromptRequest",
	"session/set_config_option": "SetSessionConfigOptionRequest",
	"session/set_mode":          "SetSessionModeRequest",
	"session/cancel":            "CancelNotification",
	"$/cancel_request":          "CancelRequestNotification",
}

// ParamsDef is the schema definition of the params of method, a request or
// notification a client sends an agent; "" when acptest knows none.
func ParamsDef(method string) string { return clientParams[method] }

// ResultDef is the schema definition of the result of method, a request a
// client sends an agent; "" when acptest knows none.
func ResultDef(method string) string { return responseResults[method] }

// CheckResult reports why result is not a result of method as the schema
// defines it: not valid against its definition, or with a member the
// definition does not name (outside _meta, where anything goes). The
// schema lets unknown members pass; a misspelt optional member would pass
// too, so they are looked for here.
func CheckResult(method string, result []byte) error {
	d := ResultDef(method)
	if d == "" {
		return fmt.Errorf("acptest knows no result definition for %s", method)
	}
	if err := checkDef(d, result); err != nil {
		return err
	}
	if unstableToo[method] {
		return CheckUnstableResult(method, result)
	}
	return nil
}

// CheckUpdate reports why update is not a session update (a SessionUpdate:
// the update object of a session/update notification), as CheckResult
// does for results.
func CheckUpdate(update []byte) error {
	params, err := json.Marshal(map[string]any{"sessionId": "s-1", "update": json.RawMessage(update)})
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return checkDef("SessionNotification", params)
}

func checkDef(name string, instance []byte) error {
	var v any
	if err := json.Unmarshal(instance, &v); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := validate(name, v); err != nil {
		return err
	}
	w, node, err := defNode(name)
	if err != nil {
		return err
	}
	var unknown []string
	w.unknownMembers(node, v, "", &unknown)
	if len(unknown) > 0 && w.stable {
		// A member the stable schema does not name may be an UNSTABLE
		// feature coda serves where it is advertised (session/fork's
		// capability): named by the unstable schema, it passes.
		if u, unode := unstableNode(name); unode != nil {
			var still []string
			u.unknownMembers(unode, v, "", &still)
			unknown = slices.DeleteFunc(unknown, func(p string) bool { return !slices.Contains(still, p) })
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("%s names no member %s", name, strings.Join(unknown, ", "))
	}
	return nil
}

// Members lists the members definition name names at its top (through
// $ref, allOf, anyOf and oneOf), and those it requires.
func Members(name string) (named, required []string, err error) {
	w, node, err := defNode(name)
	if err != nil {
		return nil, nil, err
	}
	props, req := w.collect(node, nil)
	for k := range props {
		named = append(named, k)
	}
	slices.Sort(named)
	return named, req, nil
}

// A view is one of the schemas' definitions: the stable schema's, or the
// unstable one's for what only it defines.
type view struct {
	defs   map[string]any
	stable bool
}

// defNode is the schema's definition name, undecoded into any, and the
// schema it is in.
func defNode(name string) (view, any, error) {
	if _, err := def(name); err != nil {
		return view{}, nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	defs, _ := rootDefs["$defs"].(map[string]any)
	if defs[name] != nil {
		return view{defs: defs, stable: true}, defs[name], nil
	}
	udefs, _ := unstableDefs["$defs"].(map[string]any)
	return view{defs: udefs}, udefs[name], nil
}

// unstableNode is the unstable schema's definition name; nil when it has
// none.
func unstableNode(name string) (view, any) {
	mu.Lock()
	defer mu.Unlock()
	udefs, _ := unstableDefs["$defs"].(map[string]any)
	return view{defs: udefs}, udefs[name]
}

// resolve follows a node's $ref.
func (w view) resolve(node any) map[string]any {
	m, _ := node.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			break
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok {
			break
		}
		m, _ = w.defs[name].(map[string]any)
	}
	return m
}

// collect gathers the member schemas a node names for an instance v (nil:
// for any instance), and its required members: its properties, those of
// its allOf branches, and those of the anyOf and oneOf branches v may
// match.
func (w view) collect(node any, v any) (props map[string]any, required []string) {
	props = map[string]any{}
	var walk func(node any)
	walk = func(node any) {
		m := w.resolve(node)
		if m == nil {
			return
		}
		if p, ok := m["properties"].(map[string]any); ok {
			for k, s := range p {
				if _, seen := props[k]; !seen {
					props[k] = s
				}
			}
		}
		for _, r := range asList(m["required"]) {
			if s, ok := r.(string); ok {
				required = append(required, s)
			}
		}
		for _, b := range asList(m["allOf"]) {
			walk(b)
		}
		for _, key := range []string{"anyOf", "oneOf"} {
			for _, b := range asList(m[key]) {
				if v == nil || w.mayMatch(b, v) {
					walk(b)
				}
			}
		}
	}
	walk(node)
	return props, required
}

// mayMatch reports whether an anyOf or oneOf branch may be the one v
// matches: its type allows v's, its const members agree, and v has its
// required members.
func (w view) mayMatch(branch any, v any) bool {
	m := w.resolve(branch)
	if m == nil {
		return false
	}
	if t, ok := m["type"]; ok && !typeAllows(t, v) {
		return false
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return true
	}
	if p, ok := m["properties"].(map[string]any); ok {
		for k, s := range p {
			if c, ok := s.(map[string]any)["const"]; ok && obj[k] != c {
				return false
			}
		}
	}
	for _, r := range asList(m["required"]) {
		if s, ok := r.(string); ok {
			if _, has := obj[s]; !has {
				return false
			}
		}
	}
	return true
}

func typeAllows(t any, v any) bool {
	want := "null"
	switch v.(type) {
	case map[string]any:
		want = "object"
	case []any:
		want = "array"
	case string:
		want = "string"
	case float64:
		want = "number"
	case bool:
		want = "boolean"
	}
	for _, x := range append(asList(t), t) {
		if s, ok := x.(string); ok && (s == want || (s == "integer" && want == "number")) {
			return true
		}
	}
	return false
}

func asList(x any) []any {
	l, _ := x.([]any)
	return l
}

// unknownMembers adds to out the paths of v's members that node does not
// name. An object node that names no members is free-form, as _meta is.
func (w view) unknownMembers(node any, v any, path string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		props, _ := w.collect(node, v)
		if len(props) == 0 {
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if k == "_meta" {
				continue
			}
			sub, ok := props[k]
			if !ok {
				*out = append(*out, path+"/"+k)
				continue
			}
			w.unknownMembers(sub, v[k], path+"/"+k, out)
		}
	case []any:
		items := w.itemsOf(node, v)
		for i, x := range v {
			if items != nil {
				w.unknownMembers(items, x, fmt.Sprintf("%s/%d", path, i), out)
			}
		}
	}
}

// itemsOf is the schema of an array node's items.
func (w view) itemsOf(node any, v any) any {
	m := w.resolve(node)
	if m == nil {
		return nil
	}
	if items, ok := m["items"]; ok {
		return items
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		for _, b := range asList(m[key]) {
			if key == "allOf" || w.mayMatch(b, v) {
				if items := w.itemsOf(b, v); items != nil {
					return items
				}
			}
		}
	}
	return nil
}

// clientResults are the definitions of the results of the methods an agent
// calls on the client.
var clientResults = map[string]string{
	"fs/read_text_file":          "ReadTextFileResponse",
	"fs/write_text_file":         "WriteTextFileResponse",
	"session/request_permission": "RequestPermissionResponse",
	"terminal/create":            "CreateTerminalResponse",
	"terminal/output":            "TerminalOutputResponse",
	"terminal/wait_for_exit":     "WaitForTerminalExitResponse",
	"terminal/kill":              "KillTerminalResponse",
	"terminal/release":           "ReleaseTerminalResponse",
	"elicitation/create":         "CreateElicitationResponse",
}

// CallResultDef is the schema definition of the result of method, one an
// agent calls on the client; "" when acptest knows none.
func CallResultDef(method string) string { return clientResults[method] }

// CheckCall reports why params are not the params of method, one an agent
// calls on the client, as CheckResult does for results.
func CheckCall(method string, params []byte) error {
	d := requestParams[method]
	if d == "" {
		return fmt.Errorf("acptest knows no params definition for %s", method)
	}
	return checkDef(d, params)
}
