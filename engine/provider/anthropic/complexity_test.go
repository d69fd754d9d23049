package anthropic

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/engine/provider/sse"
)

// A 400 for the structured-outputs complexity limits, which count a
// request's strict tools and JSON output together, is a refusal of strict
// (or, without strict tools, of the reply format): the call is made again
// without it.
func TestMechanismError_complexity(t *testing.T) {
	for _, tt := range []struct {
		used sse.Shaping
		msg  string
		want string
	}{
		{sse.Shaping{Strict: true, Reply: true}, "Schemas contains too many optional parameters (28), which would make grammar compilation inefficient. Reduce the number of optional parameters in your tool schemas (limit: 24).", sse.MechanismStrict},
		{sse.Shaping{Strict: true}, "Schemas contains too many parameters with union types (24 parameters with type arrays or anyOf) (limit: 16 parameters with unions).", sse.MechanismStrict},
		{sse.Shaping{Reply: true}, "Schema is too complex for grammar compilation", sse.MechanismReply},
		{sse.Shaping{}, "Schema is too complex for grammar compilation", ""},
	} {
		err := mechanismError(tt.used, fmt.Errorf("call: %w", &sse.StatusError{Code: http.StatusBadRequest, Message: tt.msg}))
		var me *llm.MechanismError
		got := ""
		if errors.As(err, &me) {
			got = me.Mechanism
		}
		if got != tt.want {
			t.Errorf("%+v %q: %q; want %q", tt.used, tt.msg, got, tt.want)
		}
	}
}
