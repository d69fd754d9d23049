package validators

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"

	"go.starlark.net/starlark"
)

// Starlark counts steps, not bytes: "x" * (1 << 29) is one step and half
// a gigabyte. A validator's memory is bounded in two ways, both per call
// and so per thread, whatever other validators run beside it:
//
//   - Every operation that can build a value much bigger than its operands
//     in one step (*, +, %, |, slices, the string and collection methods
//     that copy, and the built-ins that make lists or render values) is
//     guarded (guards.go): its result's size is worked out before it is
//     built, and a value bigger than the budget is never built.
//   - What the thread may have allocated since it began, the guarded
//     values plus a bound per step for everything else, is added up. Each
//     time that passes what is left of the budget, the heap is measured
//     after a collection: if it has grown by more than the budget since
//     the call began, the validator is stopped. Garbage (a string rebuilt
//     in a loop) is collected and does not count; memory the thread holds
//     does. The measure is the process's, so a neighbour's memory can count
//     against a thread, but only once the thread itself may have allocated
//     a budget's worth.
//
// A validator stopped this way is broken, not a rejection (DESIGN.md §5).

// DefaultMaxMemory is a validator call's memory budget.
const DefaultMaxMemory = 256 << 20

const (
	// stepChunk is how often, in steps, the step hook looks at the
	// thread's account and its call depth.
	stepChunk = 1 << 14
	// stepBytes bounds what one step allocates that no guard sees
	// (appends, literals, dict entries): measured at under 24 bytes a
	// step for loops that do nothing else.
	stepBytes = 32
	// maxCallDepth bounds recursion. Starlark's own limit (100,000 calls)
	// costs some 140 MB of goroutine stack, which no heap measure sees.
	maxCallDepth = 10_000
)

// budgetKey is the thread-local key of a call's *budget.
const budgetKey = "coda.budget"

// A budget is one validator call's account. Only the call's own goroutine
// touches it: the guards and the step hook run on it.
type budget struct {
	limit     uint64 // bytes
	base      uint64 // the live heap when the call began
	charged   uint64 // bytes the thread may have allocated since the last measure
	allowance uint64 // measure again when charged passes it
	steps     uint64 // the step count at the last step hook
	over      string // why the thread was stopped; "" while within
}

func newBudget(limit uint64) *budget {
	return &budget{limit: limit, base: liveHeap(), allowance: limit}
}

// budgetOf is the thread's budget, or nil outside a validator call.
func budgetOf(th *starlark.Thread) *budget {
	b, _ := th.Local(budgetKey).(*budget)
	return b
}

// errOver is the error a guard returns past the budget; its message is the
// ScriptError's.
type errOver struct{ msg string }

func (e *errOver) Error() string { return e.msg }

// charge accounts for a value of n bytes about to be built, and refuses it
// when it does not fit.
func (b *budget) charge(n uint64) error {
	if b == nil {
		return nil
	}
	if n > b.limit {
		b.over = fmt.Sprintf("the validator tried to build a value of %s, past its memory budget of %s", mib(n), mib(b.limit))
		return &errOver{b.over}
	}
	b.charged += n
	if b.charged > b.allowance && !b.measure(n) {
		return &errOver{b.over}
	}
	return nil
}

// measure compares the heap, after a collection, with the budget, next
// being about to be built. It reports false (and sets over) when the
// thread must stop.
func (b *budget) measure(next uint64) bool {
	live := liveHeapAfterGC()
	grown := uint64(0)
	if live > b.base {
		grown = live - b.base
	}
	if grown+next > b.limit {
		b.over = fmt.Sprintf("the validator's memory grew past its budget of %s", mib(b.limit))
		return false
	}
	b.charged = next
	// Measure again once the thread may have filled what is left, but
	// not more often than every quarter budget: a collection is costly.
	b.allowance = max(b.limit-grown-next, b.limit/4)
	return true
}

// stepHook runs every stepChunk steps: the step budget, the call depth and
// the memory the steps may have allocated. It reports why to stop, or "".
func (b *budget) stepHook(th *starlark.Thread) string {
	if th.CallStackDepth() > maxCallDepth {
		return fmt.Sprintf("the validator recursed deeper than %d calls (an endless recursion?)", maxCallDepth)
	}
	steps := th.ExecutionSteps()
	b.charged += (steps - b.steps) * stepBytes
	b.steps = steps
	if b.charged > b.allowance && !b.measure(0) {
		return b.over
	}
	return ""
}

func mib(n uint64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", (n+(1<<20)-1)>>20)
}

// liveHeap is the live heap as of the last collection.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// gcGate lets threads that measure at once share one collection.
var gcGate struct {
	mu   sync.Mutex
	gen  atomic.Uint64 // collections forced so far
	live uint64        // the live heap after the last one
}

// liveHeapAfterGC collects, unless another thread collected while this one
// waited, and returns the live heap.
func liveHeapAfterGC() uint64 {
	asked := gcGate.gen.Load()
	gcGate.mu.Lock()
	defer gcGate.mu.Unlock()
	if gcGate.gen.Load() != asked {
		return gcGate.live
	}
	runtime.GC()
	gcGate.live = liveHeap()
	gcGate.gen.Add(1)
	return gcGate.live
}
