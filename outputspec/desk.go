package outputspec

import (
	"context"
	"crypto/sha256"
	"sync"
)

// A Desk receives the submissions of one stage visit: it runs the ordered
// checks of DESIGN.md §4 (arguments, size, well-formedness, JSON Schema,
// validator, artifacts), the first failure refusing the submission with
// its Feedback written for the model, and it remembers refused answers: an identical resubmission is answered "identical
// to a refused submission" with the earlier reasons, without running the
// checks again. Only refusals that depend on the content alone are
// remembered (not those for artifacts, whose files may since have appeared).
// A Desk is safe for concurrent use.
type Desk struct {
	c       *Contract
	mu      sync.Mutex
	refused map[[sha256.Size]byte]string
}

// NewDesk returns a Desk for one stage visit under c.
func NewDesk(c *Contract) *Desk {
	return &Desk{c: c, refused: map[[sha256.Size]byte]string{}}
}

// Submit checks a submission, remembering a refused answer.
func (d *Desk) Submit(ctx context.Context, sub Submission) Verdict {
	a, v, settled := d.c.admit(sub)
	if settled {
		return v
	}
	key := contentKey(a.content)
	d.mu.Lock()
	earlier, seen := d.refused[key]
	d.mu.Unlock()
	if seen {
		return Verdict{Content: a.content, Feedback: "This answer is identical to a refused submission. It was refused because:\n" + earlier}
	}
	v, memo := d.c.check(ctx, sub, a)
	if !v.Accepted && memo {
		d.mu.Lock()
		d.refused[key] = v.Feedback
		d.mu.Unlock()
	}
	return v
}

// contentKey hashes an answer through a small buffer: sha256.Sum256 of
// []byte(content) would copy a long reply whole first.
func contentKey(content string) (key [sha256.Size]byte) {
	h := sha256.New()
	var buf [4 << 10]byte
	for len(content) > 0 {
		n := copy(buf[:], content)
		h.Write(buf[:n])
		content = content[n:]
	}
	h.Sum(key[:0])
	return key
}
