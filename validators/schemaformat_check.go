package validators

import (
	"net/netip"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// coda's own checks of three formats, where the library's are looser than
// the standards the suite holds them to (RFC 3986 for uri, the dotted quad
// for ipv4, RFC 1123 and IDNA2008 for hostname). Each passes any value that
// is not a string, as a format does.

// isIPv4 accepts the dotted quad only: four decimal octets of ASCII digits,
// none above 255, none with a leading zero.
func isIPv4(v any) bool {
	s, ok := v.(string)
	if !ok {
		return true
	}
	return dottedQuad(s)
}

func dottedQuad(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 3 || (len(p) > 1 && p[0] == '0') {
			return false
		}
		n := 0
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
			n = n*10 + int(p[i]-'0')
		}
		if n > 255 {
			return false
		}
	}
	return true
}

// isURI accepts an absolute URI as RFC 3986 writes it: a scheme, only the
// characters the RFC allows (non-ASCII ones percent-encoded), every "%"
// followed by two hex digits, brackets only around an IP literal host, and
// a numeric port.
func isURI(v any) bool {
	s, ok := v.(string)
	if !ok {
		return true
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || scheme == "" || !isAlpha(scheme[0]) {
		return false
	}
	for i := 1; i < len(scheme); i++ {
		if c := scheme[i]; !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
		case isAlpha(c), isDigit(c), strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	// Brackets belong to an IP literal, the whole host of the authority.
	host := ""
	if auth, ok := strings.CutPrefix(rest, "//"); ok {
		if i := strings.IndexAny(auth, "/?#"); i >= 0 {
			rest, auth = auth[i:], auth[:i]
		} else {
			rest = ""
		}
		if i := strings.LastIndexByte(auth, '@'); i >= 0 {
			if strings.ContainsAny(auth[:i], "[]") {
				return false
			}
			auth = auth[i+1:]
		}
		host = auth
		port := ""
		if strings.HasPrefix(host, "[") {
			end := strings.IndexByte(host, ']')
			if end < 0 {
				return false
			}
			lit := host[1:end]
			if strings.HasPrefix(lit, "v") || strings.HasPrefix(lit, "V") {
				// an IPvFuture literal: what the RFC allows inside
			} else if a, err := netip.ParseAddr(lit); err != nil || !a.Is6() || a.Zone() != "" {
				return false
			}
			host, port = "", host[end+1:]
			if port != "" && port[0] != ':' {
				return false
			}
		} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
			host, port = host[:i], host[i:]
		}
		if strings.ContainsAny(host, "[]") {
			return false
		}
		for i := 1; i < len(port); i++ {
			if !isDigit(port[i]) {
				return false
			}
		}
	}
	if strings.ContainsAny(rest, "[]") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.IsAbs()
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// isHostname accepts a host name as RFC 1123 writes it (labels of letters,
// digits and inner hyphens, 63 bytes at most, 253 in all, no trailing dot),
// whose A-labels ("xn--…") are valid Punycode for a U-label IDNA2008
// allows (isULabel).
func isHostname(v any) bool {
	s, ok := v.(string)
	if !ok {
		return true
	}
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isAlpha(c) && !isDigit(c) && c != '-' {
				return false
			}
		}
		if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
			u, ok := punycodeDecode(label[4:])
			if !ok || !isULabel(u) {
				return false
			}
		}
	}
	return true
}

