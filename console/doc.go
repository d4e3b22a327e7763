// Package console is the memory console: web pages where a person sees
// what the agent learned, why, and from which sessions, and puts it right.
//
// It is served by the MCP HTTP server under /ui (hindsight dev at
// http://127.0.0.1:8765/ui). Pages are rendered on the server with
// html/template from templates embedded in the binary, with a little CSS
// and no JavaScript: everything works with scripts off, and nothing is
// loaded from outside the binary.
//
// Tenants and sign-in follow the MCP server's rules. Without a token
// file the console serves the default tenant (the listener is loopback
// only). With one, a sign-in form takes a token and sets an HttpOnly,
// SameSite=Strict cookie, signed with the deployment's key, that names the
// token's tenant; every page and action is scoped to it, and another
// tenant's memory or episode is a 404. Every change is a POST carrying a
// CSRF token derived from the session, goes through the same service and
// ledger as the MCP tools (so it is a decision that can be undone), and
// asks for confirmation on its own page where it destroys.
package console
