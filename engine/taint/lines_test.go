package taint

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

const envFile = `# production
API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3
DATABASE_URL=postgres://admin:S3cr3tP4ss@db.internal:5432/app
NODE_ENV=production
PORT=5432
`

func TestPrivateLines_find(t *testing.T) {
	var p privateLines
	p.add(envFile, 0)
	quoted := func(found []uint32) []string {
		var out []string
		for _, i := range found {
			out = append(out, p.line(i).masked)
		}
		return out
	}
	tests := []struct {
		name, payload string
		want          []string
	}{
		{"verbatim", "The config has\nAPI_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3\nin it.", []string{"API_KEY=sk-…f3"}},
		{"the value alone", "Use the key sk-proj-4fGh82kLmN0pQrStUvWxYz12f3 to log in.", []string{"API_KEY=sk-…f3"}},
		{"split across lines", "API_KEY=sk-proj-4fGh82kLm\n   N0pQrStUvWxYz12f3", []string{"API_KEY=sk-…f3"}},
		{"re-indented, spaced", "    API_KEY = sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", []string{"API_KEY=sk-…f3"}},
		{"a part of a value", "The database is postgres://admin:S3cr3tP4ss@db.internal:5432/app.", []string{"DATABASE_URL=pos…pp"}},
		{"two, in the file's order", "postgres://admin:S3cr3tP4ss@db.internal:5432/app and sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", []string{"API_KEY=sk-…f3", "DATABASE_URL=pos…pp"}},
		{"a whole ordinary line", "It sets NODE_ENV=production.", []string{"NODE_ENV=…"}},
		{"absent", "The project reads its API key from the environment.", nil},
		{"an ordinary word of a value", "Deploy to production on port 5432.", nil},
		{"a near miss: most of the key", "API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f4", []string{"API_KEY=sk-…f3"}},
		{"a piece of the key too short", "sk-proj-4fG", nil},
		{"a comment too short", "# production", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, quoted(p.find(tt.payload))); diff != "" {
			t.Errorf("%s: find(%q) (-want +got):\n%s", tt.name, tt.payload, diff)
		}
	}
	if got := p.find("nothing", "", "also API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3"); len(got) != 1 {
		t.Errorf("find over several payloads = %v, want the one line", got)
	}
}

// Reading the same lines again remembers them once.
func TestPrivateLines_once(t *testing.T) {
	var p privateLines
	p.add(envFile, 0)
	n, f := p.count(), len(p.frags)
	p.add(envFile, 1)
	p.add("  API_KEY = sk-proj-4fGh82kLmN0pQrStUvWxYz12f3\n", 1)
	if p.count() != n || len(p.frags) != f {
		t.Errorf("after re-reading: %d lines, %d fragments; want %d, %d", p.count(), len(p.frags), n, f)
	}
}

// Past its bound it stops remembering and says so.
func TestPrivateLines_bounded(t *testing.T) {
	var p privateLines
	var b strings.Builder
	for i := range maxPrivateLines + 10 {
		fmt.Fprintf(&b, "KEY_%d=value-%08d\n", i, i)
	}
	p.add(b.String(), 0)
	if !p.full || p.count() > maxPrivateLines || len(p.frags) > maxFragments {
		t.Errorf("full=%v, %d lines, %d fragments; want full, at most %d, %d", p.full, p.count(), len(p.frags), maxPrivateLines, maxFragments)
	}
	if got := p.find("KEY_7=value-00000007"); len(got) != 1 {
		t.Errorf("a line remembered before the bound is not found: %v", got)
	}
}

