package validators

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// allocated is what the process has allocated so far: what a call
// allocates bounds how far the heap can have grown during it.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestValidator_MemoryBudget: a validator that builds past its memory
// budget is broken, stopped before it builds the value (or soon after its
// memory passes the budget), and the process's heap never follows.
func TestValidator_MemoryBudget(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name, body string
		budget     uint64 // 0: the default, 256 MiB
		broken     string
		allocs     uint64 // at most this much allocated during the call
	}{
		{"a string repeated past the budget", `return "x" * (1 << 30)`, 0,
			"tried to build a value of 1.0 GiB, past its memory budget of 256 MiB", 4 * mb},
		{"just under Starlark's own cap", `return "x" * ((1 << 30) - 1)`, 0,
			"tried to build a value of 1024 MiB", 4 * mb},
		{"a list repeated", `return str(len([0] * (1 << 28)))`, 0,
			"tried to build a value of 4.0 GiB", 4 * mb},
		{"a string doubled in a loop", "s = 'x'\n    while True:\n        s = s + s", 64 * mb,
			"past its budget of 64 MiB", 200 * mb},
		{"a string doubled in place", "s = 'x'\n    while True:\n        s += s", 32 * mb,
			"past its budget of 32 MiB", 100 * mb},
		{"a list doubled by extend", "l = [0]\n    while True:\n        l.extend(l)", 32 * mb,
			"past its budget of 32 MiB", 200 * mb},
		{"many middling strings", "l = []\n    while True:\n        l.append('x' * 100000)", 32 * mb,
			"grew past its budget of 32 MiB", 100 * mb},
		{"a dict grown one entry a step", "d = {}\n    i = 0\n    while True:\n        d[i] = i\n        i += 1", 16 * mb,
			"grew past its budget of 16 MiB", 200 * mb},
		{"a shared structure rendered", "l = ['x' * 1000] * 1000\n    l = [l] * 1000\n    return str(l)", 0,
			"tried to build a value of", 4 * mb},
		{"a shared structure as JSON", "l = [['x' * 1000] * 1000] * 1000\n    return json.encode(l)", 0,
			"tried to build a value of", 4 * mb},
		{"formatted", "l = [['x' * 1000] * 1000] * 1000\n    return '%s' % (l,)", 0,
			"tried to build a value of", 4 * mb},
		{"a replace that multiplies", "s = 'a' * 100000\n    return s.replace('a', s)", 0,
			"tried to build a value of 9.3 GiB", 4 * mb},
		{"a replace kept as a value", "s = 'a' * 100000\n    r = s.replace\n    return r('a', s)", 0,
			"tried to build a value of 9.3 GiB", 4 * mb},
		{"a join of repeats", "return ''.join(['x' * 100000] * 100000)", 0,
			"tried to build a value of 9.3 GiB", 4 * mb},
		{"a range made a list", "return str(len(list(range(1 << 28))))", 0,
			"tried to build a value of 4.0 GiB", 4 * mb},
		{"a list grown from a range", "l = []\n    l += range(1 << 28)", 0,
			"tried to build a value of 8.0 GiB", 4 * mb},
		{"a slice copied again and again", "l = [0] * 1000000\n    k = []\n    while True:\n        k.append(l[:])", 32 * mb,
			"past its budget of 32 MiB", 100 * mb},
		{"an element grown in place", "d = {'s': 'x'}\n    while True:\n        d['s'] += d['s']", 32 * mb,
			"past its budget of 32 MiB", 100 * mb},
		{"through getattr", "s = 'a' * 100000\n    return getattr(s, 'replace')('a', s)", 0,
			"tried to build a value of 9.3 GiB", 4 * mb},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := compile(t, "def validate(content):\n    "+tc.body+"\n")
			v.MaxMemory = tc.budget
			v.Timeout = time.Hour // the budgets decide, not the machine's speed
			runtime.GC()
			before := allocated()
			_, err := v.Validate(context.Background(), "x")
			used := allocated() - before
			var se *ScriptError
			if !errors.As(err, &se) || !strings.Contains(se.Msg, tc.broken) {
				t.Fatalf("Validate = %v; want a broken validator saying %q", err, tc.broken)
			}
			if !strings.HasPrefix(se.Msg, "t.star:") || strings.Contains(se.Msg, "\n") {
				t.Errorf("message %q: want one line naming where", se.Msg)
			}
			if used > tc.allocs {
				t.Errorf("the call allocated %d MiB, want at most %d MiB", used>>20, tc.allocs>>20)
			}
		})
	}
}

