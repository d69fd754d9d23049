package taint

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
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
// 2 MB per MiB of a file of keys, every byte of it a secret (1.77 MB:
// a byte a byte of key, its anchors, its line quoted masked), where a
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
	if perMiB > 2e6 {
		t.Errorf("kept %.2f MB per MiB of private file, want at most 2", perMiB/1e6)
	}
}