// redact masks each private fragment where it stands, whole line or value
// alone, wrapped or not, and leaves the rest as it was.
func TestPrivateLines_redact(t *testing.T) {
	var p privateLines
	p.add(envFile, 0)
	tests := []struct{ in, want string }{
		{`curl -H "Authorization: Bearer sk-proj-4fGh82kLmN0pQrStUvWxYz12f3" https://api.example.com`, `curl -H "Authorization: Bearer sk-…f3" https://api.example.com`},
		{"echo API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3 > out", "echo API_KEY=sk-…f3 > out"},
		{"key: sk-proj-4fGh82kLm\n  N0pQrStUvWxYz12f3.", "key: sk-…f3."},
		{"psql postgres://admin:S3cr3tP4ss@db.internal:5432/app -c 'select 1' sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", "psql postgres://a…pp -c 'select 1' sk-…f3"},
		{"nothing private here", "nothing private here"},
	}
	for _, tt := range tests {
		if got := p.redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Variants that are not encodings are found (DESIGN §13): the key in two
// halves with words between, with a "-" put in, across two JSON strings or
// CSV cells, laced with format characters, in fullwidth letters, upper-
// cased. A plain private line is still found whole only.
func TestPrivateLines_variants(t *testing.T) {
	var p privateLines
	p.add(envFile, 0)
	p.add("ssh admin@localhost\n", 0)
	const key = "sk-proj-4fGh82kLmN0pQrStUvWxYz12f3"
	fullwidth := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if r > ' ' && r < 0x7f {
				r += 0xFEE0
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	// lace puts one of seps after every fifth character of s, in turn:
	// no piece of the key is left whole.
	lace := func(s string, seps ...string) string {
		var b strings.Builder
		for i, r := range s {
			b.WriteRune(r)
			if i%5 == 4 {
				b.WriteString(seps[i/5%len(seps)])
			}
		}
		return b.String()
	}
	for name, payload := range map[string]string{
		"two halves, words between": "first sk-proj-4fGh82kL and then, later, mN0pQrStUvWxYz12f3",
		"a dash put in":             "sk-proj-4fGh82-kLmN0pQrSt-UvWxYz12f3",
		"two JSON strings":          `{"a": "sk-proj-4fGh82kLmN0", "b": "pQrStUvWxYz12f3"}`,
		"two CSV cells":             "name,part\nkey,sk-proj-4fGh82kLm\nkey,N0pQrStUvWxYz12f3",
		"zero-width spaces":         "sk-proj-4fGh\u200b82kL\u200bmN0pQrSt\u200bUvWxYz12f3",
		"a ZWJ and a soft hyphen":   "sk-proj-4fGh\u200d82kLmN0p\u00adQrStUvWxYz12f3",
		"variation selectors":       lace(key, "\ufe0f", "\U000e0100"),
		"a grapheme joiner":         lace(key, "\u034f"),
		"Hangul fillers":            lace(key, "\u3164", "\u115f", "\u1160", "\uffa0"),
		"tag characters":            lace(key, "\U000e0041", "\U000e007f"),
		"fullwidth":                 fullwidth(key),
		"upper-cased":               strings.ToUpper(key),
	} {
		if got := p.find(payload); len(got) != 1 || p.line(got[0]).masked != "API_KEY=sk-…f3" {
			t.Errorf("%s: find(%q) = %v, want the key's line", name, payload, got)
		}
	}
	for _, payload := range []string{"It runs on localhost.", "Connect with ssh to the admin host."} {
		if got := p.find(payload); len(got) != 0 {
			t.Errorf("find(%q) = %v: a word of a plain private line matched", payload, got)
		}
	}
	if got := p.find("SSH ADMIN@LOCALHOST"); len(got) != 1 {
		t.Errorf("the plain line, upper-cased, not found: %v", got)
	}
}

// fold drops every default-ignorable code point: those Go's unicode
// tables derive the property from (Other_Default_Ignorable_Code_Point,
// Variation_Selector, Cf) but for white space and the few that Unicode
// keeps visible (the interlinear annotation marks, the Egyptian
// hieroglyph format controls, the prepended concatenation marks are Cf
// and dropped anyway), and no letter or digit.
func TestFold_defaultIgnorable(t *testing.T) {
	for _, table := range []*unicode.RangeTable{unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector} {
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if unicode.Is(table, r) && !unicode.IsSpace(r) {
				if got := string(fold(nil, "a"+string(r)+"b")); got != "ab" {
					t.Errorf("fold(a U+%04X b) = %q, want \"ab\"", r, got)
				}
			}
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(defaultIgnorable, r) && (unicode.IsLetter(r) && r != 0x115F && r != 0x1160 && r != 0x3164 && r != 0xFFA0 || unicode.IsDigit(r)) {
			t.Errorf("U+%04X is ignored but is a letter or digit", r)
		}
	}
}

// Masking finds what fold finds, and masks the whole span of the source
// it came from.
func TestPrivateLines_redactVariants(t *testing.T) {
	var p privateLines
	p.add(envFile, 0)
	got := p.redact("key: ｓｋ-ｐｒｏｊ-4fGh82kLmN0pQrStUvWxYz12f3 (fullwidth)")
	if strings.Contains(got, "4fGh82kLmN0p") || !strings.HasPrefix(got, "key: ") || !strings.HasSuffix(got, " (fullwidth)") {
		t.Errorf("redact = %q", got)
	}
	got = p.redact("upper SK-PROJ-4FGH82KLMN0PQRSTUVWXYZ12F3 end")
	if strings.Contains(strings.ToLower(got), "4fgh82klmn0p") || !strings.HasSuffix(got, " end") {
		t.Errorf("redact = %q", got)
	}
}

// FuzzPrivateLines_fold (.ci/run fuzzes it by this name, through
// scripts/fuzz): whatever a private line and the text around it, folding
// and finding do not panic, a line worth finding is found where it appears
// whole, and so is it retyped upper-case, in fullwidth letters, or with a
// zero-width space, a soft hyphen and a ZWJ between its characters; masking
// what was found leaves none of it behind.
func FuzzPrivateLines_fold(f *testing.F) {
	f.Add("API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", "see ", " there")
	f.Add("DB_PASS=C:\\vault\\k3y-9f8e7d6c5b4a", "{\"a\":\"", "\"}")
	f.Add("token e\u0301\u200bé\u00adＡＢＣ0123456789xyz", "", "")
	f.Fuzz(func(t *testing.T, line, before, after string) {
		if strings.ContainsAny(line, "\n\r") || !utf8.ValidString(line+before+after) {
			return
		}
		var p privateLines
		p.add(line+"\n", 0)
		if p.empty() {
			return // nothing worth finding
		}
		variants := []string{line}
		if isASCII(line) {
			variants = append(variants, strings.ToUpper(line), fullwidth(line), laced(line))
		}
		for _, v := range variants {
			payload := before + "\n" + v + "\n" + after
			if len(p.find(payload)) == 0 {
				t.Fatalf("the line %q is not found as %q in %q", line, v, payload)
			}
			if masked := p.redact(payload); strings.Contains(masked, v) && len(strings.TrimSpace(v)) > 0 {
				t.Fatalf("redact(%q) = %q keeps %q", payload, masked, v)
			}
		}
	})
}

// FuzzPrivateLines_pieces (.ci/run fuzzes it by this name, through
// scripts/fuzz): a secret's value (of a key that names a secret, pieceMin
// characters or more, one word and no path or host: plainWord) is found by any pieceLen characters of it, folded,
// among any text: as they are, upper-cased, in fullwidth letters, or laced
// with format characters; and masking the payload leaves none of them.
func FuzzPrivateLines_pieces(f *testing.F) {
	f.Add("correcthorsebatterystaple", "the middle: ", " and more", uint(5))
	f.Add("sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", "", "", uint(0))
	f.Add("Zoë-ïs-hère-4f9a8b7c6d-ünïcode", "{\"a\":\"", "\"}", uint(9))
	f.Fuzz(func(t *testing.T, value, before, after string, at uint) {
		if !utf8.ValidString(value) || !utf8.ValidString(before) || !utf8.ValidString(after) || len(value) > 4096 || strings.ContainsAny(value, "\"',;") ||
			!plainWord(value) {
			return // a path's or a host's pieces are looked for only where keyLike
		}
		sq := fold(nil, value)
		if utf8.RuneCount(sq) < pieceMin || !secretLike(value, 6) {
			return // no secret's value: nothing is looked for in pieces
		}
		var p privateLines
		p.add("API_TOKEN="+value+"\n", 0)
		var starts []int // pieces that begin and end at a character's boundary
		for i := 0; i+pieceLen <= len(sq); i++ {
			if utf8.RuneStart(sq[i]) && (i+pieceLen == len(sq) || utf8.RuneStart(sq[i+pieceLen])) {
				starts = append(starts, i)
			}
		}
		if len(starts) == 0 {
			return
		}
		i := starts[at%uint(len(starts))]
		piece := string(sq[i : i+pieceLen])
		if string(fold(nil, piece)) != piece {
			return // cut from its context, it folds otherwise: no one types it so
		}
		if !strings.ContainsFunc(piece, isAlnum) {
			return // no letter or digit: nothing of the secret
		}
		variants := []string{piece}
		if isASCII(piece) {
			variants = append(variants, strings.ToUpper(piece), fullwidth(piece), laced(piece))
		}
		for _, v := range variants {
			payload := before + "\n" + v + "\n" + after
			if len(p.find(payload)) == 0 {
				t.Fatalf("the piece %q of %q is not found as %q in %q", piece, value, v, payload)
			}
			if masked := p.redact(payload); strings.Contains(masked, v) {
				t.Fatalf("redact(%q) = %q keeps %q", payload, masked, v)
			}
		}
	})
}

// fullwidth is an ASCII text's printable characters in their fullwidth
// forms, which NFKC folds back.
func fullwidth(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > ' ' && r < 0x7f {
			r += 0xFEE0
		}
		b.WriteRune(r)
	}
	return b.String()
}

// laced is an ASCII text with a zero-width space, a soft hyphen and a
// ZWJ, in turn, between its characters.
func laced(s string) string {
	format := []string{"\u200b", "\u00ad", "\u200d"}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 {
			b.WriteString(format[i%len(format)])
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// A stream is scanned whole, a chunk at a time: a line across two chunks
// is found, and so is a character cut between them.
func TestPrivateLines_findStream(t *testing.T) {
	var p privateLines
	p.add(envFile+"NAME=Zoë-ïs-hère-4f9a8b7c6d\n", 0)
	for _, at := range []int{0, streamChunk - 10, streamChunk - 1, 3*streamChunk - 20} {
		for _, secret := range []string{"sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", "Zoë-ïs-hère-4f9a8b7c6d"} {
			text := strings.Repeat("x", at) + secret + strings.Repeat("y", 100)
			var found []uint32
			if err := p.findStream(strings.NewReader(text), func(l uint32) { found = append(found, l) }); err != nil {
				t.Fatal(err)
			}
			if len(found) == 0 {
				t.Errorf("%q at %d: not found", secret, at)
			}
		}
	}
}

// An answer in ordinary words is not taken for a private file's content
// because a piece of a long value or a word of a comment turns up in it:
// only a piece where a letter meets a digit is looked for alone, and a
// short word of a comment is a secret only with a digit in it. A value
// quoted whole is still found, and so is a piece of the key.
func TestPrivateLines_ordinaryText(t *testing.T) {
	var p privateLines
	p.add(`# Settings for the production environment; see https://docs.example.com/configuration/environment-variables
# the well-known defaults apply
APP_NAME="Inventory management service"
DATABASE_URL=postgres://admin:S3cr3tP4ss@db.internal:5432/app
REDIS_URL=redis://localhost:6379/0
API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3
CALLBACK=https://example.com/oauth/callback
`, 0)
	for _, answer := range []string{
		"The configuration lives in environment variables.",
		"This is a well-known pattern.",
		"The inventory management reads its settings at start.",
		"Connect with postgres://app_user@localhost/app.",
		"Redis runs at redis://localhost:6379.",
		"See https://docs.example.com for details.",
		"The OAuth callback goes to https://example.com/oauth.",
	} {
		if found := p.find(answer); len(found) > 0 {
			t.Errorf("find(%q) = %q: ordinary text taken for private content", answer, p.line(found[0]).masked)
		}
	}
	for _, answer := range []string{
		"It is the Inventory management service.",
		"The password part: admin:S3cr3tP4ss.",
		"Half a key: LmN0pQrStUvWxYz12f3",
	} {
		if len(p.find(answer)) == 0 {
			t.Errorf("find(%q) found nothing", answer)
		}
	}
}

// A value that is a secret is found by any pieceLen characters of it,
// letters only or not: the value of a key that names a secret, or a line
// that is one word. Plain lines keep whole-line matching, and a value
// whose key says it is no secret (AUTH_URL, KEY_PATH, AUTH_MODE), or that
// is a path or a host (GOOGLE_APPLICATION_CREDENTIALS=/home/…), is found
// only whole or by its pieces where a letter meets a digit, so an answer
// that mentions localhost or a path is not refused.
func TestPrivateLines_secretPieces(t *testing.T) {
	var p privateLines
	p.add(`PASSWORD=correcthorsebatterystaple
export GITHUB_TOKEN='zyxwvutsrqponmlkjihgfedcba'
"clientSecret": "wonderfullylongpassphrasehere",
AUTH_URL=https://auth.example.com/oauth/authorize
KEY_PATH=/etc/ssl/private/server-certificate.pem
AUTH_MODE=client_credentials_flow
HOST=localhost
GOOGLE_APPLICATION_CREDENTIALS=/home/dev/keys/service-account.json
AUTH_BACKEND=django.contrib.auth.backends.ModelBackend
PRIVATE_REGISTRY=registry.example.com/platform
DB_PASS=Zq!!!!!!!!!!!!!!!!
`, 0)
	p.add("mountainriverforestmeadow\n", 1) // secrets/db_password
	fullwidth := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			b.WriteRune(r + 0xFEE0)
		}
		return b.String()
	}
	for _, payload := range []string{
		"correcthorse, and later batterystaple",
		"the middle: horsebattery",
		"HORSEBATTERY",
		fullwidth("horsebattery"),
		"horse\u200bbat\u00adtery\u200dstaple",
		"a piece: utsrqponmlkj",
		"phrase: longpassphrase",
		"riverforestme",
		// White space is folded out, as for a key wrapped over lines: the
		// passphrase's words in a row are its piece.
		"correct horse",
		// Such a value quoted whole.
		"registry.example.com/platform",
	} {
		if len(p.find(payload)) == 0 {
			t.Errorf("find(%q) found nothing", payload)
		}
	}
	for _, payload := range []string{
		"It runs on localhost.",
		"Sign in at https://auth.example.com/oauth.",
		"The certificate lives in /etc/ssl/private/server-certificate files.",
		"It uses the client_credentials grant.",
		"A horse is a good animal, and a battery runs down.",
		"The password is in the environment.",
		"A rule: !!!!!!!!!!!!!!!!",
		// A path's or a host's piece, though the key names a secret.
		"The service account file is service-account.json under /home/dev/keys.",
		"Auth uses django.contrib.auth for its users.",
		"Images are pushed to registry.example.com.",
	} {
		if found := p.find(payload); len(found) > 0 {
			t.Errorf("find(%q) = %q: ordinary text taken for a secret", payload, p.line(found[0]).masked)
		}
	}
	if got := p.redact("the middle: horsebattery!"); strings.Contains(got, "horsebattery") || !strings.HasSuffix(got, "!") {
		t.Errorf("redact = %q, want the piece masked", got)
	}
}

// Which keys name a secret.
func TestSecretName(t *testing.T) {
	for key, want := range map[string]bool{
		"PASSWORD=": true, "export API_KEY = ": true, `"clientSecret": `: true, "db.password:": true,
		"GITHUB_TOKEN=": true, "AWS_SECRET_ACCESS_KEY=": true, "BASIC_AUTH=": true, "private-key:": true,
		"AUTH_URL=": false, "KEY_PATH=": false, "AUTH_MODE=": false, "TOKEN_TTL=": false, "MONKEY=": false,
		"KEYBOARD=": false, "HOST=": false, "PASSENGER=": false, "": false,
	} {
		if got := secretName(key); got != want {
			t.Errorf("secretName(%q) = %v, want %v", key, got, want)
		}
	}
}
