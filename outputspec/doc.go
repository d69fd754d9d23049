// Package outputspec is the answer's contract: the output spec, its cascade
// over blueprint, launch, session and prompt levels (with retirement), what
// the model is told about it, and the ordered checks a submit_output call
// goes through before an answer is recorded.
//
// The flow: each level's Spec comes from a blueprint table (TOML), the
// --output-* flags (Launch), or _meta.coda.output (ParseMeta); callers put
// each in its field of Levels, and Resolve combines them in DESIGN.md §3's
// order (Levels.ordered is that table) into one Spec and the retirement
// warnings.
// Compile reads and compiles its schema and validator into a Contract; an
// error there is a start-up (or -32602) error of one line. The Contract
// gives the model its instructions for the ways a stage offers
// (ToolDescriptionFor, ToolSchemaFor, SystemPromptFor, and their Shaped
// forms); a Desk per stage visit checks its submissions (Desk.Submit, the
// ordered checks) and remembers the refused answers.
//
// Decisions where DESIGN.md is silent:
//   - With no format named anywhere the answer is markdown (DefaultFormat).
//   - Checks set before any level names a format are adopted by the first
//     format named: they were written for no other one. Retirement also
//     drops the retired validator's on_validator_error.
//   - A JSON Schema applies to json, yaml and toml answers only. For any
//     other format it is still read and parsed (a bad one is still an
//     error) but not shown or checked, with a warning on every verdict.
//   - An artifact given as a bare path is named after its file, without the
//     extension; declared artifacts are matched by name. A type the model
//     gives names the file in the record, but a declared type is checked
//     against the sniffed one, which a given type may only refine where
//     sniffing says no more than "bytes" or "text".
//   - Retirement retires the earlier levels' example with their checks: an
//     example of one format misleads a model asked for another.
//   - A refusal is remembered by the Desk only when the content alone
//     decided it (not for artifacts, whose files may appear later, nor for
//     a broken validator, which has a wall-clock guard).
//   - submit_output may declare the answer unavailable instead of giving
//     it (`unavailable`: the reason): a Verdict that is neither accepted nor
//     refused, for the caller to honour. It excludes `content` (an empty
//     one aside) and artifacts; the schema offered with it cannot say so
//     (providers refuse combinators at a tool schema's top level), so only
//     parseArgsAs does, and `content` is then not required by the schema.
//   - What the model is told depends on the Ways a stage takes its answer
//     (the tool, a reply, or both; `unavailable` or not): SystemPromptFor,
//     ToolDescriptionFor and ToolSchemaFor; the plain methods are the tool
//     alone.
package outputspec
