package taint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coda-acp/coda/internal/plainjson"
)

// A Source is content of a file that a tool result carries to the model,
// or that the prompt embeds.
type Source struct {
	Path string // absolute
	Text string // what of the file the model is given
	// Named says the call only named the file (a shell command line):
	// what it did with it is unknown, so a private one is read whole
	// (up to maxNamedRead) as well as Text taken in.
	Named bool
}

// maxNamedRead is the most the gate reads of a private file a call named.
const maxNamedRead = 4 << 20

// A Gate is a turn's taint gate: its settings, the private content the
// turn's tools and prompt brought in, and its decisions. The turn's
// workers and children share it: what one reads taints the whole turn.
// Safe for concurrent use. A nil *Gate is the gate turned off: every
// method is then a no-op that lets everything through.
type Gate struct {
	policy            string
	paths             *privatePaths
	unattended, waive bool

	mu      sync.Mutex
	sources []string // private sources read so far, by name, in order
	// written are files the run wrote that carry private content: private
	// from then on, by clean absolute path.
	written map[string]bool
	// readPaths are the private files read, by clean absolute path, for
	// the session (Session).
	readPaths []string
	lines     privateLines
	counts    Counts
	// declined are the calls the user refused, by sink and payload: the
	// same call again is refused without asking again.
	declined map[uint64]bool
	seed     maphash.Seed
	// files are what the private files under the roots hold, for the
	// results that name none of them (found.go).
	files turnFiles
}

// New sets up the gate for a turn: launch's settings with the agent's
// [agent.taint] (nil when it has none; Launch.Resolve), in a session
// whose working directory is cwd and roots are roots. It returns nil when
// the policy is off. A private path that is not a glob (loading refuses
// one; this is one that slipped through) makes the gate guard
// DefaultPrivate instead, and the error says so.
func New(launch Launch, agent *Config, cwd string, roots []string) (*Gate, error) {
	cfg := launch.Resolve(agent)
	if cfg.Policy == Off || CheckPolicy(cfg.Policy) != nil {
		return nil, nil
	}
	paths, err := newPrivatePaths(cfg.Private, cwd, roots, foldCase)
	if err != nil {
		paths, _ = newPrivatePaths(DefaultPrivate, cwd, roots, foldCase)
		err = fmt.Errorf("%v; guarding the default private paths instead", err)
	}
	return &Gate{policy: cfg.Policy, paths: paths, unattended: launch.Unattended, waive: launch.Waive, seed: maphash.MakeSeed()}, err
}

// Read takes in the private ones of sources. It returns the names of
// those it took, or "" when none was private: a record withholds the
// result that carried them.
func (g *Gate) Read(sources []Source) string {
	if g == nil {
		return ""
	}
	var names []string
	for _, s := range sources {
		name, private := g.Private(s.Path)
		if !private {
			continue
		}
		names = appendNew(names, name)
		text := s.taken(g.abs(s.Path))
		g.mu.Lock()
		g.lines.add(text, g.source(name))
		if p := g.abs(s.Path); !slices.Contains(g.readPaths, p) && len(g.readPaths) < maxSessionPaths {
			g.readPaths = append(g.readPaths, p)
		}
		g.mu.Unlock()
	}
	return listNames(names)
}

// Wrote takes in files the run wrote (write_file, edit_file, what a
// shell command or an MCP tool changed): in a tainted run, one that
// carries private content the gate knows is private from then on, so
// reading it taints and sending it whole is gated. The files are read
// whole, a chunk at a time. It returns those it took, by clean absolute
// path (for Secrets.Wrote).
func (g *Gate) Wrote(paths []string) []string {
	if g == nil || !g.Tainted() {
		return nil
	}
	var took []string
	for _, p := range paths {
		p = g.abs(p)
		if _, private := g.Private(p); private {
			continue
		}
		f, err := openRegular(p)
		if err != nil {
			continue // a FIFO or a device (a symlink to /dev/zero) is not read
		}
		carries := false
		g.mu.Lock()
		_ = g.lines.findStream(f, func(uint32) { carries = true })
		if carries {
			if g.written == nil {
				g.written = map[string]bool{}
			}
			g.written[p] = true
		}
		g.mu.Unlock()
		f.Close()
		if carries {
			took = append(took, p)
		}
	}
	return took
}

