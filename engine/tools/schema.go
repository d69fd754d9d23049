package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A param is one argument of a tool. A tool's params are both its JSON
// Schema (what the model is told) and the check its arguments pass before
// the tool runs, so the two cannot drift apart.
type param struct {
	Name        string
	Type        string // "string", "integer" or "boolean"
	Description string
	Required    bool
	Min, Max    *int64 // integers only
}

type params []param

func bound(n int64) *int64 { return &n }

// Schema is the JSON Schema of the arguments object.
func (ps params) Schema() json.RawMessage {
	type prop struct {
		Type        string `json:"type"`
		Description string `json:"description,omitempty"`
		Minimum     *int64 `json:"minimum,omitempty"`
		Maximum     *int64 `json:"maximum,omitempty"`
	}
	props := make(map[string]prop, len(ps))
	required := []string{}
	for _, p := range ps {
		props[p.Name] = prop{Type: p.Type, Description: p.Description, Minimum: p.Min, Maximum: p.Max}
		if p.Required {
			required = append(required, p.Name)
		}
	}
	b, err := json.Marshal(struct {
		Type                 string          `json:"type"`
		Properties           map[string]prop `json:"properties"`
		Required             []string        `json:"required"`
		AdditionalProperties bool            `json:"additionalProperties"`
	}{"object", props, required, false})
	if err != nil {
		panic(err) // static data
	}
	return b
}

// decode checks args against the schema and decodes them into v. The error
// is written for the model. A null optional argument counts as absent, as
// models send that for "not given".
func (ps params) decode(args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return fmt.Errorf("the arguments must be a JSON object (%s)", ps.summary())
	}
	var problems []string
	for name := range obj {
		if !slices.ContainsFunc(ps, func(p param) bool { return p.Name == name }) {
			problems = append(problems, fmt.Sprintf("unknown argument %q", name))
		}
	}
	slices.Sort(problems)
	for _, p := range ps {
		raw, ok := obj[p.Name]
		if ok && string(bytes.TrimSpace(raw)) == "null" && !p.Required {
			delete(obj, p.Name)
			ok = false
		}
		if !ok {
			if p.Required {
				problems = append(problems, fmt.Sprintf("%s is required", p.Name))
			}
			continue
		}
		norm, msg := p.check(raw)
		if msg != "" {
			problems = append(problems, msg)
		}
		obj[p.Name] = norm
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid arguments: %s (%s)", strings.Join(problems, "; "), ps.summary())
	}
	cleaned, _ := json.Marshal(obj)
	if err := json.Unmarshal(cleaned, v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

// check returns the value in normal form (an integer written 10.0 becomes
// 10), or what is wrong with it.
func (p param) check(raw json.RawMessage) (json.RawMessage, string) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return raw, fmt.Sprintf("%s is not valid JSON", p.Name)
	}
	switch p.Type {
	case "string":
		if _, ok := v.(string); !ok {
			return raw, fmt.Sprintf("%s must be a string, got %s", p.Name, jsonType(v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return raw, fmt.Sprintf("%s must be a boolean, got %s", p.Name, jsonType(v))
		}
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return raw, fmt.Sprintf("%s must be an integer, got %s", p.Name, jsonType(v))
		}
		i, err := n.Int64()
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
				return raw, fmt.Sprintf("%s must be an integer, got %s", p.Name, n)
			}
			i = int64(f)
		}
		if p.Min != nil && i < *p.Min {
			return raw, fmt.Sprintf("%s must be at least %d, got %d", p.Name, *p.Min, i)
		}
		if p.Max != nil && i > *p.Max {
			return raw, fmt.Sprintf("%s must be at most %d, got %d", p.Name, *p.Max, i)
		}
		return json.RawMessage(strconv.FormatInt(i, 10)), ""
	}
	return raw, ""
}

// summary lists the arguments, for an error message: "path: string,
// offset?: integer".
func (ps params) summary() string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		opt := ""
		if !p.Required {
			opt = "?"
		}
		parts[i] = fmt.Sprintf("%s%s: %s", p.Name, opt, p.Type)
	}
	return "expected " + strings.Join(parts, ", ")
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
