package taint

import (
	"bytes"
	"cmp"
	"hash/maphash"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// privateLines remembers what of the private content a run read, to find
// it again in what a sink would send. It keeps no secret as it was
// written: each line of private text yields fragments (the whole line,
// unless it is a comment, a key without a value, or ordinary words; the
// value of a `KEY=VALUE` line; each secret-looking word), remembered by
// hash and length in sorted slices, found by the first anchorLen bytes
// they start with; and the line's masked form, to quote it. A secret of
// pieceMin characters or more is remembered as its pieces too, so that a
// piece of it is found: the key in two halves, with a `-` put in, across
// two JSON strings. Every pieceLen characters of it when it is surely a
// secret: the value of a key that names one (secretName:
// `PASSWORD=correcthorsebatterystaple`) or a line that is one word, either
// no path or host (plainWord); else those in which a letter stands beside
// a digit (keyLike), since a piece of an ordinary value (a URL's, a
// path's) is as likely ordinary text. The pieces are kept as pieces.go
// says, in about 2 bytes a byte of secret; a value whose every piece is
// kept needs no fragment of its own, nor does its line (what holds them
// holds a piece). Fragments and payloads are compared folded (fold): every
// white space and Unicode format character removed, NFKC folded and
// lower-cased, so a line the model wrapped, re-indented, upper-cased,
// typed in fullwidth letters or laced with zero-width spaces is still
// found. Memory is bounded (a MiB of keys keeps 1.77 MB: BenchmarkRead):
// past maxPrivateLines lines, maxFragments fragments or maxSegmentBytes
// of pieces, later lines are not remembered and full is set, and the
// gate then treats every sink call as carrying private content (it can
// no longer show that one does not).
type privateLines struct {
	seed   maphash.Seed
	seeded bool
	// frags are the fragments' hashes, sorted, each with its line in the
	// low 16 bits (lines are fewer than 1<<16); anchors the hashes of
	// their first anchorLen bytes, sorted, each with a fragment's length
	// in the low 24 bits. newFrags and newAnchors are those of the
	// reading under way, merged in at its end; taken what newFrags hold.
	frags, anchors       []uint64
	newFrags, newAnchors []uint64
	taken                map[uint64]bool
	bloom                []uint64 // anchors seen, two bits each: most payload positions stop here
	longest              int      // the longest fragment, in bytes
	full                 bool

	// pieces are the secrets' pieces (pieces.go).
	pieces pieceIndex
	// scratch holds a line's folds while it is read.
	scratch []byte

	// The lines, as they are quoted: masks holds their masked forms one
	// after another, each ended by a newline (which none holds), and
	// marks where each 64th begins; secret has bit i set when line i
	// holds a secret (a value or word secretLike), not only ordinary
	// words; runs are the lines read from each source, in turn: the
	// first line of a run in the high 32 bits, its source in the low.
	masks  []byte
	marks  []uint32
	lines  int
	secret []uint64
	runs   []uint64
}

// A privateLine is a line of private text, as it is quoted.
type privateLine struct {
	masked string
	source int  // index in the run's sources
	secret bool // it holds a secret, not only ordinary words
}

// Bounds on what privateLines remembers.
const (
	maxPrivateLines = 1 << 16
	maxFragments    = 1 << 17
	maxFragmentLen  = 1<<24 - 1
	// anchorLen is the shortest fragment: shorter lines say too little to
	// be told from ordinary text.
	anchorLen = 6
	// A secret of pieceMin characters or more is found by any pieceLen of
	// them in a row (DESIGN §13).
	pieceMin   = 16
	pieceLen   = 12
	bloomShift = 20
	bloomBits  = 1 << bloomShift
	anchorMask = 1<<(8*anchorLen) - 1
	lineBits   = 1<<16 - 1
	lenBits    = 1<<24 - 1
)

// count is how many lines are remembered.
func (p *privateLines) count() int { return p.lines }

// line is line i, as it is quoted.
func (p *privateLines) line(i uint32) privateLine {
	from := int(p.marks[i/64])
	for range i % 64 {
		from += bytes.IndexByte(p.masks[from:], '\n') + 1
	}
	to := from + bytes.IndexByte(p.masks[from:], '\n')
	r, _ := slices.BinarySearchFunc(p.runs, i, func(run uint64, i uint32) int { return cmp.Compare(uint32(run>>32), i) })
	if r == len(p.runs) || uint32(p.runs[r]>>32) > i {
		r--
	}
	return privateLine{masked: string(p.masks[from:to]), source: int(uint32(p.runs[r])), secret: p.secret[i/64]&(1<<(i%64)) != 0}
}

// empty reports whether nothing is remembered to be found.
func (p *privateLines) empty() bool { return len(p.frags) == 0 && p.pieces.empty() }

// add remembers the lines of text, read from the run's source number
// source.
func (p *privateLines) add(text string, source int) {
	if !p.seeded {
		p.seed = maphash.MakeSeed()
		p.pieces.init(p.seed)
		p.seeded = true
	}
	defer p.settle()
	p.pieces.reserve(len(text))
	p.masks = slices.Grow(p.masks, len(text)/2)
	var frags, pieces [][]byte
	var secret bool
	for line := range strings.Lines(text) {
		p.scratch = p.scratch[:0]
		frags, pieces, secret = p.fragments(frags[:0], pieces[:0], line)
		if len(frags) == 0 && len(pieces) == 0 {
			continue // nothing worth finding, or all of it known
		}
		n := 0
		for _, pc := range pieces {
			n += len(pc)
		}
		if p.count() >= maxPrivateLines || len(p.frags)+len(p.newFrags)+len(frags) > maxFragments || !p.pieces.room(n) {
			p.full = true
			return
		}
		idx := uint32(p.count())
		if len(p.runs) == 0 || int(uint32(p.runs[len(p.runs)-1])) != source {
			p.runs = append(p.runs, uint64(idx)<<32|uint64(uint32(source)))
		}
		if idx%64 == 0 {
			p.secret = append(p.secret, 0)
			p.marks = append(p.marks, uint32(len(p.masks)))
		}
		at := len(p.masks)
		p.masks = appendMaskLine(p.masks, line)
		for j := at; j < len(p.masks); j++ {
			if p.masks[j] == '\n' { // not from strings.Lines; kept apart all the same
				p.masks[j] = ' '
			}
		}
		p.masks = append(p.masks, '\n')
		p.lines++
		if secret {
			p.secret[idx/64] |= 1 << (idx % 64)
		}
		for _, f := range frags {
			p.fragment(f, idx)
		}
		for _, pc := range pieces {
			p.pieces.add(pc, idx)
		}
	}
}

// settle merges what a reading found into what is kept, sorted, each
// slice the size it needs: once a reading, not once a call.
func (p *privateLines) settle() {
	p.pieces.build()
	if len(p.newFrags) > 0 {
		p.frags = merge(p.frags, p.newFrags)
		p.anchors = slices.Compact(merge(p.anchors, p.newAnchors))
		p.newFrags, p.newAnchors, p.taken = nil, nil, nil
	}
	p.masks, p.marks, p.runs = fit(p.masks), fit(p.marks), fit(p.runs)
	p.scratch = nil
}

// merge is old and more (unsorted) in one sorted slice of their length.
func merge(old, more []uint64) []uint64 {
	slices.Sort(more)
	out := make([]uint64, 0, len(old)+len(more))
	i, j := 0, 0
	for i < len(old) && j < len(more) {
		if old[i] <= more[j] {
			out = append(out, old[i])
			i++
		} else {
			out = append(out, more[j])
			j++
		}
	}
	return append(append(out, old[i:]...), more[j:]...)
}

// fragments appends to dst what of a line is worth finding and not yet
// known, folded: the whole line, unless it is a comment, a key without a
// value, or ordinary words; a value; secret-looking words; and for a secret
// of pieceMin characters or more, its pieces. isSecret says the line holds
// a secret.
func (p *privateLines) fragments(dst, pieces [][]byte, line string) (_, _ [][]byte, isSecret bool) {
	var taken map[string]bool // what dst holds, past a few
	add := func(sq []byte) {
		if len(sq) < anchorLen || utf8.RuneCount(sq) < anchorLen || p.known(sq) || taken[string(sq)] {
			return
		}
		if taken == nil && len(dst) >= 8 {
			taken = map[string]bool{}
			for _, f := range dst {
				taken[string(f)] = true
			}
		}
		for _, f := range dst[:min(len(dst), 8)] {
			if string(f) == string(sq) {
				return
			}
		}
		if taken != nil {
			taken[string(sq)] = true
		}
		dst = append(dst, sq)
	}
	// secret takes w for a secret: every piece of it when every is set,
	// else its pieces where a letter meets a digit (keyLike) (segments).
	// covered says its pieces cover it whole: what holds it is found by
	// them, and needs no fragment of its own.
	secret := func(w string, every bool) (sq []byte, covered bool) {
		isSecret = true
		sq = p.fold(w)
		long := utf8.RuneCount(sq) >= pieceMin
		if p.known(sq) {
			return sq, false // and so are its pieces
		}
		if long && p.pieces.covers(sq) {
			return sq, true
		}
		n := len(pieces)
		if long {
			pieces = segments(pieces, sq, every)
		}
		if covered = len(pieces) == n+1 && len(pieces[n]) == len(sq); !covered {
			add(sq)
		}
		return sq, covered
	}
	raw := line
	line = strings.TrimSpace(line)
	if at := valueAt(line); at >= 0 {
		v := strings.Trim(strings.TrimRight(line[at:], ",;"), `"'`)
		var sq []byte
		covered := false
		if secretLike(v, 6) {
			sq, covered = secret(v, secretName(line[:at]) && plainWord(v))
		}
		// The line whole is found by its value's pieces where they cover
		// the value (as the value folds within it: an ASCII line's
		// does): it needs no fragment of its own.
		if v == "" || covered && asciiOnly(raw) {
			return dst, pieces, isSecret
		}
		if whole := p.fold(raw); !(covered && bytes.Contains(whole, sq)) {
			add(whole)
		}
		return dst, pieces, isSecret
	}
	whole := p.fold(raw)
	comment := strings.HasPrefix(line, "#") || strings.HasPrefix(line, "//")
	if !comment && secretLike(string(whole), 8) {
		add(whole)
	}
	if !comment && plainWord(line) {
		// A line that is one word, and no path, host or address: a
		// password file's (secrets/db_password), a key's line of a PEM.
		if secretLike(line, 8) && utf8.RuneCountInString(line) >= pieceMin {
			secret(line, true)
		}
		return dst, pieces, isSecret
	}
	for _, w := range strings.FieldsFunc(line, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("\"'`,;()[]{}<>", r) }) {
		// A short word of a line that is no KEY=VALUE needs a digit to be
		// taken for a secret: `hunter2x`, not `well-known` or
		// `Content-Type`.
		if secretLike(w, 8) && len(w) < len(whole) && (utf8.RuneCountInString(w) >= pieceMin || strings.ContainsFunc(w, unicode.IsDigit)) {
			secret(w, false)
		}
	}
	return dst, pieces, isSecret
}

