package validators

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	// Before starlark starts: no 4 GiB reservation under ulimit -v.
	_ "github.com/coda-acp/coda/internal/addrspace/starlarkint"

	"github.com/coda-acp/coda/internal/namedfile"
)

const (
	// DefaultMaxSteps bounds one run of a validator: enough to walk a
	// 256 KiB answer many times over, little enough to stop an endless
	// loop in well under a second.
	DefaultMaxSteps = 20_000_000
	// DefaultTimeout is the wall-clock guard behind the step budget, for
	// time spent in built-ins, which count no steps.
	DefaultTimeout = 5 * time.Second
	// maxOutput caps what a script may print into a ScriptError.
	maxOutput = 4 << 10
)

// topLevel limits a validator's top level, run once when it is compiled
// (the defaults when zero; tests lower them).
var topLevel struct {
	steps   uint64
	timeout time.Duration
	memory  uint64
}

// fileOptions make Starlark a small general scripting language: while
// loops, sets, top-level control flow and recursion (bounded by the step
// budget and Starlark's own depth limit).
var fileOptions = &syntax.FileOptions{While: true, Set: true, TopLevelControl: true, Recursion: true}

// A Validator is a compiled Starlark validator: a script defining
// validate(content). It is safe for concurrent use: each call runs in a
// fresh thread over frozen globals.
type Validator struct {
	name string
	fn   *starlark.Function

	// MaxSteps bounds the Starlark execution steps of one call
	// (DefaultMaxSteps when 0). Set before the first call.
	MaxSteps uint64
	// Timeout bounds the wall-clock time of one call (DefaultTimeout when
	// 0). Set before the first call.
	Timeout time.Duration
	// MaxMemory bounds, in bytes, the memory one call may build up
	// (DefaultMaxMemory when 0; see budget.go). Set before the first call.
	MaxMemory uint64
}

// A ScriptError is a broken validator: it failed, exceeded its budget, or
// returned something other than None or a string. It is not a verdict on
// the answer; the caller decides whether to reject or accept.
type ScriptError struct {
	Msg       string // one line: "check.star:5:3: in validate: key "id" not in dict"
	Backtrace string // Starlark's traceback, when the script failed
	Output    string // what the script printed, capped at 4 KiB
}

func (e *ScriptError) Error() string { return e.Msg }

// maxValidatorBytes is the most LoadValidator reads of a script; only a
// regular file is read (internal/namedfile).
const maxValidatorBytes = 4 << 20

// LoadValidator reads and compiles the validator at path. Its errors are
// one line naming the file, the line where known, and the problem.
func LoadValidator(path string) (*Validator, error) {
	if strings.EqualFold(filepath.Ext(path), ".rhai") {
		return nil, fmt.Errorf("validators are Starlark (.star): %s is a Rhai script", path)
	}
	src, err := namedfile.Read(path, maxValidatorBytes)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return CompileValidator(path, src)
}

// CompileValidator compiles the validator src; name is the file name its
// messages give. The script's top level runs once, here, under the same
// budget as a call; validate must then be a function of one parameter.
func CompileValidator(name string, src []byte) (*Validator, error) {
	f, err := fileOptions.Parse(name, src, 0)
	if err != nil {
		return nil, err
	}
	guardFile(f)
	prog, err := starlark.FileProgram(f, predeclared().Has)
	if err != nil {
		var el resolve.ErrorList
		if errors.As(err, &el) && len(el) > 1 {
			return nil, fmt.Errorf("%v (and %d more %s)", el[0], len(el)-1, plural(len(el)-1, "error", "errors"))
		}
		return nil, err
	}
	if prog.NumLoads() > 0 {
		_, pos := prog.Load(0)
		return nil, fmt.Errorf("%s: load is not available in validators: put everything in one file", pos)
	}

	v := &Validator{name: name, MaxSteps: topLevel.steps, Timeout: topLevel.timeout, MaxMemory: topLevel.memory}
	th, done := v.thread(context.Background(), nil)
	globals, err := prog.Init(th, predeclared())
	if serr := done(err); serr != nil {
		return nil, serr
	}
	globals.Freeze()

	val, ok := globals["validate"]
	if !ok {
		return nil, fmt.Errorf("%s: no validate function: a validator defines def validate(content)", name)
	}
	fn, ok := val.(*starlark.Function)
	if !ok {
		return nil, fmt.Errorf("%s: validate is a %s, not a function: define def validate(content)", name, val.Type())
	}
	if fn.HasVarargs() || fn.HasKwargs() {
		return nil, fmt.Errorf("%s: validate must take exactly 1 parameter (content), not *args or **kwargs", fn.Position())
	}
	if n := fn.NumParams(); n != 1 {
		return nil, fmt.Errorf("%s: validate must take exactly 1 parameter (content), it takes %d", fn.Position(), n)
	}
	v.fn = fn
	v.MaxSteps, v.Timeout, v.MaxMemory = 0, 0, 0
	return v, nil
}

