package acp

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/coda-acp/coda/acp/acptest"
	"github.com/coda-acp/coda/acp/pickers"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/internal/prices"
	"github.com/coda-acp/coda/outputspec"
	statestore "github.com/coda-acp/coda/store"
)

// exampleResults are representative results of every request of the
// method table, between them setting every field of every result type:
// TestMethods_results checks each against the schema's definition of that
// method's result, so a result type that strays from the schema (a
// misspelt member, a wrong type, a value out of its enum) fails here, not
// in an editor.
var exampleResults = map[string][]any{
	"initialize": {&initializeResponse{
		ProtocolVersion: ProtocolVersion,
		AgentInfo:       implementation{Name: "coda", Title: "coda", Version: "1.0.0"},
		AgentCapabilities: agentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  promptCapabilities{Image: true, Audio: true, EmbeddedContext: true},
			MCPCapabilities:     mcpCapabilities{HTTP: true, SSE: true},
			SessionCapabilities: sessionCapabilities{AdditionalDirectories: &struct{}{}, Close: &struct{}{}, Delete: &struct{}{}, Fork: &struct{}{}, List: &struct{}{}, Resume: &struct{}{}},
			Meta: codaMeta[codaCapabilities]{Coda: codaCapabilities{
				FinalOutput: true, Formats: []string{"json"}, JSONSchema: true, Validators: []string{"starlark"}, PromptQueueing: true, Steering: true,
				Output: publicSpec{Format: "json", Instructions: "Keys sorted.", Example: "{}", JSONSchema: true, Validator: "check.star"},
			}},
		},
		AuthMethods: []authMethod{{ID: "env", Name: "API key from the environment", Description: "Set ANTHROPIC_API_KEY."}},
	}},
	"authenticate": {&authenticateResponse{}},
	"session/new": {&newSessionResponse{
		SessionID: "s-1", ConfigOptions: exampleOptions, Modes: pickers.ModesOf(modeAsk), Meta: withWarnings([]string{"a warning"}),
	}},
	"session/load":   {&loadSessionResponse{ConfigOptions: exampleOptions, Modes: pickers.ModesOf(modeAsk), Meta: withWarnings([]string{"a warning"})}},
	"session/resume": {&resumeSessionResponse{ConfigOptions: exampleOptions, Modes: pickers.ModesOf(modeAsk), Meta: withWarnings([]string{"a warning"})}},
	"session/list": {&listSessionsResponse{
		Sessions: []*sessionInfo{{SessionID: "s-1", Cwd: "/w", AdditionalDirectories: []string{"/x"}, Title: "Where is it?", UpdatedAt: "2026-01-02T03:04:05Z",
			Meta: &codaMeta[sessionNote]{Coda: sessionNote{Note: "its last turn was cut short by a crash and is left out when it is loaded"}}}},
		NextCursor: "c",
	}},
	"session/set_config_option": {&setSessionConfigOptionResponse{ConfigOptions: exampleOptions, Meta: withWarnings([]string{"a warning"})}},
	"session/set_mode":          {&setSessionModeResponse{Meta: withWarnings([]string{"a warning"})}},
	"session/prompt": {
		// A turn's answer, one without an answer, and a slash command's.
		&promptResponse{StopReason: "end_turn", Meta: codaMeta[promptOutcome]{Coda: promptOutcome{
			RunID: "r-1", Status: "answered", Flags: []string{"truncated"}, Warnings: []string{"a warning"},
			FinalOutput: &statestore.Answer{RunID: "r-1", Status: "answered", Stage: "answer", Format: "json", Content: "{}", Flags: []string{}, Warnings: []string{},
				Artifacts: []outputspec.Artifact{{Name: "report.md", Path: "report.md", MimeType: "text/markdown", Size: 3, SHA256: "ab"}}},
		}}, Usage: usageOf(statestore.Spend{Calls: 3, InputTokens: 1200, OutputTokens: 80, ReasoningTokens: 20, CacheReadTokens: 900, CacheWriteTokens: 100,
			Cost: &prices.Cost{Amount: 0.0042, Currency: "USD"}})},
		&promptResponse{StopReason: "max_turn_requests", Meta: codaMeta[promptOutcome]{Coda: promptOutcome{
			RunID: "r-2", Status: "unavailable", Flags: []string{}, Warnings: []string{}, NoAnswer: "The model said it cannot answer.", Unavailable: "no data",
		}}, Usage: usageOf(statestore.Spend{Calls: 1, InputTokens: 10, OutputTokens: 2, Unpriced: []string{"ollama:qwen3"}})},
		&promptResponse{StopReason: "end_turn", Meta: codaMeta[promptOutcome]{Coda: promptOutcome{Status: "command", Command: "mode", Warnings: []string{}}}},
	},
	"session/close":  {&closeSessionResponse{}},
	"session/delete": {&deleteSessionResponse{}},
	"session/fork": {&forkSessionResponse{
		SessionID: "s-2", ConfigOptions: exampleOptions, Modes: pickers.ModesOf(modeAsk), Meta: withWarnings([]string{"a warning"}),
	}},
}