// Allows reports whether the policy lets private content through
// (allow): what a call carries is then no reason to hold anything back.
func (g *Gate) Allows() bool { return g != nil && g.policy == Allow }

// Tainted reports whether the run has read private content.
func (g *Gate) Tainted() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.sources) > 0
}

// abs is path made absolute against the session's directory, cleaned.
func (g *Gate) abs(path string) string { return absIn(g.paths.cwd, path) }

// absIn is path made absolute against dir, cleaned.
func absIn(dir, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return filepath.Clean(path)
}

// taken is what of a private source is taken in: its Text, and for a file
// a call only named (Named), what the file at abs, its path, holds too.
func (s Source) taken(abs string) string {
	if s.Named {
		if b, err := readHead(abs, maxNamedRead); err == nil {
			return string(b) + "\n" + s.Text
		}
	}
	return s.Text
}

// readHead reads at most max bytes of the regular file at path.
func readHead(path string, max int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// openRegular opens the file at path for reading when it is a regular
// one. It is opened without waiting (openFlags), so a FIFO a command made
// under a private name (`mkfifo .env.pipe`) does not hold the turn until
// a writer comes, and refused by the opened file's own type, so neither
// it nor a device (a link to /dev/zero) is read.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	return f, nil
}

// Carries names the private sources whose content text holds (a worker's
// or child's answer, handed to its parent), or "" when it holds none: so
// the record withholds it as it withholds a tool's reading of them.
func (g *Gate) Carries(text string) string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var names []string
	for _, i := range g.lines.find(text) {
		names = appendNew(names, g.sources[g.lines.line(i).source])
	}
	return listNames(names)
}

// Private reports whether the file at path is private, and its name for
// messages (see privatePaths.private). Nothing is private with the gate
// off.
func (g *Gate) Private(path string) (name string, ok bool) {
	if g == nil {
		return "", false
	}
	if name, ok := g.paths.private(path); ok {
		return name, true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if p := g.abs(path); g.written[p] {
		return g.paths.name(p), true
	}
	return name, false
}

// source is the index of the source named name, added if new. g.mu is
// held.
func (g *Gate) source(name string) int {
	for i, s := range g.sources {
		if s == name {
			return i
		}
	}
	g.sources = append(g.sources, name)
	return len(g.sources) - 1
}

// A Call is what the gate is asked about: something about to leave the
// machine.
type Call struct {
	Sink    string   // submit_output, or the tool's name
	What    string   // how the model is told of it: "this answer", "this shell call"
	Payload []string // what it would send
	// Format is the answer's format, whose own escapes the gate undoes
	// to look in what they hide (decoded); "" for none.
	Format  string
	Carried []string // private files it would send whole (artifacts), by name
	// Files are what it would send besides, read whole (artifacts: text
	// or binary, any size), a chunk at a time; Decide reads them, and
	// the caller closes them.
	Files []io.Reader
	// Asks says the call's tool asks the user about each call itself
	// (shell, MCP tools): the gate's question then covers the tool's own,
	// and an approval approves the call (Outcome.Approved).
	Asks bool
}

// The sink of an answer, as Call.Sink names it.
const sinkAnswer = "submit_output"

// A Question is what the gate asks the user under `ask`: which private
// sources a call would carry, and which of their lines, masked. Nothing
// private that the gate remembers is in it unmasked.
type Question struct {
	Call      Call
	Sources   []string // the private files, by name
	Matches   []string // the private lines found in the call, masked
	Unchecked bool     // see Audit.Unchecked
}

// Title is the question's title: "Send content read from .env
// (submit_output)?".
func (q Question) Title() string {
	return fmt.Sprintf("Send content read from %s (%s)?", listNames(q.Sources), q.Call.Sink)
}

// Covering is the title of a question that covers its tool's own (Call.Asks),
// after that tool's title of the call.
func (q Question) Covering(title string) string {
	return fmt.Sprintf("%s (sends content read from %s)", title, listNames(q.Sources))
}

// Text is what the question says: which private files, and the lines
// found, masked.
func (q Question) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s would carry content read from %s.", upperFirst(q.Call.What), privateNames(q.Sources, false))
	if len(q.Matches) > 0 {
		b.WriteString("\nPrivate lines in it (masked):")
		for _, m := range q.Matches {
			b.WriteString("\n  " + m)
		}
	}
	if q.Unchecked {
		b.WriteString("\nThe run read more private content than coda keeps track of, so it cannot tell which.")
	}
	return b.String()
}

