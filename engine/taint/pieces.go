package taint

import (
	"bytes"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"unicode/utf8"
)

// pieceIndex finds any pieceLen bytes in a row of a secret (folded) in a
// payload, in about 2 bytes per byte of secret (issue 32: a 48-bit hash
// of each 12-byte piece, 8 bytes for each byte of a key, and sorting them
// was a quarter of reading a private file).
//
// A secret is kept as segments: runs of it whose every pieceLen-byte
// window is looked for (a letter beside a digit, or every window of a
// secret that is surely one: fragments). Of a segment it keeps its bytes
// through a permutation of the byte values drawn for each gate (perm),
// and, every stride bytes, an anchor: a hash of the gramLen bytes there.
// Any window of the segment holds an anchor whole (anchors stand stride =
// pieceLen-gramLen+1 apart), so scanning a payload looks each gramLen
// bytes of it up among the anchors, and for each hit compares the
// windows around it with the segment's, byte by byte through perm: a
// window is found when its pieceLen bytes are the segment's. The
// comparison is exact, as the 48-bit hashes were in all but name: a
// payload that differs from a window in one byte (`!!!!!!!!!!!!` beside
// `q!!!!!!!!!!!`) is never taken for it, which a few bits a byte (4 were
// tried) would do one time in 2^bits.
//
// What it keeps: a byte per byte of secret, 4 bytes an anchor (one per
// stride bytes) and 6 a segment, and a table of 4 bytes a bucket once a
// secret was read. A secret is not kept as it is written: a heap dump
// shows it only to one who reads perm and undoes it.
//
// False positives: none once a window is compared. A payload position
// whose gramLen bytes are no anchor still shares one's bucket and
// seenBits bit (1 in 2 for a full index) and then its fpBits (1 in 4096)
// with probability about 1 in 8,000, and costs then the comparison of up
// to stride windows.
type pieceIndex struct {
	perm [256]byte // a byte as it is kept: a permutation, random per gate
	base uint64    // the rolling hash's base: odd, random per gate

	text   []byte   // the segments' bytes, through perm, one segment after another
	starts []uint32 // each segment's first byte in text
	lines  []uint16 // each segment's line

	// The anchors, by bucket (the top bucketBits of their hash): bucket
	// b's are ents[dir[b]>>seenBits:dir[b+1]>>seenBits], each its
	// position in text in the high bits and fpBits more of its hash in
	// the low; the low seenBits of dir[b] are a bit for each fingerprint
	// (modulo seenBits) its anchors have, which turns most payload
	// positions away without a look at ents. pending are the anchors of
	// the reading under way, bucket in the high 32 bits.
	dir     []uint32
	ents    []uint32
	pending []uint64
}

// The shape of a pieceIndex.
const (
	gramLen    = 5
	stride     = pieceLen - gramLen + 1
	bucketBits = 14
	fpBits     = 12
	fpMask     = 1<<fpBits - 1
	// seenBits are the bits of a bucket's entry in dir that say which
	// fingerprints it holds; the rest, where its anchors start in ents,
	// hold more anchors than maxSegmentBytes can make (5/24 of them).
	seenBits = 13
	// maxSegmentBytes bounds the bytes of secret kept (an anchor's
	// position takes the 32-fpBits bits left).
	maxSegmentBytes = 1 << (32 - fpBits)
)

func (x *pieceIndex) init(seed maphash.Seed) {
	rng := rand.New(rand.NewPCG(maphash.Comparable(seed, 1), maphash.Comparable(seed, 2)))
	for i, v := range rng.Perm(256) {
		x.perm[i] = byte(v)
	}
	x.base = rng.Uint64() | 1
}

// empty reports whether no segment is kept.
func (x *pieceIndex) empty() bool { return len(x.starts) == 0 }

// room reports whether n more bytes of segments fit.
func (x *pieceIndex) room(n int) bool { return len(x.text)+n <= maxSegmentBytes }

// reserve makes room for the segments of n bytes of text, at most.
func (x *pieceIndex) reserve(n int) {
	x.text = slices.Grow(x.text, n)
	x.pending = slices.Grow(x.pending, n/stride+1)
}