// fold is s folded, kept in p.scratch until the next line is read.
func (p *privateLines) fold(s string) []byte {
	n := len(p.scratch)
	p.scratch = fold(p.scratch, s)
	return p.scratch[n:len(p.scratch):len(p.scratch)]
}

// secretName reports whether the key of a KEY=VALUE line (what comes
// before its value: `export API_KEY=`, `"client_secret": `) names a
// secret: one of its words (split at `_`, `-`, `.`, and where a lower-case
// letter meets an upper-case one) is TOKEN, KEY, SECRET, PASSWORD, PASS,
// CREDENTIAL, AUTH or their kin, and its last word does not say the value
// is something else about the secret (AUTH_URL, KEY_PATH, TOKEN_TTL).
// Every piece of such a value is looked for when it is a plainWord: all
// letters (`correcthorsebatterystaple`) or not.
func secretName(key string) bool {
	key = strings.TrimSpace(key)
	key = strings.TrimRight(key, "=: \t\"'")
	key = strings.TrimLeft(key, "\"'")
	if rest, ok := strings.CutPrefix(key, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
		key = strings.TrimSpace(rest)
	}
	// The words, as spans of key (at most maxKeyWords: a longer key's
	// first ones).
	const maxKeyWords = 16
	var words [maxKeyWords][2]int
	n, start := 0, 0
	for i := 0; i <= len(key) && n < maxKeyWords; i++ {
		if i == len(key) || key[i] == '_' || key[i] == '-' || key[i] == '.' ||
			(i > start && 'a' <= key[i-1] && key[i-1] <= 'z' && 'A' <= key[i] && key[i] <= 'Z') {
			if i > start {
				words[n] = [2]int{start, i}
				n++
			}
			start = i
			if i < len(key) && (key[i] == '_' || key[i] == '-' || key[i] == '.') {
				start = i + 1
			}
		}
	}
	in := func(set map[string]bool, w [2]int) bool {
		var up [16]byte // the longest listed word is shorter
		if w[1]-w[0] > len(up) {
			return false
		}
		for i := w[0]; i < w[1]; i++ {
			c := key[i]
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			up[i-w[0]] = c
		}
		return set[string(up[:w[1]-w[0]])]
	}
	if n == 0 || in(notSecretWordSet, words[n-1]) {
		return false
	}
	return slices.ContainsFunc(words[:n], func(w [2]int) bool { return in(secretWordSet, w) })
}

