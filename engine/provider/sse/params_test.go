package sse

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coda-acp/coda/engine/llm"
)

// A 400 that names a stage parameter the request carried, by its error's
// param or as a word of its message, is that parameter refused; a word
// inside a longer name, another status or a parameter not sent is not.
func TestShaping_refusedParam(t *testing.T) {
	sh := Shaping{Params: map[string]string{"temperature": "temperature", "generationConfig.topP": "top_p", "stop": "stop"}}
	for _, tt := range []struct {
		e    StatusError
		want string
	}{
		{StatusError{Code: 400, Message: "Unsupported parameter: 'temperature' is not supported with this model.", Param: "temperature"}, "temperature"},
		{StatusError{Code: 400, Message: "temperature: Input should be less than or equal to 1"}, "temperature"},
		{StatusError{Code: 400, Message: `Invalid JSON payload received. Unknown name "topP" at 'generation_config'`}, "top_p"},
		{StatusError{Code: 400, Message: "bad", Param: "generationConfig.topP"}, "top_p"},
		{StatusError{Code: 422, Message: "`stop` is not allowed"}, "stop"},
		{StatusError{Code: 400, Message: "the stop_sequences list is too long"}, ""},
		{StatusError{Code: 400, Message: "max_temperature is not a field"}, ""},
		{StatusError{Code: 500, Message: "temperature"}, ""},
	} {
		if got := sh.refusedParam(&tt.e, false); got != tt.want {
			t.Errorf("%q (param %q): %q, want %q", tt.e.Message, tt.e.Param, got, tt.want)
		}
	}
	if got := (Shaping{}).refusedParam(&StatusError{Code: 400, Param: "temperature"}, false); got != "" {
		t.Errorf("a request without parameters refused %q", got)
	}
}

// Within gives the call the stage's limit, and the error says whose it
// was; the refusal of a parameter comes back as its MechanismError, not
// tried again.
func TestCall_Within(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.WriteHeader(400)
		w.Write([]byte(`{"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model.","param":"temperature"}}`))
	}))
	defer srv.Close()
	c := Call{Name: "m", URL: srv.URL, Client: srv.Client()}
	if got := c.Within(0); got.MaxTime != 0 || got.limit != "" {
		t.Errorf("Within(0) changed the call: %+v", got)
	}
	w := c.Within(time.Minute)
	if w.MaxTime != time.Minute || c.MaxTime != 0 {
		t.Errorf("Within: %v, and the call itself %v", w.MaxTime, c.MaxTime)
	}
	err := w.DoShaped(context.Background(), []byte(`{}`), Shaping{Params: map[string]string{"temperature": "temperature"}}, func(context.Context, *Reader, *bool) error { return nil })
	var me *llm.MechanismError
	if !errors.As(err, &me) || me.Mechanism != "param:temperature" || calls != 1 {
		t.Errorf("refused parameter: %v after %d calls, want param:temperature after 1", err, calls)
	}

	// The stage's limit, spent: the error names it (the deadline is one
	// already past, so no clock is waited on).
	past := Call{Name: "m", URL: srv.URL, Client: srv.Client()}.Within(time.Nanosecond)
	err = past.Do(context.Background(), []byte(`{}`), func(context.Context, *Reader, *bool) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "(the stage's request_timeout_secs)") {
		t.Errorf("spent limit: %v", err)
	}
}
