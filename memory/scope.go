package memory

import (
	"strings"
)

// Scope says whose a memory is within its tenant: the tenant's shared
// space ("shared"), one user's ("user:u-17") or one agent's
// ("agent:support-bot"). It is stored as this one string, which every
// store filters on the way it filters on the tenant. The empty scope is
// the shared one: memories written before scopes existed are shared.
type Scope string

// SharedScope is the tenant's shared space: what the team learned about
// the work, the tools and the systems.
const SharedScope Scope = "shared"

// Scope kinds.
const (
	ScopeShared = "shared"
	ScopeUser   = "user"
	ScopeAgent  = "agent"
)

// UserScope is the private space of one user of the tenant.
func UserScope(userID string) Scope { return Scope(ScopeUser + ":" + userID) }

// AgentScope is the private space of one agent of the tenant.
func AgentScope(agentID string) Scope { return Scope(ScopeAgent + ":" + agentID) }

// Norm is s with the empty scope read as shared.
func (s Scope) Norm() Scope {
	if s == "" {
		return SharedScope
	}
	return s
}

// Kind is "shared", "user" or "agent".
func (s Scope) Kind() string {
	k, _, _ := strings.Cut(string(s.Norm()), ":")
	return k
}

// Owner is the user or agent a private scope belongs to ("" when shared).
func (s Scope) Owner() string {
	_, owner, _ := strings.Cut(string(s), ":")
	return owner
}

// Valid reports whether s is shared, or user or agent with an owner.
func (s Scope) Valid() bool {
	s = s.Norm()
	if s == SharedScope {
		return true
	}
	k, owner, ok := strings.Cut(string(s), ":")
	return ok && (k == ScopeUser || k == ScopeAgent) && strings.TrimSpace(owner) == owner && owner != "" && len(owner) <= 256
}

// ParseScope reads a scope as a caller names it: "shared", "user" or
// "agent" (whose owner comes from userID or agentID), or a full scope such
// as "user:u-17". An empty name is "" (the caller did not choose).
func ParseScope(name, userID, agentID string) (Scope, error) {
	const op = "scope"
	switch strings.TrimSpace(name) {
	case "":
		return "", nil
	case ScopeShared:
		return SharedScope, nil
	case ScopeUser:
		if userID == "" {
			return "", Invalidf(op, "scope \"user\" needs a user_id: say whose memory it is, or use scope \"shared\"")
		}
		return UserScope(userID), nil
	case ScopeAgent:
		if agentID == "" {
			return "", Invalidf(op, "scope \"agent\" needs an agent_id: say which agent's memory it is, or use scope \"shared\"")
		}
		return AgentScope(agentID), nil
	}
	if s := Scope(strings.TrimSpace(name)); s.Valid() {
		return s, nil
	}
	return "", Invalidf(op, "scope %q is not one of shared, user, agent (or user:ID, agent:ID)", name)
}

// Label says whose a memory is, for people: "team knowledge", "about user
// u-17", "agent support-bot's own".
func (s Scope) Label() string {
	switch s.Kind() {
	case ScopeUser:
		return "about user " + s.Owner()
	case ScopeAgent:
		return "agent " + s.Owner() + "'s own"
	}
	return "team knowledge"
}

// Viewer is whom something of a tenant is shown to. It is the one rule of
// every path that shows a memory, an episode or an episode's task (recall
// and its provenance, recent sessions, resources, prompts, the console,
// export): a viewer acting for a user sees the shared space, that user's
// memories and sessions, and the private spaces of the agents it acts as;
// one acting for nobody (UserID "") sees the shared space and the sessions
// of no user; only a viewer with the tenant's authority (All: an operator,
// the console of a tenant-wide token) sees everything.
type Viewer struct {
	UserID string
	Agents []string
	All    bool
}

// Scopes are the memory scopes v sees, nil for every scope (as InScopes
// reads it).
func (v Viewer) Scopes() []Scope {
	if v.All {
		return nil
	}
	out := Visible(v.UserID, "")
	for _, a := range v.Agents {
		if a != "" {
			out = append(out, AgentScope(a))
		}
	}
	return out
}

// SeesScope reports whether v sees memories of scope s.
func (v Viewer) SeesScope(s Scope) bool { return v.All || InScopes(s, v.Scopes()) }

// SeesEpisode reports whether v sees an episode: the sessions of no user
// and of v's user. A typical episode belongs to its members' user (they
// are clustered within one user), so the same rule holds for it.
func (v Viewer) SeesEpisode(ep Episode) bool {
	return v.All || ep.UserID == "" || ep.UserID == v.UserID
}

// ActingFor is the viewer of a request made for userID and agentID ("" for
// none): what recall and the MCP paths show.
func ActingFor(userID, agentID string) Viewer {
	v := Viewer{UserID: userID}
	if agentID != "" {
		v.Agents = []string{agentID}
	}
	return v
}

// Visible is the set of scopes a caller acting for userID and agentID may
// read: the shared space, and the private spaces of that user and agent.
// Without either, only the shared space: never another user's memories.
func Visible(userID, agentID string) []Scope {
	out := []Scope{SharedScope}
	if userID != "" {
		out = append(out, UserScope(userID))
	}
	if agentID != "" {
		out = append(out, AgentScope(agentID))
	}
	return out
}

// InScopes reports whether s is among scopes; an empty list admits every
// scope (internal maintenance that works across the tenant).
func InScopes(s Scope, scopes []Scope) bool {
	if len(scopes) == 0 {
		return true
	}
	s = s.Norm()
	for _, x := range scopes {
		if x.Norm() == s {
			return true
		}
	}
	return false
}

// About says whether a distilled candidate is about the session's user (a
// preference, a fact about them, their contact channel, their order) or
// about the work (a lesson about a tool, a team rule, a fact about a
// system). The ledger turns it into a scope.
type About string

// Subjects of a candidate.
const (
	AboutWork About = "work"
	AboutUser About = "user"
)

// ScopeFor is where a distilled candidate goes: the scope it names, if
// any; the session user's own scope when it is about that user; else the
// shared space. A session without a user writes to the shared space.
func ScopeFor(c Candidate, userID string) Scope {
	switch {
	case c.Scope != "":
		return c.Scope.Norm()
	case c.About == AboutUser && userID != "":
		return UserScope(userID)
	}
	return SharedScope
}

// ProjectEntity names the project an agent worked in, from what a caller
// gives (see ProjectOf): a directory's last element
// ("/home/dana/src/billing" is "billing"), a repository's name, or ""
// when it names none.
func ProjectEntity(project string) string {
	return ProjectOf(project, "").Name
}
