// Package acptest helps tests check what coda sends against the official
// ACP wire schema, kept in testdata (see testdata/SOURCE.md) so that a plain
// clone can run the tests.
package acptest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/kaptinlin/jsonschema"
)

// SchemaEnv names the environment variable that, when set, is the path of
// the ACP schema to check against instead of the one kept here.
const SchemaEnv = "CODA_ACP_SCHEMA"

//go:embed testdata/v1/schema.json
var keptSchema []byte

// keptUnstable is ACP v1's schema with its UNSTABLE features: what coda
// serves of them where it advertises them (session/fork) is checked
// against it; everything else against the stable schema.
//
//go:embed testdata/v1/schema.unstable.json
var keptUnstable []byte

// schema returns the ACP v1 schema: $CODA_ACP_SCHEMA's file, else the copy
// kept in testdata.
func schema() ([]byte, error) {
	if p := os.Getenv(SchemaEnv); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading the ACP schema %s names: %w", SchemaEnv, err)
		}
		return data, nil
	}
	return keptSchema, nil
}

var (
	mu           sync.Mutex
	rootDefs     map[string]any
	unstableDefs map[string]any
	rootErr      error
	compiled     = map[string]*jsonschema.Schema{}
)

// def compiles the schema's definition name (or "" for its "Agent"
// branch: any message an agent may send).
func def(name string) (*jsonschema.Schema, error) {
	mu.Lock()
	defer mu.Unlock()
	if sch := compiled[name]; sch != nil {
		return sch, nil
	}
	if rootDefs == nil && rootErr == nil {
		data, err := schema()
		if err != nil {
			rootErr = err
		} else if err := json.Unmarshal(data, &rootDefs); err != nil {
			rootErr = fmt.Errorf("the ACP schema: %w", err)
		} else if err := json.Unmarshal(keptUnstable, &unstableDefs); err != nil {
			rootErr = fmt.Errorf("the ACP unstable schema: %w", err)
		}
	}
	if rootErr != nil {
		return nil, rootErr
	}
	var wrapper map[string]any
	if name == "" {
		var agent any
		branches, _ := rootDefs["anyOf"].([]any)
		for _, b := range branches {
			if m, ok := b.(map[string]any); ok && m["title"] == "Agent" {
				agent = m
			}
		}
		if agent == nil {
			return nil, fmt.Errorf("the ACP schema has no Agent branch")
		}
		wrapper = map[string]any{"$defs": rootDefs["$defs"], "allOf": []any{agent}}
	} else {
		root := rootDefs
		if defs, _ := root["$defs"].(map[string]any); defs[name] == nil {
			root = unstableDefs // an UNSTABLE feature's
		}
		if defs, _ := root["$defs"].(map[string]any); defs[name] == nil {
			return nil, fmt.Errorf("the ACP schema has no definition %s", name)
		}
		wrapper = map[string]any{"$defs": root["$defs"], "$ref": "#/$defs/" + name}
	}
	b, _ := json.Marshal(wrapper)
	sch, err := jsonschema.NewCompiler().Compile(b)
	if err != nil {
		return nil, fmt.Errorf("compiling the ACP schema's %q: %w", name, err)
	}
	compiled[name] = sch
	return sch, nil
}

// The definitions that an agent's messages must satisfy, by method: the
// params of its notifications and requests, and the results of its
// responses. The schema's generic branches (extension notifications) would
// accept anything, so coda's messages are checked against these.
var (
	notificationParams = map[string]string{
		"session/update": "SessionNotification",
	}
	requestParams = map[string]string{
		"fs/read_text_file":          "ReadTextFileRequest",
		"fs/write_text_file":         "WriteTextFileRequest",
		"session/request_permission": "RequestPermissionRequest",
		"terminal/create":            "CreateTerminalRequest",
		"terminal/output":            "TerminalOutputRequest",
		"terminal/wait_for_exit":     "WaitForTerminalExitRequest",
		"terminal/kill":              "KillTerminalRequest",
		"terminal/release":           "ReleaseTerminalRequest",
		"elicitation/create":         "CreateElicitationRequest",
	}
	responseResults = map[string]string{
		"initialize":                "InitializeResponse",
		"authenticate":              "AuthenticateResponse",
		"session/new":               "NewSessionResponse",
		"session/prompt":            "PromptResponse",
		"session/set_config_option": "SetSessionConfigOptionResponse",
		"session/close":             "CloseSessionResponse",
		"session/load":              "LoadSessionResponse",
		"session/resume":            "ResumeSessionResponse",
		"session/list":              "ListSessionsResponse",
		"session/delete":            "DeleteSessionResponse",
		"session/fork":              "ForkSessionResponse", // UNSTABLE
		"session/set_mode":          "SetSessionModeResponse",
	}
)

func validate(name string, v any) error {
	sch, err := def(name)
	if err != nil {
		return err
	}
	res := sch.Validate(v)
	if res.IsValid() {
		return nil
	}
	var msgs []string
	for k, e := range res.Errors {
		msgs = append(msgs, k+": "+e.Error())
	}
	what := name
	if what == "" {
		what = "agent message"
	}
	return fmt.Errorf("invalid %s: %s", what, strings.Join(msgs, "; "))
}

// Check reports why line is not a valid agent→client ACP message, or nil.
// answering names the method of the client request a response answers
// ("" when unknown or not a response).
func Check(line []byte, answering string) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params any             `json:"params"`
		Result any             `json:"result"`
		Error  any             `json:"error"`
	}
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := validate("", v); err != nil {
		return err
	}
	json.Unmarshal(line, &m)
	switch {
	case m.Method != "" && len(m.ID) == 0:
		if d := notificationParams[m.Method]; d != "" {
			return validate(d, m.Params)
		}
		return fmt.Errorf("coda sent an unknown notification %q", m.Method)
	case m.Method != "":
		if d := requestParams[m.Method]; d != "" {
			return validate(d, m.Params)
		}
		return fmt.Errorf("coda sent an unknown request %q", m.Method)
	case m.Error != nil:
		return validate("Error", m.Error)
	case answering != "":
		if d := responseResults[answering]; d != "" {
			if err := validate(d, m.Result); err != nil {
				return err
			}
			if unstableToo[answering] {
				return validateUnstable(d, m.Result)
			}
		}
	}
	return nil
}

// Validate fails t for a line that is not a valid agent message.
func Validate(t testing.TB, line []byte, answering string) {
	t.Helper()
	if err := Check(line, answering); err != nil {
		t.Errorf("%v\n  line: %s", err, line)
	}
}
