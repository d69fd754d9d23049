package mcp

// Relisted is closed once c's tools are listed again.
func Relisted(c *Conn) <-chan struct{} {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	return c.relisted
}

var Sources = sources
