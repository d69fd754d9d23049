package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// JSON-RPC error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// An Error is an error that answers a request with its own code, as
// golang.org/x/tools' jsonrpc2 does it: a handler wraps one with %w (say
// fmt.Errorf("%w: unknown session %q", ErrInvalidParams, id)) and the
// answer carries its code and the whole message. Any other error answers
// -32603, logged with its chain.
type Error struct {
	code    int
	message string
}

// NewError makes an error that answers with code; a protocol defines its
// own codes this way (ACP's -32000, -32002).
func NewError(code int, message string) *Error { return &Error{code: code, message: message} }

func (e *Error) Error() string { return e.message }

// The errors every JSON-RPC server answers with.
var (
	ErrInvalidParams  = NewError(CodeInvalidParams, "invalid params")
	ErrMethodNotFound = NewError(CodeMethodNotFound, "method not found")
)

// CodeOf is the code err answers with: its Error's, else -32603.
func CodeOf(err error) int {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.code
	}
	return CodeInternalError
}

// A ClientError is the client's error answer to one of the calls made to it.
type ClientError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ClientError) Error() string {
	return fmt.Sprintf("the editor answered %d: %s", e.Code, e.Message)
}
