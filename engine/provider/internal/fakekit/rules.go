package fakekit

import (
	"fmt"
	"testing"
)

// A Rule is one thing a vendor documents a request must keep to: its
// name (what a refusal is recorded under), the document that states it,
// and the check that says why a request C breaks it (a *Refusal for a
// status or error type of its own; any other error is a 400).
type Rule[C any] struct {
	Name   string
	Source string
	Check  func(C) error
}

// A Refusal is a rule's answer: the HTTP status, the vendor's error type
// (Anthropic's "not_found_error", Google's "NOT_FOUND"; "" for the
// vendor's usual one), the field it names (OpenAI's param) and the
// message.
type Refusal struct {
	Status      int
	Type, Param string
	Msg         string
}

func (r *Refusal) Error() string { return r.Msg }

// Refuse is a 400 with the message format names.
func Refuse(format string, args ...any) error {
	return &Refusal{Status: 400, Msg: fmt.Sprintf(format, args...)}
}

// RefuseParam is a 400 naming param.
func RefuseParam(param, format string, args ...any) error {
	return &Refusal{Status: 400, Param: param, Msg: fmt.Sprintf(format, args...)}
}

// Broken is the first of rules that c breaks: its name and refusal; ""
// and nil when c keeps them all.
func Broken[C any](rules []Rule[C], c C) (string, *Refusal) {
	for _, r := range rules {
		err := r.Check(c)
		if err == nil {
			continue
		}
		ref, ok := err.(*Refusal)
		if !ok {
			ref = &Refusal{Status: 400, Msg: err.Error()}
		}
		return r.Name, ref
	}
	return "", nil
}

// TestRules runs one case a rule, each a request that breaks it: send
// sends it to a fresh fake and answers the name of the rule the fake
// refused it under ("" when it was served). A rule without a case, or a
// case of no rule, fails the test.
func TestRules[C, K any](t *testing.T, rules []Rule[C], cases map[string]K, send func(t *testing.T, k K) string) {
	t.Helper()
	names := map[string]bool{}
	for _, r := range rules {
		names[r.Name] = true
		t.Run(r.Name, func(t *testing.T) {
			k, ok := cases[r.Name]
			if !ok {
				t.Fatalf("no case breaks the rule %q (%s)", r.Name, r.Source)
			}
			if got := send(t, k); got != r.Name {
				t.Fatalf("refused by the rule %q; want %q", got, r.Name)
			}
		})
	}
	for name := range cases {
		if !names[name] {
			t.Errorf("a case for %q, which is no rule", name)
		}
	}
}

// If is Refuse when broken, else nil: a rule's check in one line. Its
// arguments are evaluated either way.
func If(broken bool, format string, args ...any) error {
	if !broken {
		return nil
	}
	return Refuse(format, args...)
}

// IfParam is RefuseParam when broken, else nil.
func IfParam(broken bool, param, format string, args ...any) error {
	if !broken {
		return nil
	}
	return RefuseParam(param, format, args...)
}
