// Package httpguard is what every HTTP listener of Hindsight checks before
// anything else (the MCP endpoint, the console, metrics and health, the
// codec server, hindsight dev's SQL endpoint and profiler):
//
//   - the Host a request names must be one the listener serves: its listen
//     address (on a wildcard address, the machine's own addresses), the
//     loopback names when it listens on loopback, and the names configured
//     in HINDSIGHT_ALLOWED_HOSTS. A web page that rebinds its own DNS name
//     to 127.0.0.1 sends its own name and gets 421;
//   - a request from a browser (one with an Origin header) must come from
//     an origin of those hosts or one configured in
//     HINDSIGHT_ALLOWED_ORIGINS: never one compared with the request's own
//     Host, which such a page controls. Others, "null" included, get 403;
//   - whether a request reached the deployment over TLS: a connection of
//     its own, or X-Forwarded-Proto from a proxy configured as trusted
//     (HINDSIGHT_TRUSTED_PROXIES), never from anyone else.
package httpguard
