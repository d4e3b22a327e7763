package auth

import (
	"context"
	"slices"

	"github.com/hindsight-memory/hindsight/memory"
)

// Identity is what a credential stands for: a tenant, and optionally the
// one user of it the credential may act for and the agents it may act as.
type Identity struct {
	Tenant string
	// UserID is the user a user-bound token acts for, whatever the
	// arguments say; "" acts for the whole tenant.
	UserID string
	// Agents are the agents whose private scopes the credential reaches.
	// Empty means every agent for a tenant-wide credential, and none for
	// a user-bound one.
	Agents []string
}

// Bound reports whether the identity acts for one user only.
func (id Identity) Bound() bool { return id.UserID != "" }

// MayActAs reports whether the identity reaches agent's private scope:
// an agent it names; without a list, any agent for a tenant-wide
// identity and none for a user-bound one.
func (id Identity) MayActAs(agent string) bool {
	if len(id.Agents) > 0 {
		return slices.Contains(id.Agents, agent)
	}
	return !id.Bound()
}

// Viewer is what the identity may see with its own authority: everything
// for a tenant-wide identity, else what its user and agents see
// (memory.Viewer).
func (id Identity) Viewer() memory.Viewer {
	return memory.Viewer{UserID: id.UserID, Agents: id.Agents, All: !id.Bound()}
}

// Acting is what an MCP caller with the identity is shown when it names
// no user: the identity's user and agents, or, tenant-wide, nobody's (the
// shared space and the sessions of no user).
func (id Identity) Acting() memory.Viewer {
	return memory.Viewer{UserID: id.UserID, Agents: id.Agents}
}

type identityKey struct{}

// WithIdentity returns ctx carrying the caller's identity.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// From returns the identity ctx carries, and whether it carries one. A
// context without one is the process's own work (stdio, operator commands,
// workflows), which acts for the whole tenant it names.
func From(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// WithTenant returns ctx carrying a tenant-wide identity of tenant.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return WithIdentity(ctx, Identity{Tenant: tenant})
}

// TenantFrom returns the tenant ctx's identity is of, or "".
func TenantFrom(ctx context.Context) string {
	id, _ := From(ctx)
	return id.Tenant
}

// UserFrom returns the user ctx's identity is bound to, or "" when it acts
// for the whole tenant.
func UserFrom(ctx context.Context) string {
	id, _ := From(ctx)
	return id.UserID
}
