package sse

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry says how often and how patiently a model call is tried. Its zero
// value is the default: 4 tries, waits from 1s doubling up to 30s, with
// jitter.
type Retry struct {
	Tries int           // attempts in all; 0 means 4
	Base  time.Duration // the first wait; 0 means 1s
	Max   time.Duration // the longest wait, also for Retry-After; 0 means 30s

	// Sleep waits d or until ctx ends. nil means a real timer; tests inject
	// one that records d and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Temporary marks an error worth another try. After is the wait the server
// asked for (Retry-After), or 0.
type Temporary struct {
	Err   error
	After time.Duration
}

func (e *Temporary) Error() string { return e.Err.Error() }
func (e *Temporary) Unwrap() error { return e.Err }

// Do calls attempt until it succeeds, fails with an error that is not
// *Temporary, ctx ends, or the tries are spent. The last error is returned,
// saying how many tries were made when there was more than one.
func (p Retry) Do(ctx context.Context, attempt func(ctx context.Context) error) error {
	tries := p.Tries
	if tries <= 0 {
		tries = 4
	}
	for n := 1; ; n++ {
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var tmp *Temporary
		if !errors.As(err, &tmp) {
			return err
		}
		if n >= tries {
			if n == 1 {
				return tmp.Err
			}
			return fmt.Errorf("%w (gave up after %d tries)", tmp.Err, n)
		}
		wait := p.backoff(n)
		if tmp.After > 0 {
			if tmp.After > p.max() {
				return fmt.Errorf("%w (the server asked to wait %s before trying again)", tmp.Err, tmp.After)
			}
			wait = max(wait, tmp.After)
		}
		if err := p.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func (p Retry) max() time.Duration {
	if p.Max > 0 {
		return p.Max
	}
	return 30 * time.Second
}

// backoff is the wait after the n-th failed try: Base·2ⁿ⁻¹ capped at Max,
// then jittered to between half and all of it, so that clients that failed
// together do not retry together.
func (p Retry) backoff(n int) time.Duration {
	d := p.Base
	if d <= 0 {
		d = time.Second
	}
	for i := 1; i < n && d < p.max(); i++ {
		d *= 2
	}
	d = min(d, p.max())
	return d/2 + rand.N(d/2+1)
}

func (p Retry) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RetryStatus reports whether an HTTP status is worth another try: 408,
// 409 (a lock conflict), 429, and 5xx (Anthropic's 529 "overloaded" too).
func RetryStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= 500
}

// retryAfter reads a response's Retry-After (seconds or an HTTP date), or the
// retry-after-ms header some APIs send; 0 when there is none.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if f, err := strconv.ParseFloat(ms, 64); err == nil && f > 0 {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f <= 0 {
			return 0
		}
		return time.Duration(f * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
