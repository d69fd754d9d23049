package sse

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// A provider's key goes only where it was configured: to the origin
// (scheme, host and port) of its base URL. Every request a provider makes
// goes through a client from Guard, which follows a redirect only on the
// origin the request was made to: net/http follows one to any host, and
// carries every header but Authorization and cookies along, an API key in
// its own header (x-api-key, x-goog-api-key) or a configured one included,
// and drops none on a downgrade from https to http. A URL a server names
// for a later request (Gemini's upload URL) is checked with SameOrigin
// before the key is put on it.

// ErrOtherOrigin is wrapped by the error of a request the server
// redirected to another origin, which was not followed.
var ErrOtherOrigin = errors.New("the server redirected to another origin, where coda sends no key")

// SameOrigin reports whether u has the scheme, host and port of base (the
// default port written or not).
func SameOrigin(u, base *url.URL) bool {
	return strings.EqualFold(u.Scheme, base.Scheme) && strings.EqualFold(hostPort(u), hostPort(base))
}

func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return u.Hostname() + ":" + port
}

// Guard is client (http.DefaultClient when nil) refusing a redirect to
// another origin than the request's first: its own CheckRedirect, if it
// has one, decides the rest.
func Guard(client *http.Client) *http.Client {
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !SameOrigin(req.URL, via[0].URL) {
			return fmt.Errorf("%w (%s://%s)", ErrOtherOrigin, req.URL.Scheme, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}
