package sse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coda-acp/coda/engine/llm"
)

func readLines(r io.Reader) ([]string, error) {
	lr := NewLineReader(r)
	var out []string
	for {
		e, err := lr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, string(e.Data))
	}
}

func TestLineReader(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"{\"a\":1}\n{\"b\":2}\n", []string{`{"a":1}`, `{"b":2}`}},
		{"{\"a\":1}\r\n\r\n\n{\"b\":2}", []string{`{"a":1}`, `{"b":2}`}}, // blank lines skipped, a last line without an ending kept
		{"", nil},
		{"\n\n", nil},
		{"  {\"a\":1}  \n", []string{`{"a":1}`}},
		{"data: x\n\n", []string{"data: x"}}, // no SSE framing
	}
	for _, tt := range tests {
		got, err := readLines(iotest.OneByteReader(strings.NewReader(tt.in)))
		if err != nil || !cmp.Equal(got, tt.want) {
			t.Errorf("%q: %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	long := strings.Repeat("x", 200<<10) // longer than the read buffer
	got, err := readLines(strings.NewReader(long + "\nend\n"))
	if err != nil || len(got) != 2 || got[0] != long || got[1] != "end" {
		t.Errorf("a long line: %d lines, %v", len(got), err)
	}
}

func TestLineReader_cap(t *testing.T) {
	big := io.MultiReader(strings.NewReader("{\"a\":\""), io.LimitReader(zeros{}, MaxEventSize+10), strings.NewReader("\"}\n"))
	if _, err := readLines(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a line past the cap: %v", err)
	}
	fail := errors.New("broken")
	if _, err := readLines(io.MultiReader(strings.NewReader("{}\n{"), iotest.ErrReader(fail))); !errors.Is(err, fail) {
		t.Errorf("a read error: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestShaping_refused(t *testing.T) {
	all := Shaping{Strict: true, ToolChoice: true, Reply: true}
	tests := []struct {
		code    int
		msg     string
		param   string
		shaping Shaping
		want    string
	}{
		{400, "Invalid schema for response_format 'answer': In context=(), 'additionalProperties' is required to be supplied and to be false.", "response_format", all, MechanismReply},
		{400, "'response_format.type' must be 'json_schema' or 'text'", "", Shaping{Reply: true}, MechanismReply}, // LM Studio, json_object
		{400, "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", "tool_choice", all, MechanismToolChoice},
		{400, "Invalid schema for function 'submit_output': In context=('properties', 'tags'), 'required' is required to be supplied", "tools[0].function.parameters", Shaping{Strict: true}, MechanismStrict},
		{400, `Invalid JSON payload received. Unknown name "strict" at 'tools[0].function': Cannot find field.`, "", Shaping{Strict: true}, MechanismStrict},
		{500, "invalid JSON schema in format", "", Shaping{Reply: true}, MechanismReply}, // Ollama
		{422, "response_format json_schema is not supported with this model", "", Shaping{Reply: true}, MechanismReply},
		// Not used, not refused: the words alone do not make a refusal.
		{400, "Invalid schema for response_format 'answer'", "", Shaping{Strict: true}, ""},
		{400, "Invalid value for 'tool_choice'", "", Shaping{}, ""},
		// Not a refusal of a mechanism at all.
		{400, "This model's maximum context length is 128000 tokens.", "messages", all, ""},
		{429, "Rate limit reached for response_format requests", "", all, ""},
		{401, "Incorrect API key provided", "", all, ""},
	}
	for _, tt := range tests {
		e := &StatusError{Code: tt.code, Message: tt.msg, Param: tt.param}
		if got := tt.shaping.refused(e); got != tt.want {
			t.Errorf("%d %q with %+v: %q, want %q", tt.code, tt.msg, tt.shaping, got, tt.want)
		}
	}
}

// A server that refuses a mechanism the request used is asked once: the
// error is a *llm.MechanismError naming it, with the key masked; one
// that refuses something else is an ordinary status error.
func TestCall_DoShaped(t *testing.T) {
	const key = "sk-test-Zq8RrT2vLx9PmW4kN7bH3c"
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"Invalid schema for response_format 'answer' (key %s)","type":"invalid_request_error","param":"response_format","code":null}}`, key)
	}))
	defer srv.Close()
	c := Call{Name: "openai:m", Client: srv.Client(), URL: srv.URL, Secret: key, Retry: Retry{Sleep: func(context.Context, time.Duration) error { return nil }}}
	read := func(context.Context, *Reader, *bool) error { return nil }
	err := c.DoShaped(context.Background(), []byte(`{}`), Shaping{Reply: true}, read)
	var me *llm.MechanismError
	if !errors.As(err, &me) || me.Mechanism != MechanismReply || !errors.Is(err, llm.ErrMechanismRefused) {
		t.Fatalf("err %v, want a reply_format MechanismError", err)
	}
	if strings.Contains(err.Error(), key) || !strings.HasPrefix(err.Error(), "openai:m: reply_format refused: HTTP 400") {
		t.Errorf("err %q", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d tries, want 1", n)
	}
	err = c.DoShaped(context.Background(), []byte(`{}`), Shaping{Strict: true}, read)
	var serr *StatusError
	if errors.As(err, &me) || !errors.As(err, &serr) || serr.Param != "response_format" {
		t.Errorf("a mechanism not used: %v", err)
	}
}

func TestCall_JSON(t *testing.T) {
	const key = "sk-test-Zq8RrT2vLx9PmW4kN7bH3c"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/models":
			if r.Method != http.MethodGet || r.Header.Get("Authorization") != "Bearer "+key {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, r.Header.Get("Authorization"))
				return
			}
			io.WriteString(w, `{"data":[{"id":"a"}]}`)
		case "/show":
			body, _ := io.ReadAll(r.Body)
			if r.Method != http.MethodPost || string(body) != `{"model":"m"}` || r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			io.WriteString(w, `{"ok":true}`)
		case "/big":
			w.Write([]byte(`"`))
			io.Copy(w, io.LimitReader(zeros{}, MaxJSONReply))
			w.Write([]byte(`"`))
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"model \"m\" not found, try pulling it first"}`)
		}
	}))
	defer srv.Close()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	c := Call{Name: "p:m", Client: srv.Client(), Header: h, Secret: key}
	var list struct{ Data []struct{ ID string } }
	if err := c.JSON(context.Background(), srv.URL+"/models", nil, &list); err != nil || len(list.Data) != 1 {
		t.Errorf("GET: %v %v", list, err)
	}
	var ok struct{ OK bool }
	if err := c.JSON(context.Background(), srv.URL+"/show", []byte(`{"model":"m"}`), &ok); err != nil || !ok.OK {
		t.Errorf("POST: %v %v", ok, err)
	}
	if err := c.JSON(context.Background(), srv.URL+"/nothing", nil, &ok); !errors.Is(err, llm.ErrModelUnavailable) || !strings.HasPrefix(err.Error(), "p:m: ") {
		t.Errorf("404: %v", err)
	}
	var s string
	if err := c.JSON(context.Background(), srv.URL+"/big", nil, &s); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a reply past the cap: %v", err)
	}
	bad := c
	bad.Header = http.Header{"Authorization": {"Bearer " + key + "x"}}
	err := bad.JSON(context.Background(), srv.URL+"/models", nil, &list)
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("401: %v", err)
	}
}
