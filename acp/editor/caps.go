package editor

import (
	"encoding/json"
	"strings"
	"sync"
)

// SessionCapability reports whether clientCapabilities.session.NAME is
// advertised: an object (ACP: omitted and null mean unsupported, `{}`
// supported). A field of the wrong type counts as not advertised.
func SessionCapability(raw json.RawMessage, name string) bool {
	var top struct {
		Session map[string]json.RawMessage `json:"session"`
	}
	if json.Unmarshal(raw, &top) != nil {
		return false
	}
	v := strings.TrimSpace(string(top.Session[name]))
	return strings.HasPrefix(v, "{")
}

// Capabilities are the client's clientCapabilities as initialize sent
// them, read by the sessions and turns that follow.
type Capabilities struct {
	mu  sync.Mutex
	raw json.RawMessage
}

// Set keeps initialize's clientCapabilities.
func (c *Capabilities) Set(raw json.RawMessage) {
	c.mu.Lock()
	c.raw = raw
	c.mu.Unlock()
}

// Get are the clientCapabilities, as sent.
func (c *Capabilities) Get() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw
}

// Notices reports whether the client takes notices (session.notices).
func (c *Capabilities) Notices() bool { return SessionCapability(c.Get(), "notices") }

// Compaction reports whether the client advertises session.compaction:
// an object, not null.
func (c *Capabilities) Compaction() bool {
	var caps struct {
		Session struct {
			Compaction json.RawMessage `json:"compaction"`
		} `json:"session"`
	}
	return json.Unmarshal(c.Get(), &caps) == nil && len(caps.Session.Compaction) > 0 && caps.Session.Compaction[0] == '{'
}
