package pickers

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// catalog is a Catalog whose models take the levels of efforts, given
// none at launch.
type catalog struct {
	def     string
	picker  []string
	efforts map[string][]string
}

func (c catalog) Default(bool) string                    { return c.def }
func (c catalog) Picker() []string                       { return c.picker }
func (c catalog) Efforts(spec string) ([]string, string) { return c.efforts[spec], "" }
func (c catalog) Discovers() bool                        { return false }
func (c catalog) Discover(context.Context) []Listed      { return nil }
func notPrivate(string, string) (string, bool)           { return "", false }

func TestPicker_options(t *testing.T) {
	p := New(catalog{def: "a:big", picker: []string{"a:small", "script:x"}, efforts: map[string][]string{
		"a:big": {"low", "high", "max"}, "a:small": {"off"},
	}}, "", "", notPrivate)
	got := p.Options(Picks{Mode: ModeAsk})
	if len(got) != 3 || got[0].ID != OptionModel || got[1].ID != OptionEffort || got[2].ID != OptionMode {
		t.Fatalf("options %+v, want model, effort, mode", got)
	}
	// A script model is not offered where it would be refused.
	if want := []Choice{{"a:big", "a:big"}, {"a:small", "a:small"}}; !cmp.Equal(got[0].Options, want) {
		t.Errorf("model choices %v, want %v", got[0].Options, want)
	}
	if got[1].CurrentValue != EffortDefault || got[1].Options[0].Value != EffortDefault {
		t.Errorf("effort %+v, want the model's own default first and current", got[1])
	}
	// A model that does not reason shows off only.
	if e := p.Options(Picks{Model: "a:small"})[1]; e.CurrentValue != "off" || len(e.Options) != 1 {
		t.Errorf("effort of a:small %+v", e)
	}
	// No model at all: no model option, and no effort option.
	if got := New(catalog{}, "", "", notPrivate).Options(Picks{Mode: ModeAsk}); len(got) != 1 || got[0].ID != OptionMode {
		t.Errorf("without a model: %+v", got)
	}
}

func TestPicker_pick(t *testing.T) {
	p := New(catalog{def: "a:big", efforts: map[string][]string{"a:big": {"low", "high", "max"}, "a:mid": {"low", "high"}}}, "", "", notPrivate)
	picks, err := p.PickEffort(Picks{}, "max")
	if err != nil || picks.Effort != "max" {
		t.Fatalf("PickEffort(max) = %+v, %v", picks, err)
	}
	if _, err := p.PickEffort(picks, "minimal"); err == nil || err.Error() != `effort "minimal": model a:big takes low, high, max, or default` {
		t.Errorf("PickEffort(minimal): %v", err)
	}
	// Another model keeps the level within what it takes, and says so.
	picks, warnings := p.PickModel(picks, "a:mid")
	if picks.Model != "a:mid" || picks.Effort != "high" || len(warnings) != 1 {
		t.Errorf("PickModel(a:mid) = %+v, %v", picks, warnings)
	}
	// Picking the launch's model goes back to it.
	if picks, _ = p.PickModel(picks, "a:big"); picks.Model != "" {
		t.Errorf("PickModel(launch) = %+v, want the launch's", picks)
	}
	if _, err := PickMode(picks, "yolo"); err == nil {
		t.Error("PickMode(yolo) took it")
	}
	if err := p.CheckSpec("script:x"); err == nil {
		t.Error("a script model was taken with no script model at launch")
	}
	if err := p.CheckSpec("nocolon"); err == nil {
		t.Error("a spec without a provider was taken")
	}
}

func TestDescribe(t *testing.T) {
	opts := []Option{ModeOption(ModeReadOnly)}
	if got, want := Describe(opts, OptionMode), "Mode: read-only. Choices: ask, auto-edit, read-only."; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if got := Describe(nil, OptionModel); !slices.Contains([]string{"No model is set: /model PROVIDER:MODEL sets one, e.g. /model anthropic:claude-sonnet-5-5."}, got) {
		t.Errorf("Describe without a model = %q", got)
	}
}
