package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/coda-acp/coda/engine/blueprint"
	"github.com/coda-acp/coda/engine/llm"
	"github.com/coda-acp/coda/internal/plainjson"
	"github.com/coda-acp/coda/outputspec"
	"github.com/coda-acp/coda/store"
)

// spawn_agent and wait_for_agent are the engine's tools for sub-agents
// (DESIGN §12). A stage whose spawn list names agents offers both:
// spawn_agent starts a child, a sub-run (subrun.go) of one of those agents
// with its own prompt, and returns its id at once; the child runs
// alongside its parent; wait_for_agent returns the child's answer record.
// The spawn's output_* are the child's launch level of the cascade, so a
// child asked for another format than its blueprint's has that
// blueprint's schema and validator retired, and the call's result says
// so.

// maxChildren is how many of a run's children run at once.
const maxChildren = 4

// A child is a spawned sub-run.
type child struct {
	name  string // c1, c2, …
	agent string // as the spawn list names it
	label string
	sub   *run

	cancel context.CancelFunc
	done   chan struct{} // closed when res is set
	res    *Result

	settled bool // its answer kept and its files counted in the parent's
}

func (c *child) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// agentRef names a spawnable agent: as a spawn list names it, and the
// directory of the blueprint that names it.
type agentRef struct{ name, fromDir string }

// loadAgent loads an agent r's stages may spawn, once per turn: every
// visit of a stage that spawns names its agents in spawn_agent's
// description, and each spawn starts one; neither reads and parses its
// blueprint again. An agent that fails to load is tried again next time.
func (r *run) loadAgent(name string) (*blueprint.Blueprint, error) {
	ref := agentRef{name, r.t.Agent.Dir}
	tr := r.share
	tr.agentsMu.Lock()
	b := tr.agents[ref]
	tr.agentsMu.Unlock()
	if b != nil {
		return b, nil
	}
	b, err := r.e.Agents(name, ref.fromDir)
	if err != nil {
		return nil, err
	}
	tr.agentsMu.Lock()
	defer tr.agentsMu.Unlock()
	if tr.agents == nil {
		tr.agents = map[agentRef]*blueprint.Blueprint{}
	}
	tr.agents[ref] = b
	return b, nil
}

func (v *stageVisit) spawnSpecs() []llm.ToolSpec {
	r, s := v.run, v.stage
	var d strings.Builder
	fmt.Fprintf(&d, "Start another agent on a task of its own. It runs alongside you, and this call returns its id (c1, c2, …) at once; call %s with the id when you need its answer. "+
		"The agent sees nothing of this conversation: the prompt must say everything it needs. At most %d of the agents you start run at once. "+
		"output_format, output_instructions and output_schema ask for its answer in the shape you need; without them it answers as it is built to. The agents you can start:", blueprint.ToolWaitForAgent, maxChildren)
	for _, name := range s.Spawn {
		fmt.Fprintf(&d, "\n- %s", name)
		if r.e.Agents == nil {
			continue
		}
		if b, err := r.loadAgent(name); err == nil && b.Agent.Description != "" {
			fmt.Fprintf(&d, ": %s", b.Agent.Description)
		}
	}
	enum, _ := json.Marshal(s.Spawn)
	spawnSchema := `{"type":"object","properties":{"agent":{"type":"string","enum":` + string(enum) + `},` +
		`"prompt":{"type":"string","description":"The agent's whole task."},` +
		`"output_format":{"type":"string","description":"The answer's format label: json, xml, csv, yaml, toml, markdown, text, or any label."},` +
		`"output_instructions":{"type":"string","description":"What the answer must contain and how it is laid out."},` +
		`"output_schema":{"type":"object","description":"A JSON Schema the answer's data must satisfy."}},"required":["agent","prompt"]}`
	waitSchema := `{"type":"object","properties":{"id":{"type":"string","description":"The id spawn_agent returned, such as c1."}},"required":["id"]}`
	return []llm.ToolSpec{
		{Name: blueprint.ToolSpawnAgent, Description: d.String(), Schema: json.RawMessage(spawnSchema)},
		{Name: blueprint.ToolWaitForAgent, Description: "Wait until an agent you started with spawn_agent has finished, and get its answer record: status, format, content (the answer), flags and warnings. " +
			"A status other than \"answered\" means it has no answer; its warnings say why.", Schema: json.RawMessage(waitSchema)},
	}
}