// Always is what "always allow" covers, for the option the user picks.
func (q Question) Always() string {
	return fmt.Sprintf("Always allow %s to carry private content in this session", q.Call.Sink)
}

// An Outcome is the gate's answer to a call: through (and whether by
// waiver, and whether the user approved the call itself), or refused, with
// what the model is told.
type Outcome struct {
	Allowed, Waived, Approved bool
	Refusal                   string
	// Audit is the decision's record, to log and keep in the run's record;
	// nil when the call carried nothing private and went through unheld.
	Audit *Audit
}

// An Asker puts a question to the user: (false, nil) is a refusal; an
// error says the user could not be asked.
type Asker func(ctx context.Context, q Question) (bool, error)

// Decide puts a call before the policy, asking the user through ask
// under `ask`. A call that carries no private content passes without a
// record.
func (g *Gate) Decide(ctx context.Context, c Call, ask Asker) Outcome {
	if g == nil {
		return Outcome{Allowed: true}
	}
	// What the call sends whole (an artifact) may hold a private file's
	// content under another name, in a run that read nothing private: a
	// command can copy a file it names in no way its line shows and print
	// nothing (`cp "$(printf .en)v" out.txt`). So the files are looked in
	// for the secrets of the private files under the roots first, and one
	// that carries some brings those files, as a result does (Found).
	g.Read(g.foundFiles(c.Files))
	payloads := c.Payload
	if c.Format != "" {
		payloads = slices.Clone(payloads)
		for _, p := range c.Payload {
			payloads = append(payloads, decoded(c.Format, p)...)
		}
	}
	g.mu.Lock()
	found := g.lines.find(payloads...)
	unreadable := false // a file that cannot be read whole cannot be shown to be free of it
	for _, f := range c.Files {
		var more []uint32
		if err := g.lines.findStream(f, func(line uint32) { more = append(more, line) }); err != nil {
			unreadable = true
		}
		found = mergeLines(found, more)
	}
	unchecked := (g.lines.full || unreadable) && len(found) == 0 && len(g.sources) > 0
	rec := Audit{Sink: c.Sink, Policy: g.policy, Sources: []string{}, Matches: []string{}, Unchecked: unchecked}
	for _, i := range found {
		l := g.lines.line(i)
		rec.Matches = append(rec.Matches, l.masked)
		rec.Sources = appendNew(rec.Sources, g.sources[l.source])
	}
	if unchecked {
		rec.Sources = append(rec.Sources, g.sources...)
	}
	g.mu.Unlock()
	for _, name := range c.Carried {
		rec.Sources = appendNew(rec.Sources, name)
	}
	if len(rec.Sources) == 0 {
		return Outcome{Allowed: true}
	}

	out := Outcome{}
	switch {
	case g.policy == Allow:
		out.Allowed, rec.DecidedBy = true, decidedByPolicy
	case g.policy == Deny:
		rec.DecidedBy = decidedByPolicy
	case g.unattended && g.waive:
		out.Allowed, out.Waived, rec.DecidedBy = true, true, decidedByWaiver
		rec.Reason = "nobody was there to ask, and --yes waived the gate"
	case g.unattended:
		rec.DecidedBy, rec.Reason = decidedByPolicy, "nobody was there to ask (coda run without --yes)"
	case g.wasDeclined(c):
		rec.DecidedBy = decidedByUser
	default:
		ok, err := ask(ctx, Question{Call: c, Sources: rec.Sources, Matches: rec.Matches, Unchecked: rec.Unchecked})
		switch {
		case ctx.Err() != nil:
			rec.DecidedBy, rec.Reason = decidedByPolicy, "the turn was cancelled before the user answered"
		case err != nil:
			rec.DecidedBy, rec.Reason = decidedByPolicy, fmt.Sprintf("the user could not be asked (%v)", err)
		default:
			out.Allowed, rec.DecidedBy = ok, decidedByUser
			out.Approved = ok && c.Asks
			if !ok {
				g.decline(c)
			}
		}
	}
	rec.Decision = decisionDenied
	if out.Allowed {
		rec.Decision = decisionAllowed
	} else {
		out.Refusal = refusal(c, rec)
	}
	g.count(&rec, out.Waived)
	audit := rec // rec stays on the stack for the calls that carry nothing
	out.Audit = &audit
	return out
}