// TestValidator_MemoryBudgetKeepsSemantics: the guarded operations do
// what Starlark does, errors included.
func TestValidator_MemoryBudgetKeepsSemantics(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`"ab" * 3`, `"ababab"`},
		{`3 * "ab"`, `"ababab"`},
		{`[1] * 2 + [3]`, `[1,1,3]`},
		{`"%s-%d" % ("a", 2)`, `"a-2"`},
		{`{"a": 1} | {"b": 2}`, `{"a":1,"b":2}`},
		{`"abcdef"[1:5:2]`, `"bd"`},
		{`"abcdef"[::-1]`, `"fedcba"`},
		{`[1, 2, 3, 4][-3:]`, `[2,3,4]`},
		{`[1, 2, 3, 4][10:]`, `[]`},
		{`(1, 2, 3)[::-2]`, `[3,1]`},
		{`"a,b".split(",")`, `["a","b"]`},
		{`",".join(["a", "b"])`, `"a,b"`},
		{`"a-a".replace("a", "bc")`, `"bc-bc"`},
		{`"{} {x}".format(1, x=2)`, `"1 2"`},
		{`sorted({"b": 1, "a": 2}.items())`, `[["a",2],["b",1]]`},
		{`str([1, "a"])`, `"[1, \"a\"]"`},
		{`repr("a")`, `"\"a\""`},
		{`list(range(3))`, `[0,1,2]`},
		{`json.decode(json.encode({"a": [1]}))`, `{"a":[1]}`},
		{`json.indent('{"a":[1,2]}', indent=" ")`, `"{\n \"a\": [\n  1,\n  2\n ]\n}"`},
		{`f()`, `[[1,2,3],{"n":"xy"},[1,10]]`},
	} {
		src := "def f():\n    l = [1]\n    l += [2]\n    l.extend([3])\n    d = {'n': 'x'}\n    d['n'] += 'y'\n    k = [1, 2]\n    k[len(k) - 1] *= 5\n    return [l, d, k]\n" +
			"def validate(content):\n    return json.encode(" + tc.expr + ")\n"
		v := compile(t, src)
		got, err := v.Validate(context.Background(), "")
		if err != nil || got != tc.want {
			t.Errorf("%s = %s, %v; want %s", tc.expr, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ expr, want string }{
		{`"a" * "b"`, "t.star:2:16: in validate: unknown binary op: string * string"},
		{`[1][1:2:0]`, "zero is not a valid slice step"},
		{`[1]["a":]`, "invalid start index: got string, want int"},
		{`(1).join([])`, "int has no .join field or method"},
		{`"%d" % "x"`, "%d format requires integer: cannot convert string to int"},
		{`"a".replace(1, 2)`, "replace: for parameter 1: got int, want string"},
		{`list(1)`, "list: for parameter 1: got int, want iterable"},
		{`fail("no", "more")`, "fail: no more"},
	} {
		v := compile(t, "def validate(content):\n    return "+tc.expr+"\n")
		_, err := v.Validate(context.Background(), "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.expr, err, tc.want)
		}
	}
}

// TestValidator_MemoryBudgetConcurrent: a validator over its budget is
// stopped while others, sharing the process, run to the end.
func TestValidator_MemoryBudgetConcurrent(t *testing.T) {
	greedy := compile(t, "def validate(content):\n    l = []\n    while True:\n        l.append('x' * 100000)\n")
	greedy.MaxMemory = 64 << 20
	greedy.Timeout = time.Hour
	fair := compile(t, walkStar)
	fair.Timeout = time.Hour
	content := bigJSON(answerCap)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				_, err := greedy.Validate(context.Background(), content)
				var se *ScriptError
				if !errors.As(err, &se) || !strings.Contains(se.Msg, "budget of 64 MiB") {
					errs <- fmt.Errorf("the greedy validator: %v", err)
				}
				return
			}
			for range 3 {
				if reason, err := fair.Validate(context.Background(), content); err != nil || reason != "" {
					errs <- fmt.Errorf("a fair validator: %q, %v", reason, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