var exampleOptions = []configOption{{
	ID: optionFormat, Name: "Answer format", Description: "The format of the final answer", Category: "_output", Type: "select",
	CurrentValue: "json", Options: []selectOption{{Value: "json", Name: "JSON"}},
}}

// exampleUpdates are the session updates sent off the hot path, encoded
// from their types (updates.go writes the streamed ones by hand; the
// session transcripts check those).
var exampleUpdates = []any{
	availableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: []availableCommand{{Name: "mode", Description: "Set the mode", Input: &commandInput{"ask"}}}},
	configOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: exampleOptions},
	currentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: modeAsk},
	sessionInfoUpdate{SessionUpdate: "session_info_update", Title: "Where is it?"},
}

// Every entry's result, as its representative results encode it, is what
// the schema defines for that method's result; between them they set
// every field of the result's type, so no field goes unchecked.
func TestMethods_results(t *testing.T) {
	for name, m := range methods {
		if m.Result == nil {
			if m.Result != nil {
				t.Errorf("%s: a notification with a result type", name)
			}
			continue
		}
		t.Run(name, func(t *testing.T) {
			examples := exampleResults[name]
			if len(examples) == 0 {
				t.Fatalf("no example result of %s: add one to exampleResults", name)
			}
			set := map[string]bool{}
			for _, ex := range examples {
				if reflect.TypeOf(ex) != reflect.PointerTo(m.Result) {
					t.Fatalf("an example of %T, but the entry's result is %v", ex, m.Result)
				}
				if err := acptest.CheckResult(name, jsonrpc.AppendJSON(nil, ex)); err != nil {
					t.Errorf("%v\n  result: %s", err, jsonrpc.AppendJSON(nil, ex))
				}
				fieldsSet(reflect.ValueOf(ex), set)
			}
			for _, f := range typeFields(m.Result) {
				if !set[f] {
					t.Errorf("no example sets %s: it goes unchecked", f)
				}
			}
		})
	}
	for name := range exampleResults {
		if m := methods[name]; m == nil || (m.Result == nil) {
			t.Errorf("an example result of %s, which is no request of the table", name)
		}
	}
	for _, u := range exampleUpdates {
		if err := acptest.CheckUpdate(jsonrpc.AppendJSON(nil, u)); err != nil {
			t.Errorf("%T: %v", u, err)
		}
	}
}

