package taint

import (
	"bytes"
	"hash/maphash"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// privateLines remembers what of the private content a run read, to find
// it again in what a sink would send. It keeps no secret in the clear: each
// line of private text yields fragments (the whole line, unless it is a
// comment, a key without a value, or ordinary words; the value of a
// `KEY=VALUE` line; each secret-looking word), remembered by hash and
// length, found by the first anchorLen bytes they start with; and the
// line's masked form, to quote it. A secret of pieceMin characters or more
// is remembered as its pieces too, so that a piece of it is found: the key
// in two halves, with a `-` put in, across two JSON strings. Every
// pieceLen characters of it when it is surely a secret: the value of a key
// that names one (secretName: `PASSWORD=correcthorsebatterystaple`) or a
// line that is one word, either no path or host (plainWord); else those
// in which a letter stands beside a digit (keyLike), since a piece of an
// ordinary value (a URL's, a path's) is as likely ordinary text. Fragments and payloads are compared folded
// (fold): every white space and Unicode format character removed, NFKC
// folded and lower-cased, so a line the model wrapped, re-indented,
// upper-cased, typed in fullwidth letters or laced with zero-width spaces is
// still found. Memory is bounded: past maxPrivateLines lines or
// maxFragments fragments, later lines are not remembered and full is set,
// and the gate then treats every sink call as carrying private content (it
// can no longer show that one does not).
type privateLines struct {
	seed    maphash.Seed
	frags   map[uint64]uint32   // a fragment's hash → its line
	anchors map[uint64][]uint32 // a fragment's first anchorLen bytes → the lengths of fragments that start so
	bloom   []uint64            // anchors seen, one bit each: most payload positions stop here
	lines   []privateLine
	full    bool
	longest int // the longest fragment, in bytes

	// pieces are the secrets' pieces (pieceLen bytes each, folded): each
	// the top 48 bits of its rolling hash (pieceHash) and its line in the
	// low 16 (lines are fewer than 1<<16), sorted when sorted is set. Kept
	// apart from frags, as they are many: 8 bytes each.
	pieces     []uint64
	sorted     bool
	pieceBloom []uint64 // pieces seen, one bit each, by the top bits of their hash
	pieceBase  uint64   // the rolling hash's base: odd, random per gate
}

// pieceLine is the low bits of a piece: its line.
const pieceLine = 1<<16 - 1

// pieceBloomShift sizes pieceBloom: 8 Mi bits (1 MiB) keep it sparse
// under maxPieces.
const pieceBloomShift = 23

// A privateLine is a line of private text, as it is quoted.
type privateLine struct {
	masked string
	source int  // index in the run's sources
	secret bool // it holds a secret (a value or word secretLike), not only ordinary words
}

// Bounds on what privateLines remembers.
const (
	maxPrivateLines = 1 << 16
	maxFragments    = 1 << 17
	maxPieces       = 1 << 20 // 8 MiB
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
)

// add remembers the lines of text, read from the run's source number
// source.
func (p *privateLines) add(text string, source int) {
	if p.anchors == nil {
		p.seed = maphash.MakeSeed()
		p.frags = map[uint64]uint32{}
		p.anchors = map[uint64][]uint32{}
		p.bloom = make([]uint64, bloomBits/64)
	}
	var frags, pieces [][]byte
	var secret bool
	for line := range strings.Lines(text) {
		frags, pieces, secret = p.fragments(frags[:0], pieces[:0], line)
		if len(frags) == 0 && len(pieces) == 0 {
			continue // nothing worth finding, or all of it known
		}
		if len(p.lines) >= maxPrivateLines || len(p.frags)+len(frags) > maxFragments || len(p.pieces)+len(pieces) > maxPieces {
			p.full = true
			return
		}
		idx := uint32(len(p.lines))
		p.lines = append(p.lines, privateLine{masked: MaskLine(line), source: source, secret: secret})
		for _, f := range frags {
			p.fragment(f, idx)
		}
		for _, pc := range pieces {
			if p.pieceBloom == nil {
				p.pieceBloom = make([]uint64, (1<<pieceBloomShift)/64)
				p.pieceBase = maphash.Comparable(p.seed, 0) | 1
			}
			h := p.pieceHash(pc) &^ pieceLine
			p.pieces = append(p.pieces, h|uint64(idx))
			b := h >> (64 - pieceBloomShift)
			p.pieceBloom[b/64] |= 1 << (b % 64)
			p.sorted = false
		}
	}
	if !p.sorted {
		slices.Sort(p.pieces) // once per reading, not per call
		p.sorted = true
	}
}

// pieceHash is the polynomial hash of a piece, as scanPieces rolls it.
func (p *privateLines) pieceHash(b []byte) uint64 {
	var h uint64
	for _, c := range b {
		h = h*p.pieceBase + uint64(c) + 1
	}
	return h * 0x9E3779B97F4A7C15 // spread the high bits, which the bloom and the sort key use
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
	// else its pieces where a letter meets a digit (keyLike).
	secret := func(w string, every bool) {
		isSecret = true
		sq := fold(nil, w)
		if p.known(sq) {
			return // and so are its pieces
		}
		add(sq)
		if utf8.RuneCount(sq) >= pieceMin {
			for i := 0; i+pieceLen <= len(sq); i++ {
				// A piece without a letter or digit (`!!!!!!!!!!!!`, a
				// rule of dashes) says nothing of the secret, and masking
				// would show it as it is.
				if pc := sq[i : i+pieceLen]; keyLike(pc) || every && bytes.ContainsFunc(pc, isAlnum) {
					pieces = append(pieces, pc)
				}
			}
		}
	}
	whole := fold(nil, line)
	line = strings.TrimSpace(line)
	if at := valueAt(line); at >= 0 {
		v := strings.Trim(strings.TrimRight(line[at:], ",;"), `"'`)
		if v != "" {
			add(whole)
		}
		if secretLike(v, 6) {
			secret(v, secretName(line[:at]) && plainWord(v))
		}
		return dst, pieces, isSecret
	}
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
	var words []string
	start := 0
	for i := 0; i <= len(key); i++ {
		if i == len(key) || key[i] == '_' || key[i] == '-' || key[i] == '.' ||
			(i > start && 'a' <= key[i-1] && key[i-1] <= 'z' && 'A' <= key[i] && key[i] <= 'Z') {
			if i > start {
				words = append(words, strings.ToUpper(key[start:i]))
			}
			start = i
			if i < len(key) && (key[i] == '_' || key[i] == '-' || key[i] == '.') {
				start = i + 1
			}
		}
	}
	if len(words) == 0 || slices.Contains(notSecretWords, words[len(words)-1]) {
		return false
	}
	return slices.ContainsFunc(words, func(w string) bool { return slices.Contains(secretWords, w) })
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
	return s != "" && !strings.ContainsFunc(s, unicode.IsSpace) && !strings.Contains(s, "://")
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

func isASCIIDigit(c byte) bool { return '0' <= c && c <= '9' }

// secretLike reports whether a value or word, found in ordinary text, would
// most likely have come from the private line: long, or of at least min
// characters mixing letters with digits or symbols (`sk-live-…`,
// `hunter2`), not a word such as `production` or `localhost`, nor a run
// of punctuation.
func secretLike(w string, min int) bool {
	if strings.IndexFunc(string(fold(nil, w)), isAlnum) < 0 {
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
	p.longest = max(p.longest, len(sq))
	p.frags[p.hash(sq)] = line
	a := anchor(sq, 0)
	if n := uint32(len(sq)); !slices.Contains(p.anchors[a], n) {
		p.anchors[a] = append(p.anchors[a], n)
	}
	h1, h2 := bloomIndex(a)
	p.bloom[h1/64] |= 1 << (h1 % 64)
	p.bloom[h2/64] |= 1 << (h2 % 64)
}

// known reports whether sq is already a fragment.
func (p *privateLines) known(sq []byte) bool {
	_, ok := p.frags[p.hash(sq)]
	return ok
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
	if len(p.frags) == 0 && len(p.pieces) == 0 {
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
	p.scanPieces(sq, found)
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
		for _, n := range p.anchors[a] {
			end := start + int(n)
			if end > len(sq) {
				continue
			}
			if line, ok := p.frags[p.hash(sq[start:end])]; ok {
				found(start, end, line)
			}
		}
	}
}

// scanPieces calls found with each secret's piece in sq, as scan does:
// the hash rolls from one position to the next.
func (p *privateLines) scanPieces(sq []byte, found func(start, end int, line uint32)) {
	if len(p.pieces) == 0 || len(sq) < pieceLen {
		return
	}
	if !p.sorted {
		slices.Sort(p.pieces)
		p.sorted = true
	}
	top := uint64(1) // pieceBase to the power pieceLen-1
	for range pieceLen - 1 {
		top *= p.pieceBase
	}
	var h uint64
	for i, c := range sq {
		if i >= pieceLen {
			h -= (uint64(sq[i-pieceLen]) + 1) * top
		}
		h = h*p.pieceBase + uint64(c) + 1
		if i < pieceLen-1 {
			continue
		}
		key := h * 0x9E3779B97F4A7C15 &^ pieceLine
		if b := key >> (64 - pieceBloomShift); p.pieceBloom[b/64]&(1<<(b%64)) == 0 {
			continue
		}
		if j, _ := slices.BinarySearch(p.pieces, key); j < len(p.pieces) && p.pieces[j]&^pieceLine == key {
			found(i+1-pieceLen, i+1, uint32(p.pieces[j]&pieceLine))
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
