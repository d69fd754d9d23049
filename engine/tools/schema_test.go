package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParams_Decode(t *testing.T) {
	ps := params{
		{Name: "path", Type: "string", Required: true},
		{Name: "n", Type: "integer", Min: bound(1), Max: bound(10)},
		{Name: "flag", Type: "boolean"},
	}
	type args struct {
		Path string `json:"path"`
		N    *int64 `json:"n"`
		Flag bool   `json:"flag"`
	}
	tests := []struct {
		in      string
		wantErr string // "" for success
		wantN   int64
	}{
		{in: `{"path": "a"}`},
		{in: `{"path": "a", "n": 3}`, wantN: 3},
		{in: `{"path": "a", "n": 3.0}`, wantN: 3},
		{in: `{"path": "a", "n": null, "flag": null}`},
		{in: `{}`, wantErr: "path is required"},
		{in: ``, wantErr: "path is required"},
		{in: `{"path": 1}`, wantErr: "path must be a string, got a number"},
		{in: `{"path": "a", "n": "3"}`, wantErr: "n must be an integer, got a string"},
		{in: `{"path": "a", "n": 2.5}`, wantErr: "n must be an integer, got 2.5"},
		{in: `{"path": "a", "n": 0}`, wantErr: "n must be at least 1, got 0"},
		{in: `{"path": "a", "n": 11}`, wantErr: "n must be at most 10, got 11"},
		{in: `{"path": "a", "flag": "yes"}`, wantErr: "flag must be a boolean"},
		{in: `{"path": "a", "extra": 1}`, wantErr: `unknown argument "extra"`},
		{in: `{"path": null}`, wantErr: "path must be a string, got null"},
		{in: `[1]`, wantErr: "must be a JSON object"},
		{in: `{"path": "a"`, wantErr: "must be a JSON object"},
	}
	for _, tt := range tests {
		var a args
		err := ps.decode(json.RawMessage(tt.in), &a)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.in, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tt.in, err, tt.wantErr)
		case tt.wantErr == "" && tt.wantN != 0 && (a.N == nil || *a.N != tt.wantN):
			t.Errorf("%s: n = %v, want %d", tt.in, a.N, tt.wantN)
		}
		if err != nil && !strings.Contains(err.Error(), "expected path: string, n?: integer, flag?: boolean") {
			t.Errorf("%s: error %q does not list the arguments", tt.in, err)
		}
	}
}

func TestParams_Schema(t *testing.T) {
	var s struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
		Additional bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(readFileParams.Schema(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || len(s.Required) != 1 || s.Required[0] != "path" || s.Additional {
		t.Errorf("schema = %+v", s)
	}
	if s.Properties["offset"]["type"] != "integer" || s.Properties["offset"]["minimum"] != 0.0 {
		t.Errorf("offset = %v", s.Properties["offset"])
	}
}
