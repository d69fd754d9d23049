package taint

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The rolled counts of segments take the windows keyLike (and, for a
// surely secret value, those with a letter or digit) takes, one by one.
func TestSegments_asWindowByWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ab9-!_Z0 x"
	for range 2000 {
		sq := make([]byte, rng.IntN(40))
		for i := range sq {
			sq[i] = alphabet[rng.IntN(len(alphabet))]
		}
		for _, every := range []bool{false, true} {
			want := segmentsBy(nil, sq, func(pc []byte) bool { return keyLike(pc) || every && bytes.ContainsFunc(pc, isAlnum) })
			if diff := cmp.Diff(fmt.Sprintf("%q", want), fmt.Sprintf("%q", segments(nil, sq, every))); diff != "" {
				t.Fatalf("segments(%q, %v) (-window by window +rolled):\n%s", sq, every, diff)
			}
		}
	}
}

// Every window of a secret is found, however many secrets are kept, and
// text that holds none is not taken for one.
func TestPieceIndex_everyWindow(t *testing.T) {
	var p privateLines
	text := privateMiB()
	p.add(text, 0)
	rng := rand.New(rand.NewPCG(5, 6))
	lines := bytes.Split([]byte(text), []byte("\n"))
	for range 500 {
		line := lines[rng.IntN(len(lines)-1)]
		v := fold(nil, string(line[bytes.IndexByte(line, '=')+1:]))
		at := rng.IntN(len(v) - pieceLen + 1)
		if got := p.find("see " + string(v[at:at+pieceLen]) + " there"); len(got) != 1 {
			t.Fatalf("the piece %q of %q: found %v", v[at:at+pieceLen], line, got)
		}
	}
	other := make([]byte, 1<<20)
	for i := range other {
		other[i] = "abcdefghijklmnopqrstuvwxyz0123456789-_"[rng.IntN(38)]
	}
	if got := p.find(string(other)); len(got) != 0 {
		t.Errorf("1 MiB of other random text: found %d lines", len(got))
	}
}

// What the gate keeps of a private file is bounded (issue 32): at most
// 1.5 MB per MiB of a file of keys, every byte of it a secret (1.40 MB:
// a byte a byte of key and one a segment, 3 bytes an anchor, its line
// quoted masked, packed and front-coded), where a
// hash of each of its 12-byte pieces, the fragments' maps and the lines
// kept 10.6 MB.
func TestPrivateLines_memoryPerMiB(t *testing.T) {
	text := privateMiB()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := new(privateLines)
	p.add(text, 0)
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(p)
	runtime.KeepAlive(text) // not counted as freed: it is the caller's
	if p.full {
		t.Fatal("the 1 MiB file overflowed the bounds")
	}
	perMiB := float64(kept) / (float64(len(text)) / (1 << 20))
	t.Logf("kept %d bytes: %.2f MB per MiB", kept, perMiB/1e6)
	if perMiB > 1.5e6 {
		t.Errorf("kept %.2f MB per MiB of private file, want at most 1.5", perMiB/1e6)
	}
}

// The masked lines are kept packed and front-coded: each is quoted as
// MaskLine writes it, across readings and the 64-line marks, whatever it
// shares with the one before (nothing, all of it, more than 255 bytes)
// and whatever bytes it holds.
func TestPrivateLines_maskedLinesFrontCoded(t *testing.T) {
	var p privateLines
	var want []string
	long := "TOKEN_" + strings.Repeat("A", 300) + "="
	rng := rand.New(rand.NewPCG(3, 4))
	key := func() string { // a value no other line's pieces cover
		b := make([]byte, 20)
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)]
		}
		return string(b) + "q9"
	}
	for r := range 3 {
		var b strings.Builder
		for i := range 100 {
			var line string
			switch i % 5 {
			case 0:
				line = fmt.Sprintf("API_KEY_%03d=sk-%s\n", i, key())
			case 1:
				line = fmt.Sprintf("%s%s\n", long, key())
			case 2:
				line = fmt.Sprintf("%s%sx\n", long, key()) // shares more than 255 bytes
			case 3:
				line = fmt.Sprintf("DB_PASSWORD=%s\n", key())
			default: // bytes packMask escapes, and an ellipsis of the line's own
				line = fmt.Sprintf("x\xfe\xff… \xfe%s \xff\xfe\xfe%s\n", key(), key())
			}
			b.WriteString(line)
			want = append(want, MaskLine(strings.TrimSuffix(line, "\n")))
		}
		p.add(b.String(), r)
	}
	if p.count() != len(want) {
		t.Fatalf("kept %d lines, want %d", p.count(), len(want))
	}
	for i, w := range want {
		if got := p.line(uint32(i)).masked; got != w {
			t.Errorf("line %d: %q, want %q", i, got, w)
		}
	}
}
