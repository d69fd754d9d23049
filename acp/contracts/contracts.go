// Package contracts are the agent's answer contracts as acp's sessions
// take them (DESIGN §3): the launch's, compiled once, and a session's
// levels of the output cascade over them (_meta.coda.output, the
// output_format option), a file a client names refused when the taint
// gate holds it private. A request's fault is -32602
// (jsonrpc.jsonrpc.ErrInvalidParams).
package contracts

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/coda-acp/coda/acp/pickers"
	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/taint"
	"github.com/coda-acp/coda/internal/jsonrpc"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/validators"
)

// Contracts are the agent's answer contracts (DESIGN §3): compiled at launch
// under the launch's level (advertised in initialize, and every session's
// until it has a level of its own), and again for a session whose
// _meta.coda.output or output_format option adds one. It owns the launch's
// level and what compiling it reads.
type Contracts struct {
	agent *blueprint.Blueprint
	log   *slog.Logger
	// taint are the launch's taint settings (engine.Engine.Taint), for
	// the private files a client may not name (PrivateFile).
	taint taint.Launch
	// launch are the contracts at launch; launchLevel its level.
	launch      *blueprint.Outputs
	launchLevel *outputspec.Level
	// launchNamesFiles: the launch's spec or the agent's outputs name a
	// schema file or validator, read at every compile (ReadsFiles).
	launchNamesFiles bool
}

// New compiles the launch's contracts, logging what they retire.
func New(agent *blueprint.Blueprint, launch outputspec.Level, t taint.Launch, log *slog.Logger) (*Contracts, error) {
	o := &Contracts{agent: agent, log: log, taint: t, launchLevel: &launch, launchNamesFiles: namesFilesAtLaunch(launch.Spec, agent)}
	outs, err := blueprint.CompileOutputs(agent, outputspec.Levels{Launch: o.launchLevel})
	if err != nil {
		return nil, err
	}
	for _, w := range outs.Warnings {
		log.Warn(w)
	}
	o.launch = outs
	return o, nil
}

// Launch are the launch's contracts, every session's until it has a
// level of its own.
func (o *Contracts) Launch() *blueprint.Outputs { return o.launch }

// Answers reports whether the agent answers: whether initialize
// advertises finalOutput.
func (o *Contracts) Answers() bool { return o.launch.Lead(o.agent) != nil }

// PrivateFile names the file at path when the taint gate's private paths
// hold it (the launch's and the agent's, whatever the policy), taken in a
// session whose directory is cwd: a file the client names for coda to read
// (a schema, a validator, a script model) is then refused unread, so that
// no error can quote it.
func (o *Contracts) PrivateFile(path, cwd string) (string, bool) {
	return taint.NewSecrets(o.taint, (*taint.Config)(o.agent.Agent.Taint), cwd, []string{cwd}).Private(path)
}

// Levels are the session's levels of the output cascade after the
// blueprint's: launch, session/new _meta, the config option.
func (o *Contracts) Levels(meta *outputspec.Level, config string) outputspec.Levels {
	return outputspec.Levels{Launch: o.launchLevel, SessionMeta: meta, ConfigOption: config}
}

// Compile compiles the agent's contracts under levels, logging what they
// retire. A failure is the request's fault: -32602 with the compiler's
// one-line message.
func (o *Contracts) Compile(levels outputspec.Levels) (*blueprint.Outputs, error) {
	outs, err := blueprint.CompileOutputs(o.agent, levels)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", jsonrpc.ErrInvalidParams, err)
	}
	for _, w := range outs.Warnings {
		o.log.Warn(w)
	}
	return outs, nil
}

// Shapes refuses what field would give: an output spec for an agent that
// gives no answer, which it would never shape (DESIGN §15, honest
// capability; the launch's --output-* are refused at start-up).
func (o *Contracts) Shapes(field string) error {
	if err := o.agent.CheckAnswers(); err != nil {
		return fmt.Errorf("%w: %s: %v, so it has nothing to shape", jsonrpc.ErrInvalidParams, field, err)
	}
	return nil
}