// add keeps seg (at least pieceLen bytes, every window looked for), a
// segment of line. The caller has checked room.
func (x *pieceIndex) add(seg []byte, line uint32) {
	start := len(x.text)
	x.starts = append(x.starts, uint32(start))
	x.lines = append(x.lines, uint16(line))
	for _, c := range seg {
		x.text = append(x.text, x.perm[c])
	}
	for a := 0; a+pieceLen <= len(seg); a += stride {
		p := a + pieceLen - gramLen // the window at a holds it, and so do the stride-1 before
		b, fp := x.split(x.gramHash(seg[p : p+gramLen]))
		x.pending = append(x.pending, uint64(b)<<32|uint64(start+p)<<fpBits|uint64(fp))
	}
}

// gramHash is the hash of gramLen bytes, as scan rolls it.
func (x *pieceIndex) gramHash(b []byte) uint64 {
	var h uint64
	for _, c := range b {
		h = h*x.base + uint64(c) + 1
	}
	return h
}

// split is a hash's bucket and fingerprint.
func (x *pieceIndex) split(h uint64) (uint32, uint32) {
	h *= 0x9E3779B97F4A7C15 // spread into the high bits
	return uint32(h >> (64 - bucketBits)), uint32(h>>(64-bucketBits-fpBits)) & fpMask
}

// build files the pending anchors into their buckets: a counting sort of
// all of them, once a reading, each slice the size it needs.
func (x *pieceIndex) build() {
	if len(x.pending) == 0 {
		return
	}
	const buckets = 1 << bucketBits
	first := make([]uint32, buckets+1) // where each bucket starts in ents
	for b := range buckets {
		first[b+1] = x.first(b+1) - x.first(b)
	}
	for _, e := range x.pending {
		first[e>>32+1]++
	}
	for b := range buckets {
		first[b+1] += first[b]
	}
	ents := make([]uint32, first[buckets])
	fill := slices.Clone(first[:buckets])
	for b := range buckets {
		fill[b] += uint32(copy(ents[fill[b]:], x.ents[x.first(b):x.first(b+1)]))
	}
	for _, e := range x.pending {
		b := e >> 32
		ents[fill[b]] = uint32(e)
		fill[b]++
	}
	dir := first
	for b := range buckets {
		var seen uint32
		for _, e := range ents[first[b]:first[b+1]] {
			seen |= 1 << (e & fpMask % seenBits)
		}
		dir[b] = first[b]<<seenBits | seen
	}
	dir[buckets] = first[buckets] << seenBits
	x.dir, x.ents, x.pending = dir, ents, nil
	x.text = fit(x.text)
	x.starts = fit(x.starts)
	x.lines = fit(x.lines)
}

// first is where bucket b starts in ents (0 before the first build).
func (x *pieceIndex) first(b int) uint32 {
	if x.dir == nil {
		return 0
	}
	return x.dir[b] >> seenBits
}

// fit is s in an array of its length when its spare capacity is more
// than a 32nd: what is kept is what is needed.
func fit[T any](s []T) []T {
	if cap(s)-len(s) <= len(s)/32 {
		return s
	}
	return slices.Clone(s)
}

// scan calls found with each window of a segment in sq, a folded
// payload: where it starts and ends in sq, and its line; a window that is
// two secrets' once, with the line read first (as a hash of the window
// kept with its first line did).
func (x *pieceIndex) scan(sq []byte, found func(start, end int, line uint32)) {
	if len(x.ents) == 0 || len(sq) < pieceLen {
		return
	}
	var hits []uint64 // a window's start in the high 32 bits, its line in the low
	x.scanAll(sq, func(start, _ int, line uint32) { hits = append(hits, uint64(start)<<32|uint64(line)) })
	slices.Sort(hits)
	for i, h := range hits {
		if i == 0 || h>>32 != hits[i-1]>>32 {
			found(int(h>>32), int(h>>32)+pieceLen, uint32(h))
		}
	}
}

// scanAll is scan calling found with every window verified, a window held
// by two anchors twice.
func (x *pieceIndex) scanAll(sq []byte, found func(start, end int, line uint32)) {
	top := uint64(1) // base to the power gramLen-1
	for range gramLen - 1 {
		top *= x.base
	}
	var h uint64
	for i, c := range sq {
		if i >= gramLen {
			h -= (uint64(sq[i-gramLen]) + 1) * top
		}
		h = h*x.base + uint64(c) + 1
		if i < gramLen-1 {
			continue
		}
		b, fp := x.split(h)
		d := x.dir[b]
		if d&(1<<(fp%seenBits)) == 0 {
			continue // most positions: no anchor of the bucket has a fingerprint so
		}
		for _, e := range x.ents[d>>seenBits : x.dir[b+1]>>seenBits] {
			if e&fpMask == fp {
				x.verify(sq, i+1-gramLen, int(e>>fpBits), found)
			}
		}
	}
}