// secretWordSet and notSecretWordSet are secretWords and notSecretWords,
// to look a word up in.
var secretWordSet, notSecretWordSet = wordSet(secretWords), wordSet(notSecretWords)

func wordSet(words []string) map[string]bool {
	set := map[string]bool{}
	for _, w := range words {
		set[w] = true
	}
	return set
}

// The words of a key that name a secret, and the last words that say its
// value is something else (secretName).
var (
	secretWords = []string{"TOKEN", "TOKENS", "KEY", "KEYS", "APIKEY", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS",
		"PASSWD", "PASS", "PWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "CREDS", "AUTH", "PRIVATE"}
	notSecretWords = []string{"URL", "URI", "HOST", "PATH", "FILE", "DIR", "ENDPOINT", "NAME", "USER", "USERNAME",
		"ID", "REGION", "PORT", "TYPE", "MODE", "METHOD", "PROVIDER", "ALGORITHM", "ISSUER", "DOMAIN", "EMAIL",
		"ENABLED", "TTL", "TIMEOUT", "EXPIRY", "EXPIRES", "LENGTH", "SIZE", "VERSION", "FORMAT"}
)

// isToken reports whether s is one word: no white space, and no `://`
// (a URL is not taken for a secret whole).
func isToken(s string) bool {
	return s != "" && !strings.ContainsFunc(s, isSpace) && !strings.Contains(s, "://")
}

// plainWord reports whether s is one word and no path, host, address or
// dotted name (no `/`, `.` or `@`): a secret every piece of which is
// looked for. A piece of a path's or a host's (`/home/dev/ke`,
// `registry.exa`, `django.contr`) is as likely ordinary text, even where
// the key names a secret (GOOGLE_APPLICATION_CREDENTIALS, AUTH_BACKEND):
// such a value keeps its keyLike pieces, and is found whole.
func plainWord(s string) bool { return isToken(s) && !strings.ContainsAny(s, "/.@") }

// keyLike reports whether a secret's piece looks like a piece of a key,
// which is what makes finding it alone mean something: a letter beside a
// digit (`4fgh82kl`, `s3cr3t`). Without one a piece is as likely to be
// ordinary text (`configuratio` of a URL, `localhost:63`, the words of a
// long value with spaces), and is not remembered: the secret is still
// found whole, and by its other pieces.
func keyLike(piece []byte) bool {
	for i := 1; i < len(piece); i++ {
		a, b := piece[i-1], piece[i]
		if isASCIIDigit(a) && isASCIILetter(b) || isASCIILetter(a) && isASCIIDigit(b) {
			return true
		}
	}
	return false
}

// asciiOnly reports whether s is ASCII.
func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isASCIIDigit(c byte) bool { return '0' <= c && c <= '9' }

func isASCIIAlnum(r rune) bool {
	return r < utf8.RuneSelf && (isASCIIDigit(byte(r)) || isASCIILetter(byte(r)))
}

// secretLike reports whether a value or word, found in ordinary text, would
// most likely have come from the private line: long, or of at least min
// characters mixing letters with digits or symbols (`sk-live-…`,
// `hunter2`), not a word such as `production` or `localhost`, nor a run
// of punctuation.
func secretLike(w string, min int) bool {
	if !strings.ContainsFunc(w, isASCIIAlnum) && strings.IndexFunc(string(fold(nil, w)), isAlnum) < 0 {
		return false // a rule of dashes is no secret
	}
	n := utf8.RuneCountInString(w)
	if n >= 16 {
		return true
	}
	if n < min {
		return false
	}
	var letter, digit, other bool
	for _, r := range w {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r):
			digit = true
		default:
			other = true
		}
	}
	classes := 0
	for _, b := range []bool{letter, digit, other} {
		if b {
			classes++
		}
	}
	return classes >= 2
}