// count counts a decision for run.json and stamps its record.
func (g *Gate) count(rec *Audit, waived bool) {
	rec.Time = time.Now().UTC().Format(time.RFC3339Nano)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.counts.Gated++
	switch {
	case waived:
		g.counts.Waived++
	case rec.Decision == decisionAllowed:
		g.counts.Allowed++
	default:
		g.counts.Denied++
	}
}

// Counts is the turn's decisions so far, or nil when the gate is off.
func (g *Gate) Counts() *Counts {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.counts
	return &c
}

// callKey identifies a call by its sink and what it would send.
func (g *Gate) callKey(c Call) uint64 {
	var h maphash.Hash
	h.SetSeed(g.seed)
	h.WriteString(c.Sink)
	for _, p := range c.Payload {
		h.WriteByte(0)
		h.WriteString(p)
	}
	for _, p := range c.Carried {
		h.WriteByte(1)
		h.WriteString(p)
	}
	return h.Sum64()
}

func (g *Gate) decline(c Call) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.declined == nil {
		g.declined = map[uint64]bool{}
	}
	g.declined[g.callKey(c)] = true
}

func (g *Gate) wasDeclined(c Call) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.declined[g.callKey(c)]
}

// Who decided, and what.
const (
	decidedByPolicy = "policy"
	decidedByUser   = "user"
	decidedByWaiver = "waiver"
	decisionAllowed = "allowed"
	decisionDenied  = "denied"
)

// Mask is text with the private content the gate knows masked, behind
// JSON's escapes too (privateLines.mask): what is shown of a call, or of
// the model's streamed text, before the gate has decided on it. text
// itself when the run is not tainted.
func (g *Gate) Mask(text string) string {
	if g == nil || text == "" {
		return text
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.sources) == 0 {
		return text
	}
	return g.lines.mask(text)
}

// MaskCut is the head of a call's arguments that were cut at their cap
// (JSON that may stop inside a string), as it may be shown before the gate
// has decided: its private content masked, or nothing when what is left
// still carries some once JSON's escapes are undone (a secret written
// with `\\` or `\u0041` in it, which masking the text as written
// cannot see).
func (g *Gate) MaskCut(head []byte) []byte {
	if g == nil {
		return head
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.sources) == 0 {
		return head
	}
	masked := g.lines.redact(string(head))
	if g.lines.behindEscapes(masked) {
		return nil
	}
	return []byte(masked)
}

// RedactArgs are a call's arguments with their private content masked,
// to show the user.
func (g *Gate) RedactArgs(args json.RawMessage) json.RawMessage {
	if g == nil {
		return args
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var v any
	if json.Unmarshal(args, &v) != nil {
		v = string(args)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return g.lines.redact(v)
		case []any:
			for i, x := range v {
				v[i] = walk(x)
			}
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, x := range v {
				out[g.lines.redact(k)] = walk(x)
			}
			return out
		}
		return v
	}
	b, err := plainjson.Marshal(walk(v), "")
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return bytes.TrimSpace(b)
}

