// Package hostile is the providers' tests' server of streams no honest
// model sends: one generated on the fly, frame by frame, so that a test of
// a reply of hundreds of megabytes holds no such file and stops as soon as
// the client does.
package hostile

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// A Stream is a server that answers every request with head, then frame(i)
// for i from 0 to n-1, then tail, until the client goes away.
type Stream struct {
	*httptest.Server
	written atomic.Int64
	done    chan struct{}
}

// Serve starts a Stream of contentType, closed when t ends.
func Serve(t testing.TB, contentType, head string, n int, frame func(i int) string, tail string) *Stream {
	s := &Stream{done: make(chan struct{}, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { s.done <- struct{}{} }()
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		write := func(p string) bool {
			k, err := io.WriteString(w, p)
			s.written.Add(int64(k))
			return err == nil
		}
		if !write(head) {
			return
		}
		for i := range n {
			if !write(frame(i)) {
				return
			}
		}
		write(tail)
	}))
	t.Cleanup(s.Close)
	return s
}

// Written waits for the request being answered to end and reports the
// bytes the server wrote in all.
func (s *Stream) Written() int64 {
	<-s.done
	return s.written.Load()
}
