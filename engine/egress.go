package engine

// An Egress tool can carry what it is given out of the machine (an MCP
// server's tool: the server may be anywhere). The taint gate asks before
// tainted content reaches one.
type Egress interface{ Egress() bool }
