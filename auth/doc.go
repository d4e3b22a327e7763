// Package auth says who a request stands for and what it may touch: the
// bearer tokens of the tokens file and the identity each stands for (a
// tenant, optionally one user of it and the agents it may act as), the
// middleware that puts that identity in a request's context
// (Authenticate), the accessors every front end reads it with (From,
// TenantFrom, UserFrom), and Authorize, the one rule the MCP tools and the
// console apply before they read or change a memory, a session or a
// user's data. The MCP server and the memory console share it, so neither
// imports the other.
//
// It depends on the domain package alone, so that every front end (the
// MCP server, the console, the service they call) reaches it from above.
package auth