// fragment remembers sq, a fragment of line not yet known.
func (p *privateLines) fragment(sq []byte, line uint32) {
	if len(sq) > maxFragmentLen {
		return // a line of 16 MiB: found by its secrets' pieces, if any
	}
	if p.bloom == nil {
		p.bloom = make([]uint64, bloomBits/64)
	}
	if p.taken == nil {
		p.taken = map[uint64]bool{}
	}
	h := p.hash(sq) &^ lineBits
	p.taken[h] = true
	p.newFrags = append(p.newFrags, h|uint64(line))
	p.longest = max(p.longest, len(sq))
	a := anchor(sq, 0)
	p.newAnchors = append(p.newAnchors, p.anchorKey(a)|uint64(len(sq)))
	h1, h2 := bloomIndex(a)
	p.bloom[h1/64] |= 1 << (h1 % 64)
	p.bloom[h2/64] |= 1 << (h2 % 64)
}

// anchorKey is the key of an anchor in anchors: its hash, but for the
// low bits, which hold a length.
func (p *privateLines) anchorKey(a uint64) uint64 {
	return maphash.Comparable(p.seed, a) &^ lenBits
}

// known reports whether sq is already a fragment.
func (p *privateLines) known(sq []byte) bool {
	h := p.hash(sq) &^ lineBits
	_, ok := p.fragLine(h)
	return ok || p.taken[h]
}

