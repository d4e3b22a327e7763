// Package mcpserver exposes Hindsight to agents as MCP tools, over stdio
// and streamable HTTP. The constructor takes the application service;
// transports are separate. On HTTP the tenant comes from the bearer token
// (see package auth); without a token file the server must listen on loopback
// only, and every caller is the default tenant.
//
// Tool handlers return a tool error result, with a message that says what
// to fix, for bad arguments; infrastructure failures are tool errors too,
// but say that retrying may help. Numbers and booleans sent as strings are
// accepted.
package mcpserver