// Every entry's params type reads only members the schema's definition of
// that method's params names, and requires (jsonrpc:"required") only members
// the schema requires: coda never demands what ACP leaves out.
func TestMethods_params(t *testing.T) {
	for name, m := range methods {
		t.Run(name, func(t *testing.T) {
			def := acptest.ParamsDef(name)
			if def == "" {
				t.Fatalf("acptest knows no definition of %s's params", name)
			}
			named, required, err := acptest.Members(def)
			if err != nil {
				t.Fatal(err)
			}
			reqd := map[string]bool{}
			for i := range m.Params.NumField() {
				f := m.Params.Field(i)
				member, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				reqd[member] = f.Tag.Get("jsonrpc") == "required"
				if !slices.Contains(named, member) {
					t.Errorf("%s.%s reads %q, which %s does not name (it names %q)", m.Params.Name(), f.Name, member, def, named)
				}
				if reqd[member] && !slices.Contains(required, member) {
					t.Errorf("%s.%s requires %q, which %s leaves optional", m.Params.Name(), f.Name, member, def)
				}
			}
		})
	}
}

// The table's own refusals: a missing or wrong-typed member, missing
// params, a request sent as a notification and the reverse, an unknown
// method.
func TestMethods_refusals(t *testing.T) {
	m := methods["session/set_mode"]
	for _, tt := range []struct{ params, err string }{
		{`{"modeId":"ask"}`, "invalid params: sessionId is required"},
		{`{"sessionId":"s-1","modeId":null}`, "invalid params: modeId is required"},
		{`{"sessionId":7,"modeId":"ask"}`, "invalid params: sessionId: expected string, got number"},
		{``, "invalid params: session/set_mode needs params"},
		{`null`, "invalid params: session/set_mode needs params"},
	} {
		_, err := jsonrpc.Params[setSessionModeRequest](m.Name, json.RawMessage(tt.params))
		if err == nil || err.Error() != tt.err {
			t.Errorf("params %s: %v, want %q", tt.params, err, tt.err)
		}
	}
	if !methods["session/list"].Optional {
		t.Errorf("session/list takes no params, but its entry needs them")
	}

	srv := testServer(t, t.TempDir(), Options{})
	var out strings.Builder
	srv.conn.Close()
	srv.conn = srv.newConn(strings.NewReader(""), &out)
	srv.serve(context.Background(), json.RawMessage(`"a"`), "session/cancel", json.RawMessage(`{"sessionId":"s-1"}`))
	srv.serve(context.Background(), json.RawMessage(`-3`), "coda/nope", nil)
	srv.serve(context.Background(), nil, "session/new", json.RawMessage(`{"cwd":"/"}`)) // a request as a notification: ignored
	srv.serve(context.Background(), nil, "coda/nope", nil)
	srv.conn.Close()
	srv.conn = srv.newConn(strings.NewReader(""), io.Discard) // for testServer's cleanup to close
	want := `{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"invalid params: session/cancel is a notification: send it without an id"}}` + "\n" +
		`{"jsonrpc":"2.0","id":-3,"error":{"code":-32601,"message":"method not found: coda/nope"}}` + "\n"
	if out.String() != want {
		t.Errorf("the table answered\n%s\nwant\n%s", out.String(), want)
	}
	if len(srv.sessions) != 0 {
		t.Errorf("a session/new sent as a notification opened a session")
	}
}

// fieldsSet records the fields of acp's own types that v sets: "Type.Field".
func fieldsSet(v reflect.Value, set map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			fieldsSet(v.Elem(), set)
		}
	case reflect.Slice:
		for i := range v.Len() {
			fieldsSet(v.Index(i), set)
		}
	case reflect.Struct:
		if !ours(v.Type()) {
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && !v.Field(i).IsZero() {
				set[v.Type().Name()+"."+f.Name] = true
			}
			if f.IsExported() {
				fieldsSet(v.Field(i), set)
			}
		}
	}
}

// typeFields lists the fields of t and of acp's types it holds, that an
// example must set: all but those a plain bool (false is as good a value
// as true, and always sent).
func typeFields(t reflect.Type) []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || !ours(t) || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Type.Kind() != reflect.Bool || strings.Contains(f.Tag.Get("json"), "omitempty") {
				out = append(out, t.Name()+"."+f.Name)
			}
			walk(f.Type)
		}
	}
	walk(t)
	return out
}

func ours(t reflect.Type) bool { return t.PkgPath() == reflect.TypeFor[Server]().PkgPath() }
