// Package outputspec is the answer's contract: the output spec, its cascade
// over blueprint, launch, session and prompt levels (with retirement), what
// the model is told about it, and the ordered checks a submit_output call
// goes through before an answer is recorded.
package outputspec
