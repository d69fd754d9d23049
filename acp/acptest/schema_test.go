package acptest

import "testing"

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