// spawn runs a spawn_agent call.
func (v *stageVisit) spawn(ctx context.Context, tc llm.ToolCall) ToolResult {
	r := v.run
	var a struct {
		Agent              string          `json:"agent"`
		Prompt             string          `json:"prompt"`
		OutputFormat       string          `json:"output_format"`
		OutputInstructions string          `json:"output_instructions"`
		OutputSchema       json.RawMessage `json:"output_schema"`
	}
	if err := json.Unmarshal(tc.Arguments, &a); err != nil {
		return Errorf(`spawn_agent takes {"agent": "...", "prompt": "...", "output_format": "...", "output_instructions": "...", "output_schema": {...}}: %v`, err)
	}
	switch {
	case !slices.Contains(v.stage.Spawn, a.Agent):
		return Errorf("%q is not an agent this stage can start. It can start: %s.", a.Agent, strings.Join(v.stage.Spawn, ", "))
	case strings.TrimSpace(a.Prompt) == "":
		return Errorf("spawn_agent needs a prompt: the agent's whole task.")
	case r.sub.depth >= MaxDepth:
		return Errorf("spawn_agent cannot start an agent here: runs started by other runs nest at most %d deep, and this one is that deep. Do the work yourself.", MaxDepth)
	case r.e.Agents == nil:
		return Errorf("spawn_agent cannot start agents in this run.")
	}
	if running := r.runningChildren(); len(running) >= maxChildren {
		return Errorf("%d agents you started are still running, the most at once (%s): call wait_for_agent for one of them first.", len(running), strings.Join(running, ", "))
	}
	spec := outputspec.Spec{Format: strings.TrimSpace(a.OutputFormat), Instructions: a.OutputInstructions}
	if schema, problem := spawnSchema(a.OutputSchema); problem != "" {
		return Errorf("%s", problem)
	} else if schema != nil {
		spec.Schema = schema
	}
	b, err := r.loadAgent(a.Agent)
	if err != nil {
		return Errorf("The agent %s could not be loaded: %v", a.Agent, err)
	}
	var levels outputspec.Levels
	if spec.Format != "" || spec.Instructions != "" || spec.Schema != nil {
		levels.Spawn = &outputspec.Level{Dir: r.t.Workspace.Cwd(), Spec: spec}
		// The caller's own schema: refused now, not failed open.
		if err := outputspec.CheckCaller(*levels.Spawn); err != nil {
			return Errorf("output_schema cannot be used: %v. Fix it, or leave it out.", err)
		}
	}
	outs, err := blueprint.CompileOutputs(b, levels)
	if err != nil {
		return Errorf("The answer shape you asked for cannot be used: %v", err)
	}
	c := &child{name: fmt.Sprintf("c%d", len(r.resumedChildren)+len(r.sub.children)+1), agent: a.Agent, label: taskLabel("", a.Prompt), done: make(chan struct{})}
	c.sub = r.newSub(subSpec{kind: "children", name: c.name, agent: b, outputs: outs, prompt: a.Prompt})
	var cctx context.Context
	cctx, c.cancel = context.WithCancel(ctx)
	r.sub.children = append(r.sub.children, c)
	go func() {
		c.res = c.sub.run(cctx)
		close(c.done)
	}()
	out := fmt.Sprintf("Started %s (%s). It runs alongside you; call wait_for_agent with id %q for its answer.", c.name, a.Agent, c.name)
	if len(outs.Warnings) > 0 {
		out += "\n\nWarnings:\n- " + strings.Join(outs.Warnings, "\n- ")
	}
	return ToolResult{Output: out}
}

// spawnSchema reads spawn_agent's output_schema: an object, or a string
// holding one (models often send JSON as a string). It returns why it is
// refused, or "".
func spawnSchema(raw json.RawMessage) (map[string]any, string) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ""
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		if strings.TrimSpace(text) == "" {
			return nil, ""
		}
		raw = json.RawMessage(text)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, fmt.Sprintf("output_schema must be a JSON Schema object: %v", err)
	}
	return schema, ""
}

// wait runs a wait_for_agent call. A cancelled wait returns at once; the
// visit then ends cancelled.
func (v *stageVisit) wait(ctx context.Context, tc llm.ToolCall) ToolResult {
	r := v.run
	var a struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(tc.Arguments, &a); err != nil {
		return Errorf(`wait_for_agent takes {"id": "c1"}: %v`, err)
	}
	var c *child
	names := make([]string, len(r.sub.children))
	for i, x := range r.sub.children {
		names[i] = x.name
		if x.name == strings.TrimSpace(a.ID) {
			c = x
		}
	}
	if c == nil {
		if len(names) == 0 {
			return Errorf("There is no agent %q: you have started none. Start one with spawn_agent.", a.ID)
		}
		return Errorf("There is no agent %q. The agents you started: %s.", a.ID, strings.Join(names, ", "))
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return Errorf("Cancelled.")
	}
	v.touched(r.settleChild(c)) // the stage's files, as its own tools' are
	b, _ := plainjson.Marshal(c.res.Record(), "")
	return ToolResult{Output: strings.TrimSuffix(string(b), "\n")}
}

func (r *run) runningChildren() []string {
	var names []string
	for _, c := range r.sub.children {
		if c.running() {
			names = append(names, c.name)
		}
	}
	return names
}

// settleChild keeps a finished child's answer in its record, once, and
// returns the files it wrote the first time: the waiting stage's files
// (stageVisit.touched), or the run's when it ends (endChildren).
func (r *run) settleChild(c *child) (written []string) {
	if c.settled {
		return nil
	}
	c.settled = true
	if c.res.Answer != nil {
		r.keepAnswer(c.sub, c.res.Answer.Content)
	}
	return c.res.Written
}

// endChildren stops the children still running when their parent's run
// ends: nobody is left to wait for their answers. It returns once each
// has stopped.
func (r *run) endChildren(ctx context.Context) {
	for _, c := range r.sub.children {
		if c.running() && ctx.Err() == nil {
			r.warn(fmt.Sprintf("the agent %s (%s) was still running when the run ended, and was stopped", c.name, c.agent))
		}
		c.cancel()
		<-c.done
		r.wrote(r.settleChild(c))
	}
}

func (r *run) childRecords() []store.SubRun {
	var out []store.SubRun
	for _, c := range r.sub.children {
		out = append(out, store.SubRun{Name: c.name, Task: c.label, Agent: c.agent, Status: c.res.Status, Flags: nonNil(c.res.Flags)})
	}
	return out
}
