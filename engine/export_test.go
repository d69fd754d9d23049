package engine

import (
	"context"

	"github.com/coda-acp/coda/engine/llm"
)

// SinkFunc adapts a function to a Sink.
type SinkFunc func(ctx context.Context, ev Event) error

func (f SinkFunc) Emit(ctx context.Context, ev Event) error { return f(ctx, ev) }

// StageStatus is status.json, for tests that read it back.
type StageStatus = stageStatus

// MaxArtifactCopy is the largest artifact a run's record keeps a copy of.
const MaxArtifactCopy = maxArtifactCopy

// The names the tests read that the engine keeps to itself.
const (
	FrameNote              = frameNote
	MaxProjectInstructions = maxProjectInstructions
)

// StandIn is what a model that cannot see images is sent for im.
func StandIn(im llm.Image) string { return im.StandIn() }

// Refuses reports whether spec's server refused the mechanism.
func (t *ToolSupport) Refuses(spec, mechanism string) bool { return t.refused(spec, mechanism) }

// Lacks says why spec cannot call tools, as its server said.
func (t *ToolSupport) Lacks(spec string) string { return t.lacking(spec) }

// ReleaseTimeout bounds the deletion of a turn's uploads.
const ReleaseTimeout = llm.ReleaseTimeout

// Answered is answered (transcript.go): msgs without a last call left
// unanswered.
func Answered(msgs []llm.Message) []llm.Message { return answered(msgs) }
