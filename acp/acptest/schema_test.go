package acptest

import (
	"slices"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name      string
		line      string
		answering string
		ok        bool
	}{
		{"chunk", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m-1","content":{"type":"text","text":"hi"},"_meta":{"coda":{"phase":"commentary"}}}}}`, "", true},
		{"chunk with a bad content type", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"bogus"}}}}`, "", false},
		{"unknown update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"nope"}}}`, "", false},
		{"unknown notification", `{"jsonrpc":"2.0","method":"coda/x","params":{}}`, "", false},
		{"bad stop reason", `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"nope"}}`, "session/prompt", false},
		{"good stop reason", `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}`, "session/prompt", true},
		{"usage", `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn","usage":{"totalTokens":30,"inputTokens":20,"outputTokens":10,"thoughtTokens":4,"cachedReadTokens":5,"cachedWriteTokens":0}}}`, "session/prompt", true},
		// The stable schema does not define usage, and lets these through;
		// the unstable one, which does, catches them.
		{"usage without totalTokens", `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn","usage":{"inputTokens":20,"outputTokens":10}}}`, "session/prompt", false},
		{"negative usage", `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn","usage":{"totalTokens":-1,"inputTokens":20,"outputTokens":10}}}`, "session/prompt", false},
		{"parse error", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, "", true},
		{"no jsonrpc", `{"id":1,"result":{}}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check([]byte(tt.line), tt.answering)
			if (err == nil) != tt.ok {
				t.Errorf("Check = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestCheckResult(t *testing.T) {
	tests := []struct {
		name, method, result string
		ok                   bool
	}{
		{"new session", "session/new", `{"sessionId":"s-1","configOptions":[{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"ask","options":[{"value":"ask","name":"Ask"}]}],"modes":{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"}]},"_meta":{"anything":[1]}}`, true},
		{"a misspelt member", "session/new", `{"sessionId":"s-1","sessionID":"s-1"}`, false},
		{"a misspelt nested member", "session/new", `{"sessionId":"s-1","modes":{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask","title":"x"}]}}`, false},
		{"invalid", "session/new", `{"configOptions":[]}`, false},
		{"a stop reason", "session/prompt", `{"stopReason":"end_turn","_meta":{"coda":{}}}`, true},
		{"unknown method", "coda/nope", `{}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckResult(tt.method, []byte(tt.result))
			if (err == nil) != tt.ok {
				t.Errorf("CheckResult = %v, want ok=%v", err, tt.ok)
			}
		})
	}
	if err := CheckUpdate([]byte(`{"sessionUpdate":"current_mode_update","currentModeId":"ask"}`)); err != nil {
		t.Errorf("CheckUpdate: %v", err)
	}
	if err := CheckUpdate([]byte(`{"sessionUpdate":"current_mode_update","currentModeId":"ask","modeId":"ask"}`)); err == nil {
		t.Errorf("CheckUpdate took a member current_mode_update does not name")
	}
}

func TestMembers(t *testing.T) {
	named, required, err := Members("SetSessionConfigOptionRequest")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sessionId", "configId", "value", "_meta"} {
		if !slices.Contains(named, want) {
			t.Errorf("Members names %q, want %s among them", named, want)
		}
	}
	if !slices.Contains(required, "sessionId") {
		t.Errorf("required %q, want sessionId among them", required)
	}
}