// refusal is what the model is told of a refused call: which private
// source, which lines (masked), and to go on without them.
func refusal(c Call, rec Audit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s would carry content read from %s, so it ", upperFirst(c.What), privateNames(rec.Sources, true))
	if c.Sink == sinkAnswer {
		b.WriteString("was not recorded")
	} else {
		b.WriteString("was not run")
	}
	switch {
	case rec.DecidedBy == decidedByUser:
		b.WriteString(": the user declined it.")
	case rec.Reason != "":
		fmt.Fprintf(&b, ": the taint policy is %s, and %s.", rec.Policy, rec.Reason)
	default:
		fmt.Fprintf(&b, ": the taint policy is %s.", rec.Policy)
	}
	if len(rec.Matches) > 0 {
		fmt.Fprintf(&b, " It contains (masked here): %s.", strings.Join(rec.Matches, "; "))
	}
	if rec.Unchecked {
		b.WriteString(" The run read more private content than coda keeps track of, so no call can be shown to be free of it.")
	}
	if c.Sink == sinkAnswer {
		b.WriteString(" Answer without that content.")
	} else {
		b.WriteString(" Do not retry the same call; do without that content.")
	}
	return b.String()
}

// ArgStrings are the strings in a call's JSON arguments: what it would
// send. Arguments that are not JSON are taken whole.
func ArgStrings(args json.RawMessage) []string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return []string{string(args)}
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for k, x := range v {
				out = append(out, k)
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// listNames names sources for a title or message: at most three, then how
// many more.
func listNames(names []string) string {
	switch n := len(names); {
	case n == 0:
		return ""
	case n <= 3:
		return strings.Join(names, ", ")
	default:
		return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), n-3)
	}
}

// privateNames names private sources in a sentence: all of them, or
// (short) as listNames does.
func privateNames(names []string, short bool) string {
	list := strings.Join(names, ", ")
	if short {
		list = listNames(names)
	}
	if len(names) == 1 {
		return "the private file " + list
	}
	return "the private files " + list
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// mergeLines adds more to found, each line once, in the order they were
// read.
func mergeLines(found, more []uint32) []uint32 {
	if len(more) == 0 {
		return found
	}
	found = append(found, more...)
	slices.Sort(found)
	return slices.Compact(found)
}

// A Session is what a session's gate keeps between its turns (DESIGN §13:
// taint belongs to the session, not only the turn): which private files
// its turns read, and which files they wrote that carry private content,
// by path. No content is kept: the next turn's gate reads the files again
// (Restore), so the session's file holds no secret.
type Session struct {
	Read  []string `json:"read,omitempty"`
	Wrote []string `json:"wrote,omitempty"`
}

// maxSessionPaths bounds the paths a Session keeps of each kind.
const maxSessionPaths = 256

// Session is what the gate has of the session so far: what it was
// restored with, and what this turn added. The zero Session with the gate
// off.
func (g *Gate) Session() Session {
	if g == nil {
		return Session{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := Session{Read: slices.Clone(g.readPaths)}
	for p := range g.written {
		s.Wrote = append(s.Wrote, p)
	}
	slices.Sort(s.Wrote)
	s.Wrote = s.Wrote[:min(len(s.Wrote), maxSessionPaths)]
	return s
}

// Restore takes in the session's earlier turns (Session): the private
// files they read are read again, and the files they wrote from private
// content are private again and read too, so the turn starts tainted.
func (g *Gate) Restore(s Session) {
	if g == nil {
		return
	}
	g.mu.Lock()
	for _, p := range s.Wrote {
		if g.written == nil {
			g.written = map[string]bool{}
		}
		g.written[filepath.Clean(p)] = true
	}
	g.mu.Unlock()
	g.Read(s.sources())
}

// sources are the files a Session names, as a restored turn reads them
// again: the private files read, and those written from private content.
func (s Session) sources() []Source {
	var sources []Source
	for _, p := range append(slices.Clone(s.Read), s.Wrote...) {
		sources = append(sources, Source{Path: p, Named: true})
	}
	return sources
}
