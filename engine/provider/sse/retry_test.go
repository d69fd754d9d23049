package sse

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestRetry_Do(t *testing.T) {
	fail := errors.New("boom")
	tests := []struct {
		name    string
		policy  Retry
		errs    []error // returned by successive attempts; nil ends
		calls   int
		waits   int
		wantErr string
	}{
		{"success at once", Retry{}, []error{nil}, 1, 0, ""},
		{"permanent error", Retry{}, []error{fail}, 1, 0, "boom"},
		{"temporary then success", Retry{}, []error{&Temporary{Err: fail}, nil}, 2, 1, ""},
		{"temporary until the tries run out", Retry{}, []error{&Temporary{Err: fail}, &Temporary{Err: fail}, &Temporary{Err: fail}, &Temporary{Err: fail}}, 4, 3, "boom (gave up after 4 tries)"},
		{"one try", Retry{Tries: 1}, []error{&Temporary{Err: fail}}, 1, 0, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var waits []time.Duration
			tt.policy.Sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }
			calls := 0
			err := tt.policy.Do(context.Background(), func(context.Context) error {
				calls++
				return tt.errs[calls-1]
			})
			if calls != tt.calls || len(waits) != tt.waits {
				t.Errorf("%d calls, %d waits; want %d, %d", calls, len(waits), tt.calls, tt.waits)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestRetry_backoff(t *testing.T) {
	p := Retry{Base: time.Second, Max: 8 * time.Second}
	for n, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		for range 50 {
			d := p.backoff(n + 1)
			if d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", n+1, d, want/2, want)
			}
		}
	}
}

func TestRetry_Do_retryAfter(t *testing.T) {
	var waits []time.Duration
	p := Retry{Base: time.Millisecond, Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	calls := 0
	p.Do(context.Background(), func(context.Context) error {
		calls++
		if calls == 1 {
			return &Temporary{Err: errors.New("slow down"), After: 5 * time.Second}
		}
		return nil
	})
	if len(waits) != 1 || waits[0] != 5*time.Second {
		t.Errorf("waits %v, want [5s]", waits)
	}
}

// Cancelling ends the wait between tries at once. On the bubble's clock,
// "at once" is exact; and the cancel comes while Do is surely waiting.
func TestRetry_Do_cancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		p := Retry{Base: time.Hour}
		calls := 0
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			done <- p.Do(ctx, func(context.Context) error { calls++; return &Temporary{Err: errors.New("x")} })
		}()
		synctest.Wait() // Do waits out its hour
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) || calls != 1 {
			t.Errorf("error %v after %d calls", err, calls)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Do returned %s after the cancel, want at once", d)
		}
	})
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {"Mon, 30 Nov 2026 10:00:30 GMT"}}, 30 * time.Second},
		{http.Header{"Retry-After": {"Mon, 30 Nov 2026 09:00:00 GMT"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Errorf("retryAfter(%v) = %s, want %s", tt.h, got, tt.want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}`, "Incorrect API key"},
		{`{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}`, "model: claude-x"},
		{`{"error":"model 'llama9' not found"}`, "model 'llama9' not found"},
		{`{"error":{"type":"overloaded_error"}}`, "overloaded_error"},
		{"  upstream connect error  ", "upstream connect error"},
		{strings.Repeat("x", 600), strings.Repeat("x", 500) + "…"},
	}
	for _, tt := range tests {
		if got := errorMessage([]byte(tt.body), ""); got != tt.want {
			t.Errorf("errorMessage(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	base := errors.New("bad key sk-secret-123 given")
	err := redactError(base, "sk-secret-123")
	if err.Error() != "bad key [redacted] given" || !errors.Is(err, base) {
		t.Errorf("redactError = %q", err)
	}
	if redactError(base, "") != base || redactError(nil, "x") != nil {
		t.Error("redactError changed an error without the secret")
	}
}

// A cancel with a cause still reads as context.Canceled, which is how the
// engine tells a cancelled turn from a failed one.
func TestRetry_Do_cancelCause(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("session/cancel"))
	err := Retry{}.Do(ctx, func(context.Context) error { return &Temporary{Err: errors.New("x")} })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// leaked reports a piece of at least 8 characters of key found in s.
func leaked(s, key string) string {
	for i := 0; i+8 <= len(key); i++ {
		if strings.Contains(s, key[i:i+8]) {
			return key[i : i+8]
		}
	}
	return ""
}

// A key is masked before any cut, wherever it falls in an error reply: no
// piece of it survives, at the display cut or at the read limit.
func TestErrorBody_keyAtEveryOffset(t *testing.T) {
	const key = "sk-proj-Zq8RrT2vLx9PmW4kN7bH3cJ5dF6gA1s"
	var offsets []int
	for off := 0; off <= 600; off++ {
		offsets = append(offsets, off)
	}
	for off := maxErrorBody - 2*len(key); off <= maxErrorBody+2; off++ {
		offsets = append(offsets, off)
	}
	for _, off := range offsets {
		bodies := []string{
			strings.Repeat("x", off) + key + strings.Repeat("y", 100),
			strings.Repeat("é", off/2) + key,
			`{"error":{"message":"` + strings.Repeat("x", off) + key + `"}}`,
			`{"detail":"` + strings.Repeat("x", off) + key + `"}`,
			`{"error":{"message":"bad","param":"` + strings.Repeat("x", off) + key + `"}}`,
		}
		for i, body := range bodies {
			serr := statusError(&http.Response{StatusCode: 400, Body: io.NopCloser(strings.NewReader(body))}, key)
			msg := serr.Message + " " + serr.Param
			if p := leaked(msg, key); p != "" {
				t.Fatalf("body %d, key at %d: %q of the key is in %q", i, off, p, shorten(msg[max(0, len(msg)-80):], 200))
			}
		}
	}
}
