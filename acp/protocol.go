package acp

import "encoding/json"

// Wire types, hand-written for what coda serves. Field names follow the
// ACP schema (protocol version 1); Go names follow Go.

// ProtocolVersion is the ACP version coda speaks.
const ProtocolVersion = 1

type initializeRequest struct {
	ProtocolVersion    *int            `json:"protocolVersion"`
	ClientCapabilities json.RawMessage `json:"clientCapabilities"`
	ClientInfo         json.RawMessage `json:"clientInfo"`
}

type authenticateRequest struct {
	MethodID *string `json:"methodId"`
}

type newSessionRequest struct {
	Cwd                   *string         `json:"cwd"`
	AdditionalDirectories []string        `json:"additionalDirectories"`
	MCPServers            json.RawMessage `json:"mcpServers"`
	Meta                  *requestMeta    `json:"_meta"`
}

// requestMeta is the _meta of a request; coda reads _meta.coda.output.
type requestMeta struct {
	Coda *struct {
		Output json.RawMessage `json:"output"`
	} `json:"coda"`
}

func (m *requestMeta) output() json.RawMessage {
	if m == nil || m.Coda == nil || isNull(m.Coda.Output) {
		return nil
	}
	return m.Coda.Output
}

type sessionRequest struct {
	SessionID *string `json:"sessionId"`
}

// loadSessionRequest is session/load's and session/resume's params.
type loadSessionRequest struct {
	SessionID             *string         `json:"sessionId"`
	Cwd                   *string         `json:"cwd"`
	AdditionalDirectories []string        `json:"additionalDirectories"`
	MCPServers            json.RawMessage `json:"mcpServers"`
}

type listSessionsRequest struct {
	Cwd    *string `json:"cwd"`
	Cursor *string `json:"cursor"`
}

type setModeRequest struct {
	SessionID *string `json:"sessionId"`
	ModeID    *string `json:"modeId"`
}

type setConfigOptionRequest struct {
	SessionID *string         `json:"sessionId"`
	ConfigID  *string         `json:"configId"`
	Value     json.RawMessage `json:"value"`
}

type promptRequest struct {
	SessionID *string        `json:"sessionId"`
	Prompt    []contentBlock `json:"prompt"`
	Meta      *requestMeta   `json:"_meta"`
}

type contentBlock struct {
	Type     string            `json:"type"`
	Text     string            `json:"text"`
	URI      string            `json:"uri"`
	Name     string            `json:"name"`
	Title    string            `json:"title"`
	MimeType string            `json:"mimeType"`
	Data     string            `json:"data"` // an image's bytes, base64
	Resource *embeddedResource `json:"resource"`
}

type embeddedResource struct {
	URI      string  `json:"uri"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
	MimeType string  `json:"mimeType"`
}

type cancelRequestNotification struct {
	RequestID json.RawMessage `json:"requestId"`
}

// configOption is a session config option (a select).
type configOption struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Category     string         `json:"category"`
	Type         string         `json:"type"`
	CurrentValue string         `json:"currentValue"`
	Options      []selectOption `json:"options"`
}

type selectOption struct {
	Value string `json:"value"`
	Name  string `json:"name"`
}
