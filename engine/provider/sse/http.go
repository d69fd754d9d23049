package sse

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/textcut"
)

// A StatusError is an HTTP reply other than 200, with the provider's own
// message.
type StatusError struct {
	Code    int
	Message string
	// Param is the request field the server blamed, where its error body
	// names one (OpenAI's error.param: "response_format", "tool_choice").
	Param string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
	}
	return fmt.Sprintf("HTTP %d %s: %s", e.Code, http.StatusText(e.Code), e.Message)
}

// post sends body as JSON to url and returns the response when it is
// 200 OK, with its body open for streaming. Otherwise the error is a
// *StatusError, wrapped in *Temporary when RetryStatus says so (with the
// server's Retry-After); a failure to connect or send is *Temporary too.
// secret (the API key) is cut out of any message the server echoes.
func post(ctx context.Context, client *http.Client, url string, header http.Header, body []byte, secret string, shaping Shaping, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	resp, err := Guard(client).Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if errors.Is(err, ErrOtherOrigin) {
			return nil, redactError(err, secret) // another try would meet it again
		}
		return nil, &Temporary{Err: redactError(err, secret)}
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	serr := statusError(resp, secret)
	if toolsRefused(serr) {
		// Another try would meet the same refusal (llama.cpp's is a 500).
		return nil, ToolsUnsupported{serr}
	}
	// So would this one: the engine tries again without the mechanism, or
	// without the stage's parameter the model does not take.
	if p := shaping.refusedParam(serr, true); p != "" {
		return nil, &llm.MechanismError{Mechanism: llm.ParamMechanism(p), Err: serr}
	}
	if m := shaping.refused(serr); m != "" {
		return nil, &llm.MechanismError{Mechanism: m, Err: serr}
	}
	if p := shaping.refusedParam(serr, false); p != "" {
		return nil, &llm.MechanismError{Mechanism: llm.ParamMechanism(p), Err: serr}
	}
	if RetryStatus(resp.StatusCode) {
		return nil, &Temporary{Err: serr, After: retryAfter(resp.Header, time.Now())}
	}
	return nil, serr
}

// How much of an error reply is read, and how much of one that is not JSON
// is shown.
const (
	maxErrorBody  = 64 << 10
	maxErrorShown = 500
)

// statusError reads an error reply into a *StatusError, its message with
// secret cut out. The secret is masked before the message is shortened, so
// that the cut cannot leave part of it behind. (A body cut at the read
// limit is not JSON, and only its first maxErrorShown bytes are shown.)
func statusError(resp *http.Response, secret string) *StatusError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &StatusError{Code: resp.StatusCode, Message: errorMessage(body, secret), Param: shorten(redact(jsonParam(body), secret), maxErrorShown)}
}

// errorMessage is the message of an error body, secret masked: the
// message the server gave (jsonMessage), or the body itself, trimmed and
// shortened.
func errorMessage(body []byte, secret string) string {
	if m := jsonMessage(body); m != "" {
		return redact(m, secret)
	}
	return shorten(redact(strings.TrimSpace(string(body)), secret), maxErrorShown)
}

