package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/coda-acp/coda/store"
)

// What a run used and cost, as `coda run` and `coda result` show it
// (DESIGN §23): one line on stderr after a run, and usage in the printed
// record.

// withUsage is a copy of the answer record a with the run's usage.
func withUsage(a *store.Answer, u *store.Spend) *store.Answer {
	if a == nil || u == nil {
		return a
	}
	c := *a
	c.Usage = u
	return &c
}

// printSpend writes a run's one line of what it used and cost:
//
//	coda: 3 calls, 12,345 in / 678 out tokens (9,000 cached), $0.0123
//
// or, when a model called has no known price, "cost unknown (no price for
// PROVIDER:MODEL)": never a cost of zero for it.
func printSpend(w io.Writer, s store.Spend) error {
	line := fmt.Sprintf("coda: %s, %s in / %s out tokens", plural(s.Calls, "call"), thousands(s.InputTokens), thousands(s.OutputTokens))
	if s.CacheReadTokens > 0 {
		line += fmt.Sprintf(" (%s cached)", thousands(s.CacheReadTokens))
	}
	switch {
	case len(s.Unpriced) > 0:
		line += fmt.Sprintf(", cost unknown (no price for %s)", strings.Join(s.Unpriced, ", "))
	case s.Cost != nil:
		line += ", " + dollars(s.Cost.Amount)
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// dollars is an amount as a person reads it: cents past a dollar, four
// decimals below one (a call costs fractions of a cent).
func dollars(amount float64) string {
	if amount >= 1 {
		return fmt.Sprintf("$%.2f", amount)
	}
	return fmt.Sprintf("$%.4f", amount)
}

// thousands writes n with commas: 12,034.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
