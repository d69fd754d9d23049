package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/coda-acp/coda/engine"
	"github.com/coda-acp/coda/engine/local"
)

// Asking on the terminal (DESIGN §22): `coda run` whose stdin is a
// terminal, not detached, can be asked the model's ask_user question. The
// question goes to stderr, beside the run's progress, and the answer is
// read from stdin a line at a time: an empty line declines, the end of
// stdin dismisses. Anywhere else ask_user is not offered (its workspace is
// no engine.Asker), so the model never waits on nobody.

// A ttyReader is a reader to take as a terminal, whatever it is: tests
// give `coda run` a pipe that answers as a user at a terminal would.
type ttyReader interface {
	io.Reader
	IsTerminal() bool
}

// isTerminal reports whether r is a terminal someone can answer on: a
// character device other than the null device, or a ttyReader that says
// so.
func isTerminal(r io.Reader) bool {
	switch r := r.(type) {
	case ttyReader:
		return r.IsTerminal()
	case *os.File:
		fi, err := r.Stat()
		if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			return false
		}
		null, err := os.Stat(os.DevNull)
		return err != nil || !os.SameFile(fi, null)
	}
	return false
}

// askingWorkspace is `coda run`'s workspace when someone is at the
// terminal: the local workspace, and an engine.Asker.
type askingWorkspace struct {
	*local.Workspace
	*terminalAsker
}

// terminalAsker asks on a terminal: the question on out (the run's
// progress sink, so it starts on a line of its own), the answer from in.
type terminalAsker struct {
	progress *terminalSink

	mu    sync.Mutex // one question at a time
	once  sync.Once
	lines chan string // stdin's lines; closed at its end
	in    io.Reader
}

func newTerminalAsker(in io.Reader, progress *terminalSink) *terminalAsker {
	return &terminalAsker{in: in, progress: progress, lines: make(chan string)}
}

// The longest answer line read: what the model is given of one is
// bounded again by ask_user.
const maxAnswerLine = 256 << 10

// readLines reads stdin's lines for the asks, from the first ask on, as
// long as the process runs: a read cannot be stopped, so one reader serves
// every ask (a line typed between asks answers the next).
func (a *terminalAsker) readLines() {
	go func() {
		defer close(a.lines)
		sc := bufio.NewScanner(a.in)
		sc.Buffer(make([]byte, 4096), maxAnswerLine)
		for sc.Scan() {
			a.lines <- strings.TrimRight(sc.Text(), "\r")
		}
	}()
}

func (a *terminalAsker) CanAsk() bool { return true }