// fragLine is the line of the fragment whose hash is h (its low bits
// clear), among those settled.
func (p *privateLines) fragLine(h uint64) (uint32, bool) {
	if i, _ := slices.BinarySearch(p.frags, h); i < len(p.frags) && p.frags[i]&^lineBits == h {
		return uint32(p.frags[i] & lineBits), true
	}
	return 0, false
}

func (p *privateLines) hash(b []byte) uint64 { return maphash.Bytes(p.seed, b) }

// find returns the private lines found in the payloads, each once, in the
// order they were read.
func (p *privateLines) find(payloads ...string) []uint32 {
	var found []uint32
	var seen map[uint32]bool // made at the first line found
	var sq []byte
	for _, s := range payloads {
		sq = fold(sq[:0], s)
		p.scan(sq, func(_, _ int, line uint32) {
			if seen[line] {
				return
			}
			if seen == nil {
				seen = map[uint32]bool{}
			}
			seen[line] = true
			found = append(found, line)
		})
	}
	slices.Sort(found)
	return found
}

// streamChunk is how much of a stream findStream folds at once.
const streamChunk = 1 << 20

// findStream is find over everything r holds, read and folded a chunk at
// a time, so a file of any size is scanned whole in bounded memory: each
// chunk is scanned after the end of the one before it (as long as the
// longest fragment), so a fragment across two chunks is found. It calls
// found for each line it finds, maybe more than once.
func (p *privateLines) findStream(r io.Reader, found func(line uint32)) error {
	if p.empty() {
		return nil
	}
	buf := make([]byte, streamChunk)
	var carry []byte // an incomplete character at the end of the last chunk
	var sq, tail []byte
	for {
		n, err := io.ReadFull(r, buf)
		chunk := append(carry, buf[:n]...)
		cut := len(chunk)
		if err == nil {
			cut -= partialRune(chunk)
		}
		carry = append([]byte(nil), chunk[cut:]...)
		sq = fold(append(sq[:0], tail...), string(chunk[:cut]))
		p.scan(sq, func(_, end int, line uint32) {
			if end > len(tail) { // else found in the last chunk already
				found(line)
			}
		})
		keep := max(p.longest, pieceLen)
		tail = append(tail[:0], sq[max(0, len(sq)-keep):]...)
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return nil
		case err != nil:
			return err
		}
	}
}

// partialRune is how many bytes at the end of b begin a character that is
// not whole.
func partialRune(b []byte) int {
	for i := 1; i <= min(len(b), utf8.UTFMax-1); i++ {
		if c := b[len(b)-i]; c >= 0xC0 {
			if !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		} else if c < 0x80 {
			return 0
		}
	}
	return 0
}