// Validate runs validate(content). A non-empty reason rejects the answer
// (it is written for the model); "" accepts it. A non-nil error means the
// validator is broken (a *ScriptError), or that ctx ended (the error wraps
// ctx.Err()).
func (v *Validator) Validate(ctx context.Context, content string) (reason string, err error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("validator %s: %w", v.name, err)
	}
	var out strings.Builder
	th, done := v.thread(ctx, &out)
	res, err := starlark.Call(th, v.fn, starlark.Tuple{starlark.String(content)}, nil)
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("validator %s: %w", v.name, err)
	}
	if serr := done(err); serr != nil {
		return "", serr
	}
	switch r := res.(type) {
	case starlark.NoneType:
		return "", nil
	case starlark.String:
		return string(r), nil
	}
	return "", &ScriptError{
		Msg:    fmt.Sprintf("%s: validate returned %s %s, want None (the answer is fine) or a string (why it is not)", v.fn.Position(), res.Type(), short(res.String())),
		Output: out.String(),
	}
}

// thread prepares a fresh thread with the step budget and the wall-clock
// guard. done stops the guard and turns a run's error into a ScriptError.
func (v *Validator) thread(ctx context.Context, out *strings.Builder) (*starlark.Thread, func(error) *ScriptError) {
	th := &starlark.Thread{Name: v.name}
	if out == nil {
		out = new(strings.Builder)
	}
	th.Print = func(_ *starlark.Thread, msg string) {
		if out.Len() < maxOutput {
			out.WriteString(msg)
			out.WriteByte('\n')
		}
	}
	steps := v.MaxSteps
	if steps == 0 {
		steps = DefaultMaxSteps
	}
	timeout := v.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	memory := v.MaxMemory
	if memory == 0 {
		memory = DefaultMaxMemory
	}
	bud := newBudget(memory)
	th.SetLocal(budgetKey, bud)
	var overBudget, overTime atomic.Bool
	// The step hook runs every stepChunk steps: the step budget, then the
	// depth and memory the budget watches.
	th.SetMaxExecutionSteps(min(steps, stepChunk))
	th.OnMaxSteps = func(th *starlark.Thread) {
		if th.ExecutionSteps() >= steps {
			overBudget.Store(true)
			th.Cancel("too many steps")
			return
		}
		if why := bud.stepHook(th); why != "" {
			bud.over = why
			th.Cancel("over its budget")
			return
		}
		th.SetMaxExecutionSteps(min(steps, th.ExecutionSteps()+stepChunk))
	}
	timer := time.AfterFunc(timeout, func() {
		overTime.Store(true)
		th.Cancel("timeout")
	})
	stop := context.AfterFunc(ctx, func() { th.Cancel("cancelled") })

	done := func(err error) *ScriptError {
		timer.Stop()
		stop()
		if err == nil {
			return nil
		}
		se := &ScriptError{Msg: err.Error(), Output: strings.TrimSuffix(out.String(), "\n")}
		var ee *starlark.EvalError
		if !errors.As(err, &ee) {
			return se
		}
		se.Backtrace = ee.Backtrace()
		where, fn := v.name, ""
		for i := range ee.CallStack {
			if fr := ee.CallStack.At(i); fr.Pos.IsValid() && fr.Pos.Filename() != "<builtin>" {
				where, fn = fr.Pos.String(), fr.Name
				break
			}
		}
		in := ""
		if fn != "" && fn != "<toplevel>" {
			in = "in " + fn + ": "
		}
		switch {
		case bud.over != "":
			se.Msg = fmt.Sprintf("%s: %s%s", where, in, bud.over)
		case overBudget.Load():
			se.Msg = fmt.Sprintf("%s: %sthe validator exceeded its budget of %d execution steps (an endless loop?)", where, in, steps)
		case overTime.Load():
			se.Msg = fmt.Sprintf("%s: %sthe validator ran longer than %v", where, in, timeout)
		default:
			se.Msg = fmt.Sprintf("%s: %s%s", where, in, ee.Msg)
		}
		return se
	}
	return th, done
}

// short cuts s to 40 bytes at most, at a character boundary.
func short(s string) string {
	if len(s) <= 40 {
		return s
	}
	i := 40
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