// line prints prompt and waits for a line; io.EOF at stdin's end.
func (a *terminalAsker) line(ctx context.Context, prompt string) (string, error) {
	a.say(prompt)
	select {
	case s, ok := <-a.lines:
		if !ok {
			a.say("\n")
			return "", io.EOF
		}
		// The terminal echoed the line and its end.
		a.progress.mu.Lock()
		a.progress.inLine = false
		a.progress.mu.Unlock()
		return s, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// say writes to the terminal under the progress sink's lock, after the
// line it was writing.
func (a *terminalAsker) say(s string) {
	a.progress.mu.Lock()
	defer a.progress.mu.Unlock()
	a.progress.endLineLocked()
	io.WriteString(a.progress.w, s)
	// A prompt waits on the line it ends; what the run prints next starts
	// a line of its own.
	a.progress.inLine = s != "" && !strings.HasSuffix(s, "\n")
}

func (a *terminalAsker) Ask(ctx context.Context, q engine.Question) (engine.Reply, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.once.Do(a.readLines)
	reply, err := a.ask(ctx, q)
	if err == io.EOF {
		return engine.Reply{Action: engine.ReplyCancel}, nil
	}
	return reply, err
}

func (a *terminalAsker) ask(ctx context.Context, q engine.Question) (engine.Reply, error) {
	decline := engine.Reply{Action: engine.ReplyDecline}
	switch {
	case len(q.Fields) > 0:
		fields, err := formFields(q.Fields)
		if err != nil {
			return engine.Reply{}, err
		}
		a.say(fmt.Sprintf("\ncoda asks: %s\n(one field a line; an empty line skips an optional field and declines a required one)\n", q.Message))
		content := map[string]any{}
		for _, f := range fields {
			v, ok, err := a.field(ctx, f)
			if err != nil {
				return engine.Reply{}, err
			}
			if !ok {
				if f.required {
					return decline, nil
				}
				continue
			}
			content[f.name] = v
		}
		return engine.Reply{Action: engine.ReplyAccept, Content: content}, nil
	case len(q.Choices) > 0:
		var b strings.Builder
		fmt.Fprintf(&b, "\ncoda asks: %s\n", q.Message)
		for i, c := range q.Choices {
			fmt.Fprintf(&b, "  %d) %s\n", i+1, c)
		}
		a.say(b.String())
		for {
			s, err := a.line(ctx, fmt.Sprintf("answer 1-%d (an empty line declines): ", len(q.Choices)))
			if err != nil {
				return engine.Reply{}, err
			}
			s = strings.TrimSpace(s)
			if s == "" {
				return decline, nil
			}
			if c, ok := pickChoice(q.Choices, s); ok {
				return engine.Reply{Action: engine.ReplyAccept, Content: map[string]any{"answer": c}}, nil
			}
			a.say(fmt.Sprintf("%q is none of the choices\n", s))
		}
	default:
		s, err := a.line(ctx, fmt.Sprintf("\ncoda asks: %s\nanswer (an empty line declines): ", q.Message))
		if err != nil {
			return engine.Reply{}, err
		}
		if strings.TrimSpace(s) == "" {
			return decline, nil
		}
		return engine.Reply{Action: engine.ReplyAccept, Content: map[string]any{"answer": s}}, nil
	}
}

// pickChoice is the choice s names: its number, or its text (in any case).
func pickChoice(choices []string, s string) (string, bool) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(choices) {
		return choices[n-1], true
	}
	for _, c := range choices {
		if strings.EqualFold(c, s) {
			return c, true
		}
	}
	return "", false
}

// A formField is one property of an ask_user form, as the terminal asks it.
type formField struct {
	name, title, desc, typ string
	enum                   []string
	required               bool
}

// formFields reads a form's properties in the order the model wrote them
// (ask_user has checked their types).
func formFields(raw json.RawMessage) ([]formField, error) {
	var form struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &form); err != nil {
		return nil, err
	}
	names, err := objectKeys(form.Properties)
	if err != nil {
		return nil, err
	}
	var props map[string]struct {
		Type        string   `json:"type"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Enum        []string `json:"enum"`
	}
	if err := json.Unmarshal(form.Properties, &props); err != nil {
		return nil, err
	}
	fields := make([]formField, 0, len(names))
	for _, n := range names {
		p := props[n]
		f := formField{name: n, title: p.Title, desc: p.Description, typ: p.Type, enum: p.Enum}
		for _, r := range form.Required {
			f.required = f.required || r == n
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// objectKeys is a JSON object's keys in their order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("the form's properties are not an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// field asks one field until its line reads as its type; ok false for an
// empty line.
func (a *terminalAsker) field(ctx context.Context, f formField) (any, bool, error) {
	label := f.name
	if f.title != "" {
		label = f.title
	}
	hint := f.typ
	switch {
	case len(f.enum) > 0:
		hint = "one of " + strings.Join(f.enum, ", ")
	case f.typ == "boolean":
		hint = "yes or no"
	case f.typ == "array":
		hint = "comma-separated"
	}
	if f.required {
		hint += ", required"
	}
	prompt := fmt.Sprintf("%s (%s)", label, hint)
	if f.desc != "" {
		prompt += " — " + f.desc
	}
	prompt += ": "
	for {
		s, err := a.line(ctx, prompt)
		if err != nil {
			return nil, false, err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, false, nil
		}
		if v, ok := fieldValue(f, s); ok {
			return v, true, nil
		}
		a.say(fmt.Sprintf("%q is not %s\n", s, hint))
	}
}

// fieldValue reads s as f's type.
func fieldValue(f formField, s string) (any, bool) {
	switch f.typ {
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	case "number":
		x, err := strconv.ParseFloat(s, 64)
		return x, err == nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, true
		case "n", "no", "false":
			return false, true
		}
		return nil, false
	case "array":
		var items []string
		for _, it := range strings.Split(s, ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		return items, len(items) > 0
	}
	if len(f.enum) > 0 {
		return pickChoice(f.enum, s)
	}
	return s, true
}