// jsonParam is error.param of a JSON error body, or "".
func jsonParam(body []byte) string {
	var v struct {
		Error struct {
			Param string `json:"param"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	return v.Error.Param
}

// jsonMessage is the message of a JSON error body: error.message of
// {"error": {"message": ...}} (OpenAI, Anthropic, most compatible servers),
// else error.type; the string of {"error": "..."} (Ollama's own API); the
// message of {"object": "error", "message": ...} (vLLM); or "".
func jsonMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if len(v.Error) > 0 {
		var s string
		if json.Unmarshal(v.Error, &s) == nil && s != "" {
			return s
		}
		var o struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		if json.Unmarshal(v.Error, &o) == nil {
			switch {
			case o.Message != "":
				return o.Message
			case o.Type != "":
				return o.Type
			}
		}
	}
	if v.Object == "error" {
		return v.Message
	}
	return ""
}

// shorten cuts s to at most n bytes, at a character boundary, marking the
// cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textcut.At(s, n) + "…"
}

// minSecret is the shortest secret masked: a shorter one would mask
// ordinary text.
const minSecret = 4

// redactError returns err with secret cut out of its text, or err itself
// when it does not contain it.
func redactError(err error, secret string) error {
	if err == nil || len(secret) < minSecret || !strings.Contains(err.Error(), secret) {
		return err
	}
	return redacted{msg: redact(err.Error(), secret), err: err}
}

type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }

// Unwrap keeps errors.Is working (context.Canceled, net errors) without
// letting a caller print the original text by accident: only the chain's
// identities are reachable, and Error is the redacted text.
func (r redacted) Unwrap() error { return r.err }

func redact(s, secret string) string {
	if len(secret) < minSecret {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// An idleTimer cancels a context when the server completes no line for a
// while: a timeout that a long answer streamed steadily never hits, and that
// a server trickling a byte at a time cannot keep off.
type idleTimer struct {
	t *time.Timer
	d time.Duration
}

// withIdle returns a context that ends, with a cause saying so, when d passes
// without a call to kick; d <= 0 means never. stop releases the timer.
func withIdle(ctx context.Context, d time.Duration) (_ context.Context, _ *idleTimer, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	if d <= 0 {
		return ctx, &idleTimer{}, func() { cancel(nil) }
	}
	id := &idleTimer{d: d}
	id.t = time.AfterFunc(d, func() {
		cancel(fmt.Errorf("no reply from the server for %s", d))
	})
	return ctx, id, func() { id.t.Stop(); cancel(nil) }
}

// kick restarts the wait.
func (id *idleTimer) kick() {
	if id.t != nil {
		id.t.Reset(id.d)
	}
}

// wrap returns r with every read that completes a line kicking the timer:
// a whole line, keep-alive comments included, is the sign of life.
func (id *idleTimer) wrap(r io.Reader) io.Reader {
	if id.t == nil {
		return r
	}
	return idleReader{r, id}
}

type idleReader struct {
	r  io.Reader
	id *idleTimer
}

func (ir idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if bytes.IndexByte(p[:n], '\n') >= 0 {
		ir.id.kick()
	}
	return n, err
}

// Defaults for a Call's time limits.
const (
	DefaultTimeout     = 5 * time.Minute
	DefaultMaxCallTime = 30 * time.Minute
)

// A Call is the streaming POST a provider makes for each model call.
type Call struct {
	Name    string       // the model's spec, which every error from Do starts with
	Client  *http.Client // nil means http.DefaultClient
	URL     string
	Header  http.Header
	Secret  string        // the API key: never in an error
	Timeout time.Duration // see withIdle; <= 0 means none
	// MaxTime bounds the whole call, every try and wait included, however
	// lively the server; <= 0 means DefaultMaxCallTime.
	MaxTime time.Duration
	Retry   Retry
	// NDJSON says the reply is a stream of JSON lines (Ollama's own API)
	// rather than server-sent events: each line is read as an event's data.
	NDJSON bool
	// limit names where MaxTime came from, for the error that says it ran
	// out; "" is the provider's max_call_time.
	limit string
	// Final, when set, says of an error reply whether another try would
	// only meet it again (Ollama's "requires more system memory" 500): it
	// is then not tried again, whatever its status.
	Final func(*StatusError) bool
}

// Do posts body and hands the event stream to read, trying again as
// c.Retry allows while nothing has been passed on to the caller: read
// reports through started whether it has. A *Temporary error from read
// after it started is made final, saying the reply broke off. The context
// read runs under ends when the server completes no line for c.Timeout, and
// when the call has taken c.MaxTime. A 404 wraps llm.ErrModelUnavailable,
// so that a stage tries its next model.
func (c *Call) Do(ctx context.Context, body []byte, read func(ctx context.Context, r *Reader, started *bool) error) error {
	return c.DoShaped(ctx, body, Shaping{}, read)
}

// DoShaped is Do for a request that used the answer-shaping mechanisms
// shaping names: a server's refusal of one of them (see Shaping) is a
// *llm.MechanismError, never tried again.
func (c *Call) DoShaped(ctx context.Context, body []byte, shaping Shaping, read func(ctx context.Context, r *Reader, started *bool) error) error {
	limit := c.MaxTime
	if limit <= 0 {
		limit = DefaultMaxCallTime
	}
	callCtx, cancel := context.WithTimeoutCause(ctx, limit, fmt.Errorf("no whole reply within %s (%s)", limit, cmp.Or(c.limit, "the provider's max_call_time")))
	defer cancel()
	err := c.Retry.Do(callCtx, func(callCtx context.Context) error {
		ictx, idle, stop := withIdle(callCtx, c.Timeout)
		defer stop()
		started := false
		accept := "text/event-stream"
		if c.NDJSON {
			accept = "application/x-ndjson"
		}
		resp, err := post(ictx, c.Client, c.URL, c.Header, body, c.Secret, shaping, accept)
		var serr *StatusError
		if err != nil && c.Final != nil && errors.As(err, &serr) && c.Final(serr) {
			return serr
		}
		if err == nil {
			idle.kick()
			var r *Reader
			if c.NDJSON {
				r = NewLineReader(idle.wrap(resp.Body))
			} else {
				r = NewReader(eventBody(idle.wrap(resp.Body), resp.Header))
			}
			err = read(ictx, r, &started)
			resp.Body.Close()
		}
		var tmp *Temporary
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err() // not the cause: callers test errors.Is(err, context.Canceled)
		case callCtx.Err() != nil:
			return context.Cause(callCtx) // final: no time is left for another try
		case ictx.Err() != nil:
			err = &Temporary{Err: context.Cause(ictx)}
		case errors.Is(err, ErrTooLarge) && errors.As(err, &tmp):
			return tmp.Err // another try would meet the same reply
		}
		if started && errors.As(err, &tmp) {
			// The caller has seen part of this reply: another try would
			// show it a second, different one.
			return fmt.Errorf("the reply broke off after it had begun: %w", tmp.Err)
		}
		return err
	})
	if err == nil {
		return nil
	}
	if ctx.Err() == nil && callCtx.Err() != nil {
		err = context.Cause(callCtx) // it ran out while waiting to try again
	}
	err = redactError(err, c.Secret)
	var serr *StatusError
	if errors.As(err, &serr) && serr.Code == http.StatusNotFound {
		return fmt.Errorf("%s: %w: %w", c.Name, llm.ErrModelUnavailable, err)
	}
	return fmt.Errorf("%s: %w", c.Name, err)
}

// eventBody is body as an event stream. A server that answers a streaming
// request with one JSON document instead (a gateway's error, a server that
// ignores "stream") is read as a stream of that one event, so the provider
// sees its message rather than an empty stream. What the body holds decides,
// not its label: an event stream labelled application/json is read as the
// stream it is.
func eventBody(body io.Reader, h http.Header) io.Reader {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	if mt != "application/json" {
		return body
	}
	br := bufio.NewReader(body)
	if isEventStream(br) {
		return br
	}
	data, err := io.ReadAll(io.LimitReader(br, MaxEventSize+1))
	switch {
	case err != nil:
		return errReader{err}
	case len(data) > MaxEventSize:
		return errReader{errTooLarge}
	}
	var buf bytes.Buffer
	buf.Grow(len(data) + 8)
	buf.WriteString("data: ")
	if json.Compact(&buf, data) != nil {
		buf.Truncate(len("data: "))
		buf.Write(bytes.ReplaceAll(bytes.TrimSpace(data), []byte("\n"), []byte("\ndata: ")))
	}
	buf.WriteString("\n\n")
	return &buf
}

// isEventStream reports whether br starts, after white space, the way an
// event stream does: with a comment, or a "data:" or "event:" field. No
// JSON document starts so. It reads no further than it must to tell.
func isEventStream(br *bufio.Reader) bool {
	for i := 0; i < br.Size(); i++ {
		b, _ := br.Peek(i + 1)
		if len(b) <= i {
			return false
		}
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			continue
		case ':':
			return true
		case 'd', 'e':
			field := []byte("data:")
			if b[i] == 'e' {
				field = []byte("event:")
			}
			p, _ := br.Peek(i + len(field))
			return bytes.Equal(p[i:], field)
		}
		return false
	}
	return false
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// Bound is ctx under the call's time limits for a request that is not
// streamed (an upload, a listing, a model's details): it ends after
// c.Timeout or c.MaxTime (DefaultMaxCallTime when unset), whichever is
// shorter, with a cause saying which. Without it such a request to a
// server that never answers would wait as long as the turn.
func (c *Call) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	limit := c.MaxTime
	if limit <= 0 {
		limit = DefaultMaxCallTime
	}
	cause := fmt.Errorf("no whole reply within %s (the provider's max_call_time)", limit)
	if c.Timeout > 0 && c.Timeout < limit {
		limit, cause = c.Timeout, fmt.Errorf("no reply from the server for %s", c.Timeout)
	}
	return context.WithTimeoutCause(ctx, limit, cause)
}

// MaxJSONReply is the most of a reply JSON reads: a model list or a model's
// details, never a stream.
const MaxJSONReply = 8 << 20

// JSON makes a request that is not streamed, a GET when body is nil and
// else a POST of body, to url with c's header, and decodes the 200 reply
// into v, reading no more than MaxJSONReply. It is tried once, under ctx
// and c.Timeout. Errors start with c.Name and carry no key; a 404 wraps
// llm.ErrModelUnavailable.
func (c *Call) JSON(ctx context.Context, url string, body []byte, v any) error {
	ctx, cancel := c.Bound(ctx)
	defer cancel()
	err := c.json(ctx, url, body, v)
	if err == nil {
		return nil
	}
	err = redactError(err, c.Secret)
	var serr *StatusError
	if errors.As(err, &serr) && serr.Code == http.StatusNotFound {
		return fmt.Errorf("%s: %w: %w", c.Name, llm.ErrModelUnavailable, err)
	}
	return fmt.Errorf("%s: %w", c.Name, err)
}

func (c *Call) json(ctx context.Context, url string, body []byte, v any) error {
	if body == nil {
		return c.send(ctx, http.MethodGet, url, nil, 0, "", v)
	}
	return c.send(ctx, http.MethodPost, url, bytes.NewReader(body), int64(len(body)), "application/json", v)
}

// Send makes one request that is not streamed, as JSON does: method to url
// with c's header and body (size bytes of contentType; nil sends none),
// tried once under ctx and c.Timeout, the 200 reply's JSON decoded into v
// (nil reads none). body is read as it is sent, never copied whole (a
// files API's upload of an image). Errors start with c.Name and carry no
// key; a status other than 200 is a *StatusError, a 404 included (a file's
// 404 is not the model's).
func (c *Call) Send(ctx context.Context, method, url string, body io.Reader, size int64, contentType string, v any) error {
	ctx, cancel := c.Bound(ctx)
	defer cancel()
	if err := c.send(ctx, method, url, body, size, contentType, v); err != nil {
		return fmt.Errorf("%s: %w", c.Name, redactError(err, c.Secret))
	}
	return nil
}

func (c *Call) send(ctx context.Context, method, url string, body io.Reader, size int64, contentType string, v any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	if body != nil {
		req.ContentLength = size
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := Guard(c.Client).Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusError(resp, c.Secret)
	}
	if v == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxJSONReply))
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxJSONReply+1))
	switch {
	case err != nil:
		return fmt.Errorf("reading the reply: %w", err)
	case len(data) > MaxJSONReply:
		return fmt.Errorf("the reply is larger than %d MiB", MaxJSONReply>>20)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("the reply is not the JSON expected: %w", err)
	}
	return nil
}
