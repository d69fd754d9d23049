package engine

import (
	"context"
	"errors"
	"os"
)

// A Workspace is what tools need from the place a turn runs in: the editor
// over ACP, or the local disk for `coda run`. The engine never knows which.
type Workspace interface {
	// Cwd is the session's working directory (absolute).
	Cwd() string
	// Roots are the directories tools may touch: Cwd and any additional ones.
	Roots() []string
	// ReadTextFile returns a file's text; over ACP the editor's unsaved
	// buffer wins.
	ReadTextFile(ctx context.Context, path string) (string, error)
	// WriteTextFile writes a file (through the editor when it offers to).
	WriteTextFile(ctx context.Context, path, content string) error
	// RequestPermission asks the user whether a tool call may go ahead.
	RequestPermission(ctx context.Context, req PermissionRequest) (bool, error)
}

// A PermissionRequest describes the tool call awaiting the user's approval.
type PermissionRequest struct {
	ToolCall ToolCallEvent
	// Key groups calls for "always allow" (e.g. the tool name).
	Key string
}

// ErrPermissionDenied is returned when the user rejects a tool call.
var ErrPermissionDenied = errors.New("permission denied by the user")

// LocalWorkspace works on the local disk. Approve answers permission
// requests; nil denies every request.
type LocalWorkspace struct {
	Dir     string
	Extra   []string
	Approve func(ctx context.Context, req PermissionRequest) (bool, error)
}

func (w *LocalWorkspace) Cwd() string     { return w.Dir }
func (w *LocalWorkspace) Roots() []string { return append([]string{w.Dir}, w.Extra...) }

func (w *LocalWorkspace) ReadTextFile(_ context.Context, path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func (w *LocalWorkspace) WriteTextFile(_ context.Context, path, content string) error {
	return os.WriteFile(path, []byte(content), 0o644)
}

func (w *LocalWorkspace) RequestPermission(ctx context.Context, req PermissionRequest) (bool, error) {
	if w.Approve == nil {
		return false, nil
	}
	return w.Approve(ctx, req)
}