// namesFiles reports whether a _meta.coda.output spec names files coda
// reads (schemaFile, validator): a request that gives one reads them off
// the read loop, so that a file system that hangs holds up no other
// message (namedfile bounds the wait, not the loop's).
func namesFiles(raw json.RawMessage) bool {
	if raw == nil {
		return false
	}
	spec, err := outputspec.ParseMeta(raw)
	return err == nil && (spec.SchemaFile != "" || spec.Validator != "")
}

// MetaLevel is a _meta.coda.output spec as a level of the cascade, its
// paths resolved in the session's directory dir; unknown fields are
// errors, and so is a schemaFile or validator that is a private file
// (PrivateFile), refused unread.
func (o *Contracts) MetaLevel(raw json.RawMessage, dir string) (*outputspec.Level, error) {
	spec, err := outputspec.ParseMeta(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", jsonrpc.ErrInvalidParams, err)
	}
	for field, p := range map[string]string{"schemaFile": spec.SchemaFile, "validator": spec.Validator} {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if name, private := o.PrivateFile(p, dir); private {
			return nil, fmt.Errorf("%w: _meta.coda.output.%s: %s is a private file (the taint gate's private paths), so coda does not read it", jsonrpc.ErrInvalidParams, field, name)
		}
	}
	l := &outputspec.Level{Dir: dir, Spec: spec}
	// The caller's own schema and validator: refused here, before any
	// model call, not failed open as a blueprint's are (DESIGN §19).
	var ce *outputspec.CallerError
	if err := outputspec.CheckCaller(*l); errors.As(err, &ce) {
		field := "_meta.coda.output" // the message names the file
		if ce.Field == "schema" {
			field += ".schema"
		}
		return nil, fmt.Errorf("%w: %s: %v", jsonrpc.ErrInvalidParams, field, ce.Err)
	}
	return l, nil
}

// Session are the contracts a session's levels give: the launch's,
// compiled once for every session, when it has no level of its own.
func (o *Contracts) Session(meta *outputspec.Level, config string) (*blueprint.Outputs, error) {
	if meta == nil && config == "" {
		return o.launch, nil
	}
	return o.Compile(o.Levels(meta, config))
}

// formatChoices are the output_format option's values: the picker's
// formats, in its order.
var formatChoices = func() []pickers.Choice {
	var o []pickers.Choice
	for _, f := range validators.PickerFormats() {
		o = append(o, pickers.Choice{Value: f.Label, Name: f.Title})
	}
	return o
}()

// FormatOption is the output_format config option, showing the format in
// effect.
func (o *Contracts) FormatOption(outs *blueprint.Outputs) pickers.Option {
	current := ""
	if c := outs.Lead(o.agent); c != nil {
		current = c.Format()
	}
	opt := pickers.Option{
		ID: "output_format", Name: "Answer format", Category: "_output", Type: "select",
		Description:  "The format of the final answer coda closes each turn with",
		CurrentValue: current, Options: formatChoices,
	}
	found := false
	for _, c := range formatChoices {
		found = found || c.Value == current
	}
	if !found && current != "" {
		opt.Options = append(append([]pickers.Choice(nil), formatChoices...), pickers.Choice{Value: current, Name: current})
	}
	return opt
}

// ReadsFiles reports whether compiling a session's contracts reads
// files: its _meta.coda.output (raw) names one, or the launch's spec or
// the blueprint's does.
func (o *Contracts) ReadsFiles(raw json.RawMessage) bool {
	return o.launchNamesFiles || namesFiles(raw)
}

// namesFilesAtLaunch reports whether the launch's spec or the agent's
// outputs name a schema file or a validator, which every compile reads.
func namesFilesAtLaunch(launch outputspec.Spec, agent *blueprint.Blueprint) bool {
	specs := []*outputspec.Spec{&launch, agent.Agent.Output}
	for _, st := range agent.Stages {
		specs = append(specs, st.Output)
	}
	for _, spec := range specs {
		if spec != nil && (spec.SchemaFile != "" || spec.Validator != "") {
			return true
		}
	}
	return false
}
