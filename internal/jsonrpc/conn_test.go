package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The connection's life: at the input's end, work still owing its answer
// gets DrainTimeout, then is cancelled, and Serve returns only once its
// answer is written; nothing new begins meanwhile.
func TestConn_life(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"work"}` + "\n")
		var out strings.Builder
		c := NewConn(Options{DrainTimeout: 5 * time.Second}, in, &out)
		var cancelledAfter time.Duration
		start := time.Now()
		err := c.Serve(context.Background(), func(_ context.Context, id json.RawMessage, _ string, _ json.RawMessage) {
			ctx, cancel, err := c.Begin()
			if err != nil {
				t.Errorf("Begin on the loop: %v", err)
				return
			}
			go func() {
				defer c.End()
				defer cancel()
				<-ctx.Done()
				cancelledAfter = time.Since(start)
				if _, _, err := c.Begin(); !errors.Is(err, ErrClosing) {
					t.Errorf("Begin while shutting down = %v, want ErrClosing", err)
				}
				c.Reply(id, "cancelled")
			}()
		})
		if err != nil {
			t.Fatal(err)
		}
		if cancelledAfter != 5*time.Second {
			t.Errorf("the work was cancelled after %v, want the drain timeout (5s)", cancelledAfter)
		}
		if want := `{"jsonrpc":"2.0","id":1,"result":"cancelled"}` + "\n"; out.String() != want {
			t.Errorf("wrote %q, want %q", out.String(), want)
		}
	})
}
