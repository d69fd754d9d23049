package anthropic

import "github.com/coda-acp/coda/engine/llm"

// How a Claude model thinks (Options.Thinking, a catalog fact). Sources:
// https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking,
// https://docs.anthropic.com/en/docs/build-with-claude/adaptive-thinking,
// https://docs.anthropic.com/en/docs/build-with-claude/effort and each
// model's what's-new page.
const (
	// ThinkingBudget is thinking {"type": "enabled", "budget_tokens"}, off
	// unless asked: Claude 3.7 to 4.5.
	ThinkingBudget = "budget"
	// ThinkingBoth takes adaptive thinking with output_config.effort, and
	// still the deprecated budget: Claude Opus and Sonnet 4.6. Off unless
	// asked.
	ThinkingBoth = "both"
	// ThinkingAdaptive is adaptive thinking only (a budget is a 400), off
	// unless asked, and "disabled" refused: Claude Opus 4.7 and 4.8.
	ThinkingAdaptive = "adaptive"
	// ThinkingAdaptiveOn is adaptive thinking on by default, turned off by
	// {"type": "disabled"}: Claude Sonnet 5, Opus 5, Haiku 5.5.
	ThinkingAdaptiveOn = "adaptive-on"
	// ThinkingBetweenTools is adaptive thinking on by default, where
	// "disabled" is a 400 and the least is {"type": "between_tools"}: no
	// thinking up front, short progress notes between tool calls (as
	// thinking blocks, sent back like any), at effort high or below:
	// Claude Sonnet 5.5
	// (https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5,
	// "Turn off up-front thinking with between_tools").
	ThinkingBetweenTools = "between-tools"
	// ThinkingAlways is adaptive thinking that cannot be turned off: Claude
	// Opus 5.5, Fable 5 and 5.1, Mythos.
	ThinkingAlways = "always"
)

// Thinking budgets for the effort levels, on the models that take one
// (at least 1024 tokens, less than max_tokens).
var budgets = map[string]int{
	llm.EffortMinimal: 1024,
	llm.EffortLow:     4096,
	llm.EffortMedium:  10000,
	llm.EffortHigh:    16000,
	llm.EffortXHigh:   24000,
	llm.EffortMax:     24000,
}

// ThinkingMaxTokens is the reply cap when thinking is on and none is
// configured: max_tokens covers the thinking and the reply, which
// DefaultMaxTokens would squeeze.
const ThinkingMaxTokens = 32000

// thinking sets r's thinking and output_config.effort for effort ("" is
// the model's default; ThinkingBudget in the options still turns budgeted
// thinking on where the model takes one), and reports whether the model
// will think. An effort a model's catalog entry does not offer is refused
// at start-up; one that comes anyway is sent as the nearest the API
// takes.
func (m *Model) thinking(r *request, effort string) (on bool) {
	style := m.opts.Thinking
	budget := m.opts.ThinkingBudget
	switch style {
	case "":
		// Nothing known of the model: a configured budget means a model
		// that takes one (coda's old behaviour); an effort, a later one.
		if budget > 0 && effort == "" {
			style = ThinkingBudget
		} else {
			style = ThinkingAdaptive
		}
	case ThinkingBoth:
		if budget > 0 && effort == "" {
			style = ThinkingBudget
		}
	case ThinkingAdaptive, ThinkingAdaptiveOn, ThinkingBetweenTools, ThinkingAlways:
		if budget > 0 {
			m.once.Warn(m.opts.Log, "budget", "thinking_budget is not taken by this model: it thinks adaptively, set effort instead", "model", m.opts.Name)
		}
	}
	if effort == llm.EffortMinimal && style != ThinkingBudget {
		effort = llm.EffortLow // the least output_config.effort takes
	}
	switch style {
	case ThinkingBudget:
		switch effort {
		case "":
		case llm.EffortOff:
			budget = 0
		default:
			budget = budgets[effort]
			if budget == 0 {
				budget = budgets[llm.EffortMedium]
			}
		}
		if budget <= 0 {
			return false
		}
		m.roomToThink(r)
		if budget >= r.MaxTokens {
			budget = r.MaxTokens - 1024
		}
		if budget < 1024 {
			return false // too little room to think in
		}
		r.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
		return true
	case ThinkingAdaptive, ThinkingBoth:
		if effort == "" || effort == llm.EffortOff {
			return false
		}
	case ThinkingAdaptiveOn:
		if effort == llm.EffortOff {
			r.Thinking = &thinking{Type: "disabled"}
			return false
		}
	case ThinkingBetweenTools:
		if effort == llm.EffortOff {
			// No effort is sent: the API's default (high) is one that
			// between_tools takes. Its progress notes are thinking blocks,
			// so a forced tool is not asked for beside them.
			r.Thinking = &thinking{Type: "between_tools"}
			return true
		}
	case ThinkingAlways:
		if effort == llm.EffortOff {
			effort = llm.EffortLow // the least it can do
		}
	}
	// Thinking is displayed summarized: the later models omit its text by
	// default, and coda shows it as it streams.
	m.roomToThink(r)
	r.Thinking = &thinking{Type: "adaptive", Display: "summarized"}
	if effort != "" {
		r.OutputConfig = &outputConfig{Effort: effort}
	}
	return true
}

// roomToThink raises the reply cap to ThinkingMaxTokens when none was
// configured.
func (m *Model) roomToThink(r *request) {
	if !m.maxTokensSet && r.MaxTokens < ThinkingMaxTokens {
		r.MaxTokens = ThinkingMaxTokens
	}
}
