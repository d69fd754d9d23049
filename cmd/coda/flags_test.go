package main

import "testing"

// A flag error names the flag as the user typed it: an unknown flag whole
// (its value too, so "--json=maybe" is not shown as "-json"), a known one
// by its name with the dashes typed, in every message the flag package
// gives.
func TestParseArgs_asTyped(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--json=maybe"}, "flag provided but not defined: --json=maybe (see `coda help run`)"},
		{[]string{"task", "--no-such-flag"}, "flag provided but not defined: --no-such-flag (see `coda help run`)"},
		{[]string{"task", "-bogus=1"}, "flag provided but not defined: -bogus=1 (see `coda help run`)"},
		{[]string{"--raw=maybe"}, `invalid boolean value "maybe" for --raw: parse error (see ` + "`coda help run`)"},
		{[]string{"-raw=maybe"}, `invalid boolean value "maybe" for -raw: parse error (see ` + "`coda help run`)"},
		{[]string{"--count=many"}, `invalid value "many" for flag --count: parse error (see ` + "`coda help run`)"},
		{[]string{"task", "--name"}, "flag needs an argument: --name (see `coda help run`)"},
		{[]string{"--", "--json=maybe"}, ""},
	} {
		fs := newFlagSet("run")
		fs.Bool("raw", false, "")
		fs.Int("count", 0, "")
		fs.String("name", "", "")
		_, err := parseArgs(fs, tt.args)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%q: %q, want %q", tt.args, got, tt.want)
		}
	}
}
