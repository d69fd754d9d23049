package sse

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipeNet serves HTTP over in-memory pipes, so that a server and a client
// can run inside a synctest bubble, where time moves only when every
// goroutine waits.
type pipeNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	srv   *http.Server
	tr    *http.Transport
}

func newPipeNet(h http.Handler) *pipeNet {
	n := &pipeNet{conns: make(chan net.Conn), done: make(chan struct{})}
	n.srv = &http.Server{Handler: h}
	n.tr = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		c, s := net.Pipe()
		select {
		case n.conns <- s:
			return c, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	go n.srv.Serve(n)
	return n
}

func (n *pipeNet) Accept() (net.Conn, error) {
	select {
	case c := <-n.conns:
		return c, nil
	case <-n.done:
		return nil, net.ErrClosed
	}
}

func (n *pipeNet) Close() error   { n.once.Do(func() { close(n.done) }); return nil }
func (n *pipeNet) Addr() net.Addr { return pipeAddr{} }

func (n *pipeNet) client() *http.Client { return &http.Client{Transport: n.tr} }

func (n *pipeNet) shutdown() {
	n.tr.CloseIdleConnections()
	n.srv.Close()
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// trickle is a handler that writes piece every interval, flushed, until
// the client goes away or total has passed.
func trickle(piece string, interval, total time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		start := time.Now()
		for time.Since(start) < total {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(interval):
			}
			if _, err := io.WriteString(w, piece); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

// drain reads events until the stream ends, marking the call started at
// the first.
func drain(_ context.Context, r *Reader, started *bool) error {
	for {
		if _, err := r.Next(); err != nil {
			if err == io.EOF {
				return nil
			}
			return &Temporary{Err: err}
		}
		*started = true
	}
}

// callIn runs a Call against h inside a synctest bubble and returns how
// long it took on the bubble's clock, the requests made and its error.
func callIn(t *testing.T, h http.Handler, c Call) (took time.Duration, requests int, err error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		n := newPipeNet(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requests++
			mu.Unlock()
			h.ServeHTTP(w, r)
		}))
		defer n.shutdown()
		c.Client, c.URL, c.Name = n.client(), "http://pipe/v1", "test:m"
		c.Retry.Sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
		start := time.Now()
		err = c.Do(context.Background(), []byte("{}"), drain)
		took = time.Since(start)
	})
	return took, requests, err
}

// A server that trickles a byte at a time never completes a line: the
// silence timer is not fooled by it.
func TestCall_Do_tricklingBytes(t *testing.T) {
	took, requests, err := callIn(t, trickle("x", 2*time.Second, 24*time.Hour), Call{Timeout: 5 * time.Second, Retry: Retry{Tries: 2}})
	if err == nil || !strings.Contains(err.Error(), "no reply from the server for 5s (gave up after 2 tries)") {
		t.Fatalf("error %v", err)
	}
	if took > 11*time.Second || requests != 2 {
		t.Errorf("took %s over %d requests, want two tries of 5s", took, requests)
	}
}

// Whole lines are signs of life, however slow: a reply that streams a line
// every 4s within a 5s timeout is read to its end.
func TestCall_Do_slowLines(t *testing.T) {
	took, _, err := callIn(t, trickle("data: {}\n\n", 4*time.Second, time.Minute), Call{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if took < time.Minute {
		t.Errorf("took %s, want the whole minute the reply lasted", took)
	}
}

// A server that keeps the call alive with keep-alive comments forever is
// stopped by max_call_time, and the call is not tried again.
func TestCall_Do_maxCallTime(t *testing.T) {
	took, requests, err := callIn(t, trickle(": keep-alive\n", 2*time.Second, 24*time.Hour), Call{Timeout: 5 * time.Second, MaxTime: 10 * time.Minute})
	if err == nil || !strings.Contains(err.Error(), "test:m: no whole reply within 10m0s (the provider's max_call_time)") {
		t.Fatalf("error %v", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("error %v reads as cancelled", err)
	}
	if took != 10*time.Minute || requests != 1 {
		t.Errorf("took %s over %d requests, want 10m and one", took, requests)
	}
}

// max_call_time is 30 minutes unless set.
func TestCall_Do_maxCallTimeDefault(t *testing.T) {
	took, _, err := callIn(t, trickle(": keep-alive\n", 2*time.Second, 24*time.Hour), Call{Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "within 30m0s") || took != DefaultMaxCallTime {
		t.Fatalf("error %v after %s", err, took)
	}
}

// The limit covers the waits between tries too.
func TestCall_Do_maxCallTimeBetweenTries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newPipeNet(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		defer n.shutdown()
		c := Call{Name: "test:m", Client: n.client(), URL: "http://pipe/v1", MaxTime: 90 * time.Second, Retry: Retry{Tries: 10, Base: time.Minute, Max: time.Minute}}
		err := c.Do(context.Background(), []byte("{}"), drain)
		if err == nil || !strings.Contains(err.Error(), "no whole reply within 1m30s") {
			t.Fatalf("error %v", err)
		}
	})
}

// An over-long line ends the call at once: another try would meet the same
// reply.
func TestCall_Do_lineTooLong(t *testing.T) {
	requests := 0
	c := Call{Name: "test:m", URL: "http://test/v1", Retry: Retry{Sleep: func(context.Context, time.Duration) error { return nil }}}
	c.Client = &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		requests++
		body := io.MultiReader(strings.NewReader("data: "), endless('x'))
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(body), Request: r}, nil
	})}
	err := c.Do(context.Background(), []byte("{}"), drain)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "larger than 64 MiB") || requests != 1 {
		t.Fatalf("error %v after %d requests", err, requests)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// endless reads as the byte b, for ever.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// An event stream labelled application/json (some gateways do) is read as
// the stream it is.
func TestEventBody(t *testing.T) {
	tests := []struct {
		name, body string
		want       []ev
	}{
		{"an event stream", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []ev{{"", `{"a":1}`}, {"", "[DONE]"}}},
		{"after blank lines", "\r\n\nevent: ping\ndata: {}\n\n", []ev{{"ping", "{}"}}},
		{"a comment first", ": keep-alive\n\ndata: 1\n\n", []ev{{"", "1"}}},
		{"a JSON document", "{\n  \"error\": {\"message\": \"bad\"}\n}\n", []ev{{"", `{"error":{"message":"bad"}}`}}},
		{"not JSON either", "upstream error\nsecond line", []ev{{"", "upstream error\nsecond line"}}},
		{"a field name cut short", "dat", []ev{{"", "dat"}}},
		{"an empty body", "", []ev{{"", ""}}},
	}
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, eventBody(strings.NewReader(tt.body), h))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("events %q, want %q", got, tt.want)
			}
		})
	}
	// Only as much is read as it takes to tell: a stream whose first line
	// has come is not waited on for more.
	pr, pw := io.Pipe()
	go io.WriteString(pw, "data: 1\n\n")
	r := NewReader(eventBody(pr, h))
	if e, err := r.Next(); err != nil || string(e.Data) != "1" {
		t.Errorf("first event %q, %v", e.Data, err)
	}
	pw.Close()

	big := io.LimitReader(endless(' '), MaxEventSize+1)
	if _, err := io.ReadAll(bufio.NewReader(eventBody(io.MultiReader(strings.NewReader("{"), big), h))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an over-large JSON body: %v", err)
	}
}
