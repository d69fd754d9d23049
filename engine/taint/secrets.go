package taint

import "sync"

// Secrets is the gate's matcher on its own (DESIGN §19): what a turn read
// of private files, remembered as the gate remembers it (privateLines), to
// mask wherever the engine keeps text for later stages or the record (a
// preamble, a visit's last_response, response.md), whether or not the gate
// is on for egress. It decides nothing and counts nothing. Its private
// paths are made when a tool first brings sources, so a turn that reads
// nothing pays nothing for it. Safe for concurrent use; a nil *Secrets
// masks nothing.
type Secrets struct {
	private    []string
	cwd        string
	roots      []string
	pathsOnce  sync.Once
	pathsValue *privatePaths

	mu    sync.Mutex
	lines privateLines
	read  bool // some private content was read: Mask has work to do
	// written are the files the gate found written from private content
	// (Gate.Wrote, Session.Wrote): private from then on, as the gate's
	// are, by clean absolute path.
	written map[string]bool

	// files is what the private files under the roots hold, for Found
	// when the gate is off.
	files turnFiles
}

// NewSecrets sets up the matcher for a turn under the private paths the
// gate would guard (Launch.Resolve: the launch's and the agent's, whatever
// the policy), in a session whose working directory is cwd and roots are
// roots. Globs that do not compile (config.toml's and a blueprint's are
// checked where they are read) leave it guarding DefaultPrivate.
func NewSecrets(launch Launch, agent *Config, cwd string, roots []string) *Secrets {
	return &Secrets{private: launch.Resolve(agent).Private, cwd: cwd, roots: roots}
}

func (s *Secrets) paths() *privatePaths {
	s.pathsOnce.Do(func() {
		p, err := newPrivatePaths(s.private, s.cwd, s.roots, foldCase)
		if err != nil {
			p, _ = newPrivatePaths(DefaultPrivate, s.cwd, s.roots, foldCase)
		}
		s.pathsValue = p
	})
	return s.pathsValue
}

// Read takes in the private ones of sources.
func (s *Secrets) Read(sources []Source) {
	if s == nil {
		return
	}
	for _, src := range sources {
		if _, private := s.Private(src.Path); !private {
			continue
		}
		text := src.taken(s.abs(src.Path))
		s.mu.Lock()
		s.lines.add(text, 0)
		s.read = s.read || !s.lines.empty()
		s.mu.Unlock()
	}
}

// Found is Gate.Found for a turn whose gate is off: the private files
// under the roots whose secrets text (a tool's result) carries, but for
// those known names, as Sources for Read. So a command's output that
// carries a key of .env (`grep -r API_KEY .`) is masked in what the record
// and later stages keep whether or not the gate guards egress. The files
// are read once a turn, the first time a result is looked at, within the
// gate's bounds.
func (s *Secrets) Found(text string, known []Source) []Source {
	if s == nil || text == "" {
		return nil
	}
	f := s.files.get(s.paths())
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sources(f.lines.find(text), known, s.abs)
}

// Wrote makes private the files at paths, which the gate found written
// from private content (what Gate.Wrote returns): reading one later
// teaches Mask its content, as reading a private file does.
func (s *Secrets) Wrote(paths []string) {
	if s == nil || len(paths) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written == nil {
		s.written = map[string]bool{}
	}
	for _, p := range paths {
		s.written[s.abs(p)] = true
	}
}

// Restore takes in what the session's earlier turns left its gate
// (Session, as Gate.Restore does): the files they wrote from private
// content are private, and they and the private files read are read
// again, so what the record and later stages keep of this turn is masked
// of them too.
func (s *Secrets) Restore(ss Session) {
	if s == nil {
		return
	}
	s.Wrote(ss.Wrote)
	s.Read(ss.sources())
}

// Private reports whether the file at path is private (see
// privatePaths.private, and Wrote), and its name for messages.
func (s *Secrets) Private(path string) (name string, ok bool) {
	if s == nil {
		return "", false
	}
	if name, ok := s.paths().private(path); ok {
		return name, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.abs(path); s.written[p] {
		return s.paths().name(p), true
	}
	return "", false
}

// abs is path made absolute against the session's directory, cleaned.
func (s *Secrets) abs(path string) string { return absIn(s.cwd, path) }

// Mask returns text with every private line, value or secret-looking word
// the turn read masked (MaskLine), wherever it is found, white space and
// JSON's escapes aside (privateLines.mask); text itself when nothing
// private was read, at the cost of a lock.
func (s *Secrets) Mask(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.read {
		return text
	}
	return s.lines.mask(text)
}

// MaskFound is Mask of text after Found: the private files under the
// roots whose secrets text carries are read, as if the turn had read them,
// so text is masked of them however it came by them. What a session keeps
// for its later turns (an earlier answer, the commentary a turn streamed)
// goes through it: a model that restated a key the turn never read
// through a tool, or a history written before the file was private, is
// masked all the same.
func (s *Secrets) MaskFound(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.Read(s.Found(text, nil))
	return s.Mask(text)
}
