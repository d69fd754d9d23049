// Package fakekit is what the fake provider APIs of the tests share
// (openai/openaitest, anthropic/anthropictest, gemini/geminitest,
// ollama/ollamatest): the log of the requests a fake received, its rules as
// data (Rule: a name, the vendor's document that states it, a check), the
// event stream a reply is written as, each vendor's error body, the Files
// API's store and multipart upload, and the bytes a fake was sent.
//
// A fake is its vendor's paths, its request's shape, its rules and its
// reply's events; everything else is here, so that a fifth API costs its
// rules and its stream, not a server.
package fakekit

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
)

// A Log is the requests a fake received, in order, and what it did with
// them: how many the rules let through (each numbered from 0 for the
// script of replies), and how many replies the client left before they
// ended. R is the fake's own request type.
type Log[R any] struct {
	mu        sync.Mutex
	requests  []*R
	served    int
	cancelled int
}

// Add records r.
func (l *Log[R]) Add(r *R) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, r)
}

// All are the requests received so far, refused ones included.
func (l *Log[R]) All() []*R {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.requests)
}

// Len is how many requests were received so far.
func (l *Log[R]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.requests)
}

// Locked runs f under the log's lock: a change to a recorded request that
// the tests read.
func (l *Log[R]) Locked(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// Serve numbers the next request the rules let through, from 0.
func (l *Log[R]) Serve() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.served
	l.served++
	return n
}

// Hold waits until the client goes away (ctx is the request's), and
// counts it: a reply that never ends, for cancellation.
func (l *Log[R]) Hold(ctx context.Context) {
	<-ctx.Done()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cancelled++
}

// Cancelled counts the replies whose client went away before they ended.
func (l *Log[R]) Cancelled() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cancelled
}

// Bytes counts the bytes of request bodies a fake has read, uploads
// included, as it reads them.
type Bytes struct{ n atomic.Int64 }

// Count makes r's body counted as it is read.
func (b *Bytes) Count(r *http.Request) { r.Body = &counted{r.Body, b} }

// Add counts n bytes read otherwise.
func (b *Bytes) Add(n int) { b.n.Add(int64(n)) }

// Total is the bytes counted so far.
func (b *Bytes) Total() int64 { return b.n.Load() }

type counted struct {
	io.ReadCloser
	b *Bytes
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.b.n.Add(int64(n))
	return n, err
}

// WriteJSON answers v with status and the Content-Type a vendor sends.
func WriteJSON(w http.ResponseWriter, status int, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// WriteRaw answers body as it is, with status: a test's scripted
// failure.
func WriteRaw(w http.ResponseWriter, status int, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// Known is what a fake knows of model id: from own, the server's models
// when set, else from dflt, the package's.
func Known[M any](own, dflt map[string]M, id string) (M, bool) {
	if own == nil {
		own = dflt
	}
	m, ok := own[id]
	return m, ok
}

// A Base is what every fake server is: an httptest server and the log of
// the requests it received (R is the fake's request type). A fake embeds
// it, so that Close, Client, Requests and Cancelled are its own.
type Base[R any] struct {
	srv *httptest.Server
	Log Log[R]
}

// Start serves h and returns the server's URL.
func (b *Base[R]) Start(h http.HandlerFunc) string {
	b.srv = httptest.NewServer(h)
	return b.srv.URL
}

// Close shuts the server down.
func (b *Base[R]) Close() { b.srv.Close() }

// Client is an HTTP client for the server.
func (b *Base[R]) Client() *http.Client { return b.srv.Client() }

// Requests are the calls received so far, refused ones included.
func (b *Base[R]) Requests() []*R { return b.Log.All() }

// Cancelled counts the replies whose client went away before they ended.
func (b *Base[R]) Cancelled() int { return b.Log.Cancelled() }

// A Verdict is what a fake did with a request: the message it refused it
// with and the name of the rule it broke; both "" when it was served. A
// fake's request type embeds it.
type Verdict struct {
	// Refused is the error message the server answered with, when a rule
	// refused the request; "" when it was served. Rule is the name of the
	// rule it broke (the fake's rules.go).
	Refused, Rule string
}

func (v *Verdict) verdict() *Verdict { return v }

type judged interface{ verdict() *Verdict }

// Judge holds c, what the rules read of request r, to rules: the first
// broken is noted in r's Verdict (under the log's lock) and returned;
// nil when r keeps them all. R must embed Verdict.
func Judge[R, C any](l *Log[R], r *R, rules []Rule[C], c C) *Refusal {
	name, ref := Broken(rules, c)
	if ref != nil {
		l.Locked(func() { *any(r).(judged).verdict() = Verdict{Refused: ref.Msg, Rule: name} })
	}
	return ref
}

// Refusals are the messages of the requests the rules refused, in order.
// R must embed Verdict.
func (b *Base[R]) Refusals() []string {
	var out []string
	for _, r := range b.Requests() {
		b.Log.Locked(func() {
			if v := any(r).(judged).verdict(); v.Refused != "" {
				out = append(out, v.Refused)
			}
		})
	}
	return out
}
