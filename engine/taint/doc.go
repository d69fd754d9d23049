// Package taint is the taint gate (DESIGN §13). Off unless turned on. With
// it on, content read from private paths taints the turn: a tool result
// that carries it (read_file, grep's matches, edit_file and write_file on
// a private file; a tool says which files' content a result carries in
// its Sources; a shell command line that names a private path, its quotes
// undone, whose file the gate then reads itself; any tool's result, a
// command's output or an MCP tool's, that carries a secret of a private
// file under the session's roots, which the gate reads once a turn within
// bounds: Gate.Found) and a prompt resource whose URI is private.
// A file the run writes that carries private content is private from then
// on (Gate.Wrote). Every way off
// the machine then meets the policy before it happens: the answer (at the
// moment a passing submission would be recorded), and every egress tool
// (shell, MCP tools) before it runs.
//
// A call is gated when what it would send carries private content: a
// private line (or a secret-looking part of one) found in it, compared
// folded (fold.go: white space and default-ignorable code points removed, NFKC
// folded, lower-cased), also behind the answer format's own escapes
// (decode.go: JSON strings, CSV cells, XML entities); a secret of 16 or
// more characters is found by any 12 of them in a row; or a private file
// submitted whole as an artifact. A hard link to a private file is private.
// A call that carries none goes through untouched, so an answer written
// without the secret is recorded. What an arbitrary encoding hides
// (base64, hex, a reversal) is not seen; the gate is a guard against
// carrying private content out by accident, not against a model set on
// hiding it.
//
// The engine is the gate's user: it hands a Gate what its tools read
// (Gate.Read) and each call that could leave the machine (Gate.Decide),
// asks the user the Question the gate puts under `ask`, and writes the
// Audit of each decision into the run's record. The package imports
// nothing of coda's above it.
//
// Where each rule lives: policy.go (the settings and how the launch's and
// the blueprint's combine), gate.go (the turn's gate, its decisions and
// what it tells the model and the user), paths.go (which paths are
// private, hard links too), found.go (what the private files under the
// roots hold, for results that name none), lines.go (what was read,
// bounded, and finding it again, pieces of secrets too), fold.go (how text is compared),
// decode.go (what an answer's format escapes),
// mask.go (the one way private lines are quoted), audit.go (a decision's
// record, and the counts in run.json), secrets.go (the matcher on its own,
// gate on or off: what later stages and the record keep, masked).
package taint