// isULabel checks a decoded label against IDNA2008 (RFC 5891, 5892) as far
// as the standard library's Unicode tables reach: NFC; no hyphens in the
// third and fourth places; no combining mark first; lower-case letters,
// marks and digits, with RFC 5892's exceptions; and the contextual rules
// for the joiners and the characters CONTEXTO names.
func isULabel(label string) bool {
	if label == "" || !norm.NFC.IsNormalString(label) {
		return false
	}
	if len(label) >= 4 && label[2:4] == "--" {
		return false
	}
	runes := []rune(label)
	if unicode.In(runes[0], unicode.M) {
		return false
	}
	var arabicIndic, extendedArabicIndic bool
	for i, r := range runes {
		prev, next := rune(-1), rune(-1)
		if i > 0 {
			prev = runes[i-1]
		}
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		switch {
		case idnaDisallowedExceptions[r]:
			return false
		case idnaPValidExceptions[r]:
		case r == 0x200D: // ZERO WIDTH JOINER: after a virama
			if prev < 0 || norm.NFC.PropertiesString(string(prev)).CCC() != 9 {
				return false
			}
		case r == 0x200C: // ZERO WIDTH NON-JOINER: after a virama, or between joining letters
		case r == 0x00B7: // MIDDLE DOT: between two l's
			if prev != 'l' || next != 'l' {
				return false
			}
		case r == 0x0375: // GREEK LOWER NUMERAL SIGN: before Greek
			if next < 0 || !unicode.Is(unicode.Greek, next) {
				return false
			}
		case r == 0x05F3, r == 0x05F4: // HEBREW GERESH, GERSHAYIM: after Hebrew
			if prev < 0 || !unicode.Is(unicode.Hebrew, prev) {
				return false
			}
		case r == 0x30FB: // KATAKANA MIDDLE DOT: with Hiragana, Katakana or Han
			found := false
			for _, o := range runes {
				if o != 0x30FB && (unicode.In(o, unicode.Hiragana, unicode.Katakana, unicode.Han)) {
					found = true
				}
			}
			if !found {
				return false
			}
		case r >= 0x0660 && r <= 0x0669:
			arabicIndic = true
		case r >= 0x06F0 && r <= 0x06F9:
			extendedArabicIndic = true
		case r == '-', unicode.IsDigit(r), unicode.In(r, unicode.M):
		case unicode.IsLetter(r):
			if unicode.IsUpper(r) || unicode.IsTitle(r) {
				return false
			}
		default:
			return false
		}
	}
	return !(arabicIndic && extendedArabicIndic)
}

// RFC 5892 §2.6: code points whose IDNA2008 property is fixed by exception.
var (
	idnaPValidExceptions = map[rune]bool{
		0x00DF: true, 0x03C2: true, 0x06FD: true, 0x06FE: true, 0x0F0B: true, 0x3007: true,
	}
	idnaDisallowedExceptions = map[rune]bool{
		0x0640: true, 0x07FA: true, 0x302E: true, 0x302F: true,
		0x3031: true, 0x3032: true, 0x3033: true, 0x3034: true, 0x3035: true, 0x303B: true,
	}
)

// punycodeDecode decodes the part of an A-label after "xn--" (RFC 3492).
func punycodeDecode(s string) (string, bool) {
	const (
		base, tmin, tmax, skew, damp = 36, 1, 26, 38, 700
		initialBias, initialN        = 72, 128
	)
	var out []rune
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		for j := 0; j < i; j++ {
			if s[j] >= utf8.RuneSelf {
				return "", false
			}
			out = append(out, rune(s[j]))
		}
		s = s[i+1:]
	}
	if s == "" {
		return "", false // nothing encoded: not an A-label
	}
	n, bias, i := initialN, initialBias, 0
	for p := 0; p < len(s); {
		oldi, w := i, 1
		for k := base; ; k += base {
			if p == len(s) {
				return "", false
			}
			c := s[p]
			p++
			var digit int
			switch {
			case c >= 'a' && c <= 'z':
				digit = int(c - 'a')
			case c >= 'A' && c <= 'Z':
				digit = int(c - 'A')
			case c >= '0' && c <= '9':
				digit = int(c-'0') + 26
			default:
				return "", false
			}
			if digit > (1<<31-1-i)/w {
				return "", false
			}
			i += digit * w
			t := k - bias
			if t < tmin {
				t = tmin
			} else if t > tmax {
				t = tmax
			}
			if digit < t {
				break
			}
			if w > (1<<31-1)/(base-t) {
				return "", false
			}
			w *= base - t
		}
		// adapt the bias
		delta := i - oldi
		if oldi == 0 {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / (len(out) + 1)
		k := 0
		for delta > ((base-tmin)*tmax)/2 {
			delta /= base - tmin
			k += base
		}
		bias = k + (base-tmin+1)*delta/(delta+skew)
		if i/(len(out)+1) > 0x10FFFF-n {
			return "", false
		}
		n += i / (len(out) + 1)
		i %= len(out) + 1
		if n > utf8.MaxRune || (n >= 0xD800 && n <= 0xDFFF) {
			return "", false
		}
		out = append(out[:i], append([]rune{rune(n)}, out[i:]...)...)
		i++
	}
	return string(out), true
}
