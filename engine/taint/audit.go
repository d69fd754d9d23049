package taint

// Audit is one gated call, as stages/NNN-STAGE@V/taint_audit.json lists
// them. Private lines appear in it masked only.
type Audit struct {
	Time string `json:"time"`
	// Sink is submit_output, or the tool called.
	Sink string `json:"sink"`
	// Sources name the private files the call would carry content of,
	// relative to the session's roots.
	Sources []string `json:"sources"`
	// Matches are the private lines found in the call, masked.
	Matches []string `json:"matches"`
	// Unchecked says the run read more private content than coda keeps
	// track of, so the call was gated without a line to show.
	Unchecked bool   `json:"unchecked,omitempty"`
	Policy    string `json:"policy"`
	Decision  string `json:"decision"`  // allowed | denied
	DecidedBy string `json:"decidedBy"` // policy | user | waiver
	Reason    string `json:"reason,omitempty"`
}

// Counts are the calls the gate held in a turn and what became of them:
// run.json's "taint" (store.TaintCounts spells it so).
type Counts struct {
	Gated   int
	Allowed int // by the policy or the user
	Denied  int
	Waived  int // through by --yes, nobody being there to ask
}
