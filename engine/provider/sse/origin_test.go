package sse

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A redirect to another origin is not followed, whatever the request (the
// stream, a listing, an upload): the key in its own header (which
// net/http carries to any host) and the configured headers reach no one
// but the provider. One on the same origin is followed.
func TestGuard_redirects(t *testing.T) {
	var mu sync.Mutex
	var got []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.Header.Get("X-Api-Key")+r.Header.Get("Authorization")+r.Header.Get("X-Team"))
		mu.Unlock()
		io.WriteString(w, "{}")
	}))
	defer thief.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/here" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`)
			return
		}
		to := thief.URL + r.URL.Path
		if r.URL.Query().Has("same") {
			to = "/here"
		}
		http.Redirect(w, r, to, http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	c := &Call{Name: "m", URL: api.URL + "/stream", Secret: "secret-key",
		Header: http.Header{"X-Api-Key": {"secret-key"}, "Authorization": {"Bearer secret-key"}, "X-Team": {"t"}}}
	for name, call := range map[string]func() error{
		"stream": func() error {
			return c.Do(context.Background(), []byte(`{}`), func(context.Context, *Reader, *bool) error { return nil })
		},
		"JSON": func() error { return c.JSON(context.Background(), api.URL+"/models", nil, new(any)) },
		"Send": func() error {
			return c.Send(context.Background(), http.MethodPost, api.URL+"/files", strings.NewReader("x"), 1, "image/png", new(any))
		},
	} {
		if err := call(); !errors.Is(err, ErrOtherOrigin) || strings.Contains(err.Error(), "secret-key") {
			t.Errorf("%s redirected elsewhere: %v", name, err)
		}
	}
	mu.Lock()
	if len(got) != 0 {
		t.Errorf("another origin got %q", got)
	}
	mu.Unlock()
	var v struct{ OK bool }
	if err := c.JSON(context.Background(), api.URL+"/models?same", nil, &v); err != nil || !v.OK {
		t.Errorf("a redirect on the same origin: %v", err)
	}
}

func TestSameOrigin(t *testing.T) {
	base, _ := url.Parse("https://api.example.com/v1")
	for s, want := range map[string]bool{
		"https://api.example.com/upload/x":    true,
		"https://API.example.com:443/x":       true,
		"http://api.example.com/x":            false,
		"https://api.example.com:8443/x":      false,
		"https://api.example.com.evil.test/x": false,
		"https://evil.test/api.example.com":   false,
		"https://api.example.com@evil.test/x": false,
		"//api.example.com/x":                 false,
	} {
		u, _ := url.Parse(s)
		if got := SameOrigin(u, base); got != want {
			t.Errorf("SameOrigin(%s) = %v", s, got)
		}
	}
}

// A request that is not streamed waits no longer than the call's idle
// timeout or its max_call_time, whichever is shorter, on a server that
// never answers.
func TestCall_JSONBound(t *testing.T) {
	for _, tt := range []struct {
		timeout, maxTime, want time.Duration
		cause                  string
	}{
		{10 * time.Second, 20 * time.Second, 10 * time.Second, "no reply from the server for 10s"},
		{60 * time.Second, 20 * time.Second, 20 * time.Second, "max_call_time"},
		{0, 0, DefaultMaxCallTime, "max_call_time"},
	} {
		synctest.Test(t, func(t *testing.T) {
			c := &Call{Name: "m", Timeout: tt.timeout, MaxTime: tt.maxTime, Client: &http.Client{Transport: never{}}}
			start := time.Now()
			err := c.Send(context.Background(), http.MethodPost, "https://api.test/files", strings.NewReader("x"), 1, "image/png", nil)
			if took := time.Since(start); took != tt.want || err == nil || !strings.Contains(err.Error(), tt.cause) {
				t.Errorf("Send gave up after %s with %v, want %s and %q", took, err, tt.want, tt.cause)
			}
			start = time.Now()
			err = c.JSON(context.Background(), "https://api.test/models", nil, new(any))
			if took := time.Since(start); took != tt.want || err == nil || !strings.Contains(err.Error(), tt.cause) {
				t.Errorf("JSON gave up after %s with %v, want %s and %q", took, err, tt.want, tt.cause)
			}
		})
	}
}

// never is a server that never answers.
type never struct{}

func (never) RoundTrip(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}