// verify calls found with each window of sq that holds the gramLen bytes
// at g, an anchor's (at pos in text), and whose bytes are the segment's.
func (x *pieceIndex) verify(sq []byte, g, pos int, found func(start, end int, line uint32)) {
	s, _ := slices.BinarySearch(x.starts, uint32(pos+1))
	s-- // the segment that holds pos
	start, end := int(x.starts[s]), len(x.text)
	if s+1 < len(x.starts) {
		end = int(x.starts[s+1])
	}
	for t := range stride {
		a, ps := pos-t, g-t // the window's start in text, and in sq
		if a < start || a+pieceLen > end || ps < 0 || ps+pieceLen > len(sq) {
			continue
		}
		same := true
		for j := range pieceLen {
			if x.perm[sq[ps+j]] != x.text[a+j] {
				same = false
				break
			}
		}
		if same {
			found(ps, ps+pieceLen, uint32(x.lines[s]))
		}
	}
}

// covers reports whether every window of sq is found already: a secret
// read before, whose pieces need not be kept again.
func (x *pieceIndex) covers(sq []byte) bool {
	if len(x.ents) == 0 || len(sq) < pieceLen {
		return false
	}
	seen := make([]bool, len(sq)-pieceLen+1)
	left := len(seen)
	x.scan(sq, func(start, _ int, _ uint32) {
		if !seen[start] {
			seen[start] = true
			left--
		}
	})
	return left == 0
}

// segments appends to dst the runs of sq (folded, pieceMin bytes or more)
// whose every window is looked for: those where a letter meets a digit
// (keyLike), or, when every is set, those with a letter or digit (a
// window without one, `!!!!!!!!!!!!`, says nothing of the secret, and
// masking would show it as it is).
func segments(dst [][]byte, sq []byte, every bool) [][]byte {
	if slices.ContainsFunc(sq, func(c byte) bool { return c >= utf8.RuneSelf }) {
		return segmentsBy(dst, sq, func(pc []byte) bool { return keyLike(pc) || every && bytes.ContainsFunc(pc, isAlnum) })
	}
	// ASCII: the window at i's counts of places where a letter meets a
	// digit (the pair ending at k, for k in i+1 … i+pieceLen-1) and of
	// letters and digits, rolled on.
	if len(sq) < pieceLen {
		return dst
	}
	var meets, alnums int
	meet := func(k int) int { // a letter beside a digit: classes 1 and 2
		return int(asciiClass[sq[k-1]]^asciiClass[sq[k]]) / 3
	}
	alnum := func(k int) int { return int(asciiClass[sq[k]]+1) / 2 }
	// Before the window at i: meets counts the pairs ending at i+1 …
	// i+pieceLen-2, alnums the bytes i … i+pieceLen-2; the window adds
	// its last of each.
	for k := range pieceLen - 1 {
		if k > 0 {
			meets += meet(k)
		}
		alnums += alnum(k)
	}
	from := -1 // the first window of the run under way
	for i := 0; i+pieceLen <= len(sq); i++ {
		last := i + pieceLen - 1
		meets += meet(last)
		alnums += alnum(last)
		looked := meets > 0 || every && alnums > 0
		meets -= meet(i + 1)
		alnums -= alnum(i)
		if looked {
			if from < 0 {
				from = i
			}
			continue
		}
		if from >= 0 {
			dst = append(dst, sq[from:i-1+pieceLen])
			from = -1
		}
	}
	if from >= 0 {
		dst = append(dst, sq[from:])
	}
	return dst
}

// segmentsBy is segments with looked saying whether each window, in turn,
// is looked for.
func segmentsBy(dst [][]byte, sq []byte, looked func(pc []byte) bool) [][]byte {
	from := -1 // the first window of the run under way
	for i := 0; i+pieceLen <= len(sq); i++ {
		if looked(sq[i : i+pieceLen]) {
			if from < 0 {
				from = i
			}
			continue
		}
		if from >= 0 {
			dst = append(dst, sq[from:i-1+pieceLen])
			from = -1
		}
	}
	if from >= 0 {
		dst = append(dst, sq[from:])
	}
	return dst
}

// asciiClass is 1 for an ASCII letter, 2 for a digit, 0 for any other
// byte.
var asciiClass = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case isASCIILetter(byte(c)):
			t[c] = 1
		case isASCIIDigit(byte(c)):
			t[c] = 2
		}
	}
	return t
}()
