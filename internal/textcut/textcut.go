// Package textcut cuts text to a byte count at a character boundary, never
// inside a UTF-8 sequence: the engine's clips and labels, and the tools',
// the providers', MCP's and acp's, all cut here.
package textcut

import "unicode/utf8"

// At returns s's longest prefix of at most n bytes that does not end
// inside a character; s itself when it is no longer.
func At[T ~string | ~[]byte](s T, n int) T {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Noted cuts s to at most n bytes at a character boundary, ending what it
// keeps with note(k), which says that k bytes were cut: the note fits
// within n too (s's length has at least as many digits as what is cut), so
// cutting twice changes nothing.
func Noted(s string, n int, note func(cut int) string) string {
	if len(s) <= n {
		return s
	}
	head := At(s, max(n-len(note(len(s))), 0))
	return head + note(len(s)-len(head))
}

// TrimPartialRune drops an incomplete UTF-8 sequence at the end of b: what
// a read or a cap of a byte count left of a character.
func TrimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
