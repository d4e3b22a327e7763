// Package auth is who a caller of the HTTP front ends is: bearer tokens
// read from the token file, each standing for a tenant and optionally the
// one user it may act for (Tokens, Identity), the middleware that puts
// the caller's tenant and user in the request context (Authenticate), and
// the context accessors both front ends read them with (TenantFrom,
// UserFrom). The MCP server and the memory console share it, so neither
// imports the other.
package auth