// scan calls found with each fragment in sq, a squashed payload: where it
// starts and ends in sq, and its line.
func (p *privateLines) scan(sq []byte, found func(start, end int, line uint32)) {
	p.pieces.scan(sq, found)
	if len(p.frags) == 0 {
		return
	}
	var a uint64
	for i, c := range sq {
		// a is the anchorLen bytes ending at i, rolled on.
		a = (a<<8 | uint64(c)) & anchorMask
		if i < anchorLen-1 {
			continue
		}
		if h1, h2 := bloomIndex(a); p.bloom[h1/64]&(1<<(h1%64)) == 0 || p.bloom[h2/64]&(1<<(h2%64)) == 0 {
			continue
		}
		start := i + 1 - anchorLen
		key := p.anchorKey(a)
		j, _ := slices.BinarySearch(p.anchors, key)
		for ; j < len(p.anchors) && p.anchors[j]&^lenBits == key; j++ {
			end := start + int(p.anchors[j]&lenBits)
			if end > len(sq) {
				continue
			}
			if line, ok := p.fragLine(p.hash(sq[start:end]) &^ lineBits); ok {
				found(start, end, line)
			}
		}
	}
}

// redact returns s with each private fragment in it masked (MaskLine, white
// space inside it removed), for showing a call that carries private
// content.
func (p *privateLines) redact(s string) string {
	var from, to []int // where each folded byte's source starts and ends in s
	sq := foldMap(nil, &from, &to, s)
	var found [][2]int // in s, as they are found: pieces first, then fragments
	p.scan(sq, func(start, end int, _ uint32) {
		found = append(found, [2]int{from[start], to[end-1]})
	})
	if len(found) == 0 {
		return s
	}
	// Merged in order of their start: a fragment found after the pieces
	// may begin before them.
	slices.SortFunc(found, func(x, y [2]int) int { return x[0] - y[0] })
	spans := found[:1]
	for _, sp := range found[1:] {
		if k := len(spans) - 1; sp[0] <= spans[k][1] {
			spans[k][1] = max(spans[k][1], sp[1])
			continue
		}
		spans = append(spans, sp)
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteString(MaskLine(string(squash(nil, s[sp[0]:sp[1]]))))
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// mask is redact of s, looking behind JSON's escapes too: when what is
// left once masked still carries private content with its `\u0041` and
// `\\` undone (a secret the model wrote escaped, which the gate finds in
// a JSON answer), it is that text, unescaped, that is masked and returned.
func (p *privateLines) mask(s string) string {
	masked := p.redact(s)
	if !p.behindEscapes(masked) {
		return masked
	}
	return p.redact(unescapeLoose(masked))
}

// behindEscapes reports whether s carries private content once JSON's
// escapes in it are undone, where it stands (unescapeLoose).
func (p *privateLines) behindEscapes(s string) bool {
	if !strings.Contains(s, `\`) {
		return false
	}
	found := false
	p.scan(fold(nil, unescapeLoose(s)), func(int, int, uint32) { found = true })
	return found
}

// squash appends s to dst without its white space, copying the runs
// between spaces whole.
func squash(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s))
	from := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				dst = append(dst, s[from:i]...)
				from = i + 1
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			dst = append(dst, s[from:i]...)
			from = i + n
		}
		i += n
	}
	return append(dst, s[from:]...)
}

// isSpace is unicode.IsSpace, ASCII first.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiSpace[r]
	}
	return unicode.IsSpace(r)
}

var asciiSpace = [utf8.RuneSelf]bool{' ': true, '\t': true, '\n': true, '\r': true, '\v': true, '\f': true}

// anchor is the anchorLen bytes of b at i, as a number.
func anchor(b []byte, i int) uint64 {
	var a uint64
	for _, c := range b[i : i+anchorLen] {
		a = a<<8 | uint64(c)
	}
	return a
}

// bloomIndex is an anchor's two bits in the bloom filter.
func bloomIndex(a uint64) (uint64, uint64) {
	h := a * 0x9E3779B97F4A7C15
	return h >> (64 - bloomShift), (h >> (64 - 2*bloomShift)) & (bloomBits - 1)
}
