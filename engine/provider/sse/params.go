package sse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// What a stage's model parameters need of a call (provider.WithParams):
// its fields laid over the body, a server's refusal of one told apart,
// and the stage's own limit on the call's time.

// MergeJSON lays fields over the JSON object body: a field the body lacks
// is added, one it has is replaced, except that a table laid over a table
// is merged into it, field by field, the same way.
func MergeJSON(body []byte, fields map[string]any) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("the request body is not a JSON object: %w", err)
	}
	if err := merge(obj, fields); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func merge(obj map[string]json.RawMessage, fields map[string]any) error {
	for k, v := range fields {
		if sub, ok := v.(map[string]any); ok {
			var inner map[string]json.RawMessage
			if old, has := obj[k]; has && json.Unmarshal(old, &inner) == nil && inner != nil {
				if err := merge(inner, sub); err != nil {
					return err
				}
				raw, err := json.Marshal(inner)
				if err != nil {
					return err
				}
				obj[k] = raw
				continue
			}
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("parameter %s: %w", k, err)
		}
		obj[k] = raw
	}
	return nil
}

// refusedParam is the stage parameter a 400 or 422 refuses, of those the
// request carried: the one its error's param names, or whose field its
// message names as a word ("Unsupported parameter: 'temperature' is not
// supported with this model."); "" when it names none.
func (s Shaping) refusedParam(e *StatusError, named bool) string {
	if len(s.Params) == 0 || e.Code != 400 && e.Code != 422 {
		return ""
	}
	for field, name := range s.Params {
		leaf := field[strings.LastIndexByte(field, '.')+1:]
		if e.Param != "" && (e.Param == field || e.Param == leaf || strings.HasSuffix(e.Param, "."+leaf)) {
			return name
		}
		if !named && (hasWord(e.Message, leaf) || hasWord(e.Message, field)) {
			return name
		}
	}
	return ""
}

// hasWord reports whether w stands in s as a word of its own: not inside
// a longer name.
func hasWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !nameByte(s[j-1])) && (end == len(s) || !nameByte(s[end])) {
			return true
		}
		i = j + 1
	}
}

func nameByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// Within is c with its whole-call limit set to d, the stage's
// request_timeout_secs (llm.Request.Timeout); c itself when d is 0.
func (c Call) Within(d time.Duration) *Call {
	if d > 0 {
		c.MaxTime, c.limit = d, "the stage's request_timeout_secs"
	}
	return &c
}
