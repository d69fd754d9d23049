package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// coda's calls to the editor: ids count up from 0, each answer goes to the
// call with its id (a string id, or one no call waits on, is no answer of
// coda's), an abandoned call's late answer is dropped, an error answer is
// the editor's error, and once stdin ends every call fails at once.
func TestConn_call(t *testing.T) {
	toCoda, clientW := io.Pipe()
	clientR, fromCoda := io.Pipe()
	c := NewConn(Options{}, toCoda, fromCoda)
	handled := make(chan string, 8)
	served := make(chan error, 1)
	go func() {
		served <- c.Serve(context.Background(), func(_ context.Context, _ json.RawMessage, method string, _ json.RawMessage) { handled <- method })
		fromCoda.Close()
	}()
	lines := bufio.NewScanner(clientR)
	next := func() string {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("coda wrote nothing more: %v", lines.Err())
		}
		return lines.Text()
	}
	send := func(line string) { fmt.Fprintln(clientW, line) }
	type result struct {
		Content string `json:"content"`
	}
	call := func(ctx context.Context, res *result) <-chan error {
		done := make(chan error, 1)
		go func() {
			done <- c.Call(ctx, "fs/read_text_file", map[string]string{"sessionId": "s-1", "path": "/a <b>"}, res)
		}()
		return done
	}

	var got result
	done := call(context.Background(), &got)
	if line := next(); line != `{"id":0,"jsonrpc":"2.0","method":"fs/read_text_file","params":{"path":"/a <b>","sessionId":"s-1"}}` {
		t.Errorf("the call was sent as %s", line)
	}
	send(`{"jsonrpc":"2.0","id":"0","result":{"content":"not coda's call"}}`)
	send(`{"jsonrpc":"2.0","id":7,"result":{"content":"no call waits on 7"}}`)
	send(`{"jsonrpc":"2.0","id":0,"result":{"content":"hi"}}`)
	if err := <-done; err != nil || got.Content != "hi" {
		t.Errorf("call 0 = %q, %v; want hi", got.Content, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done = call(ctx, &got)
	next() // call 1, sent
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("an abandoned call = %v, want context.Canceled", err)
	}
	send(`{"jsonrpc":"2.0","id":1,"result":{"content":"late"}}`)

	done = call(context.Background(), &got)
	if line := next(); !strings.HasPrefix(line, `{"id":2,`) {
		t.Errorf("the third call was sent as %s", line)
	}
	send(`{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"resource not found"}}`)
	var e *ClientError
	if err := <-done; !errors.As(err, &e) || e.Code != -32002 || e.Message != "resource not found" {
		t.Errorf("an error answer = %v, want the editor's -32002", err)
	}

	got = result{Content: "kept"}
	done = call(context.Background(), &got)
	next()
	send(`{"jsonrpc":"2.0","id":3,"result":null,"error":null}`)
	if err := <-done; err != nil || got.Content != "kept" {
		t.Errorf("a null answer = %q, %v; want no error, nothing decoded", got.Content, err)
	}

	// A request read meanwhile went to the table, in order, and answers
	// never did.
	send(`{"jsonrpc":"2.0","id":9,"method":"session/list"}`)
	if m := <-handled; m != "session/list" || len(handled) != 0 {
		t.Errorf("the table was handed %q (and %d more)", m, len(handled))
	}

	done = call(context.Background(), &got)
	next()
	clientW.Close() // stdin ends
	if err := <-done; !errors.Is(err, ErrDisconnected) {
		t.Errorf("the call waiting at stdin's end = %v, want ErrDisconnected", err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if err := c.Call(context.Background(), "fs/read_text_file", nil, nil); !errors.Is(err, ErrDisconnected) {
		t.Errorf("a call after stdin's end = %v, want ErrDisconnected", err)
	}
}
