package taint

import (
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// fold appends s to dst as the gate compares text: every white space and
// default-ignorable code point (ignorable.go: format characters such as
// zero-width spaces and joiners, soft hyphens and bidi marks; variation
// selectors, the combining grapheme joiner, Hangul fillers, tag
// characters) removed, NFKC folded (fullwidth `ＡＢＣ` is `ABC`, ligatures
// come apart) and lower-cased. The same fold of a private line and of a
// payload makes them match however the model retyped it short of an
// encoding.
func fold(dst []byte, s string) []byte {
	// ASCII, as foldMap folds it (nothing combines), written in place;
	// foldMap from the start at the first byte that is not.
	n := len(dst)
	dst = slices.Grow(dst, len(s))[:n+len(s)]
	j := n
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return foldMap(dst[:n], nil, nil, s)
		case asciiSpace[c] || c == 0x7f:
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst[j] = c
		j++
	}
	return dst[:j]
}

// foldMap is fold that also says, for each byte it appends, where in s its
// source starts (from) and ends (to), when from is not nil: the spans
// redact masks.
func foldMap(dst []byte, from, to *[]int, s string) []byte {
	dst = slices.Grow(dst, len(s))
	emit := func(c byte, a, b int) {
		dst = append(dst, c)
		if from != nil {
			*from, *to = append(*from, a), append(*to, b)
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && (i+1 == len(s) || s[i+1] < utf8.RuneSelf) {
			// ASCII not followed by what may combine with it: its own fold.
			if !asciiSpace[c] && c != 0x7f {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				emit(c, i, i+1)
			}
			i++
			continue
		}
		// A run that is not plain ASCII (with the character before a mark
		// it may combine with), normalized segment by segment.
		j := i + 1
		for j < len(s) && !(s[j] < utf8.RuneSelf && (j+1 == len(s) || s[j+1] < utf8.RuneSelf)) {
			j++
		}
		var it norm.Iter
		it.InitString(norm.NFKC, s[i:j])
		for !it.Done() {
			a := i + it.Pos()
			seg := it.Next()
			b := i + it.Pos()
			for _, r := range string(seg) {
				if ignored(r) {
					continue // DEL too, as the ASCII path drops it
				}
				var buf [utf8.UTFMax]byte
				n := utf8.EncodeRune(buf[:], unicode.ToLower(r))
				for _, c := range buf[:n] {
					emit(c, a, b)
				}
			}
		}
		i = j
	}
	return dst
}
