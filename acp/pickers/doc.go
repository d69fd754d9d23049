// Package pickers is the editor's pickers of a session (DESIGN §14, §16):
// the config options output_format, model, effort and mode as the client
// shows them, the modes for the older session/set_mode, the effort levels a
// model takes, and the providers' model list, asked once a process. It
// knows nothing of connections or sessions' other state: acp keeps each
// session's picks and asks this package what to show and what to refuse.
package pickers

// A Listed is one model a provider lists, as the model option offers it.
type Listed struct {
	Spec string // PROVIDER:MODEL, the option's value
	Name string // as a picker shows it: the spec, marked "(no tools)" where it cannot call tools
}
